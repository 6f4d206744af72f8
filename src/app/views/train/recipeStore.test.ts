// The Train store with a recipe run, and the measured step of the time estimates, against a fake
// jobs worker: the recipe job's spec, its data-generation progress, a recipe moving on to its next
// stage (a run of its own, shown live), and a step measured, kept, and stopped for a run.
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { fakeJobs } from '../../stores/testing/fakeJobs.ts';
import { recipeStepTimeSpec } from './estimate.ts';
import { buildRecipeSpec } from './form.ts';
import { DEFAULT_FORM } from '../../stores/trainForm.ts';
import { RECIPES } from '../../../train/recipe.ts';
import type { StepTimeResult } from '../../../jobs/steptime.ts';

vi.mock('../../stores/jobClient.ts', async () => (await import('../../stores/testing/fakeJobs.ts')).jobClientModule());
const { started, emit, client } = fakeJobs();

beforeAll(() => {
  Object.defineProperty(globalThis, 'navigator', { value: { gpu: {} }, configurable: true });
});

describe('train store, recipe run', () => {
  it('starts the recipe job, shows its data being generated, and follows it to its next stage', async () => {
    const { useTrainStore } = await import('../../stores/train.ts');
    const store = useTrainStore;
    await store.getState().init();
    const runId = store.getState().start(buildRecipeSpec(DEFAULT_FORM, { webgpuProblem: null }).spec!)!;
    const job = started.at(-1)!;
    expect(job.spec).toEqual({ kind: 'train', runId, recipe: { name: 'quick', domain: 'terminal' }, name: 'Quick recipe · terminal' });
    emit({ type: 'status', jobId: job.jobId, state: 'running' });

    const generating = { kind: 'generate', domain: 'terminal', done: 500, total: 33685, unit: 'turns' } as const;
    emit({ type: 'progress', jobId: job.jobId, data: generating });
    expect(store.getState().liveProgress).toEqual(generating);
    // Step 0's coverage figures come before the first step: the preparation is still on.
    emit({ type: 'metric', jobId: job.jobId, step: 0, values: { coverage_turns: 0.75 } });
    expect(store.getState().liveProgress).toEqual(generating);
    // Another job's progress (the System view's self-test) is not the run's.
    emit({ type: 'progress', jobId: 'other', data: { kind: 'generate', domain: 'web', done: 1, total: 2, unit: 'turns' } });
    expect(store.getState().liveProgress).toEqual(generating);

    // The recipe's second stage is a run of its own: it becomes the live and shown run.
    const next = `${runId}-stage2`;
    emit({ type: 'progress', jobId: job.jobId, data: { kind: 'stage', runId: next, stage: 1, stages: 2 } });
    expect(store.getState()).toMatchObject({ live: { jobId: job.jobId, runId: next }, selectedRunId: next, liveProgress: null });
    emit({ type: 'progress', jobId: job.jobId, data: generating });
    expect(store.getState().liveProgress).toEqual(generating);
    emit({ type: 'metric', jobId: job.jobId, step: 1, values: { loss: 2.5 } });
    expect(store.getState().metrics[next]).toEqual([{ step: 1, values: { loss: 2.5 } }]);
    expect(store.getState().liveProgress).toBeNull(); // the first step ends the preparation

    emit({ type: 'status', jobId: job.jobId, state: 'stopped' });
    expect(store.getState()).toMatchObject({ live: null, liveProgress: null });
  });
});

describe('step-time store', () => {
  it('measures the recipe’s step in the worker once at a time, keeps the result, and stops a measurement for a run', async () => {
    const { useStepTimeStore } = await import('../../stores/stepTime.ts');
    const store = useStepTimeStore;
    expect(store.getState()).toMatchObject({ status: 'idle', tried: false, result: null });
    const spec = recipeStepTimeSpec(RECIPES.quick);
    store.getState().measure(spec);
    const job = started.at(-1)!;
    expect(job.spec).toEqual({ kind: 'steptime', preset: 'quick', vocabSize: 1024, batch: 16, T: 256, steps: 1 });
    expect(store.getState()).toMatchObject({ status: 'measuring', tried: true });
    store.getState().measure(spec); // one at a time
    expect(started.at(-1)).toBe(job);

    const result: StepTimeResult = {
      preset: 'quick',
      vocabSize: 1024,
      batch: 16,
      T: 256,
      seconds: 20,
      warmupSeconds: 60,
      stepFlops: 2.9e10,
      adapter: { description: 'google / swiftshader', isFallbackAdapter: false },
    };
    emit({ type: 'done', jobId: job.jobId, result });
    await vi.waitFor(() => expect(store.getState()).toMatchObject({ status: 'ready', result, error: null }));

    // Measured again, then stopped because a run starts: the first result stays.
    const stop = vi.spyOn(client, 'stop');
    store.getState().measure(spec);
    const again = started.at(-1)!;
    store.getState().cancel();
    expect(stop).toHaveBeenCalledWith(again.jobId);
    emit({ type: 'status', jobId: again.jobId, state: 'stopped' });
    await vi.waitFor(() => expect(store.getState()).toMatchObject({ status: 'ready', result }));

    // A failed measurement says why.
    store.getState().measure(spec);
    emit({ type: 'error', jobId: started.at(-1)!.jobId, message: 'The GPU ran out of memory.', kind: 'bug' });
    await vi.waitFor(() => expect(store.getState()).toMatchObject({ status: 'error', error: 'Could not measure a step: The GPU ran out of memory.' }));
  });
});
