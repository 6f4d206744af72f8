// The 'optimize' job: the prompt-optimization loop (src/core/optimize/loop.ts) in the worker that
// owns the GPU, for a stored OptimizationRecord (src/storage/optimize.ts). The simulated model is
// opened as the Bench opens its backends (baselines, a stored checkpoint, a Hugging Face or ONNX
// folder from the files the page sends with the job, an endpoint), the judge
// as the Bench's judges; the optimizer is the offline one or an endpoint LLM. The loop's state is
// written into the record after every evaluation and sent to the page in a progress record, so
// the Prompts view draws the lineage as it grows, and a reload resumes without redoing finished
// rounds (candidates already scored keep their scores; the one cut off is scored again).
import type { GenerateRequest } from '../core/backend.ts';
import { benchSampleRecords } from '../core/bench/evalTurns.ts';
import { sampleFromRecord, turnRequestOf, type BenchSample } from '../core/bench/runner.ts';
import { benchEvaluator, splitForOptimization, templateRender, templateValidator, type OptimizationSplits } from '../core/optimize/evaluate.ts';
import { newLoopState, plannedEvaluations, runOptimization, type LoopConfig, type LoopState, type Optimizer } from '../core/optimize/loop.ts';
import { endpointOptimizer, offlineOptimizer } from '../core/optimize/optimizers.ts';
import { SYSTEM_PROMPT_FIELDS } from '../core/schema/types.ts';
import { TEMPLATE_VARIABLE_NAMES } from '../core/templates/index.ts';
import type { Judge } from '../core/judge/types.ts';
import { EndpointClient } from '../backends/endpoint.ts';
import { loadTrajectories } from '../storage/datasets.ts';
import type { BenchBackendRef, BenchJudgeRef, OptimizationRecord } from '../core/records.ts';
import { getOptimization, updateOptimization } from '../storage/optimize.ts';
import { openBenchBackend, openBenchJudge, type BenchBackend } from './bench.ts';
import type { HfFolderFile } from '../train/hfFolder.ts';
import { StopRequested, UserFacingError, userMessage, type JobContext } from '../train/context.ts';
import { optimizeLockName } from './protocol.ts';

export interface OptimizeJobSpec {
  kind: 'optimize';
  /** The stored optimization to run (or continue). */
  optId: string;
  /** Endpoint API keys of the backend, the judge and the optimizer: used, never stored. */
  secrets?: { apiKeys?: Partial<Record<'backend' | 'judge' | 'optimizer', string>> };
  /** The files of the backend's Hugging Face or ONNX folder (File handles from the page), by its folder id: used, never stored. */
  folder?: { id: string; files: HfFolderFile[] };
}

/** What the page is sent as the run goes (a JobContext 'progress' record). */
export interface OptimizeProgress {
  optId: string;
  phase: 'samples' | 'evaluate' | 'state';
  /** The split being scored and its samples done (phase 'evaluate'). */
  split?: 'dev' | 'test';
  samples?: { done: number; total: number };
  /** Evaluations finished of those the run plans (start, K per round, test). */
  evaluations: { done: number; planned: number };
  /** Time left by the rate measured so far; null while there is nothing to go by. */
  etaMs: number | null;
  /** The loop's state after its latest change (phase 'state'). */
  state?: LoopState;
}

export interface OptimizeJobResult {
  optId: string;
  best: string;
  rounds: number;
  stopped: LoopState['stopped'];
}

/** Everything the job touches, injected so tests run it without a worker, a GPU or IndexedDB. */
export interface OptimizeDeps {
  get(id: string): Promise<OptimizationRecord | undefined>;
  update(id: string, change: (o: OptimizationRecord) => void): Promise<OptimizationRecord>;
  /** The dataset's held-out turns as bench samples (before the dev/test split). */
  loadSamples(o: OptimizationRecord): Promise<BenchSample[]>;
  openBackend(ref: BenchBackendRef, o: OptimizationRecord): Promise<BenchBackend>;
  openJudge(ref: BenchJudgeRef): { judge: Judge; concurrency: number };
  optimizer(o: OptimizationRecord, splits: OptimizationSplits): Optimizer;
  signal: AbortSignal;
  progress(p: OptimizeProgress): void;
  log(message: string): void;
  now?: () => number;
}

