// The 'bench' job: AgentWorldBench's protocol (infer → judge → score) in the worker that owns
// the GPU, for every backend of a stored benchmark (src/storage/bench.ts) over its held-out
// turns. Each prediction and each judgement is written to IndexedDB as it finishes and sent to
// the page in a progress record, so the page shows the table filling in, a reload resumes the
// run where it stopped (a generation that failed is tried again, as `lwm infer --resume` does),
// and adding a judge later judges only what that judge has not seen. Generation goes through
// the core's inferRecords (the same as `lwm infer`), judging through judgeRecord (`lwm judge`).
import type { LwmBackend } from '../core/backend.ts';
import { needsGpu, type BackendRef } from '../core/backendRef.ts';
import { benchSampleRecords } from '../core/bench/evalTurns.ts';
import { inferRecords } from '../core/bench/infer.ts';
import type { AwbSampleRecord } from '../core/bench/records.ts';
import { judgeRecord } from '../core/bench/runner.ts';
import { isFatal } from '../core/judge/llm.ts';
import { localJudge } from '../core/judge/rubric.ts';
import type { Judge } from '../core/judge/types.ts';
import { EndpointError, endpointJudge } from '../backends/endpoint.ts';
import { BackendError } from '../backends/errors.ts';
import { openReady, type ReadyBackend } from '../backends/open.ts';
import { WebGPUUnavailableError } from '../gpu/errors.ts';
import { CheckpointError } from '../core/model/checkpoint.ts';
import { getBench, loadResults, putResults, updateBench } from '../storage/bench.ts';
import { loadTrajectories } from '../storage/datasets.ts';
import type { BenchBackendProblem, BenchBackendRef, BenchJudgeRef, BenchRecord, BenchResult } from '../core/records.ts';
import { workerSource } from './backendSource.ts';
import type { HfFolderFile } from '../train/hfFolder.ts';
import { DeviceLostDuringJob, StopRequested, UserFacingError, userMessage, type JobContext } from '../train/context.ts';
import { benchLockName } from './protocol.ts';

export interface BenchJobSpec {
  kind: 'bench';
  /** The stored benchmark to run (or continue). */
  benchId: string;
  /** Endpoint API keys by backend or judge id: used, never stored. */
  secrets?: { apiKeys?: Record<string, string> };
  /** The files of the Hugging Face and ONNX folders the bench runs, by backend id (File handles from the page): used, never stored. */
  folders?: Record<string, HfFolderFile[]>;
}

/** What the page is sent as the run goes (a JobContext 'progress' record). */
export interface BenchProgress {
  benchId: string;
  phase: 'samples' | 'generate' | 'judge';
  /** The backend being run (its id). */
  backend?: string;
  judge?: string;
  /** Work units (one prediction, or one judgement) done of the total. */
  done: number;
  total: number;
  /** Generations or judgements that failed (recorded as failed, the run goes on). */
  failed: number;
  /** Time left by the rates measured so far; null while there is nothing to go by. */
  etaMs: number | null;
  /** Results written since the last record (new predictions, new judgements). */
  results: BenchResult[];
}

export interface BenchJobResult {
  benchId: string;
  done: number;
  total: number;
  failed: number;
}

/** What a bench run needs of an opened backend (src/backends/open.ts's ReadyBackend). */
export type BenchBackend = Pick<ReadyBackend, 'backend' | 'generate' | 'concurrency' | 'form' | 'dispose'>;

/** Everything the pipeline touches, injected so tests run it without a worker, a GPU or IndexedDB. */
export interface BenchDeps {
  getBench(id: string): Promise<BenchRecord | undefined>;
  updateBench(id: string, change: (b: BenchRecord) => void): Promise<BenchRecord>;
  loadResults(id: string): Promise<BenchResult[]>;
  putResults(results: readonly BenchResult[]): Promise<void>;
  /** The held-out turns of a new run (from its dataset). */
  loadSamples(bench: BenchRecord): Promise<AwbSampleRecord[]>;
  openBackend(ref: BenchBackendRef, bench: BenchRecord): Promise<BenchBackend>;
  openJudge(ref: BenchJudgeRef): { judge: Judge; concurrency: number };
  /** Between units: waits while paused, throws StopRequested when stopped. */
  step(): Promise<void>;
  /** Aborted when the job is asked to stop (cuts a generation or a judge request short). */
  signal: AbortSignal;
  progress(p: BenchProgress): void;
  log(message: string): void;
  now?: () => number;
}

const keyOf = (backend: string, index: number) => `${backend}\u0000${index}`;
/** Baselines answer at once: they never hold the estimate back. */
const INSTANT = new Set<BenchBackendRef['kind']>(['copy-last', 'reference', 'imported']);

