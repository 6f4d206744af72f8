// Training in the app: the jobs worker (spawned on first use), the live job, the stored runs and
// the metric history of the run on screen. The worker persists runs, metrics and checkpoints
// itself (src/jobs/jobs.ts); this store reads them back from IndexedDB and merges the live
// events in, so a reload shows the same curve and can resume it.
import { create, type StoreApi } from 'zustand';
import type { CheckpointTag, RunRecord, RunState } from '../../core/records.ts';
import {
  deleteCheckpoint as removeCheckpoint,
  deleteRun as removeRun,
  listRuns,
  loadCheckpointBytes,
  loadMetrics,
  getRun,
  updateRun,
  ENDED_RUN_STATES,
} from '../../storage/runs.ts';
import { checkpointFiles, optimizerFileName } from '../../core/model/checkpoint.ts';
import { missingWebGpu, type JobClient } from '../../jobs/client.ts';
import type { TrainJobSpec, TrainProgress } from '../../jobs/jobs.ts';
import { runLockName, type FromWorker, type JobState } from '../../jobs/protocol.ts';
import { saveFile } from '../lib/download.ts';
import { jobClient } from './jobClient.ts';
import { heldLocks } from '../lib/locks.ts';
import { folderNeeded } from '../../train/hfFolder.ts';
import type { HfExportJobSpec } from '../../jobs/hfExport.ts';
import { jobFolder, runFolderProblem, useTrainFolderStore } from './trainFolder.ts';

export interface MetricPoint {
  step: number;
  values: Record<string, number>;
}

export interface LiveJob {
  jobId: string;
  runId: string;
  state: JobState;
}

type WorkerStatus = 'idle' | 'starting' | 'ready' | 'unavailable';

interface TrainData {
  worker: WorkerStatus;
  /** Why the worker has no GPU, for the user. */
  workerError: string | null;
  adapter: { description: string; isFallbackAdapter: boolean } | null;
  runsStatus: 'idle' | 'loading' | 'ready' | 'error';
  runs: RunRecord[];
  selectedRunId: string | null;
  /** Metric history by run id (runs that were shown or trained in this page). */
  metrics: Record<string, MetricPoint[]>;
  live: LiveJob | null;
  /** What the live job is doing before its first step (generating a recipe's data), as it reports it. */
  liveProgress: TrainProgress | null;
  /** Runs whose stored state says they were training when the page went away. */
  interrupted: RunRecord[];
  logs: string[];
  /** The last error for the user (a failed job, a storage problem). */
  error: string | null;
  storage: { usage: number; quota: number } | null;
  exporting: string | null;
}

interface TrainState extends TrainData {
  init(): Promise<void>;
  refreshRuns(): Promise<void>;
  select(runId: string | null): Promise<void>;
  start(spec: Omit<Extract<TrainJobSpec, { resume?: false }>, 'runId'>): string | null;
  resumeRun(runId: string): Promise<void>;
  /** Marks an interrupted run as stopped (its checkpoints stay). */
  dismissInterrupted(runId: string): Promise<void>;
  pause(): void;
  resume(): void;
  stop(): void;
  deleteRun(runId: string): Promise<void>;
  deleteCheckpoint(runId: string, tag: CheckpointTag): Promise<void>;
  download(runId: string, tag: CheckpointTag): Promise<void>;
  /** A Hugging Face folder's run as files: its LoRA adapter in PEFT's layout, or the merged model folder. */
  exportHf(runId: string, tag: CheckpointTag, what: 'adapter' | 'merged'): Promise<void>;
  /** The export in progress (`${runId}|${tag}|${what}`), for its button. */
  exporting: string | null;
  dismissError(): void;
}

const ACTIVE: RunState[] = ['queued', 'running', 'paused', 'stopping'];
const MAX_LOGS = 200;

