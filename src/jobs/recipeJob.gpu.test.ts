// A recipe run as the Train view starts it, on the GPU, persisted in IndexedDB (fake-indexeddb in
// Node): the worker generates the recipe's data itself, records the run as a recipe run, trains
// its stages in order (each from the last one's checkpoint), and a stopped recipe run resumes with
// its data regenerated, not read from a dataset, continuing the same loss curve. Tiny recipes of
// the micro preset stand in for the quick one (trainJobRunner takes the set of recipes); the
// 'steptime' job measures a step of a model shape.
import { describe, expect, it } from 'vitest';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { presetConfig, trainStepFlops } from '../core/model/config.ts';
import type { JobHost } from './host.ts';
import { testJobHost } from './jobs.testing.ts';
import { JOB_RUNNERS, stageRunId, trainJobRunner, type RecipeJobSpec, type TrainJobSpec } from './jobs.ts';
import type { FromWorker } from './protocol.ts';
import { recipeTaskPlay, recipeTrajectories, TASK_PLAY_SHARE, type Recipe, type RecipeStage } from '../train/recipe.ts';
import type { StepTimeResult } from './steptime.ts';

// @ts-expect-error -- the package's types do not resolve through its exports map
if (typeof indexedDB === 'undefined') await import('fake-indexeddb/auto');
const { getRun, loadMetrics } = await import('../storage/runs.ts');

const STAGE: RecipeStage = {
  stage: 'sft',
  preset: 'micro',
  vocabSize: 300,
  steps: 6,
  batch: 4,
  T: 32,
  evalEvery: 2,
  evalBatches: 1,
  evalJudgeSamples: 0,
  evalFraction: 0.3,
  seed: 5,
};
const TINY: Recipe = { name: 'tiny', summary: 'one SFT stage of the micro preset', dataSeed: 11, stages: [STAGE] };
const TWO: Recipe = {
  name: 'two',
  summary: 'CPT, then SFT',
  dataSeed: 12,
  stages: [
    { ...STAGE, stage: 'cpt', steps: 2, evalEvery: 2 },
    { ...STAGE, steps: 3, evalEvery: 3 },
  ],
};
const RUNNERS = { ...JOB_RUNNERS, train: trainJobRunner({ tiny: TINY, two: TWO }) };

const makeHost = (onEvent?: (m: FromWorker, host: JobHost) => void) => testJobHost(gpuRuntime, RUNNERS, onEvent);

const losses = (m: { step: number; values: Record<string, number> }[]) => m.filter((x) => 'loss' in x.values).map((x) => [x.step, x.values.loss]);
const suffix = () => Math.random().toString(36).slice(2, 8);

