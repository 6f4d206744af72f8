// A GPU device lost mid-run (destroyed on purpose, as the System view's "simulate loss" does):
// the training job fails at once with a message that says the run can be resumed, its last
// checkpoint is intact, and resuming it acquires a fresh device and finishes the run.
import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../core/envs/generate.ts';
import { GpuRuntime } from '../gpu/runtime.ts';
import { WorkerDevice } from './device.ts';
import { JobHost } from './host.ts';
import { JOB_RUNNERS, type TrainJobSpec } from './jobs.ts';
import type { TrainSpec } from './pipeline.ts';
import type { FromWorker } from './protocol.ts';

// @ts-expect-error -- the package's types do not resolve through its exports map
if (typeof indexedDB === 'undefined') await import('fake-indexeddb/auto');
const { getRun } = await import('../storage/runs.ts');

const data = generateTrajectories('terminal', 8, 4);
const spec: TrainSpec = {
  kind: 'train',
  stage: 'sft',
  preset: 'micro',
  vocabSize: 300,
  steps: 4,
  batch: 1,
  T: 32,
  evalEvery: 2,
  evalBatches: 1,
  evalJudgeSamples: 0,
  seed: 3,
};
const tick = () => new Promise((r) => setTimeout(r, 5));

describe('a device lost during training', () => {
  it('fails the job with a resumable message, and the run resumes from its last checkpoint on a fresh device', async () => {
    const events: FromWorker[] = [];
    const held: GpuRuntime[] = [];
    const device = new WorkerDevice(
      async () => {
        const rt = await GpuRuntime.create();
        held.push(rt);
        return rt;
      },
      (m) => events.push(m),
    );
    const host = new JobHost(
      () => device.runtime(),
      JOB_RUNNERS,
      (m) => {
        events.push(m);
        // Destroy the device right when step 3 is reported: the last checkpoint is step 2's.
        if (m.type === 'metric' && m.jobId === 'a' && m.step === 3) device.handle('destroy');
      },
    );
    const finished = async (jobId: string) => {
      for (;;) {
        const end = events.find((e) => e.type === 'status' && e.jobId === jobId && (e.state === 'failed' || e.state === 'done' || e.state === 'stopped'));
        if (end) return end;
        await tick();
      }
    };
    const run: TrainJobSpec = {
      kind: 'train',
      runId: `lost-${Math.random().toString(36).slice(2, 8)}`,
      train: spec,
      data: { trajectories: data, name: 'terminal×8' },
    };
    host.handle({ type: 'start', jobId: 'a', spec: run });
    expect(await finished('a')).toMatchObject({ state: 'failed' });
    const error = events.find((e) => e.type === 'error' && e.jobId === 'a') as { message: string };
    expect(error.message).toMatch(/^The GPU device was lost \(destroyed\).* The job stopped; a training run can be resumed from its last checkpoint/);
    expect(events.some((e) => e.type === 'lost')).toBe(true);
    // The runner records the run's failure as the loss reaches it (an IndexedDB write after the message).
    for (let i = 0; i < 400 && (await getRun(run.runId))?.state !== 'failed'; i++) await tick();
    const failed = (await getRun(run.runId))!;
    expect(failed.state).toBe('failed');
    expect(failed.error).toBe(error.message);
    expect(failed.checkpoints.last?.step).toBe(2);

    host.handle({ type: 'start', jobId: 'b', spec: { kind: 'train', runId: run.runId, resume: true, data: run.data } });
    expect(await finished('b')).toMatchObject({ state: 'done' });
    expect(held).toHaveLength(2);
    expect((await getRun(run.runId))!).toMatchObject({ state: 'done', resumes: [2], step: 4 });
    held[1].dispose();
  });
});
