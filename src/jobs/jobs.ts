// The job kinds a JobHost runs. Each runner takes its spec and a JobContext.
//
// 'train' runs one stage of the pipeline (pipeline.ts) and persists everything itself, in the
// worker: the run record, its metric history and its checkpoints go to IndexedDB
// (src/storage/runs.ts), and only small events (metrics, "checkpoint stored under key K") travel
// to the page. So checkpoint bytes never cross the worker boundary, a run keeps its history when
// no view watches it, and a reload finds in storage everything needed to resume.
import { BUILTIN_TEMPLATES } from '../core/templates/index.ts';
import { listTemplateVersions } from '../storage/templates.ts';
import { DOMAINS, type KnownDomain, type Trajectory } from '../core/schema/types.ts';
import { runSelfTest, type SelfTestResult } from '../gpu/selftest.ts';
import { loadTrajectories } from '../storage/datasets.ts';
import type { RunRecord, RunState } from '../core/records.ts';
import {
  appendMetrics,
  collectOrphans,
  getRun,
  loadCheckpointBytes,
  putRun,
  recordRunState,
  saveCheckpoint,
  truncateMetrics,
  updateRun,
} from '../storage/runs.ts';
import { DeviceLostDuringJob, StopRequested, UserFacingError, userMessage, type JobContext } from '../train/context.ts';
import { runTraining, type TrainResult } from '../train/pipeline.ts';
import type { TrainSpec } from '../core/trainSpec.ts';
import { runLockName } from './protocol.ts';
import { runGenerateJob, type GenerateJobResult, type GenerateJobSpec, type GenerateProgress } from './playground.ts';
import { runBenchJob, type BenchJobResult, type BenchJobSpec, type BenchProgress } from './bench.ts';
import { runHfInspectJob } from '../train/hf.ts';
import { runOptimizeJob, type OptimizeJobResult, type OptimizeJobSpec, type OptimizeProgress } from './optimize.ts';
import type { HfFolderInfo, HfInspectJobSpec, HfTrainFolder } from '../train/hfFolder.ts';
import { runHfExportJob, type HfExportJobSpec, type HfExportResult } from './hfExport.ts';
import { openTrainFolder, reopenTrainFolder, type OpenedTrainFolder } from '../train/hfTrain.ts';
import { runOnnxInspectJob } from './onnx.ts';
import { RECIPES, recipeSpecs, recipeTrajectory, recipeTrajectoryStream, recipeTurnsNeeded, taskPlayCount, type Recipe } from '../train/recipe.ts';
import { isTaskPlay, playableFamilies, taskPlayTrajectory } from '../envs/tasks/index.ts';
import { runStepTimeJob, type StepTimeResult, type StepTimeSpec } from './steptime.ts';
import type { OnnxFolderInfo, OnnxInspectJobSpec } from './onnxFolder.ts';
import { runSimRlJob, type SimRlJobResult, type SimRlJobSpec, type SimRlProgress } from './simrl.ts';

/** The kernel self-test on the worker's device (the System view's button). */
export type SelfTestSpec = { kind: 'selftest' };

/** Where a run's trajectories come from. */
export type TrainData =
  /** A dataset stored in IndexedDB: the worker reads it itself (the app). */
  | { datasetId: string; name?: string }
  /** Trajectories sent with the job (tests, and hosts without IndexedDB datasets). */
  | { trajectories: Trajectory[]; name: string }
  /**
   * Trajectories the worker generates (a recipe's data): `count` of them from index 0 of the
   * domain's generator with `dataSeed`, or as many as the recipe needs when `count` is absent;
   * then, with `tasks`, task-play trajectories of those families (docs/method.md §13): `tasks.count`
   * of them, or TASK_PLAY_SHARE of the recipe's count when absent.
   */
  | { generate: { recipe: string; domain: KnownDomain; dataSeed: number; count?: number; tasks?: { families: string[]; count?: number } }; name: string };

/**
 * A recipe run (recipe.ts): the worker generates the recipe's data for the domain and trains its
 * stages in order, each a run of its own (the first under `runId`, later ones under
 * stageRunId(runId, i)), each from the last stage's last checkpoint.
 */
