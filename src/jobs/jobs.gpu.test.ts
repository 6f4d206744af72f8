// The 'train' job on the GPU, persisted in IndexedDB (real in Chromium, fake-indexeddb in Node):
// a run stopped midway and resumed from its last checkpoint produces the same loss curve as a
// run that was never interrupted, and its stored history says so.
import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../envs/generate.ts';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import type { JobHost } from './host.ts';
import { testJobHost } from './jobs.testing.ts';
import { JOB_RUNNERS, type TrainJobSpec } from './jobs.ts';
import type { TrainSpec } from '../train/pipeline.ts';
import type { FromWorker } from './protocol.ts';

// Node has no IndexedDB: the same code runs against fake-indexeddb there (all its globals).
// @ts-expect-error -- the package's types do not resolve through its exports map
if (typeof indexedDB === 'undefined') await import('fake-indexeddb/auto');
const { getRun, loadCheckpointBytes, loadMetrics, STORAGE_FULL_MESSAGE } = await import('../storage/runs.ts');

const data = generateTrajectories('terminal', 16, 3);
const spec: TrainSpec = {
  kind: 'train',
  stage: 'sft',
  preset: 'micro',
  vocabSize: 300,
  steps: 6,
  batch: 2,
  T: 32,
  evalEvery: 2,
  evalBatches: 1,
  evalJudgeSamples: 0,
  seed: 5,
};

const makeHost = (onEvent?: (m: FromWorker, host: JobHost) => void) => testJobHost(gpuRuntime, JOB_RUNNERS, onEvent);

const losses = (m: { step: number; values: Record<string, number> }[]) => m.filter((x) => 'loss' in x.values).map((x) => [x.step, x.values.loss]);

describe('train job', () => {
  it('stops midway, resumes from the last checkpoint, and continues the same loss curve', async () => {
    const suffix = Math.random().toString(36).slice(2, 8);
    const whole = makeHost();
    const a: TrainJobSpec = { kind: 'train', runId: `whole-${suffix}`, train: spec, data: { trajectories: data, name: 'terminal×16' } };
    whole.host.handle({ type: 'start', jobId: 'a', spec: a });
    expect(await whole.finished('a')).toMatchObject({ type: 'status', state: 'done' });
    const reference = losses(await loadMetrics(a.runId));
    expect(reference.map(([s]) => s)).toEqual([1, 2, 3, 4, 5, 6]);

    // Stop right when step 3 is reported (the event arrives synchronously, before the next step):
    // the last checkpoint is then the one of step 2.
    const { host, events, finished } = makeHost((m, h) => {
      if (m.type === 'metric' && m.jobId === 'b1' && m.step === 3) h.handle({ type: 'stop', jobId: 'b1' });
    });
    const b: TrainJobSpec = { kind: 'train', runId: `split-${suffix}`, train: spec, data: { trajectories: data, name: 'terminal×16' } };
    host.handle({ type: 'start', jobId: 'b1', spec: b });
    expect(await finished('b1')).toMatchObject({ state: 'stopped' });
    const stopped = (await getRun(b.runId))!;
    expect(stopped.state).toBe('stopped');
    expect(stopped.checkpoints.last?.step).toBe(2);
    expect((await loadMetrics(b.runId)).at(-1)?.step).toBe(3);
    expect(events.filter((e) => e.type === 'checkpoint' && e.jobId === 'b1').map((e) => (e as { tag?: string }).tag)).toEqual(['last', 'best']);

    host.handle({ type: 'start', jobId: 'b2', spec: { kind: 'train', runId: b.runId, resume: true, data: b.data } });
    expect(await finished('b2')).toMatchObject({ state: 'done' });
    const resumed = (await getRun(b.runId))!;
    expect(resumed).toMatchObject({ state: 'done', resumes: [2], step: 6 });
    expect(resumed.checkpoints.last?.step).toBe(6);
    expect((await loadCheckpointBytes(resumed.checkpoints.last!.key)).byteLength).toBe(resumed.checkpoints.last!.size);
    // The resumed job reported from step 3 on; the stored history is one continuous curve.
    expect(events.filter((e) => e.type === 'metric' && e.jobId === 'b2' && 'loss' in e.values).map((e) => (e as { step: number }).step)).toEqual([3, 4, 5, 6]);
    const curve = losses(await loadMetrics(b.runId));
    expect(curve.map(([s]) => s)).toEqual([1, 2, 3, 4, 5, 6]);
    for (let i = 0; i < curve.length; i++) expect(curve[i][1]).toBeCloseTo(reference[i][1], 5);
    expect((await loadMetrics(b.runId)).filter((m) => 'eval_loss' in m.values).map((m) => m.step)).toEqual([2, 4, 6]);
  });

  it('reports a bad spec, an unknown template version and a missing run in words', async () => {
    const { host, events, finished } = makeHost();
    host.handle({ type: 'start', jobId: 'x', spec: { kind: 'train', runId: 'nope', resume: true } as TrainJobSpec });
    expect(await finished('x')).toBeTruthy();
    expect(events.find((e) => e.type === 'error')).toMatchObject({ message: expect.stringContaining('no stored run') });
    host.handle({
      type: 'start',
      jobId: 'y',
      spec: { kind: 'train', runId: `t-${Math.random()}`, train: { ...spec, templates: { v9: 1 } }, data: { trajectories: data, name: 'x' } } as TrainJobSpec,
    });
    await finished('y');
    expect(events.filter((e) => e.type === 'error').at(-1)).toMatchObject({
      message: expect.stringContaining('names v9, which no stored template version has'),
    });
  });

  it('a full quota at a checkpoint fails the run with the storage-full message and keeps the previous checkpoint', async () => {
    const { host, events, finished } = makeHost();
    const runId = `quota-${Math.random().toString(36).slice(2, 8)}`;
    // After the first checkpoint, every new checkpoint record fails as a full disk would.
    const proto = IDBObjectStore.prototype;
    const put = proto.put;
    let stored = 0;
    proto.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
      if (this.name === 'checkpoints' && stored++ >= 1) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      return put.call(this, value, key);
    };
    try {
      host.handle({
        type: 'start',
        jobId: 'q',
        spec: { kind: 'train', runId, train: { ...spec, steps: 4 }, data: { trajectories: data, name: 'terminal×16' } },
      });
      expect(await finished('q')).toMatchObject({ type: 'status', state: 'failed' });
    } finally {
      proto.put = put;
    }
    expect(events.find((e) => e.type === 'error')).toMatchObject({ message: STORAGE_FULL_MESSAGE });
    const run = (await getRun(runId))!;
    expect(run).toMatchObject({ state: 'failed', error: STORAGE_FULL_MESSAGE });
    expect(run.checkpoints.last?.step).toBe(2);
    expect((await loadCheckpointBytes(run.checkpoints.last!.key)).byteLength).toBe(run.checkpoints.last!.size);
    // Step 0 holds the coverage figures (what the model sees), written before the first step.
    expect((await loadMetrics(runId)).map((m) => m.step)).toEqual([0, 1, 2, 3, 4]);
  });
});