describe('recipe job', () => {
  it('generates the recipe’s data in the worker, records a recipe run, and trains it', async () => {
    const { host, finished, progress } = makeHost();
    const spec: RecipeJobSpec = { kind: 'train', runId: `tiny-${suffix()}`, recipe: { name: 'tiny', domain: 'terminal' } };
    host.handle({ type: 'start', jobId: 'r', spec });
    expect(await finished('r')).toMatchObject({ type: 'status', state: 'done' });
    const expected = recipeTrajectories(TINY, 'terminal');
    const run = (await getRun(spec.runId))!;
    expect(run).toMatchObject({
      name: 'Tiny recipe · terminal',
      state: 'done',
      step: 6,
      spec: { ...STAGE, kind: 'train', domains: ['terminal'] },
      data: { datasetId: null, trajectories: expected.length },
      recipe: { name: 'tiny', domain: 'terminal', dataSeed: 11, stage: 0, stages: 1 },
    });
    // Progress while generating: turns done of the turns the recipe needs, ending at all of them.
    const generating = progress('r').filter((p) => p.kind === 'generate');
    expect(generating[0]).toMatchObject({ kind: 'generate', domain: 'terminal', done: 0, unit: 'turns' });
    expect(generating.at(-1)).toMatchObject({ done: generating.at(-1)!.total });
    expect(losses(await loadMetrics(spec.runId)).map(([s]) => s)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('trains a recipe’s stages in order, each a run from the last one’s checkpoint', async () => {
    const { host, finished, progress } = makeHost();
    const runId = `two-${suffix()}`;
    host.handle({ type: 'start', jobId: 't', spec: { kind: 'train', runId, recipe: { name: 'two', domain: 'os' }, name: 'Two' } satisfies RecipeJobSpec });
    expect(await finished('t')).toMatchObject({ type: 'status', state: 'done' });
    const first = (await getRun(runId))!;
    const second = (await getRun(stageRunId(runId, 1)))!;
    expect(first).toMatchObject({ name: 'Two · stage 1 of 2', stage: 'cpt', state: 'done', recipe: { stage: 0, stages: 2, domain: 'os' } });
    expect(second).toMatchObject({ name: 'Two · stage 2 of 2', stage: 'sft', state: 'done', step: 3, recipe: { stage: 1, stages: 2 } });
    expect(second.from).toMatchObject({ runId, tag: 'last', step: 2, stage: 'cpt', key: first.checkpoints.last!.key });
    expect(second.data.trajectories).toBe(first.data.trajectories);
    expect(progress('t').filter((p) => p.kind === 'stage')).toEqual([{ kind: 'stage', runId: stageRunId(runId, 1), stage: 1, stages: 2 }]);
  });

  it('a stopped recipe run resumes on its regenerated data and continues the same loss curve', async () => {
    const whole = makeHost();
    const a: RecipeJobSpec = { kind: 'train', runId: `whole-${suffix()}`, recipe: { name: 'tiny', domain: 'terminal' } };
    whole.host.handle({ type: 'start', jobId: 'a', spec: a });
    expect(await whole.finished('a')).toMatchObject({ state: 'done' });
    const reference = losses(await loadMetrics(a.runId));

    // Stop when step 3 is reported: the last checkpoint is step 2's.
    const { host, finished, progress } = makeHost((m, h) => {
      if (m.type === 'metric' && m.jobId === 'b1' && m.step === 3) h.handle({ type: 'stop', jobId: 'b1' });
    });
    const b: RecipeJobSpec = { kind: 'train', runId: `split-${suffix()}`, recipe: { name: 'tiny', domain: 'terminal' } };
    host.handle({ type: 'start', jobId: 'b1', spec: b });
    expect(await finished('b1')).toMatchObject({ state: 'stopped' });
    const stopped = (await getRun(b.runId))!;
    expect(stopped).toMatchObject({ state: 'stopped', checkpoints: { last: { step: 2 } } });

    // The resume job names only the run, as the Train view's does after a reload: the worker
    // regenerates the run's trajectories (as many as it recorded) instead of reading a dataset.
    host.handle({ type: 'start', jobId: 'b2', spec: { kind: 'train', runId: b.runId, resume: true } satisfies TrainJobSpec });
    expect(await finished('b2')).toMatchObject({ state: 'done' });
    expect(
      progress('b2')
        .filter((p) => p.kind === 'generate')
        .at(-1),
    ).toEqual({ kind: 'generate', domain: 'terminal', done: stopped.data.trajectories, total: stopped.data.trajectories, unit: 'trajectories' });
    expect((await getRun(b.runId))!).toMatchObject({ state: 'done', resumes: [2], step: 6 });
    const curve = losses(await loadMetrics(b.runId));
    expect(curve.map(([s]) => s)).toEqual([1, 2, 3, 4, 5, 6]);
    for (let i = 0; i < curve.length; i++) expect(curve[i][1]).toBeCloseTo(reference[i][1], 5);
  });

  it('adds task play to the recipe’s data, records it, and regenerates the same data on resume', async () => {
    const whole = makeHost();
    const w: RecipeJobSpec = { kind: 'train', runId: `play-whole-${suffix()}`, recipe: { name: 'tiny', domain: 'terminal', tasks: ['write_word'] } };
    whole.host.handle({ type: 'start', jobId: 'w', spec: w });
    expect(await whole.finished('w')).toMatchObject({ state: 'done' });
    const reference = losses(await loadMetrics(w.runId));
    const { host, finished, progress } = makeHost((m, h) => {
      if (m.type === 'metric' && m.jobId === 'p1' && m.step === 3) h.handle({ type: 'stop', jobId: 'p1' });
    });
    const spec: RecipeJobSpec = { kind: 'train', runId: `play-${suffix()}`, recipe: { name: 'tiny', domain: 'terminal', tasks: ['write_word'] } };
    host.handle({ type: 'start', jobId: 'p1', spec });
    expect(await finished('p1')).toMatchObject({ state: 'stopped' });
    const own = recipeTrajectories(TINY, 'terminal');
    const play = recipeTaskPlay(TINY, 'terminal', own.length, ['write_word']);
    expect(play.length).toBe(Math.round(TASK_PLAY_SHARE * own.length));
    const stopped = (await getRun(spec.runId))!;
    expect(stopped).toMatchObject({
      data: { trajectories: own.length + play.length, name: 'tiny recipe data and task play · terminal' },
      recipe: { name: 'tiny', domain: 'terminal', tasks: { families: ['write_word'], count: play.length } },
      // Rows laid out for the answer budget a Sim RL world gives the model: a quarter of T.
      spec: { answerRoom: STAGE.T! / 4 },
    });
    // The resume regenerates as many of each as the run recorded, and trains on to the end.
    host.handle({ type: 'start', jobId: 'p2', spec: { kind: 'train', runId: spec.runId, resume: true } satisfies TrainJobSpec });
    expect(await finished('p2')).toMatchObject({ state: 'done' });
    expect(
      progress('p2')
        .filter((p) => p.kind === 'generate')
        .at(-1),
    ).toMatchObject({ done: own.length, total: own.length, unit: 'trajectories' });
    expect((await getRun(spec.runId))!).toMatchObject({ state: 'done', step: 6, data: { trajectories: own.length + play.length } });
    // The same rows as the uninterrupted run: the same loss curve.
    const curve = losses(await loadMetrics(spec.runId));
    expect(curve.map(([s]) => s)).toEqual([1, 2, 3, 4, 5, 6]);
    for (let i = 0; i < curve.length; i++) expect(curve[i][1]).toBeCloseTo(reference[i][1], 5);
  });

  it('names a task family that cannot be played', async () => {
    const { host, events, finished } = makeHost();
    host.handle({
      type: 'start',
      jobId: 'q',
      spec: { kind: 'train', runId: `q-${suffix()}`, recipe: { name: 'tiny', domain: 'terminal', tasks: ['fly_kite'] } },
    });
    await finished('q');
    expect((events.find((e) => e.type === 'error') as { message: string }).message).toMatch(/^Task play: .*fly_kite/);
    host.handle({ type: 'start', jobId: 'r', spec: { kind: 'train', runId: `r-${suffix()}`, recipe: { name: 'tiny', domain: 'terminal', tasks: [] } } });
    await finished('r');
    expect(events.filter((e) => e.type === 'error').at(-1)).toMatchObject({
      message: 'Task play names one or more task families (strings); leave it out for none.',
    });
  });

  it('names an unknown recipe or domain', async () => {
    const { host, events, finished } = makeHost();
    host.handle({ type: 'start', jobId: 'x', spec: { kind: 'train', runId: `x-${suffix()}`, recipe: { name: 'huge', domain: 'terminal' } } });
    await finished('x');
    expect(events.find((e) => e.type === 'error')).toMatchObject({ message: "There is no recipe 'huge'; known: tiny, two." });
    host.handle({ type: 'start', jobId: 'y', spec: { kind: 'train', runId: `y-${suffix()}`, recipe: { name: 'tiny', domain: 'chess' } } });
    await finished('y');
    expect(events.filter((e) => e.type === 'error').at(-1)).toMatchObject({
      message: "The tiny recipe trains on one of the domains mcp, search, terminal, swe, android, web, os; got 'chess'.",
    });
  });
});

describe('steptime job', () => {
  it('times a training step of a model shape after a warm-up step', async () => {
    const { host, events, finished } = makeHost();
    host.handle({ type: 'start', jobId: 's', spec: { kind: 'steptime', preset: 'micro', vocabSize: 256, batch: 2, T: 32, steps: 2 } });
    expect(await finished('s')).toMatchObject({ state: 'done' });
    const r = (events.find((e) => e.type === 'done' && e.jobId === 's') as { result: StepTimeResult }).result;
    expect(r).toMatchObject({ preset: 'micro', vocabSize: 256, batch: 2, T: 32, stepFlops: trainStepFlops(presetConfig('micro'), 2, 32) });
    expect(r.seconds).toBeGreaterThan(0);
    expect(r.warmupSeconds).toBeGreaterThan(0);
    expect(r.adapter.description).toBeTruthy();
    host.handle({ type: 'start', jobId: 'bad', spec: { kind: 'steptime', preset: 'micro', vocabSize: 256, batch: 2, T: 100 } });
    await finished('bad');
    expect(events.find((e) => e.type === 'error' && e.jobId === 'bad')).toMatchObject({
      message: 'A step-time measurement of micro needs T at most its context, 64; got 100.',
    });
  });
});