export type RecipeJobSpec = {
  kind: 'train';
  runId: string;
  resume?: false;
  /** `tasks`: task families whose task play joins the recipe's data (a world model for Sim RL). */
  recipe: { name: string; domain: KnownDomain; tasks?: string[] };
  name?: string;
};

/** What a train job reports besides metrics ('progress' records). */
export type TrainProgress =
  /** Generating the run's data: `done` of `total` turns (a new recipe run) or trajectories (a resumed one). */
  | { kind: 'generate'; domain: string; done: number; total: number; unit: 'turns' | 'trajectories' }
  /** A recipe job moved on to its next stage, a run of its own. */
  | { kind: 'stage'; runId: string; stage: number; stages: number };

export type TrainJobSpec =
  | RecipeJobSpec
  | {
      kind: 'train';
      /** The run record this job creates and writes to. */
      runId: string;
      resume?: false;
      name?: string;
      /** The stage and its settings; `train.templates` is the stage's template mix. */
      train: TrainSpec;
      data: TrainData;
      /** A stored checkpoint to start from, e.g. the CPT run an SFT run builds on. */
      from?: RunRecord['from'];
      /** Endpoint API keys for the reward judge and the label teacher: used, never stored. */
      secrets?: TrainSecrets;
      /** A Hugging Face folder to start from (full fine-tuning, or LoRA with train.lora); or the folder of the adapter `from` holds. */
      hf?: HfTrainFolder;
    }
  | {
      kind: 'train';
      runId: string;
      /**
       * Continue the stored run from its 'last' checkpoint, with its stored spec, so the batches
       * and schedule continue where they stopped (from scratch when it has no checkpoint yet).
       */
      resume: true;
      /** Needed only when the run's data was sent inline. */
      data?: TrainData;
      secrets?: TrainSecrets;
      /** The run's Hugging Face folder, picked again (the page keeps no files across a reload): checked to be the same one. */
      hf?: HfTrainFolder;
    };

export interface TrainSecrets {
  judgeApiKey?: string;
  teacherApiKey?: string;
}

export interface TrainJobResult extends Omit<TrainResult, 'checkpoint'> {
  runId: string;
}

/** How often buffered metrics are written to IndexedDB (they are also written before each checkpoint). */
const METRIC_FLUSH_MS = 1000;

/** Trajectories generated between two looks at the job's messages (a stop or pause gets in). */
const GENERATE_CHUNK = 250;

/** The run id of stage `i` (0-based) of a recipe run whose first stage is `runId`. */
export function stageRunId(runId: string, i: number): string {
  return i === 0 ? runId : `${runId}-stage${i + 1}`;
}

function recipeNamed(name: string, recipes: Readonly<Record<string, Recipe>>): Recipe {
  if (!Object.hasOwn(recipes, name)) throw new UserFacingError(`There is no recipe '${name}'; known: ${Object.keys(recipes).join(', ')}.`);
  return recipes[name];
}

/** A recipe's data generated here, with progress records, stoppable between chunks. */
async function generateData(
  g: Extract<TrainData, { generate: unknown }>['generate'],
  ctx: JobContext,
  recipes: Readonly<Record<string, Recipe>>,
): Promise<Trajectory[]> {
  if (!(DOMAINS as readonly string[]).includes(g.domain))
    throw new UserFacingError(`A recipe run needs one of the domains ${DOMAINS.join(', ')}; got '${g.domain}'.`);
  const count = g.count;
  const stream =
    count !== undefined
      ? (function* () {
          for (let i = 0; i < count; i++) yield recipeTrajectory(g.domain, g.dataSeed, i);
        })()
      : recipeTrajectoryStream(recipeNamed(g.recipe, recipes), g.domain);
  const total = count ?? Math.ceil(recipeTurnsNeeded(recipeNamed(g.recipe, recipes)));
  const unit = count !== undefined ? 'trajectories' : 'turns';
  const out: Trajectory[] = [];
  let turns = 0;
  const report = () =>
    ctx.progress({ kind: 'generate', domain: g.domain, done: unit === 'turns' ? Math.min(turns, total) : out.length, total, unit } satisfies TrainProgress);
  report();
  for (const t of stream) {
    out.push(t);
    turns += t.turns.length;
    if (out.length % GENERATE_CHUNK === 0) {
      report();
      // A macrotask, so the worker reads its messages (stop, pause) between chunks.
      await new Promise((r) => setTimeout(r, 0));
      await ctx.step();
    }
  }
  report();
  ctx.log(`generated ${out.length} ${g.domain} trajectories (lwm gen --domain ${g.domain} --seed ${g.dataSeed}), ${turns} turns`);
  if (g.tasks) out.push(...(await generateTaskPlay(g.domain, g.tasks, g.dataSeed, out.length, ctx)));
  return out;
}