let client: JobClient | null = null;
let initPromise: Promise<void> | null = null;
/** The live job when the worker's device was lost: its failure offers to resume the run. */
let lostJobId: string | null = null;
/** Counts run-list reads: only the latest one started is applied (an older read may finish last). */
let listReads = 0;

export function newRunId(): string {
  return `run-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
}

/** Adds one metric event to a step-ordered history, merging values of the same step. */
export function mergeMetric(history: MetricPoint[], step: number, values: Record<string, number>): MetricPoint[] {
  const out = history.slice();
  const last = out.at(-1);
  if (!last || last.step < step) out.push({ step, values });
  else {
    const i = out.findIndex((m) => m.step >= step);
    if (out[i].step === step) out[i] = { step, values: { ...out[i].values, ...values } };
    else out.splice(i, 0, { step, values });
  }
  return out;
}

type SetState = StoreApi<TrainState>['setState'];
type GetState = StoreApi<TrainState>['getState'];
/** Starts the jobs worker on first use; null (with the reason in the store) without WebGPU. */
type EnsureClient = () => JobClient | null;

const ONE_RUN_AT_A_TIME = 'A run is already training; stop it first (one run at a time shares the GPU).';
/** The worker writes a new run's record as its job begins, a moment after the start message. */
const NEW_RUN_REFRESH_MS = 300;

const INITIAL: TrainData = {
  worker: 'idle',
  workerError: null,
  adapter: null,
  runsStatus: 'idle',
  runs: [],
  selectedRunId: null,
  metrics: {},
  live: null,
  liveProgress: null,
  interrupted: [],
  logs: [],
  error: null,
  storage: null,
  exporting: null,
};

/** A job's status change: the live job ends or moves on; a job the lost device failed is offered for resuming. */
function onJobStatus(jobId: string, state: JobState, set: SetState, get: GetState) {
  const live = get().live;
  if (!live || live.jobId !== jobId) return;
  const finished = state === 'done' || state === 'stopped' || state === 'failed';
  set({ live: finished ? null : { ...live, state }, ...(finished && { liveProgress: null }) });
  if (state === 'failed') {
    // The list shows the run failed from now on, whatever the stored record says yet: the job's
    // failure (which follows) re-reads the record the worker wrote (showJobFailure).
    set((s) => ({ runs: s.runs.map((r) => (r.id === live.runId && !ENDED_RUN_STATES.includes(r.state) ? { ...r, state: 'failed' } : r)) }));
    if (lostJobId === jobId) {
      // A run cut off by a lost device resumes like one cut off by a reload: from its last
      // checkpoint, on the fresh device the next job acquires.
      const run = get().runs.find((r) => r.id === live.runId);
      if (run) set((s) => ({ interrupted: [...s.interrupted.filter((r) => r.id !== run.id), { ...run, state: 'failed' }] }));
    }
  }
  if (finished) lostJobId = null;
  if (state !== 'failed') void get().refreshRuns();
}

/**
 * Runs whose job failed in this page while their stored record still says they run (the worker
 * had not recorded the end: a runner stuck on a lost device, a worker that died), with the
 * failure: the list shows them failed. Nothing is written; after a reload such a run is offered
 * for resuming, as any run cut off.
 */
const failedHere = new Map<string, string>();

/** The stored runs as this page knows them (see failedHere). */
function withFailures(runs: RunRecord[]): RunRecord[] {
  return runs.map((r) => (failedHere.has(r.id) && ACTIVE.includes(r.state) ? { ...r, state: 'failed' as const, error: failedHere.get(r.id) } : r));
}

/** How long the page waits for the worker to record a failed run (it writes as its job unwinds). */
const FAILURE_RECORD_WAIT_MS = 1000;

/** The run's stored record once the worker has recorded its end, or what is stored when it has not within the wait (undefined: no record). */
async function endedRecord(runId: string): Promise<RunRecord | undefined> {
  const until = Date.now() + FAILURE_RECORD_WAIT_MS;
  for (;;) {
    const run = await getRun(runId).catch(() => undefined);
    if (!run || ENDED_RUN_STATES.includes(run.state) || Date.now() >= until) return run;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A job of this store failed with `message`. The worker is the only writer of a run's record: it
 * records the failure as the job unwinds (a worker that died records nothing, and the run is
 * offered for resuming, as after a reload). The message shows once: in the run's panel when the
 * record holds it, else (no record yet, a resume that could not begin) above the form.
 */
async function showJobFailure(runId: string, message: string, set: SetState, get: GetState) {
  const run = await endedRecord(runId);
  if (run && ACTIVE.includes(run.state)) failedHere.set(runId, message);
  if (run?.state === 'failed' && run.error === message) {
    const stored = run;
    set((s) => ({ runs: s.runs.map((r) => (r.id === stored.id ? stored : r)) }));
  } else set((s) => ({ error: message, runs: withFailures(s.runs) })); // the list and the message change together, whatever a refresh in flight read
  await get().refreshRuns();
}

/**
 * The live train job's progress: generating its data (shown until the first step), or a recipe
 * job moving on to its next stage, a run of its own that becomes the live and shown one.
 */
function onTrainProgress(jobId: string, p: TrainProgress, set: SetState, get: GetState) {
  const live = get().live;
  if (!live || live.jobId !== jobId) return;
  if (p.kind === 'generate') set({ liveProgress: p });
  else if (p.kind === 'stage') {
    set((s) => ({ live: { ...live, runId: p.runId }, selectedRunId: p.runId, metrics: { ...s.metrics, [p.runId]: [] }, liveProgress: null }));
    setTimeout(() => void get().refreshRuns(), NEW_RUN_REFRESH_MS);
  }
}

/** Folds one event of the worker itself (its device, its failure) into the store; a job's events go to its handlers (runJob). */
function onDeviceEvent(m: FromWorker, set: SetState, get: GetState) {
  switch (m.type) {
    case 'ready':
      set({ worker: 'ready', adapter: m.adapter, workerError: null });
      return;
    case 'unavailable':
      // A worker that failed to load or crashed is not a lack of WebGPU: the form stays usable
      // and its next start spawns a fresh worker.
      if (m.retry) set({ worker: 'idle', workerError: null, adapter: null, error: m.message });
      else set({ worker: 'unavailable', workerError: m.message });
      return;
    case 'lost':
      // A live job's failure follows and says it (in its run); with none, the loss itself is news.
      lostJobId = get().live?.jobId ?? null;
      if (!lostJobId) set({ error: m.message });
      return;
    case 'error':
      // A job's error is its own (runJob); one without a job is the worker's.
      if (m.jobId) return;
      if (get().worker !== 'ready') set({ worker: 'unavailable', workerError: m.message });
      set({ error: m.message });
      return;
    default:
      return;
  }
}

async function refreshStorage(set: SetState) {
  try {
    const e = await navigator.storage?.estimate();
    if (e) set({ storage: { usage: e.usage ?? 0, quota: e.quota ?? 0 } });
  } catch {
    /* an estimate is a nicety */
  }
}

/** The stored runs: the first read (which finds runs a reload cut off), re-reads, and the run on screen. */
function runListActions(set: SetState, get: GetState, ensureClient: EnsureClient) {
  return {
    init(): Promise<void> {
      initPromise ??= (async () => {
        ensureClient();
        set({ runsStatus: 'loading' });
        try {
          const runs = await listRuns();
          const locks = await heldLocks();
          // No job runs in this fresh page yet: an active-looking run here was cut off by a
          // reload or a closed tab, unless another tab holds its lock.
          const interrupted = runs.filter((r) => ACTIVE.includes(r.state) && !locks.has(runLockName(r.id)));
          set({ runs, runsStatus: 'ready', interrupted });
          const first = interrupted[0] ?? runs[0];
          if (first && !get().selectedRunId) await get().select(first.id);
        } catch (e) {
          set({ runsStatus: 'error', error: `Could not read training runs from browser storage: ${(e as Error).message}` });
        }
        void refreshStorage(set);
      })();
      return initPromise;
    },

    async refreshRuns(): Promise<void> {
      const read = ++listReads;
      try {
        const runs = await listRuns();
        if (read !== listReads) return; // a later read started: it has newer records
        // A run the lost device failed stays on offer (with its latest record) until it is resumed or dismissed.
        set((s) => ({
          runs: withFailures(runs),
          interrupted: s.interrupted.flatMap((r) =>
            offered(
              r,
              runs.find((x) => x.id === r.id),
            ),
          ),
        }));
      } catch (e) {
        set({ error: `Could not read training runs from browser storage: ${(e as Error).message}` });
      }
      void refreshStorage(set);
    },

    async select(runId: string | null): Promise<void> {
      set({ selectedRunId: runId });
      if (!runId || get().live?.runId === runId) return;
      try {
        const history = await loadMetrics(runId);
        if (get().live?.runId === runId) return; // a live run's history is in memory already
        set((s) => ({ metrics: { ...s.metrics, [runId]: history.map((m) => ({ step: m.step, values: m.values })) } }));
      } catch (e) {
        set({ error: `Could not read the run's metrics: ${(e as Error).message}` });
      }
    },
  };
}

