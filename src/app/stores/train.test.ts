// The Train store when the worker's device is lost mid-run: the run's failure puts it on offer to
// resume (the same offer a reload gives), and resuming starts a job that resumes it.
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { fakeJobs } from './testing/fakeJobs.ts';

vi.mock('./jobClient.ts', async () => (await import('./testing/fakeJobs.ts')).jobClientModule());
const { started, emit } = fakeJobs();

beforeAll(() => {
  // A page with WebGPU (the worker is faked; nothing touches the GPU).
  Object.defineProperty(globalThis, 'navigator', { value: { gpu: {} }, configurable: true });
});

describe('train store, device lost mid-run', () => {
  it('offers to resume the failed run from its last checkpoint, and resuming starts a resume job', async () => {
    const { putRun } = await import('../../storage/runs.ts');
    const { useTrainStore } = await import('./train.ts');
    const store = useTrainStore;
    await store.getState().init();
    const runId = store.getState().start({ kind: 'train', train: { kind: 'train', stage: 'sft', preset: 'micro', steps: 4 } } as never)!;
    const jobId = store.getState().live!.jobId;
    await putRun({ id: runId, name: runId, createdAt: 1, updatedAt: 1, stage: 'sft', spec: { kind: 'train', stage: 'sft', preset: 'micro', steps: 4 }, data: { datasetId: 'd', name: 'd', trajectories: 1 }, from: null, state: 'running', step: 3, checkpoints: {}, resumes: [] } as never);
    await store.getState().refreshRuns();
    emit({ type: 'status', jobId, state: 'running' });

    const message = 'The GPU device was lost (destroyed): gone. The job stopped; a training run can be resumed from its last checkpoint, and the next job uses a fresh device.';
    emit({ type: 'lost', message: 'The GPU device was lost (destroyed): gone.' });
    emit({ type: 'status', jobId, state: 'failed', detail: message });
    emit({ type: 'error', jobId, message });
    expect(store.getState().live).toBeNull();
    expect(store.getState().error).toBe(message);
    expect(store.getState().interrupted.map((r) => r.id)).toEqual([runId]);

    // The worker recorded the failure; the offer stays.
    const { updateRun } = await import('../../storage/runs.ts');
    await updateRun(runId, (r) => (r.state = 'failed'));
    await store.getState().refreshRuns();
    expect(store.getState().interrupted.map((r) => r.id)).toEqual([runId]);

    await store.getState().resumeRun(runId);
    expect(started.at(-1)!.spec).toEqual({ kind: 'train', runId, resume: true });
    expect(store.getState().interrupted).toEqual([]);
  });

  it('a job that fails for another reason is not offered for resuming', async () => {
    const { useTrainStore } = await import('./train.ts');
    const store = useTrainStore;
    const live = store.getState().live!; // the resumed job of the test above
    expect(live.jobId).toBe(started.at(-1)!.jobId);
    emit({ type: 'status', jobId: live.jobId, state: 'failed', detail: 'The job failed: bad spec' });
    expect(store.getState().live).toBeNull();
    expect(store.getState().interrupted).toEqual([]);
  });

  it("another view's job (a benchmark) failing does not show as a training error", async () => {
    const { useTrainStore } = await import('./train.ts');
    const store = useTrainStore;
    store.getState().dismissError();
    emit({ type: 'error', jobId: 'a-bench-job', message: 'The job failed: the endpoint refused the key' });
    expect(store.getState().error).toBeNull();
    // Its own job's error still does, even after its status ended it.
    const own = started.at(-1)!.jobId;
    emit({ type: 'error', jobId: own, message: 'The job failed: bad spec' });
    expect(store.getState().error).toBe('The job failed: bad spec');
  });
});
