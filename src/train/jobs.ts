// The job kinds a JobHost runs. Each runner takes its spec and a JobContext.
//
// 'train' runs one stage of the pipeline (pipeline.ts) and persists everything itself, in the
// worker: the run record, its metric history and its checkpoints go to IndexedDB
// (src/storage/runs.ts), and only small events (metrics, "checkpoint stored under key K") travel
// to the page. So checkpoint bytes never cross the worker boundary, a run keeps its history when
// no view watches it, and a reload finds in storage everything needed to resume.
import { BUILTIN_TEMPLATES } from '../core/templates/index.ts';
import { listTemplateVersions } from '../storage/templates.ts';
import type { Trajectory } from '../core/schema/types.ts';
import { runSelfTest } from '../gpu/selftest.ts';
import { loadTrajectories } from '../storage/datasets.ts';
import type { RunRecord, RunState } from '../storage/db.ts';
import { appendMetrics, collectOrphans, getRun, loadCheckpointBytes, putRun, recordRunState, saveCheckpoint, truncateMetrics, updateRun } from '../storage/runs.ts';
import { DeviceLostDuringJob, StopRequested, UserFacingError, userMessage, type JobContext, type JobRunner } from './host.ts';
import { runTraining, type TrainResult } from './pipeline.ts';
import type { TrainSpec } from './spec.ts';
import { runLockName, type JobSpecBase } from './protocol.ts';
import { runGenerateJob, type GenerateJobSpec } from './playground.ts';
import { runBenchJob, type BenchJobSpec } from './bench.ts';
import { runHfInspectJob } from './hf.ts';
import { runOptimizeJob, type OptimizeJobSpec } from './optimize.ts';
import type { HfInspectJobSpec, HfTrainFolder } from './hfFolder.ts';
import { runHfExportJob, type HfExportJobSpec } from './hfExport.ts';
import { openTrainFolder, reopenTrainFolder, type OpenedTrainFolder } from './hfTrain.ts';
import { runOnnxInspectJob } from './onnx.ts';
import type { OnnxInspectJobSpec } from './onnxFolder.ts';

/** The kernel self-test on the worker's device (the System view's button). */
export type SelfTestSpec = { kind: 'selftest' };

/** Where a run's trajectories come from. */
export type TrainData =
  /** A dataset stored in IndexedDB: the worker reads it itself (the app). */
  | { datasetId: string; name?: string }
  /** Trajectories sent with the job (tests, and hosts without IndexedDB datasets). */
  | { trajectories: Trajectory[]; name: string };

export type TrainJobSpec =
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

async function loadData(data: TrainData): Promise<Trajectory[]> {
  if ('trajectories' in data) return data.trajectories;
  const trajectories = await loadTrajectories(data.datasetId);
  if (!trajectories.length) throw new UserFacingError(`The dataset ${data.name ?? data.datasetId} has no trajectories in browser storage; load or import data in the Data view.`);
  return trajectories;
}

/**
 * Carries the user's own template versions (from the Prompts view) that the stage's mix names
 * into the spec, so the run renders with them and a resumed run still has them.
 */