/** A recipe run's task-play trajectories (after its own): `tasks.count`, or taskPlayCount of the recipe's `recipeCount`. */
async function generateTaskPlay(
  domain: KnownDomain,
  tasks: { families: string[]; count?: number },
  dataSeed: number,
  recipeCount: number,
  ctx: JobContext,
): Promise<Trajectory[]> {
  let families: string[];
  try {
    families = playableFamilies(domain, tasks.families);
  } catch (e) {
    throw new UserFacingError(`Task play: ${(e as Error).message}.`);
  }
  const n = tasks.count ?? taskPlayCount(recipeCount);
  const out: Trajectory[] = [];
  for (let i = 0; i < n; i++) {
    out.push(taskPlayTrajectory(domain, families, dataSeed, i));
    if (out.length % GENERATE_CHUNK === 0) {
      await new Promise((r) => setTimeout(r, 0));
      await ctx.step();
    }
  }
  ctx.log(`and ${n} task-play trajectories of ${families.join(', ')} (lwm gen --domain ${domain} --tasks ${families.join(',')} --n ${n} --seed ${dataSeed})`);
  return out;
}

async function loadData(data: TrainData, ctx: JobContext, recipes: Readonly<Record<string, Recipe>>): Promise<Trajectory[]> {
  if ('trajectories' in data) return data.trajectories;
  if ('generate' in data) return generateData(data.generate, ctx, recipes);
  const trajectories = await loadTrajectories(data.datasetId);
  if (!trajectories.length)
    throw new UserFacingError(`The dataset ${data.name ?? data.datasetId} has no trajectories in browser storage; load or import data in the Data view.`);
  return trajectories;
}

/**
 * Carries the user's own template versions (from the Prompts view) that the stage's mix names
 * into the spec, so the run renders with them and a resumed run still has them.
 */
async function attachTemplates(spec: TrainSpec): Promise<TrainSpec> {
  const named = Object.keys(spec.templates ?? {}).filter(
    (v) => !Object.hasOwn(BUILTIN_TEMPLATES, v) && !(spec.templateSet && Object.hasOwn(spec.templateSet, v)),
  );
  if (!named.length) return spec;
  const stored = new Map((await listTemplateVersions()).map((v) => [v.version, v.template]));
  const missing = named.filter((v) => !stored.has(v));
  if (missing.length) {
    throw new UserFacingError(
      `The ${spec.stage.toUpperCase()} template mix names ${missing.join(', ')}, which no stored template version has; change the mix in the Prompts view.`,
    );
  }
  return { ...spec, templateSet: { ...spec.templateSet, ...Object.fromEntries(named.map((v) => [v, stored.get(v)!])) } };
}

/** Holds the run's Web Lock while it trains, so a second tab cannot resume the same run. */
async function withRunLock<T>(runId: string, body: () => Promise<T>): Promise<T> {
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  if (!locks) return body();
  return locks.request(runLockName(runId), { ifAvailable: true }, async (lock) => {
    if (!lock) throw new UserFacingError('This run is training in another tab of LWM Studio; watch it there or close that tab first.');
    return body();
  });
}

/** A new run of one stage on a dataset or on trajectories sent with it (the Train view's custom form). */
export type NewTrainJob = Extract<TrainJobSpec, { train: TrainSpec }>;
type ResumeTrainJob = Extract<TrainJobSpec, { resume: true }>;
type HfBaseOf = OpenedTrainFolder['hfBase'];