/** Work units done, of the total, and how many failed. */
interface Counters {
  done: number;
  total: number;
  failed: number;
}

/** One run of a bench as it goes: what is stored, what is left, and the rates for the estimate. */
interface BenchRun {
  benchId: string;
  deps: BenchDeps;
  now: () => number;
  bench: BenchRecord;
  /** Results by keyOf(backend, index), as stored. */
  stored: Map<string, BenchResult>;
  counters: Counters;
  /** Predictions left by backend, judgements left by judge (each unit done takes one off). */
  missingGen: Map<string, number>;
  missingJudge: Map<string, number>;
  /** Ms per prediction by backend, ms per judgement by judge. */
  genRate: Map<string, number>;
  judgeRate: Map<string, number>;
  /** When the record's progress was last written. */
  lastSaved: number;
}

/**
 * A backend that cannot run at all (an endpoint blocked by CORS, down or refusing the key, a
 * checkpoint without its tokenizer or template, no WebGPU): recorded against that backend in the
 * bench, and the run goes on with the others. `fatal`, so inferRecords stops that backend at once.
 */
export class BackendFailed extends Error {
  readonly fatal = true;
  constructor(readonly problem: BenchBackendProblem) {
    super(problem.message);
    this.name = 'BackendFailed';
  }
}

const ENDPOINT_PROBLEM: Partial<Record<EndpointError['kind'], BenchBackendProblem['kind']>> = {
  cors: 'cors',
  unreachable: 'unreachable',
  timeout: 'unreachable',
  auth: 'auth',
};

/** What kind of problem an error that stopped a backend is, for the words the Bench shows beside it. */
export function backendProblem(e: unknown): BenchBackendProblem {
  if (e instanceof BackendFailed) return e.problem;
  const message = e instanceof Error ? userMessage(e) : String(e);
  if (e instanceof EndpointError) return { kind: ENDPOINT_PROBLEM[e.kind] ?? 'endpoint', message: e.message };
  if (e instanceof CheckpointError || (e as Error)?.name === 'SafetensorsError' || (e instanceof BackendError && e.about === 'checkpoint'))
    return { kind: 'checkpoint', message };
  if (e instanceof WebGPUUnavailableError) return { kind: 'no-webgpu', message };
  return { kind: 'other', message };
}

/** A stored prediction whose generation failed, or none, is made again (with fresh judgements). */
const redo = (r: BenchResult | undefined) => !r || r.prediction.gen_error !== undefined;

/** Takes a new run's held-out turns from its dataset; a continued run has them already. */
async function withSamples(bench: BenchRecord, deps: BenchDeps): Promise<BenchRecord> {
  if (bench.samples.length) return bench;
  const benchId = bench.id;
  deps.progress({ benchId, phase: 'samples', done: 0, total: 0, failed: 0, etaMs: null, results: [] });
  const samples = await deps.loadSamples(bench);
  if (!samples.length)
    throw new UserFacingError(`The dataset ${bench.data.name} has no held-out turns for these settings (raise the eval share or choose other domains).`);
  const out = await deps.updateBench(benchId, (b) => (b.samples = samples));
  deps.log(`${samples.length} held-out turns from ${out.data.name}`);
  return out;
}

/**
 * Counts the work: a prediction per (backend, sample) and a judgement per judge of each; what is
 * stored is done, and what is left is kept by backend and by judge.
 */
function countWork(run: BenchRun) {
  const { samples, backends, judges } = run.bench;
  const { stored, counters } = run;
  counters.total = samples.length * backends.length * (1 + judges.length);
  for (const b of backends) {
    let gen = 0;
    for (let i = 0; i < samples.length; i++) {
      const r = stored.get(keyOf(b.id, i));
      if (redo(r)) gen++;
      else counters.done += 1 + judges.filter((j) => Object.hasOwn(r!.judged, j.id)).length;
      for (const j of judges) if (redo(r) || !Object.hasOwn(r!.judged, j.id)) run.missingJudge.set(j.id, (run.missingJudge.get(j.id) ?? 0) + 1);
    }
    run.missingGen.set(b.id, gen);
  }
}

