// The 'train' job of the app from a Hugging Face folder (the tiny chat Llama's files, posted as the
// page posts them): a LoRA run records its folder's fingerprint; resuming it needs the same folder
// (none, or another one, is refused with what to do and what differs) and then continues the same
// loss curve; the 'hf-export' job gives its adapter in PEFT's layout and the merged folder; a budget
// the run does not fit is refused with what would fit.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../envs/generate.ts';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { readSafetensors } from '../core/model/safetensors.ts';
import { JobHost } from './host.ts';
import { JOB_RUNNERS, type TrainJobSpec } from './jobs.ts';
import type { HfExportResult } from './hfExport.ts';
import type { HfFolderFile } from '../train/hfFolder.ts';
import type { TrainSpec } from '../train/pipeline.ts';
import type { FromWorker } from './protocol.ts';

// @ts-expect-error -- the package's types do not resolve through its exports map
if (typeof indexedDB === 'undefined') await import('fake-indexeddb/auto');
const { getRun, loadMetrics } = await import('../storage/runs.ts');

const data = { trajectories: generateTrajectories('terminal', 16, 3), name: 'terminal×16' };
const spec: TrainSpec = {
  kind: 'train',
  stage: 'sft',
  preset: 'micro',
  steps: 4,
  batch: 2,
  T: 48,
  evalEvery: 2,
  evalBatches: 1,
  evalJudgeSamples: 0,
  seed: 3,
  lora: { rank: 4 },
};
const NAMES = ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
const folder = (change: (name: string, text: Uint8Array) => Uint8Array = (_, b) => b): HfFolderFile[] =>
  NAMES.map((n) => ({
    path: `TinyChat/${n}`,
    file: new Blob([change(n, new Uint8Array(readFileSync(new URL(`../model/fixtures/hf/llama-chat/${n}`, import.meta.url)))) as BlobPart]),
  }));
const tick = () => new Promise((r) => setTimeout(r, 5));

function makeHost(onEvent?: (m: FromWorker, host: JobHost) => void) {
  const events: FromWorker[] = [];
  const host: JobHost = new JobHost(gpuRuntime, JOB_RUNNERS, (m) => {
    events.push(m);
    onEvent?.(m, host);
  });
  const finished = async (jobId: string) => {
    for (;;) {
      const end = events.find(
        (e) => 'jobId' in e && e.jobId === jobId && (e.type === 'done' || e.type === 'error' || (e.type === 'status' && e.state === 'stopped')),
      );
      if (end) return end;
      await tick();
    }
  };
  return { host, events, finished };
}

const losses = async (runId: string) => (await loadMetrics(runId)).filter((m) => 'loss' in m.values).map((m) => [m.step, m.values.loss]);