/** What a job trains: its run record, data, starting bytes, and the Hugging Face base it needs. */
interface TrainStart {
  run: RunRecord;
  data: TrainData;
  from?: Uint8Array;
  teacherCheckpoint?: Uint8Array;
  hfBase?: HfBaseOf;
}

/**
 * The folder a new run trains on: the picked one (checked against the folder of the run whose
 * adapter it starts from), or none for a full fine-tune's checkpoint, which holds every weight.
 */
async function newRunFolder(spec: NewTrainJob, ctx: JobContext): Promise<{ hfBase?: HfBaseOf; record?: RunRecord['hf'] }> {
  const fromRun = spec.from ? await getRun(spec.from.runId) : undefined;
  const memoryGiB = spec.hf?.memoryGiB ?? fromRun?.hf?.memoryGiB ?? 4;
  if (fromRun?.hf) {
    const record = { folder: fromRun.hf.folder, tuning: fromRun.hf.tuning, memoryGiB };
    // A LoRA checkpoint holds the adapter alone: its base's weights come from the same folder again.
    const opened = fromRun.hf.tuning === 'lora' ? await reopenTrainFolder(ctx.rt, fromRun, spec.hf, spec.train) : undefined;
    return { ...(opened && { hfBase: opened.hfBase }), record };
  }
  if (!spec.hf) return {};
  const opened = await openTrainFolder(ctx.rt, spec.hf, spec.train);
  return { hfBase: opened.hfBase, record: { folder: opened.ref, tuning: spec.train.lora ? 'lora' : 'full', memoryGiB } };
}

async function startNewRun(spec: NewTrainJob, existing: RunRecord | undefined, ctx: JobContext, recipe?: RunRecord['recipe']): Promise<TrainStart> {
  if (existing) throw new UserFacingError(`A run with id ${spec.runId} already exists.`);
  spec.train = await attachTemplates(spec.train);
  let from: Uint8Array | undefined;
  if (spec.from) {
    from = await loadCheckpointBytes(spec.from.key).catch((e: Error) => {
      throw new UserFacingError(`The starting checkpoint could not be read: ${e.message}`);
    });
  }
  const folder = await newRunFolder(spec, ctx);
  const now = Date.now();
  const data = spec.data;
  const run: RunRecord = {
    id: spec.runId,
    name: spec.name ?? `${spec.train.stage.toUpperCase()} ${new Date(now).toISOString().slice(0, 16).replace('T', ' ')}`,
    createdAt: now,
    updatedAt: now,
    stage: spec.train.stage,
    spec: spec.train,
    data: {
      datasetId: 'datasetId' in data ? data.datasetId : null,
      name: data.name ?? ('datasetId' in data ? data.datasetId : 'inline data'),
      trajectories: 0,
    },
    ...(recipe && { recipe }),
    from: spec.from ?? null,
    state: 'running',
    step: 0,
    checkpoints: {},
    resumes: [],
    ...(folder.record && { hf: folder.record }),
  };
  await putRun(run);
  return { run, data, from, hfBase: folder.hfBase };
}

/** Where a stored run's data comes from again: its dataset, or (a recipe run) the same trajectories regenerated. */
function storedData(run: RunRecord): TrainData {
  if (run.recipe) {
    const { name, domain, dataSeed, tasks } = run.recipe;
    // Task play follows the recipe's own trajectories; a run stopped before its data was all there has no counts yet.
    const whole = run.data.trajectories > 0 && (!tasks || tasks.count !== undefined);
    return {
      generate: {
        recipe: name,
        domain: domain as KnownDomain,
        dataSeed,
        ...(whole && { count: run.data.trajectories - (tasks?.count ?? 0) }),
        ...(tasks && { tasks: { families: tasks.families, ...(whole && { count: tasks.count }) } }),
      },
      name: run.data.name,
    };
  }
  if (run.data.datasetId) return { datasetId: run.data.datasetId, name: run.data.name };
  throw new UserFacingError('This run was trained on data that was not stored; start a new run instead.');
}

