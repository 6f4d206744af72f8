// Picked Hugging Face folders against a fake jobs worker: each is checked by an 'hf-inspect' job
// (files and run settings sent), its estimate or the error naming a file is kept, new settings check
// it again (a late answer to old settings is dropped), and nothing is asked of a worker without
// WebGPU or with settings that make no sense.
import { describe, expect, it } from 'vitest';
import { JobClient, type WorkerLike } from '../../jobs/client.ts';
import type { HfFolderInfo, HfInspectJobSpec } from '../../train/hfFolder.ts';
import type { FromWorker, ToWorker } from '../../jobs/protocol.ts';
import { createHfFolderStore, usable } from './hfFolders.ts';

type Answer = (spec: HfInspectJobSpec, jobId: string, post: (m: FromWorker) => void) => void;

function fakeWorker(answer: Answer) {
  const started: HfInspectJobSpec[] = [];
  const worker: WorkerLike = {
    onmessage: null,
    postMessage(m: ToWorker) {
      const post = (x: FromWorker) => queueMicrotask(() => worker.onmessage?.({ data: x } as MessageEvent));
      if (m.type === 'start') {
        started.push(m.spec as unknown as HfInspectJobSpec);
        answer(m.spec as unknown as HfInspectJobSpec, m.jobId, post);
      }
    },
  };
  return { client: new JobClient(() => worker), started };
}

function info(name: string, context: number, fits = true): HfFolderInfo {
  const fit = {
    fits,
    total: 3 << 20,
    weights: 2 << 20,
    kvCache: 1 << 19,
    activations: 1 << 19,
    adapters: 0,
    gradients: 0,
    optimizer: 0,
    budget: fits ? 2 ** 32 : 1 << 20,
    message: fits ? `${name} fits` : `${name} needs 3.0 MiB … Would fit instead: context 16 (1.0 MiB).`,
    alternatives: fits ? [] : [{ change: 'context 16', total: 1 << 20, context: 16 }],
  };
  return {
    name,
    architecture: 'LlamaForCausalLM',
    parameters: 524_288,
    layers: 2,
    hidden: 32,
    heads: 4,
    kvHeads: 2,
    vocab: 64,
    maxContext: 64,
    context,
    dtypes: ['F32'],
    weightBytes: 2 << 20,
    files: 3,
    tokenizer: true,
    chatTemplate: true,
    fit,
  };
}

const file = (path: string, text = '{}') => ({ path, file: new File([text], path.split('/').pop()!) });
const FOLDER = [file('Tiny/config.json'), file('Tiny/model.safetensors', 'weights')];
const settle = () => new Promise((r) => setTimeout(r, 0));

describe('picked Hugging Face folders', () => {
  it('checks a picked folder in the worker and keeps what it found', async () => {
    const w = fakeWorker((_spec, jobId, post) => post({ type: 'done', jobId, result: info('Tiny', 64) }));
    const store = createHfFolderStore({ jobs: () => w.client, webgpu: () => null });
    const id = await store.getState().add(FOLDER);
    expect(w.started).toEqual([{ kind: 'hf-inspect', files: FOLDER, settings: { context: null, memoryGiB: 4 } }]);
    const f = store.getState().get(id!)!;
    expect(f).toMatchObject({ name: 'Tiny', status: 'ready', error: null, info: { architecture: 'LlamaForCausalLM' } });
    expect(usable(f)).toBe(true);
    // The same files again are the same folder, checked again.
    expect(await store.getState().add([...FOLDER].reverse())).toBe(id);
    expect(store.getState().folders).toHaveLength(1);
    expect(await store.getState().add([])).toBeNull();
  });

  it("keeps the worker's message naming the file at fault, and a refusal that does not fit is not usable", async () => {
    const w = fakeWorker((spec, jobId, post) =>
      spec.files.some((f) => f.path.endsWith('config.json'))
        ? post({ type: 'done', jobId, result: info('Big', 64, false) })
        : post({ type: 'error', jobId, message: 'NoConfig: has no config.json (found: model.safetensors)' }),
    );
    const store = createHfFolderStore({ jobs: () => w.client, webgpu: () => null });
    const bad = await store.getState().add([file('NoConfig/model.safetensors')]);
    expect(store.getState().get(bad!)).toMatchObject({ status: 'error', info: null, error: 'NoConfig: has no config.json (found: model.safetensors)' });
    expect(usable(store.getState().get(bad!))).toBe(false);
    const big = await store.getState().add([file('Big/config.json'), file('Big/model.safetensors')]);
    expect(store.getState().get(big!)).toMatchObject({ status: 'ready', info: { fit: { fits: false } } });
    expect(usable(store.getState().get(big!))).toBe(false);
    // A folder that fits but has no chat template (a base model) cannot serve a turn.
    const base = store.getState().get(big!)!;
    expect(usable({ ...base, info: { ...info('Base', 64), chatTemplate: false } })).toBe(false);
    expect(usable({ ...base, info: { ...info('Base', 64), tokenizer: false } })).toBe(false);
    expect(usable({ ...base, info: info('Chat', 64) })).toBe(true);
    // Dropped loose files have no folder name: the worker is told what to call them.
    await store.getState().add([file('config.json')]);
    expect(w.started.at(-1)!.name).toBe('the picked files');
  });

  it('checks again with new settings; an answer to older settings is dropped', async () => {
    const pending: { spec: HfInspectJobSpec; reply: () => void }[] = [];
    const w = fakeWorker((spec, jobId, post) =>
      pending.push({ spec, reply: () => post({ type: 'done', jobId, result: info('Tiny', spec.settings.context ?? 64) }) }),
    );
    const store = createHfFolderStore({ jobs: () => w.client, webgpu: () => null });
    const adding = store.getState().add(FOLDER);
    await settle();
    const id = store.getState().folders[0].id;
    const changing = store.getState().setSettings(id, { context: 32 });
    await settle();
    expect(pending.map((p) => p.spec.settings)).toEqual([
      { context: null, memoryGiB: 4 },
      { context: 32, memoryGiB: 4 },
    ]);
    pending[1].reply();
    await changing;
    pending[0].reply();
    await adding;
    expect(store.getState().get(id)).toMatchObject({ status: 'ready', settings: { context: 32, memoryGiB: 4 }, info: { context: 32 } });
    store.getState().remove(id);
    expect(store.getState().folders).toEqual([]);
  });

  it('asks nothing of the worker without WebGPU or with settings that make no sense', async () => {
    const w = fakeWorker(() => {});
    const none = createHfFolderStore({ jobs: () => w.client, webgpu: () => ({ message: 'this browser has no WebGPU', help: '' }) });
    const id = await none.getState().add(FOLDER);
    expect(none.getState().get(id!)).toMatchObject({ status: 'error', error: 'Reading the folder needs the GPU worker, and this browser has no WebGPU' });
    const store = createHfFolderStore({ jobs: () => w.client, webgpu: () => null });
    const adding = store.getState().add(FOLDER);
    await settle();
    await store.getState().setSettings(store.getState().folders[0].id, { memoryGiB: -1 });
    expect(store.getState().folders[0]).toMatchObject({ status: 'error', error: expect.stringMatching(/GPU memory must be a number of GiB above 0/) });
    expect(w.started).toHaveLength(1);
    void adding;
  });
});