/**
 * How a template text reaches the simulated model: core's templateRender, in the form lwm optimize
 * sends the same backend (requestFormFor: 'chat' for an endpoint or a folder with a chat template,
 * 'turn' for a checkpoint and the baselines), with the start template's prediction tags.
 */
export function optimizationRender(
  o: Pick<OptimizationRecord, 'start' | 'backend'>,
  opened: Pick<BenchBackend, 'form'>,
): (text: string, s: BenchSample) => GenerateRequest {
  if (o.backend.kind === 'imported') throw new UserFacingError(`${o.backend.name}: an imported backend cannot be run again.`);
  return templateRender(opened.form, o.start.template);
}

/** A few dev samples' system-prompt fields as text, for the endpoint optimizer's prompt. */
export function sampleFieldsText(dev: readonly BenchSample[], n = 2, clip = 600): string {
  return dev
    .slice(0, n)
    .map((s, i) => {
      const fields = turnRequestOf(s).sample.systemPrompt as unknown as Record<string, string>;
      const lines = SYSTEM_PROMPT_FIELDS.map((f) => `  ${f}: ${String(fields?.[f] ?? '').slice(0, clip)}`);
      return [`Sample ${i + 1} (${s.domain}):`, ...lines].join('\n');
    })
    .join('\n\n');
}

/** Evaluations the state has finished: every scored version, and the test split once scored. */
export function evaluationsDone(s: LoopState | null): number {
  if (!s) return 0;
  return s.versions.filter((v) => v.mean !== undefined).length + (s.test ? 1 : 0);
}

/** How often a sample's progress reaches the page. */
const SAMPLE_REPORT_MS = 100;

/** Counts the samples scored in this job for the rate, and sends progress records. */
class Tracker {
  private samples = 0;
  private readonly started: number;
  private last: { split: 'dev' | 'test'; done: number; total: number } | null = null;
  private lastSent = -Infinity;
  constructor(
    private readonly deps: OptimizeDeps,
    private readonly optId: string,
    private readonly config: LoopConfig,
    private state: LoopState,
  ) {
    this.started = this.now();
  }
  private now() {
    return (this.deps.now ?? Date.now)();
  }
  /** Time left: samples still to score (this evaluation's rest, the planned ones, the test split) at the measured rate. */
  private eta(): number | null {
    if (!this.samples) return null;
    const c = this.config;
    const left = plannedEvaluations(c) - evaluationsDone(this.state);
    const inFlight = this.last ? this.last.done : 0;
    const devLeft = Math.max(0, left - (c.testSize > 0 && !this.state.test ? 1 : 0));
    const remaining = devLeft * c.devSize + (c.testSize > 0 && !this.state.test ? c.testSize : 0) - inFlight;
    return Math.max(0, Math.round(((this.now() - this.started) / this.samples) * remaining));
  }
  private base() {
    return { optId: this.optId, evaluations: { done: evaluationsDone(this.state), planned: plannedEvaluations(this.config) } };
  }
  /** A sample scored: counted for the rate; sent at most every SAMPLE_REPORT_MS (and at an evaluation's end), as a fast backend scores thousands a second. */
  sample(split: 'dev' | 'test', done: number, total: number) {
    this.samples++;
    this.last = { split, done, total };
    const now = this.now();
    if (done < total && now - this.lastSent < SAMPLE_REPORT_MS) return;
    this.lastSent = now;
    this.deps.progress({ ...this.base(), phase: 'evaluate', split, samples: { done, total }, etaMs: this.eta() });
  }
  changed(state: LoopState) {
    this.state = state;
    this.last = null;
    this.deps.progress({ ...this.base(), phase: 'state', state, etaMs: this.eta() });
  }
}