async function startResume(spec: ResumeTrainJob, existing: RunRecord | undefined, ctx: JobContext): Promise<TrainStart> {
  if (!existing) throw new UserFacingError(`There is no stored run ${spec.runId} to resume; it may have been deleted.`);
  const data = spec.data ?? storedData(existing);
  // The folder is checked before anything of the stored run changes.
  const opened = await reopenTrainFolder(ctx.rt, existing, spec.hf && { ...spec.hf, memoryGiB: existing.hf?.memoryGiB ?? spec.hf.memoryGiB }, existing.spec);
  // The last checkpoint, or where the run began when it has none yet.
  const last = existing.checkpoints.last;
  const startKey = last?.key ?? existing.from?.key;
  let from: Uint8Array | undefined;
  let teacherCheckpoint: Uint8Array | undefined;
  if (startKey)
    from = await loadCheckpointBytes(startKey).catch((e: Error) => {
      throw new UserFacingError(`The checkpoint to resume from could not be read: ${e.message}`);
    });
  // Rejection sampling with the local teacher samples from where the run began, also on resume.
  if (last && existing.spec.labels?.teacher === 'local' && existing.from?.key) {
    teacherCheckpoint = await loadCheckpointBytes(existing.from.key).catch((e: Error) => {
      throw new UserFacingError(`The teacher checkpoint (where this run began) could not be read: ${e.message}`);
    });
  }
  const at = last?.step ?? 0;
  // Metrics after the checkpoint are recomputed, the same batches in the same order.
  await truncateMetrics(spec.runId, at);
  await collectOrphans(spec.runId);
  const run = await updateRun(spec.runId, (r) => {
    r.state = 'running';
    r.error = undefined;
    r.step = at;
    r.resumes = [...r.resumes, at];
  });
  ctx.log(last ? `resuming from the checkpoint at step ${at}` : 'no checkpoint yet: starting the run again from its beginning');
  return { run, data, from, teacherCheckpoint, ...(opened && { hfBase: opened.hfBase }) };
}

/** What a recipe job hands a stage's train job: the run's recipe record, and the data generated for an earlier stage. */
interface RecipeStageStart {
  recipe: NonNullable<RunRecord['recipe']>;
  trajectories?: Trajectory[];
}

async function runTrainJob(
  spec: Exclude<TrainJobSpec, RecipeJobSpec>,
  ctx: JobContext,
  recipes: Readonly<Record<string, Recipe>>,
  stage?: RecipeStageStart,
): Promise<{ result: TrainJobResult; run: RunRecord; trajectories: Trajectory[] }> {
  if (!spec.runId) throw new UserFacingError('a train job needs a runId');
  return withRunLock(spec.runId, async () => {
    const existing = await getRun(spec.runId);
    const start = spec.resume ? await startResume(spec, existing, ctx) : await startNewRun(spec, existing, ctx, stage?.recipe);
    let run = start.run;
    let trajectories: Trajectory[];
    try {
      trajectories = stage?.trajectories ?? (await loadData(start.data, ctx, recipes));
      // A resumed run keeps its count, unless its data was never all there (a recipe run stopped while generating).
      if (!spec.resume || run.data.trajectories === 0)
        run = await updateRun(run.id, (r) => {
          r.data.trajectories = trajectories.length;
          if (r.recipe?.tasks) r.recipe.tasks.count = trajectories.filter(isTaskPlay).length;
        });
    } catch (e) {
      // A stop while the data is generated ends the run stopped; it resumes from its beginning.
      await updateRun(run.id, (r) => {
        r.state = e instanceof StopRequested ? 'stopped' : 'failed';
        r.error = e instanceof StopRequested ? undefined : userMessage(e as Error);
      }).catch(() => {});
      throw e;
    }
    const best = spec.resume ? run.checkpoints.best : undefined;
    const bestSoFar = best?.evalLoss !== undefined ? { step: best.step, evalLoss: best.evalLoss } : undefined;
    const result = await train(run, trajectories, start.from, ctx, {
      ...spec.secrets,
      teacherCheckpoint: start.teacherCheckpoint,
      bestSoFar,
      ...(start.hfBase && { hfBase: start.hfBase }),
    });
    return { result, run, trajectories };
  });
}