/** An offered run as re-read: gone when it ended otherwise; one offered after a loss keeps saying so. */
function offered(r: RunRecord, now: RunRecord | undefined): RunRecord[] {
  if (!now || !(ACTIVE.includes(now.state) || now.state === 'failed')) return [];
  return [r.state === 'failed' ? { ...now, state: 'failed' } : now];
}

/** The metric history a resumed run keeps: the steps up to its checkpoint (the job recomputes every step after it). */
async function historyUpTo(runId: string, step: number): Promise<MetricPoint[]> {
  try {
    return (await loadMetrics(runId)).filter((m) => m.step <= step).map((m) => ({ step: m.step, values: m.values }));
  } catch {
    return []; // the chart starts empty; the run still resumes
  }
}

/** A metric of the live job: its run's history and step. */
function onMetric(jobId: string, step: number, values: Record<string, number>, set: SetState, get: GetState) {
  const live = get().live;
  if (!live || live.jobId !== jobId) return;
  // The first step after the data was prepared: the stored run now holds its data's counts.
  if (get().liveProgress && 'loss' in values) void get().refreshRuns();
  set((s) => ({
    // The first training step ends the preparation the run panel was showing.
    ...(s.liveProgress && 'loss' in values && { liveProgress: null }),
    metrics: { ...s.metrics, [live.runId]: mergeMetric(s.metrics[live.runId] ?? [], step, values) },
    runs: s.runs.map((r) => (r.id === live.runId ? { ...r, step: Math.max(r.step, step) } : r)),
  }));
}