/** The dev/test split and the loop's state: a stored one (resume) or a new one, checked against the data. */
async function splitsAndState(
  optId: string,
  o: OptimizationRecord,
  deps: OptimizeDeps,
): Promise<{ splits: OptimizationSplits; config: LoopConfig; state: LoopState }> {
  deps.progress({ optId, phase: 'samples', evaluations: { done: evaluationsDone(o.loop), planned: 0 }, etaMs: null });
  const samples = await deps.loadSamples(o);
  const splits = splitForOptimization(samples, { devPerDomain: o.data.devPerDomain, testPerDomain: o.data.testPerDomain, seed: o.data.seed });
  if (splits.dev.length < 2)
    throw new UserFacingError(
      `The dataset ${o.data.name} gives ${splits.dev.length} dev sample(s) for these settings; the loop needs at least 2 (raise the eval share or the dev samples per domain, or choose other domains).`,
    );
  const config: LoopConfig = { ...o.config, devSize: splits.dev.length, testSize: splits.test.length };
  if (o.loop && (o.loop.config.devSize !== config.devSize || o.loop.config.testSize !== config.testSize)) {
    throw new UserFacingError(
      `The dataset ${o.data.name} changed since this optimization began (${config.devSize} dev samples now, ${o.loop.config.devSize} then); start a new optimization.`,
    );
  }
  let state: LoopState;
  try {
    state = o.loop ?? newLoopState(config);
  } catch (e) {
    throw new UserFacingError(`The optimization's settings cannot be used: ${(e as Error).message}`);
  }
  deps.log(
    o.loop
      ? `resuming after ${o.loop.round} finished round(s), ${evaluationsDone(o.loop)} evaluation(s) kept`
      : `${splits.dev.length} dev and ${splits.test.length} test samples from ${o.data.name}`,
  );
  return { splits, config, state };
}

/** Stores each state the loop hands over, in order, and then tells the page. */
function stateWriter(optId: string, deps: OptimizeDeps, tracker: Tracker) {
  let chain: Promise<unknown> = Promise.resolve();
  let failed: Error | null = null;
  return {
    onState(s: LoopState) {
      const copy = structuredClone(s);
      // The page hears of a state once it is stored: what it shows survives a reload.
      chain = chain
        .then(() => deps.update(optId, (o) => (o.loop = copy)))
        .then(() => tracker.changed(copy))
        .catch((e: Error) => (failed ??= e));
    },
    async settle() {
      await chain;
      if (failed) throw failed;
    },
  };
}

/** Records how a run ended (state, error) in its record; the record may be gone. */
async function recordEnd(deps: OptimizeDeps, optId: string, e: unknown): Promise<void> {
  const stop = e instanceof StopRequested || deps.signal.aborted;
  await deps
    .update(optId, (o) => {
      o.state = stop ? 'stopped' : 'failed';
      o.error = stop ? undefined : userMessage(e as Error);
    })
    .catch(() => {});
}

/** Runs (or continues) a stored optimization to its end; its state and lineage are kept in the record. */
export async function runOptimize(optId: string, deps: OptimizeDeps): Promise<OptimizeJobResult> {
  const initial = await deps.get(optId);
  if (!initial) throw new UserFacingError(`There is no stored prompt optimization ${optId}; it may have been deleted.`);
  const o = await deps.update(optId, (r) => {
    r.state = 'running';
    r.error = undefined;
  });
  let opened: BenchBackend | null = null;
  try {
    const { splits, config, state } = await splitsAndState(optId, o, deps);
    // The tracker counts what is stored (a copy), not the loop's live state.
    const tracker = new Tracker(deps, optId, config, structuredClone(state));
    const writer = stateWriter(optId, deps, tracker);
    opened = await deps.openBackend(o.backend, o);
    const { judge } = deps.openJudge(o.judge);
    const evaluate = benchEvaluator({
      backend: opened.backend,
      judge,
      splits,
      render: optimizationRender(o, opened),
      generate: opened.generate,
      concurrency: opened.concurrency,
      onProgress: (p) => tracker.sample(p.split, p.done, p.total),
    });
    const env = {
      optimizer: deps.optimizer(o, splits),
      evaluate,
      validate: templateValidator(splits.dev, { tags: o.start.template }),
      onState: writer.onState,
      signal: deps.signal,
    };
    const final = await runOptimization(env, state, { text: o.start.template.text, note: `${o.start.version} as it was` });
    await writer.settle();
    await deps.update(optId, (r) => {
      r.loop = structuredClone(final);
      r.state = 'done';
    });
    deps.log(`finished: ${final.stopNote ?? final.stopped}`);
    return { optId, best: final.best, rounds: final.round, stopped: final.stopped };
  } catch (e) {
    await recordEnd(deps, optId, e);
    if (deps.signal.aborted && !(e instanceof StopRequested)) throw new StopRequested();
    throw e;
  } finally {
    opened?.dispose();
  }
}