/** A train job: one stage, or a recipe's stages; a resumed recipe stage goes on to the recipe's later stages. */
async function runTrainOrRecipe(spec: TrainJobSpec, ctx: JobContext, recipes: Readonly<Record<string, Recipe>>): Promise<TrainJobResult> {
  if ('recipe' in spec) return runRecipeJob(spec, ctx, recipes);
  const { result, run, trajectories } = await runTrainJob(spec, ctx, recipes);
  const r = run.recipe;
  if (!spec.resume || !r || r.stage + 1 >= r.stages) return result;
  const recipe = recipeNamed(r.name, recipes);
  const firstId = run.id.replace(/-stage\d+$/, '');
  return recipeStages(
    recipe,
    r.domain as KnownDomain,
    r.stage + 1,
    { runId: firstId, name: run.name.replace(/ · stage \d+ of \d+$/, ''), ...(r.tasks && { tasks: r.tasks.families }) },
    trajectories,
    ctx,
    recipes,
  );
}

/** A recipe's data and stages: the first stage generates the data, each later one starts from the last one's last checkpoint. */
async function runRecipeJob(spec: RecipeJobSpec, ctx: JobContext, recipes: Readonly<Record<string, Recipe>>): Promise<TrainJobResult> {
  if (!spec.runId) throw new UserFacingError('a train job needs a runId');
  const recipe = recipeNamed(spec.recipe.name, recipes);
  if (!(DOMAINS as readonly string[]).includes(spec.recipe.domain))
    throw new UserFacingError(`The ${recipe.name} recipe trains on one of the domains ${DOMAINS.join(', ')}; got '${spec.recipe.domain}'.`);
  const tasks = spec.recipe.tasks;
  if (tasks !== undefined && (!Array.isArray(tasks) || !tasks.length || tasks.some((f) => typeof f !== 'string')))
    throw new UserFacingError('Task play names one or more task families (strings); leave it out for none.');
  return recipeStages(recipe, spec.recipe.domain, 0, { runId: spec.runId, name: spec.name, ...(tasks && { tasks }) }, undefined, ctx, recipes);
}

async function recipeStages(
  recipe: Recipe,
  domain: KnownDomain,
  first: number,
  base: { runId: string; name?: string; tasks?: string[] },
  data: Trajectory[] | undefined,
  ctx: JobContext,
  recipes: Readonly<Record<string, Recipe>>,
): Promise<TrainJobResult> {
  const specs = recipeSpecs(recipe, domain, { taskPlay: !!base.tasks });
  const name = base.name ?? `${recipe.name[0].toUpperCase()}${recipe.name.slice(1)} recipe · ${domain}`;
  let trajectories = data;
  let result: TrainJobResult | undefined;
  for (let i = first; i < specs.length; i++) {
    const runId = stageRunId(base.runId, i);
    let from: RunRecord['from'] = null;
    if (i > 0) {
      const prev = await getRun(stageRunId(base.runId, i - 1));
      const last = prev?.checkpoints.last;
      if (!prev || !last)
        throw new UserFacingError(`Stage ${i + 1} of the ${recipe.name} recipe starts from stage ${i}'s last checkpoint, which is no longer stored.`);
      from = { runId: prev.id, runName: prev.name, tag: 'last', step: last.step, stage: prev.stage, key: last.key };
      ctx.progress({ kind: 'stage', runId, stage: i, stages: specs.length } satisfies TrainProgress);
    }
    const job: NewTrainJob = {
      kind: 'train',
      runId,
      name: specs.length > 1 ? `${name} · stage ${i + 1} of ${specs.length}` : name,
      train: specs[i],
      data: {
        generate: { recipe: recipe.name, domain, dataSeed: recipe.dataSeed, ...(base.tasks && { tasks: { families: base.tasks } }) },
        name: `${recipe.name} recipe data${base.tasks ? ' and task play' : ''} · ${domain}`,
      },
      from,
    };
    const stage: RecipeStageStart = {
      recipe: {
        name: recipe.name,
        domain,
        dataSeed: recipe.dataSeed,
        stage: i,
        stages: specs.length,
        ...(base.tasks && { tasks: { families: base.tasks, ...(trajectories && { count: trajectories.filter(isTaskPlay).length }) } }),
      },
      ...(trajectories && { trajectories }),
    };
    const done = await runTrainJob(job, ctx, recipes, stage);
    trajectories = done.trajectories;
    result = done.result;
  }
  return result!;
}