/** Time left by the rates measured so far; null while a model backend or an endpoint judge has none to go by. */
function remainingMs(run: BenchRun): number | null {
  const { backends, judges } = run.bench;
  const { genRate, judgeRate, missingGen, missingJudge } = run;
  let ms = 0;
  const modelRates = [...genRate.entries()].filter(([id]) => !INSTANT.has(backends.find((b) => b.id === id)!.kind)).map(([, v]) => v);
  const fallback = modelRates.length ? modelRates.reduce((a, b) => a + b, 0) / modelRates.length : null;
  for (const b of backends) {
    const missing = missingGen.get(b.id) ?? 0;
    if (!missing || INSTANT.has(b.kind)) continue;
    const rate = genRate.get(b.id) ?? fallback;
    if (rate === null) return null;
    ms += missing * rate;
  }
  for (const j of judges) {
    const missing = missingJudge.get(j.id) ?? 0;
    if (!missing) continue;
    const rate = judgeRate.get(j.id) ?? (j.kind === 'local' ? 0 : null);
    if (rate === null) return null;
    ms += missing * rate;
  }
  return Math.round(ms);
}

/** Sends a progress record, and writes the counts into the bench's record now and then (and at the end). */
async function report(run: BenchRun, phase: BenchProgress['phase'], results: BenchResult[], extra: { backend?: string; judge?: string } = {}) {
  const { benchId, deps, counters, now } = run;
  deps.progress({ benchId, phase, ...extra, done: counters.done, total: counters.total, failed: counters.failed, etaMs: remainingMs(run), results });
  if (now() - run.lastSaved > 500 || counters.done === counters.total) {
    run.lastSaved = now();
    const { done, total } = counters;
    await deps.updateBench(benchId, (b) => (b.progress = { done, total }));
  }
}

/** Makes a backend's missing predictions (and those whose generation failed), storing each as it comes. */
async function generateMissing(run: BenchRun, ref: BenchBackendRef) {
  const { benchId, deps, now, stored, counters, bench } = run;
  const { samples } = bench;
  const todo: number[] = [];
  for (let i = 0; i < samples.length; i++) if (redo(stored.get(keyOf(ref.id, i)))) todo.push(i);
  if (!todo.length) return;
  await deps.step();
  deps.log(`${ref.name}: generating ${todo.length} of ${samples.length} predictions`);
  const opened = await deps.openBackend(ref, bench).catch((e: Error) => {
    if (e instanceof StopRequested || e instanceof DeviceLostDuringJob) throw e;
    throw new BackendFailed(backendProblem(e));
  });
  try {
    const started = now();
    let made = 0;
    const out = await inferRecords(
      todo.map((i) => samples[i]),
      {
        backend: opened.backend,
        generate: opened.generate,
        concurrency: opened.concurrency,
        signal: deps.signal,
        onRecord: async (p, k) => {
          const index = todo[k];
          const result: BenchResult = { benchId, backend: ref.id, index, prediction: { ...p, model: ref.name }, judged: {} };
          await deps.putResults([result]);
          stored.set(keyOf(ref.id, index), result);
          made++;
          run.genRate.set(ref.id, (now() - started) / made);
          run.missingGen.set(ref.id, (run.missingGen.get(ref.id) ?? 1) - 1);
          counters.done++;
          if (p.gen_error !== undefined) counters.failed++;
          await report(run, 'generate', [result], { backend: ref.id });
          await deps.step();
        },
      },
    );
    if (out.error) {
      if (deps.signal.aborted) throw new StopRequested();
      // The device was lost: the job stops (a resume makes the missing predictions on a fresh one).
      if (out.error instanceof DeviceLostDuringJob) throw out.error;
      // A refused key, CORS, a server that never answered: this backend stops, the others go on.
      throw isFatal(out.error) ? new BackendFailed(backendProblem(out.error)) : out.error;
    }
  } finally {
    opened.dispose();
  }
}

/** Runs a backend's missing predictions; one that cannot run is stored with why (and logged), and null otherwise. */
async function generateOrExplain(run: BenchRun, ref: BenchBackendRef): Promise<BenchBackendProblem | null> {
  try {
    await generateMissing(run, ref);
    return null;
  } catch (e) {
    if (!(e instanceof BackendFailed)) throw e;
    run.deps.log(`${ref.name} could not run: ${e.problem.message}`);
    await run.deps.updateBench(run.benchId, (b) => (b.backendProblems = { ...b.backendProblems, [ref.id]: e.problem }));
    return e.problem;
  }
}