describe('train job from a Hugging Face folder', () => {
  it('LoRA: the folder is fingerprinted; resume needs the same folder and continues the curve; the adapter and merged folder export', async () => {
    const suffix = Math.random().toString(36).slice(2, 8);
    const whole = makeHost();
    whole.host.handle({
      type: 'start',
      jobId: 'w',
      spec: { kind: 'train', runId: `w-${suffix}`, train: spec, data, hf: { files: folder(), memoryGiB: 1 } } satisfies TrainJobSpec,
    });
    expect(await whole.finished('w')).toMatchObject({ type: 'done' });
    const reference = await losses(`w-${suffix}`);

    const runId = `s-${suffix}`;
    const { host, finished } = makeHost((m, h) => {
      if (m.type === 'metric' && m.jobId === 'a' && m.step === 3) h.handle({ type: 'stop', jobId: 'a' });
    });
    host.handle({ type: 'start', jobId: 'a', spec: { kind: 'train', runId, train: spec, data, hf: { files: folder(), memoryGiB: 1 } } });
    await finished('a');
    const run = (await getRun(runId))!;
    expect(run.hf).toMatchObject({
      tuning: 'lora',
      memoryGiB: 1,
      folder: { name: 'TinyChat', files: NAMES.map((path) => ({ path, size: expect.any(Number) })) },
    });
    expect(run.checkpoints.last?.step).toBe(2);

    host.handle({ type: 'start', jobId: 'b', spec: { kind: 'train', runId, resume: true, data } });
    expect(await finished('b')).toMatchObject({
      type: 'error',
      message: expect.stringMatching(/trains on the Hugging Face folder TinyChat, which the page does not keep after a reload: pick that folder again/),
    });
    const other = folder((n, b) => (n === 'config.json' ? new TextEncoder().encode(new TextDecoder().decode(b).replace('10000.0', '20000.0')) : b));
    host.handle({ type: 'start', jobId: 'c', spec: { kind: 'train', runId, resume: true, data, hf: { files: other, memoryGiB: 1 } } });
    expect(await finished('c')).toMatchObject({ type: 'error', message: 'TinyChat is not the folder this run trained on (TinyChat): config.json differs.' });
    host.handle({ type: 'start', jobId: 'd', spec: { kind: 'train', runId, resume: true, data, hf: { files: folder(), memoryGiB: 1 } } });
    expect(await finished('d')).toMatchObject({ type: 'done' });
    const curve = await losses(runId);
    expect(curve.map(([s]) => s)).toEqual([1, 2, 3, 4]);
    for (let i = 0; i < curve.length; i++) expect(curve[i][1]).toBeCloseTo(reference[i][1], 4);

    host.handle({ type: 'start', jobId: 'e', spec: { kind: 'hf-export', runId, tag: 'last', what: 'adapter' } });
    const adapter = ((await finished('e')) as { result: HfExportResult }).result.files;
    expect(adapter.map((f) => f.name)).toEqual(['adapter_config.json', 'adapter_model.safetensors', 'lwm_template.json']);
    expect(JSON.parse(new TextDecoder().decode(adapter[0].bytes))).toMatchObject({
      peft_type: 'LORA',
      r: 4,
      lora_alpha: 8,
      base_model_name_or_path: 'TinyChat',
    });
    expect(readSafetensors(adapter[1].bytes).tensors.map((t) => t.name)).toContain('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight');
    host.handle({ type: 'start', jobId: 'f', spec: { kind: 'hf-export', runId, tag: 'last', what: 'merged' } });
    expect(await finished('f')).toMatchObject({
      type: 'error',
      message: expect.stringMatching(/^Merging the adapter needs the base model's weights: pick the Hugging Face folder TinyChat again/),
    });
    host.handle({ type: 'start', jobId: 'g', spec: { kind: 'hf-export', runId, tag: 'last', what: 'merged', hf: { files: folder(), memoryGiB: 1 } } });
    const merged = ((await finished('g')) as { result: HfExportResult }).result.files;
    expect(merged.map((f) => f.name).sort()).toEqual([...NAMES, 'lwm_template.json'].sort());
    expect(readSafetensors(merged.find((f) => f.name === 'model.safetensors')!.bytes).tensors.map((t) => t.name)).toContain(
      'model.layers.1.mlp.down_proj.weight',
    );
  });

  it('a run over the memory budget is refused before training, with what would fit', async () => {
    const { host, finished } = makeHost();
    const runId = `m-${Math.random().toString(36).slice(2, 8)}`;
    host.handle({
      type: 'start',
      jobId: 'm',
      spec: { kind: 'train', runId, train: { ...spec, lora: undefined }, data, hf: { files: folder(), memoryGiB: 0.0015 } },
    });
    expect(await finished('m')).toMatchObject({
      type: 'error',
      message: expect.stringMatching(
        /^TinyChat needs [\d.]+ MiB for full fine-tuning, context 48, batch 2, .* more than the 1\.5 MiB budget\. Would fit instead: context 16 \([\d.]+ MiB\); LoRA rank 8 instead of full fine-tuning, batch 1 /,
      ),
    });
    expect(await getRun(runId)).toBeUndefined();
  });
});