/** The 'train' job runner over a set of recipes (the app's: RECIPES; a test's may add a tiny one). */
export function trainJobRunner(recipes: Readonly<Record<string, Recipe>> = RECIPES): KindRunner<'train'> {
  return (spec, ctx) => runTrainOrRecipe(spec, ctx, recipes);
}

async function train(
  run: RunRecord,
  trajectories: Trajectory[],
  from: Uint8Array | undefined,
  ctx: JobContext,
  extra: TrainSecrets & { teacherCheckpoint?: Uint8Array; bestSoFar?: { step: number; evalLoss: number }; hfBase?: HfBaseOf } = {},
): Promise<TrainJobResult> {
  const runId = run.id;
  let pending: { step: number; values: Record<string, number> }[] = [];
  let lastStep = run.step;
  let flushing: Promise<void> = Promise.resolve();
  let storageError: Error | null = null;
  const flush = () => {
    flushing = flushing.then(async () => {
      if (!pending.length) return;
      const batch = pending;
      pending = [];
      try {
        await appendMetrics(runId, batch);
        const step = lastStep;
        await updateRun(runId, (r) => (r.step = Math.max(r.step, step)));
      } catch (e) {
        storageError ??= e as Error;
      }
    });
    return flushing;
  };
  const timer = setInterval(() => void flush(), METRIC_FLUSH_MS);
  // Writes after the run has ended (a late pause or resume, the runner unwinding after the
  // device was lost) leave the ended state as it is (recordRunState).
  const setState = (state: RunState, error?: string) =>
    recordRunState(runId, state, error).catch((e: Error) => ctx.log(`could not record the run's state (${state}): ${e.message}`));
  const offState = ctx.onState((s) => {
    if (s === 'paused' || s === 'running' || s === 'stopping') void setState(s);
  });
  // A lost device ends the job at once (JobHost reports it failed): record that now, not when the
  // runner next reaches a step, which on a lost device may be late or never.
  const offLost = ctx.rt.on((e) => {
    if (e.type === 'lost') void setState('failed', userMessage(ctx.lost ?? new DeviceLostDuringJob(e.error)));
  });
  try {
    const result = await runTraining(
      run.spec,
      trajectories,
      {
        rt: ctx.rt,
        step: async () => {
          // A metric write that failed (storage full) ends the run with its message.
          if (storageError) throw storageError;
          await ctx.step();
        },
        metric: (step, values) => {
          lastStep = Math.max(lastStep, step);
          pending.push({ step, values });
          ctx.metric(step, values);
        },
        log: (m) => ctx.log(m),
        checkpoint: async (bytes, info) => {
          await flush();
          if (storageError) throw storageError;
          const ref = await saveCheckpoint(runId, info.tag, bytes, { step: info.step, evalLoss: info.evalLoss });
          ctx.checkpoint(info.step, ref.key, ref.size, info.tag);
        },
      },
      from,
      extra,
    );
    await flush();
    if (storageError) throw storageError;
    // The job already failed with the device; a runner that still got to its end is not 'done'.
    if (ctx.lost) throw ctx.lost;
    await setState('done');
    const { checkpoint: _final, ...rest } = result;
    void _final; // the last checkpoint point is the final step, already stored as 'last'
    return { runId, ...rest };
  } catch (e) {
    await flush();
    if (e instanceof StopRequested) await setState('stopped');
    else await setState('failed', userMessage((await ctx.failure(e)) as Error));
    throw e;
  } finally {
    clearInterval(timer);
    offState();
    offLost();
  }
}

/**
 * Every job kind the worker runs, with its spec, the 'progress' records it sends and its result:
 * the one map the page and the worker share. JobClient.run (client.ts) takes a spec of a kind and
 * gives its progress and result typed; JOB_RUNNERS below must have a runner of each kind that
 * takes its spec and gives its result.
 */