/** The optimizer of a record: offline, or an endpoint LLM with the key sent with the job. */
export function openOptimizer(o: Pick<OptimizationRecord, 'optimizer'>, splits: OptimizationSplits, apiKey: string | undefined): Optimizer {
  if (o.optimizer.kind === 'offline') return offlineOptimizer();
  const { baseUrl, model } = o.optimizer.endpoint;
  const client = new EndpointClient({ baseUrl, model, apiKey, maxConcurrency: 1 });
  return endpointOptimizer({ complete: client.asChatComplete, samples: sampleFieldsText(splits.dev), variables: TEMPLATE_VARIABLE_NAMES });
}

/**
 * The files a folder backend opens with: those the page sent for this very folder. None (the page
 * was reloaded since, and the folder not picked again) is an error saying what to do.
 */
export function backendFolderFiles(ref: BenchBackendRef, folder: OptimizeJobSpec['folder']): HfFolderFile[] | undefined {
  const f = ref.kind === 'hf' ? ref.hf : ref.kind === 'onnx' ? ref.onnx : undefined;
  if (!f) return undefined;
  if (folder?.id === f.folderId && folder.files.length) return folder.files;
  throw new UserFacingError(
    `${ref.name}: the folder ${f.name} is not open in this page (folders are not kept after a reload). Pick the same folder again in the Optimize form (Simulated model: ${ref.kind === 'hf' ? 'a Hugging Face folder' : 'an ONNX folder'}), then resume.`,
  );
}

/** The job runner: runOptimize on IndexedDB, the worker's device (on demand), and the job's stop. */
export async function runOptimizeJob(spec: OptimizeJobSpec, ctx: JobContext): Promise<OptimizeJobResult> {
  if (!spec.optId) throw new UserFacingError('an optimize job needs an optId');
  const keys = spec.secrets?.apiKeys ?? {};
  const stop = new AbortController();
  const offState = ctx.onState((s) => {
    if (s === 'stopping') stop.abort(new StopRequested());
  });
  const body = () =>
    runOptimize(spec.optId, {
      get: getOptimization,
      update: updateOptimization,
      async loadSamples(o) {
        const trajectories = await loadTrajectories(o.data.datasetId);
        if (!trajectories.length)
          throw new UserFacingError(`The dataset ${o.data.name} has no trajectories in browser storage; load or import data in the Data view.`);
        return benchSampleRecords(trajectories, { evalFraction: o.data.evalFraction, seed: o.data.seed, domains: o.data.domains }).map(sampleFromRecord);
      },
      // The Bench's backends read only the generation settings of their bench.
      openBackend: async (ref, o) => openBenchBackend(ref, o, ctx, keys.backend, backendFolderFiles(ref, spec.folder)),
      openJudge: (ref) => openBenchJudge(ref, keys.judge),
      optimizer: (o, splits) => openOptimizer(o, splits, keys.optimizer),
      signal: stop.signal,
      progress: (p) => ctx.progress(p),
      log: (m) => ctx.log(m),
    });
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  try {
    if (!locks) return await body();
    return await locks.request(optimizeLockName(spec.optId), { ifAvailable: true }, async (lock) => {
      if (!lock) throw new UserFacingError('This optimization is running in another tab of LWM Studio; watch it there or close that tab first.');
      return body();
    });
  } finally {
    offState();
  }
}