/** Starts a train job for `runId` and follows it (a recipe job moves on to its later stages' runs). */
function runJob(c: JobClient, spec: TrainJobSpec, set: SetState, get: GetState): string {
  let runId = spec.runId;
  let jobId = '';
  const started = c.run(spec, {
    onProgress: (p) => {
      if (p.kind === 'stage') runId = p.runId;
      onTrainProgress(jobId, p, set, get);
    },
    onMetric: (step, values) => onMetric(jobId, step, values, set, get),
    onCheckpoint: () => void get().refreshRuns(),
    onLog: (message) => set((s) => ({ logs: [...s.logs.slice(-MAX_LOGS + 1), message] })),
    onStatus: (state) => onJobStatus(jobId, state, set, get),
  });
  jobId = started.jobId;
  void started.outcome.then((end) => (end.state === 'failed' ? showJobFailure(runId, end.error.message, set, get) : undefined));
  return jobId;
}

/** Starting, resuming and steering the one live job. */
function jobActions(set: SetState, get: GetState, ensureClient: EnsureClient) {
  const control = (send: (c: JobClient, jobId: string) => void) => () => {
    const live = get().live;
    if (live && client) send(client, live.jobId);
  };
  return {
    start(spec: Omit<Extract<TrainJobSpec, { resume?: false }>, 'runId'>): string | null {
      const c = ensureClient();
      if (!c) return null;
      if (get().live) {
        set({ error: ONE_RUN_AT_A_TIME });
        return null;
      }
      const runId = newRunId();
      const jobId = runJob(c, { ...spec, runId } as TrainJobSpec, set, get);
      set((s) => ({
        live: { jobId, runId, state: 'queued' },
        liveProgress: null,
        selectedRunId: runId,
        metrics: { ...s.metrics, [runId]: [] },
        logs: [],
        error: null,
      }));
      // Show the run record as soon as the worker has written it.
      setTimeout(() => void get().refreshRuns(), NEW_RUN_REFRESH_MS);
      return runId;
    },

    async resumeRun(runId: string): Promise<void> {
      const c = ensureClient();
      if (!c) return;
      if (get().live) {
        set({ error: ONE_RUN_AT_A_TIME });
        return;
      }
      const run = get().runs.find((r) => r.id === runId);
      // A run of a folder that needs its base weights gets the folder picked again (the same one).
      const folder = useTrainFolderStore.getState().folder;
      const needs = !!run?.hf && folderNeeded(run);
      const problem = needs ? runFolderProblem(run!, folder) : null;
      if (problem) {
        set({ error: `${problem} Then resume.` });
        return;
      }
      const history = await historyUpTo(runId, run?.checkpoints.last?.step ?? 0);
      const jobId = runJob(c, { kind: 'train', runId, resume: true, ...(needs && folder && { hf: jobFolder(folder, run!.hf!.memoryGiB) }) }, set, get);
      failedHere.delete(runId);
      set((s) => ({
        live: { jobId, runId, state: 'queued' },
        liveProgress: null,
        selectedRunId: runId,
        metrics: { ...s.metrics, [runId]: history },
        interrupted: s.interrupted.filter((r) => r.id !== runId),
        logs: [],
        error: null,
      }));
    },

    async dismissInterrupted(runId: string): Promise<void> {
      set((s) => ({ interrupted: s.interrupted.filter((r) => r.id !== runId) }));
      try {
        // A run the lost device failed keeps its state and message.
        await updateRun(runId, (r) => {
          if (ACTIVE.includes(r.state)) r.state = 'stopped';
        });
      } catch (e) {
        set({ error: (e as Error).message });
      }
      await get().refreshRuns();
    },

    pause: control((c, jobId) => c.pause(jobId)),
    resume: control((c, jobId) => c.resume(jobId)),
    stop: control((c, jobId) => c.stop(jobId)),
  };
}