/** Judges a backend's stored predictions that a judge has not judged, storing each judgement as it comes. */
async function judgeMissing(run: BenchRun, ref: BenchBackendRef, jref: BenchJudgeRef) {
  const { deps, now, stored, counters } = run;
  const items: BenchResult[] = [];
  for (let i = 0; i < run.bench.samples.length; i++) {
    const r = stored.get(keyOf(ref.id, i));
    if (r && !Object.hasOwn(r.judged, jref.id)) items.push(r);
  }
  if (!items.length) return;
  await deps.step();
  const { judge, concurrency } = deps.openJudge(jref);
  const started = now();
  let made = 0;
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const r = items[next++];
      const rec = await judgeRecord(r.prediction, judge, deps.signal);
      const result: BenchResult = { ...r, judged: { ...r.judged, [jref.id]: { ...rec, judge: jref.id } } };
      await deps.putResults([result]);
      stored.set(keyOf(ref.id, r.index), result);
      made++;
      run.judgeRate.set(jref.id, (now() - started) / made);
      run.missingJudge.set(jref.id, (run.missingJudge.get(jref.id) ?? 1) - 1);
      counters.done++;
      if (rec.failed) counters.failed++;
      await report(run, 'judge', [result], { backend: ref.id, judge: jref.id });
      await deps.step();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  } catch (e) {
    if (deps.signal.aborted && !(e instanceof StopRequested)) throw new StopRequested();
    throw e;
  }
}

/** Runs (or continues) a stored benchmark; its state, error and progress are kept in the record. */
export async function runBench(benchId: string, deps: BenchDeps): Promise<BenchJobResult> {
  const now = deps.now ?? (() => Date.now());
  const initial = await deps.getBench(benchId);
  if (!initial) throw new UserFacingError(`There is no stored benchmark ${benchId}; it may have been deleted.`);
  if (initial.origin !== 'run') throw new UserFacingError('An imported judged file has no backends to run.');
  const started = await deps.updateBench(benchId, (b) => {
    b.state = 'running';
    b.error = undefined;
    b.backendProblems = undefined;
  });
  const counters: Counters = { done: 0, total: 0, failed: 0 };
  try {
    const bench = await withSamples(started, deps);
    const stored = new Map<string, BenchResult>();
    for (const r of await deps.loadResults(benchId)) stored.set(keyOf(r.backend, r.index), r);
    const run: BenchRun = {
      benchId,
      deps,
      now,
      bench,
      stored,
      counters,
      missingGen: new Map(),
      missingJudge: new Map(),
      genRate: new Map(),
      judgeRate: new Map(),
      lastSaved: 0,
    };
    countWork(run);
    const problems: Record<string, BenchBackendProblem> = {};
    for (const ref of bench.backends) {
      const problem = await generateOrExplain(run, ref);
      if (problem) problems[ref.id] = problem;
      for (const jref of bench.judges) await judgeMissing(run, ref, jref);
    }
    const failed = bench.backends.filter((b) => problems[b.id]);
    await deps.updateBench(benchId, (b) => {
      b.state = failed.length ? 'failed' : 'done';
      if (failed.length)
        b.error = `${failed.map((f) => f.name).join(', ')} could not run (why, and what to do, is shown beside ${failed.length === 1 ? 'it' : 'each'}); the other backends finished. Trying again keeps what was done.`;
      b.progress = { done: counters.done, total: counters.total };
    });
    return { benchId, ...counters };
  } catch (e) {
    const stop = e instanceof StopRequested;
    await deps
      .updateBench(benchId, (b) => {
        b.state = stop ? 'stopped' : 'failed';
        b.error = stop ? undefined : userMessage(e as Error);
        b.progress = { done: counters.done, total: counters.total };
      })
      .catch(() => {});
    throw e;
  }
}

/** The worker's GPU for a checkpoint: a browser without WebGPU makes it a backend problem, not the run's. */
/**
 * An endpoint backend that stops at once when its server is down: a request that could not reach
 * it after every retry, before any request was answered, fails the backend (not each sample in
 * turn, each after its own retries).
 */
export function stopWhenDown(backend: LwmBackend): LwmBackend {
  let answered = false;
  return {
    name: backend.name,
    async *generate(req, o) {
      try {
        for await (const piece of backend.generate(req, o)) {
          answered = true;
          yield piece;
        }
        answered = true;
      } catch (e) {
        if (!answered && e instanceof EndpointError && (e.kind === 'unreachable' || e.kind === 'timeout')) throw new BackendFailed(backendProblem(e));
        throw e;
      }
    },
  };
}

/**
 * A backend on our GPU whose generation failed because the device was lost (a readback on a
 * destroyed device fails a moment before the loss is reported) stops the run as a device loss,
 * instead of recording the sample as the model's failure.
 */
function stopOnLoss(backend: LwmBackend, failure: JobContext['failure']): LwmBackend {
  return {
    name: backend.name,
    async *generate(req, o) {
      try {
        yield* backend.generate(req, o);
      } catch (e) {
        const cause = await failure(e);
        if (cause instanceof DeviceLostDuringJob) throw Object.assign(cause, { fatal: true });
        throw e;
      }
    },
  };
}

