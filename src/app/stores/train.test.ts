// The Train store when the worker's device is lost mid-run: the run's failure puts it on offer to
// resume (the same offer a reload gives), the stored run and the list end 'failed' whatever order
// the worker's writes and messages come in, and resuming starts a job that resumes it.
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { fakeJobs } from './testing/fakeJobs.ts';

vi.mock('./jobClient.ts', async () => (await import('./testing/fakeJobs.ts')).jobClientModule());
const { started, emit } = fakeJobs();
// A run-list read can be held after it has read the records, to finish after a later read.
const reads = vi.hoisted(() => ({ hold: null as Promise<void> | null, held: 0 }));
vi.mock('../../storage/runs.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../storage/runs.ts')>();
  return {
    ...real,
    async listRuns() {
      const runs = await real.listRuns();
      const hold = reads.hold;
      if (hold) {
        reads.held++;
        await hold;
      }
      return runs;
    },
  };
});

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
    await putRun({
      id: runId,
      name: runId,
      createdAt: 1,
      updatedAt: 1,
      stage: 'sft',
      spec: { kind: 'train', stage: 'sft', preset: 'micro', steps: 4 },
      data: { datasetId: 'd', name: 'd', trajectories: 1 },
      from: null,
      state: 'running',
      step: 3,
      checkpoints: {},
      resumes: [],
    } as never);
    await store.getState().refreshRuns();
    emit({ type: 'status', jobId, state: 'running' });

    const message =
      'The GPU device was lost (destroyed): gone. The job stopped; a training run can be resumed from its last checkpoint, and the next job uses a fresh device.';
    emit({ type: 'lost', message: 'The GPU device was lost (destroyed): gone.' });
    emit({ type: 'status', jobId, state: 'failed', detail: message });
    expect(store.getState().runs.find((r) => r.id === runId)?.state).toBe('failed'); // at once, not after a re-read
    emit({ type: 'error', jobId, message });
    expect(store.getState().live).toBeNull();
    expect(store.getState().interrupted.map((r) => r.id)).toEqual([runId]);

    // The worker has not recorded the failure (its runner is still stuck on the lost device), and
    // the page writes nothing (the worker is the record's only writer): the list shows the run
    // failed, the message shows above the form, and storage still says it runs (a reload offers
    // it for resuming, as any run cut off).
    const { getRun, listRuns } = await import('../../storage/runs.ts');
    await vi.waitFor(() => expect(store.getState().error).toBe(message), { timeout: 3000 });
    expect(store.getState().runs.find((r) => r.id === runId)).toMatchObject({ state: 'failed', error: message });
    expect(await getRun(runId)).toMatchObject({ state: 'running' });
    expect((await listRuns()).find((r) => r.id === runId)?.state).toBe('running');
    store.getState().dismissError();

    // Late events of the failed job (a metric, a state the worker sent before it saw the loss)
    // and a late state write of its runner do not bring the run back to 'running' in this page.
    emit({ type: 'metric', jobId, step: 4, values: { loss: 1 } });
    emit({ type: 'status', jobId, state: 'running' });
    const { recordRunState } = await import('../../storage/runs.ts');
    await recordRunState(runId, 'running');
    await store.getState().refreshRuns();
    expect(store.getState().runs.find((r) => r.id === runId)).toMatchObject({ state: 'failed', step: 3, error: message });
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
    // The resume could not begin (its record says nothing of this failure): the message shows above the form.
    emit({ type: 'error', jobId: live.jobId, message: 'The job failed: bad spec' });
    await vi.waitFor(() => expect(store.getState().error).toBe('The job failed: bad spec'), { timeout: 3000 });
    expect(store.getState().runs.find((r) => r.id === live.runId)?.state).toBe('failed');
  });

  it("another view's job (a benchmark) failing does not show as a training error", async () => {
    const { useTrainStore } = await import('./train.ts');
    const store = useTrainStore;
    store.getState().dismissError();
    emit({ type: 'error', jobId: 'a-bench-job', message: 'The job failed: the endpoint refused the key' });
    expect(store.getState().error).toBeNull();
    // Its own job's error does, after its status ended it.
    store.getState().start({ kind: 'train', train: { kind: 'train', stage: 'sft', preset: 'micro', steps: 4 } } as never);
    const own = started.at(-1)!.jobId;
    emit({ type: 'status', jobId: own, state: 'failed', detail: 'The job failed: no dataset' });
    emit({ type: 'error', jobId: own, message: 'The job failed: no dataset' });
    await vi.waitFor(() => expect(store.getState().error).toBe('The job failed: no dataset'));
  });

  it('a run-list read that finishes after a later one does not bring back what it read', async () => {
    const { putRun, recordRunState } = await import('../../storage/runs.ts');
    const { useTrainStore } = await import('./train.ts');
    const store = useTrainStore;
    const id = 'run-read-order';
    await putRun({
      id,
      name: id,
      createdAt: 2,
      updatedAt: 2,
      stage: 'sft',
      spec: { kind: 'train', stage: 'sft', preset: 'micro', steps: 4 },
      data: { datasetId: 'd', name: 'd', trajectories: 1 },
      from: null,
      state: 'running',
      step: 1,
      checkpoints: {},
      resumes: [],
    } as never);
    let release = () => {};
    reads.hold = new Promise<void>((r) => (release = r));
    const early = store.getState().refreshRuns(); // reads 'running', then is held
    await vi.waitFor(() => expect(reads.held).toBe(1));
    reads.hold = null;
    await recordRunState(id, 'failed', 'The job failed: gone');
    await store.getState().refreshRuns();
    expect(store.getState().runs.find((r) => r.id === id)?.state).toBe('failed');
    release();
    await early;
    expect(store.getState().runs.find((r) => r.id === id)?.state).toBe('failed');
  });
});