/** Deleting stored runs and checkpoints, and downloading a checkpoint's files. */
function storedRunActions(set: SetState, get: GetState) {
  return {
    async deleteRun(runId: string): Promise<void> {
      if (get().live?.runId === runId) {
        set({ error: 'This run is training; stop it before deleting it.' });
        return;
      }
      try {
        await removeRun(runId);
      } catch (e) {
        set({ error: `Could not delete the run: ${(e as Error).message}` });
      }
      set((s) => {
        const metrics = { ...s.metrics };
        delete metrics[runId];
        return { metrics, selectedRunId: s.selectedRunId === runId ? null : s.selectedRunId, interrupted: s.interrupted.filter((r) => r.id !== runId) };
      });
      await get().refreshRuns();
    },

    async deleteCheckpoint(runId: string, tag: CheckpointTag): Promise<void> {
      if (get().live?.runId === runId) {
        set({ error: 'This run is training; stop it before deleting its checkpoints.' });
        return;
      }
      try {
        await removeCheckpoint(runId, tag);
      } catch (e) {
        set({ error: `Could not delete the checkpoint: ${(e as Error).message}` });
      }
      await get().refreshRuns();
    },

    async download(runId: string, tag: CheckpointTag): Promise<void> {
      const run = get().runs.find((r) => r.id === runId);
      const ref = run?.checkpoints[tag];
      if (!run || !ref) return;
      try {
        saveCheckpointFiles(await loadCheckpointBytes(ref.key), `${fileSafe(run.name)}-${run.stage}-${tag}-step${ref.step}.safetensors`);
      } catch (e) {
        set({ error: `Could not read the checkpoint: ${(e as Error).message}` });
      }
    },
  };
}