export interface JobKinds {
  selftest: { spec: SelfTestSpec; progress: SelfTestResult; result: SelfTestJobResult };
  train: { spec: TrainJobSpec; progress: TrainProgress; result: TrainJobResult };
  steptime: { spec: StepTimeSpec; progress: never; result: StepTimeResult };
  generate: { spec: GenerateJobSpec; progress: GenerateProgress; result: GenerateJobResult | { released: true } };
  'hf-inspect': { spec: HfInspectJobSpec; progress: never; result: HfFolderInfo };
  'onnx-inspect': { spec: OnnxInspectJobSpec; progress: never; result: OnnxFolderInfo };
  'hf-export': { spec: HfExportJobSpec; progress: never; result: HfExportResult };
  bench: { spec: BenchJobSpec; progress: BenchProgress; result: BenchJobResult };
  optimize: { spec: OptimizeJobSpec; progress: OptimizeProgress; result: OptimizeJobResult };
  simrl: { spec: SimRlJobSpec; progress: SimRlProgress; result: SimRlJobResult };
}

export type JobKind = keyof JobKinds;
export type JobSpec<K extends JobKind = JobKind> = JobKinds[K]['spec'];
export type JobProgress<K extends JobKind> = JobKinds[K]['progress'];
export type JobResult<K extends JobKind> = JobKinds[K]['result'];

/** The self-test's result: every check, and how many passed. */
export interface SelfTestJobResult {
  passed: number;
  total: number;
  results: SelfTestResult[];
}

/** A runner of one kind: its spec in, its result out (`gpuOnDemand`: see JobRunner in host.ts). */
export type KindRunner<K extends JobKind> = ((spec: JobSpec<K>, ctx: JobContext) => Promise<JobResult<K>>) & { gpuOnDemand?: boolean };

const onDemand = <K extends JobKind>(run: (spec: JobSpec<K>, ctx: JobContext) => Promise<JobResult<K>>): KindRunner<K> =>
  Object.assign(run, { gpuOnDemand: true });

export const JOB_RUNNERS: { [K in JobKind]: KindRunner<K> } = {
  /**
   * The kernel self-test, run where training runs (the System view's "Run self-test"): each
   * check's result goes to the page as it finishes (a 'progress' record), then all of them.
   */
  selftest: async (_spec, ctx) => {
    const results = await runSelfTest(ctx.rt, (r) => {
      ctx.log(`${r.pass ? 'pass' : 'FAIL'} ${r.name}: ${r.detail}`);
      ctx.progress(r);
    });
    return { passed: results.filter((r) => r.pass).length, total: results.length, results };
  },
  /** One training stage, persisted in IndexedDB (see the header). */
  train: trainJobRunner(),
  /** How long one training step of a model shape takes on this device (the Train view's time estimates). */
  steptime: runStepTimeJob,
  /** The Playground: one turn's observation from a checkpoint kept loaded between turns (playground.ts). */
  // An ONNX folder runs in onnxruntime-web, without the worker's device: a checkpoint or a Hugging Face folder acquires it.
  generate: onDemand<'generate'>(runGenerateJob),
  /** What a picked Hugging Face folder holds and whether it fits, before it is loaded (hf.ts). */
  'hf-inspect': runHfInspectJob,
  /** What a picked ONNX folder holds (its model files, config and tokenizer), before it is opened (onnx.ts); no GPU needed. */
  'onnx-inspect': onDemand<'onnx-inspect'>((spec) => runOnnxInspectJob(spec)),
  /** A run of a Hugging Face folder as files: its LoRA adapter in PEFT's layout, or a merged model folder (hfExport.ts). */
  'hf-export': runHfExportJob,
  /** A benchmark: infer → judge for its backends and judges, persisted as it goes (bench.ts). */
  // Baselines, endpoints and the local judge need no GPU: only a checkpoint backend acquires it.
  bench: onDemand<'bench'>(runBenchJob),
  /** A prompt optimization: the loop over a stored optimization, its state stored after every evaluation (optimize.ts); the GPU only for a checkpoint. */
  optimize: onDemand<'optimize'>(runOptimizeJob),
  /** A Sim RL experiment: four agents' RL runs and held-out evaluations, its state stored after every evaluation (simrl.ts). */
  simrl: runSimRlJob,
};