async function attachTemplates(spec: TrainSpec): Promise<TrainSpec> {
  const named = Object.keys(spec.templates ?? {}).filter((v) => !Object.hasOwn(BUILTIN_TEMPLATES, v) && !(spec.templateSet && Object.hasOwn(spec.templateSet, v)));
  if (!named.length) return spec;
  const stored = new Map((await listTemplateVersions()).map((v) => [v.version, v.template]));
  const missing = named.filter((v) => !stored.has(v));
  if (missing.length) {
    throw new UserFacingError(`The ${spec.stage.toUpperCase()} template mix names ${missing.join(', ')}, which no stored template version has; change the mix in the Prompts view.`);
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


type NewTrainJob = Extract<TrainJobSpec, { resume?: false }>;
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

async function startNewRun(spec: NewTrainJob, existing: RunRecord | undefined, ctx: JobContext): Promise<TrainStart> {
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
    data: { datasetId: 'datasetId' in data ? data.datasetId : null, name: data.name ?? ('datasetId' in data ? data.datasetId : 'inline data'), trajectories: 0 },
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

async function startResume(spec: ResumeTrainJob, existing: RunRecord | undefined, ctx: JobContext): Promise<TrainStart> {
  if (!existing) throw new UserFacingError(`There is no stored run ${spec.runId} to resume; it may have been deleted.`);
  const data = spec.data ?? (existing.data.datasetId ? { datasetId: existing.data.datasetId, name: existing.data.name } : (() => {
    throw new UserFacingError('This run was trained on data that was not stored; start a new run instead.');
  })());
  // The folder is checked before anything of the stored run changes.
  const opened = await reopenTrainFolder(ctx.rt, existing, spec.hf && { ...spec.hf, memoryGiB: existing.hf?.memoryGiB ?? spec.hf.memoryGiB }, existing.spec);
  // The last checkpoint, or where the run began when it has none yet.
  const last = existing.checkpoints.last;
  const startKey = last?.key ?? existing.from?.key;
  let from: Uint8Array | undefined;
  let teacherCheckpoint: Uint8Array | undefined;
  if (startKey) from = await loadCheckpointBytes(startKey).catch((e: Error) => {
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

async function runTrainJob(spec: TrainJobSpec, ctx: JobContext): Promise<TrainJobResult> {
  if (!spec.runId) throw new UserFacingError('a train job needs a runId');
  return withRunLock(spec.runId, async () => {
    const existing = await getRun(spec.runId);
    const start = spec.resume ? await startResume(spec, existing, ctx) : await startNewRun(spec, existing, ctx);
    let run = start.run;
    let trajectories: Trajectory[];
    try {
      trajectories = await loadData(start.data);
      if (!spec.resume) run = await updateRun(run.id, (r) => (r.data.trajectories = trajectories.length));
    } catch (e) {
      await updateRun(run.id, (r) => {
        r.state = 'failed';
        r.error = userMessage(e as Error);
      }).catch(() => {});
      throw e;
    }
    const best = spec.resume ? run.checkpoints.best : undefined;
    const bestSoFar = best?.evalLoss !== undefined ? { step: best.step, evalLoss: best.evalLoss } : undefined;
    return train(run, trajectories, start.from, ctx, { ...spec.secrets, teacherCheckpoint: start.teacherCheckpoint, bestSoFar, ...(start.hfBase && { hfBase: start.hfBase }) });
  });
}

async function train(run: RunRecord, trajectories: Trajectory[], from: Uint8Array | undefined, ctx: JobContext, extra: TrainSecrets & { teacherCheckpoint?: Uint8Array; bestSoFar?: { step: number; evalLoss: number }; hfBase?: HfBaseOf } = {}): Promise<TrainJobResult> {
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

export const JOB_RUNNERS: Record<string, JobRunner> = {
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
  train: (spec, ctx) => runTrainJob(spec as TrainJobSpec, ctx),
  /** The Playground: one turn's observation from a checkpoint kept loaded between turns (playground.ts). */
  // An ONNX folder runs in onnxruntime-web, without the worker's device: a checkpoint or a Hugging Face folder acquires it.
  generate: Object.assign((spec: JobSpecBase, ctx: JobContext) => runGenerateJob(spec as unknown as GenerateJobSpec, ctx), { gpuOnDemand: true }),
  /** What a picked Hugging Face folder holds and whether it fits, before it is loaded (hf.ts). */
  'hf-inspect': (spec, ctx) => runHfInspectJob(spec as unknown as HfInspectJobSpec, ctx),
  /** What a picked ONNX folder holds (its model files, config and tokenizer), before it is opened (onnx.ts); no GPU needed. */
  'onnx-inspect': Object.assign((spec: JobSpecBase) => runOnnxInspectJob(spec as unknown as OnnxInspectJobSpec), { gpuOnDemand: true }),
  /** A run of a Hugging Face folder as files: its LoRA adapter in PEFT's layout, or a merged model folder (hfExport.ts). */
  'hf-export': (spec, ctx) => runHfExportJob(spec as unknown as HfExportJobSpec, ctx),
  /** A benchmark: infer → judge for its backends and judges, persisted as it goes (bench.ts). */
  // Baselines, endpoints and the local judge need no GPU: only a checkpoint backend acquires it.
  bench: Object.assign((spec: JobSpecBase, ctx: JobContext) => runBenchJob(spec as unknown as BenchJobSpec, ctx), { gpuOnDemand: true }),
  /** A prompt optimisation: the loop over a stored optimisation, its state stored after every evaluation (optimize.ts); the GPU only for a checkpoint. */
  optimize: Object.assign((spec: JobSpecBase, ctx: JobContext) => runOptimizeJob(spec as unknown as OptimizeJobSpec, ctx), { gpuOnDemand: true }),
};