/** The export job for a run of a folder: the merge of a LoRA adapter sends the folder picked again. */
function exportSpec(run: RunRecord, tag: CheckpointTag, what: 'adapter' | 'merged'): HfExportJobSpec | string {
  const spec: HfExportJobSpec = { kind: 'hf-export', runId: run.id, tag, what };
  if (what === 'adapter' || run.hf?.tuning !== 'lora') return spec;
  const folder = useTrainFolderStore.getState().folder;
  const problem = runFolderProblem(run, folder);
  if (problem) return `Merging the adapter needs the base model's weights: ${problem}`;
  return { ...spec, hf: jobFolder(folder!, run.hf.memoryGiB) };
}

/** Runs an export job in the worker and saves each file it gives, under the names its layout needs. */
async function exportHf(runId: string, tag: CheckpointTag, what: 'adapter' | 'merged', set: SetState, get: GetState, ensureClient: EnsureClient) {
  const run = get().runs.find((r) => r.id === runId);
  const c = ensureClient();
  if (!run || !c || get().exporting) return;
  const spec = exportSpec(run, tag, what);
  if (typeof spec === 'string') return set({ error: spec });
  set({ exporting: `${runId}|${tag}|${what}`, error: null });
  try {
    const { files } = await c.result(spec);
    for (const f of files)
      saveFile(new Blob([f.bytes as BlobPart], { type: f.name.endsWith('.json') ? 'application/json' : 'application/octet-stream' }), f.name);
  } catch (e) {
    set({ error: `Could not export ${what === 'adapter' ? 'the adapter' : 'the merged folder'} of ${run.name}: ${(e as Error).message}` });
  } finally {
    set({ exporting: null });
  }
}

/**
 * Storage keeps one buffer; the user gets the weights file (loads in Hugging Face tools) and, when
 * the run kept it, the optimizer state beside it as NAME.optim.safetensors.
 */
function saveCheckpointFiles(bytes: Uint8Array, base: string) {
  const files = checkpointFiles(bytes, base);
  const octets = (data: Uint8Array) => new Blob([data as BlobPart], { type: 'application/octet-stream' });
  saveFile(octets(files.weights), base);
  if (files.optimizer) saveFile(octets(files.optimizer), optimizerFileName(base));
}

export const useTrainStore = create<TrainState>()((set, get) => {
  function ensureClient(): JobClient | null {
    if (client) return client;
    const missing = missingWebGpu();
    if (missing) {
      set({ worker: 'unavailable', workerError: missing.message });
      return null;
    }
    set({ worker: 'starting' });
    client = jobClient();
    client.on((m) => onDeviceEvent(m, set, get));
    // The System view may have started the worker already, before this store listened.
    client.device('report');
    return client;
  }

  return {
    ...INITIAL,
    ...runListActions(set, get, ensureClient),
    ...jobActions(set, get, ensureClient),
    ...storedRunActions(set, get),
    exportHf: (runId, tag, what) => exportHf(runId, tag, what, set, get, ensureClient),
    dismissError() {
      set({ error: null });
    },
  };
});

/** Long enough to tell runs apart, short enough for every file system's name limit with the suffixes added. */
const MAX_FILE_STEM = 60;

function fileSafe(name: string): string {
  return (
    name
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, MAX_FILE_STEM) || 'run'
  );
}