/** A backend of a bench on this worker (src/backends/open.ts), with the files of a folder the page sent; an endpoint stops at once when its server is down, and no WebGPU fails only the backends that need it. */
export async function openBenchBackend(
  ref: BenchBackendRef,
  bench: Pick<BenchRecord, 'generation'>,
  ctx: Pick<JobContext, 'gpu'> & Partial<Pick<JobContext, 'log' | 'failure'>>,
  apiKey: string | undefined,
  files?: HfFolderFile[],
): Promise<ReadyBackend> {
  if (ref.kind === 'imported') throw new UserFacingError(`${ref.name}: an imported backend cannot be run again.`);
  const folderId = ref.kind === 'hf' ? ref.hf.folderId : ref.kind === 'onnx' ? ref.onnx.folderId : null;
  const source = workerSource(ctx, {
    apiKey,
    ...(folderId !== null && files && { folders: { [folderId]: files } }),
    missingFolder: (f) =>
      `${ref.name}: the folder ${f.name} is not open in this page (folders are not kept after a reload). Pick the same folder again in the New benchmark form, then resume.`,
  });
  const gpu = async () => {
    try {
      return await ctx.gpu();
    } catch (e) {
      if (e instanceof WebGPUUnavailableError)
        throw new BackendFailed({ kind: 'no-webgpu', message: `${ref.name} runs on the GPU, and WebGPU is not available here: ${e.message}` });
      throw e;
    }
  };
  const { id: _id, name, ...model } = ref;
  const opened = await openReady(model as BackendRef, { ...source, gpu }, bench.generation, { name });
  if (ref.kind === 'endpoint') return { ...opened, backend: stopWhenDown(opened.backend) };
  return needsGpu(ref) && ctx.failure ? { ...opened, backend: stopOnLoss(opened.backend, ctx.failure) } : opened;
}

/** A judge of a bench: the local rubric judge, or an LLM judge at an endpoint (AgentWorldBench verdict format). */
export function openBenchJudge(ref: BenchJudgeRef, apiKey: string | undefined): { judge: Judge; concurrency: number } {
  if (ref.kind === 'local') return { judge: localJudge, concurrency: 1 };
  if (ref.kind === 'endpoint' && ref.endpoint)
    return { judge: endpointJudge({ baseUrl: ref.endpoint.baseUrl, model: ref.endpoint.model, apiKey, maxConcurrency: 4 }, { name: ref.id }), concurrency: 4 };
  throw new UserFacingError(`The judge ${ref.id} cannot be run here (an imported file's judge).`);
}

/** The job runner: runBench on IndexedDB, the worker's device, and the job's pause/stop. */
export async function runBenchJob(spec: BenchJobSpec, ctx: JobContext): Promise<BenchJobResult> {
  if (!spec.benchId) throw new UserFacingError('a bench job needs a benchId');
  const keys = spec.secrets?.apiKeys ?? {};
  const key = (id: string) => (Object.hasOwn(keys, id) ? keys[id] : undefined);
  const stop = new AbortController();
  const offState = ctx.onState((s) => {
    if (s === 'stopping') stop.abort(new StopRequested());
  });
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  const body = () =>
    runBench(spec.benchId, {
      getBench,
      updateBench,
      loadResults,
      putResults,
      async loadSamples(bench) {
        if (!bench.data.datasetId) throw new UserFacingError('This benchmark names no dataset to take held-out turns from.');
        const trajectories = await loadTrajectories(bench.data.datasetId);
        if (!trajectories.length)
          throw new UserFacingError(`The dataset ${bench.data.name} has no trajectories in browser storage; load or import data in the Data view.`);
        return benchSampleRecords(trajectories, {
          evalFraction: bench.data.evalFraction,
          seed: bench.data.seed,
          perDomain: bench.data.perDomain ?? undefined,
          domains: bench.data.domains,
        });
      },
      openBackend: (ref, bench) =>
        openBenchBackend(ref, bench, ctx, key(ref.id), spec.folders && Object.hasOwn(spec.folders, ref.id) ? spec.folders[ref.id] : undefined),
      openJudge: (ref) => openBenchJudge(ref, key(ref.id)),
      step: () => ctx.step(),
      signal: stop.signal,
      progress: (p) => ctx.progress(p),
      log: (m) => ctx.log(m),
    });
  try {
    if (!locks) return await body();
    return await locks.request(benchLockName(spec.benchId), { ifAvailable: true }, async (lock) => {
      if (!lock) throw new UserFacingError('This benchmark is running in another tab of LWM Studio; watch it there or close that tab first.');
      return body();
    });
  } finally {
    offState();
  }
}
