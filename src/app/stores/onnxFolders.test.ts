// Picked ONNX folders against a fake jobs worker: each is checked by an 'onnx-inspect' job (its
// files sent, even in a page without WebGPU: onnxruntime-web runs it on WASM there), what it found
// or the error naming a file is kept, a model file is chosen among its variants, and a folder is
// usable only with a tokenizer and a context length.
import { describe, expect, it } from 'vitest';
import { JobClient, type WorkerLike } from '../../jobs/client.ts';
import type { OnnxFolderInfo, OnnxInspectJobSpec } from '../../jobs/onnxFolder.ts';
import { describeOnnxFolder, isOnnxFiles, variantLabel } from '../../jobs/onnxFolder.ts';
import type { FromWorker, ToWorker } from '../../jobs/protocol.ts';
import { chosenFile, createOnnxFolderStore, pageExecution, usableOnnx } from './onnxFolders.ts';

function fakeWorker(answer: (spec: OnnxInspectJobSpec, jobId: string, post: (m: FromWorker) => void) => void) {
  const started: OnnxInspectJobSpec[] = [];
  const worker: WorkerLike = {
    onmessage: null,
    postMessage(m: ToWorker) {
      const post = (x: FromWorker) => queueMicrotask(() => worker.onmessage?.({ data: x } as MessageEvent));
      if (m.type === 'start') {
        started.push(m.spec as unknown as OnnxInspectJobSpec);
        answer(m.spec as unknown as OnnxInspectJobSpec, m.jobId, post);
      }
    },
  };
  return { client: new JobClient(() => worker), started };
}

const info: OnnxFolderInfo = {
  name: 'Tiny',
  variants: [
    { file: 'onnx/model.onnx', bytes: 270_306 },
    { file: 'onnx/model_q4.onnx', bytes: 60_000 },
  ],
  defaultFile: 'onnx/model.onnx',
  architecture: 'LlamaForCausalLM',
  layers: 2,
  hidden: 32,
  heads: 4,
  kvHeads: 2,
  vocab: 1461,
  maxContext: 128,
  files: 6,
  tokenizer: true,
  chatTemplate: true,
};
const file = (path: string) => ({ path, file: new File(['x'], path.split('/').pop()!) });
const FOLDER = [file('Tiny/config.json'), file('Tiny/onnx/model.onnx'), file('Tiny/onnx/model_q4.onnx')];

describe('picked ONNX folders', () => {
  it('checks a folder in the worker, keeps what it found, and lets a model file be chosen', async () => {
    const w = fakeWorker((_spec, jobId, post) => post({ type: 'done', jobId, result: info }));
    const store = createOnnxFolderStore({ jobs: () => w.client });
    const id = (await store.getState().add(FOLDER))!;
    expect(w.started).toEqual([{ kind: 'onnx-inspect', files: FOLDER }]);
    const f = store.getState().get(id)!;
    expect(f).toMatchObject({ name: 'Tiny', status: 'ready', error: null, file: null });
    expect(usableOnnx(f)).toBe(true);
    expect(chosenFile(f)).toBe('onnx/model.onnx');
    store.getState().setFile(id, 'onnx/model_q4.onnx');
    expect(chosenFile(store.getState().get(id)!)).toBe('onnx/model_q4.onnx');
    expect(usableOnnx({ ...f, info: { ...info, tokenizer: false } })).toBe(false);
    expect(usableOnnx({ ...f, info: { ...info, maxContext: null } })).toBe(false);
    store.getState().remove(id);
    expect(store.getState().folders).toEqual([]);
  });

  it("keeps the worker's message naming the file at fault", async () => {
    const w = fakeWorker((_spec, jobId, post) => post({ type: 'error', jobId, message: 'NoModel: has no ONNX model (onnx/*.onnx)' }));
    const store = createOnnxFolderStore({ jobs: () => w.client });
    const id = await store.getState().add([file('NoModel/config.json')]);
    expect(store.getState().get(id!)).toMatchObject({ status: 'error', info: null, error: 'NoModel: has no ONNX model (onnx/*.onnx)' });
    expect(usableOnnx(store.getState().get(id!))).toBe(false);
    await store.getState().add([file('config.json'), file('model.onnx')]);
    expect(w.started.at(-1)!.name).toBe('the picked files');
  });

  it('says what a folder is, tells ONNX files from a Hugging Face folder, and runs on WASM in a page without WebGPU', () => {
    expect(describeOnnxFolder(info)).toBe(
      'Tiny: ONNX, LlamaForCausalLM (2 layers × 32, 4 heads / 2 KV heads, vocabulary 1461), context 128; model.onnx 264.0 KiB, model_q4.onnx 58.6 KiB',
    );
    expect(describeOnnxFolder({ ...info, architecture: null, layers: null, maxContext: null })).toBe(
      'Tiny: ONNX, architecture not in config.json; model.onnx 264.0 KiB, model_q4.onnx 58.6 KiB',
    );
    expect(variantLabel('onnx/model_q4.onnx')).toBe('model_q4.onnx (q4)');
    expect(variantLabel('onnx/model.onnx')).toBe('model.onnx (fp32)');
    expect(variantLabel('onnx/decoder_model_merged.onnx')).toBe('decoder_model_merged.onnx');
    expect(isOnnxFiles(FOLDER)).toBe(true);
    expect(isOnnxFiles([file('Tiny/config.json'), file('Tiny/model.safetensors')])).toBe(false);
    expect(isOnnxFiles([...FOLDER, file('Tiny/model.safetensors')])).toBe(false);
    expect(pageExecution(() => ({ message: 'no WebGPU' }))).toBe('wasm');
    expect(pageExecution(() => null)).toBe('auto');
  });
});
