// Training in the app: the jobs worker (spawned on first use), the live job, the stored runs and
// the metric history of the run on screen. The worker persists runs, metrics and checkpoints
// itself (src/train/jobs.ts); this store reads them back from IndexedDB and merges the live
// events in, so a reload shows the same curve and can resume it.
import { create } from 'zustand';
import type { CheckpointTag, RunRecord, RunState } from '../../storage/db.ts';
import { deleteCheckpoint as removeCheckpoint, deleteRun as removeRun, listRuns, loadCheckpointBytes, loadMetrics, updateRun } from '../../storage/runs.ts';
import { checkpointFiles, optimizerFileName } from '../../model/checkpoint.ts';
import { missingWebGpu, type JobClient } from '../../train/client.ts';
import type { TrainJobSpec } from '../../train/jobs.ts';
import { runLockName, type FromWorker, type JobState } from '../../train/protocol.ts';
import { saveFile } from '../lib/download.ts';
import { jobClient } from './jobClient.ts';

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

interface TrainState {
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
  /** Runs whose stored state says they were training when the page went away. */
  interrupted: RunRecord[];
  logs: string[];
  /** The last error for the user (a failed job, a storage problem). */
  error: string | null;
  storage: { usage: number; quota: number } | null;

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
  dismissError(): void;
}

const ACTIVE: RunState[] = ['queued', 'running', 'paused', 'stopping'];
const MAX_LOGS = 200;

let client: JobClient | null = null;
let initPromise: Promise<void> | null = null;
/** The live job when the worker's device was lost: its failure offers to resume the run. */
let lostJobId: string | null = null;
/** Jobs this store started: another view's job (a benchmark) fails with its own messages there. */
const ownJobs = new Set<string>();

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

/** Names of Web Locks held anywhere in this origin (a run training in another tab holds one). */
async function heldLocks(): Promise<Set<string>> {
  try {
    const q = await navigator.locks?.query();
    return new Set((q?.held ?? []).map((l) => l.name ?? ''));
  } catch {
    return new Set();
  }
}

export const useTrainStore = create<TrainState>()((set, get) => {
  function onEvent(m: FromWorker) {
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
      case 'log':
        set((s) => ({ logs: [...s.logs.slice(-MAX_LOGS + 1), m.message] }));
        return;
      case 'metric': {
        const live = get().live;
        if (!live || live.jobId !== m.jobId) return;
        set((s) => ({
          metrics: { ...s.metrics, [live.runId]: mergeMetric(s.metrics[live.runId] ?? [], m.step, m.values) },
          runs: s.runs.map((r) => (r.id === live.runId ? { ...r, step: Math.max(r.step, m.step) } : r)),
        }));
        return;
      }
      case 'checkpoint':
        void get().refreshRuns();
        return;
      case 'status': {
        const live = get().live;
        if (!live || live.jobId !== m.jobId) return;
        const finished = m.state === 'done' || m.state === 'stopped' || m.state === 'failed';
        set({ live: finished ? null : { ...live, state: m.state } });
        if (m.state === 'failed' && lostJobId === m.jobId) {
          // A run cut off by a lost device resumes like one cut off by a reload: from its last
          // checkpoint, on the fresh device the next job acquires.
          const run = get().runs.find((r) => r.id === live.runId);
          if (run) set((s) => ({ interrupted: [...s.interrupted.filter((r) => r.id !== run.id), { ...run, state: 'failed' }] }));
        }
        if (finished) lostJobId = null;
        void get().refreshRuns();
        return;
      }
      case 'lost':
        lostJobId = get().live?.jobId ?? null;
        set({ error: m.message });
        return;
      case 'error':
        if (m.jobId && !ownJobs.has(m.jobId)) return;
        if (!m.jobId && get().worker !== 'ready') set({ worker: 'unavailable', workerError: m.message });
        set({ error: m.message });
        return;
      default:
        return;
    }
  }

  function ensureClient(): JobClient | null {
    if (client) return client;
    const missing = missingWebGpu();
    if (missing) {
      set({ worker: 'unavailable', workerError: missing.message });
      return null;
    }
    set({ worker: 'starting' });
    client = jobClient();
    client.on(onEvent);
    // The System view may have started the worker already, before this store listened.
    client.device('report');
    return client;
  }

  async function refreshStorage() {
    try {
      const e = await navigator.storage?.estimate();
      if (e) set({ storage: { usage: e.usage ?? 0, quota: e.quota ?? 0 } });
    } catch {
      /* an estimate is a nicety */
    }
  }

  return {
    worker: 'idle',
    workerError: null,
    adapter: null,
    runsStatus: 'idle',
    runs: [],
    selectedRunId: null,
    metrics: {},
    live: null,
    interrupted: [],
    logs: [],
    error: null,
    storage: null,

    init() {
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
        void refreshStorage();
      })();
      return initPromise;
    },

    async refreshRuns() {
      try {
        const runs = await listRuns();
        // A run the lost device failed stays on offer until it is resumed or dismissed.
        set((s) => ({ runs, interrupted: s.interrupted.filter((r) => runs.some((x) => x.id === r.id && (ACTIVE.includes(x.state) || x.state === 'failed'))) }));
      } catch (e) {
        set({ error: `Could not read training runs from browser storage: ${(e as Error).message}` });
      }
      void refreshStorage();
    },

    async select(runId) {
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

    start(spec) {
      const c = ensureClient();
      if (!c) return null;
      if (get().live) {
        set({ error: 'A run is already training; stop it first (one run at a time shares the GPU).' });
        return null;
      }
      const runId = newRunId();
      const jobId = c.start({ ...spec, runId } as TrainJobSpec);
      ownJobs.add(jobId);
      set((s) => ({ live: { jobId, runId, state: 'queued' }, selectedRunId: runId, metrics: { ...s.metrics, [runId]: [] }, logs: [], error: null }));
      // The worker writes the run record as the job begins; show it as soon as it is there.
      setTimeout(() => void get().refreshRuns(), 300);
      return runId;
    },

    async resumeRun(runId) {
      const c = ensureClient();
      if (!c) return;
      if (get().live) {
        set({ error: 'A run is already training; stop it first (one run at a time shares the GPU).' });
        return;
      }
      const run = get().runs.find((r) => r.id === runId);
      const at = run?.checkpoints.last?.step ?? 0;
      // Keep the curve up to the checkpoint: the resumed job recomputes every step after it.
      let history: MetricPoint[] = [];
      try {
        history = (await loadMetrics(runId)).filter((m) => m.step <= at).map((m) => ({ step: m.step, values: m.values }));
      } catch {
        /* the chart starts empty; the run still resumes */
      }
      const jobId = c.start({ kind: 'train', runId, resume: true });
      ownJobs.add(jobId);
      set((s) => ({
        live: { jobId, runId, state: 'queued' },
        selectedRunId: runId,
        metrics: { ...s.metrics, [runId]: history },
        interrupted: s.interrupted.filter((r) => r.id !== runId),
        logs: [],
        error: null,
      }));
    },

    async dismissInterrupted(runId) {
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

    pause() {
      const live = get().live;
      if (live) client?.pause(live.jobId);
    },
    resume() {
      const live = get().live;
      if (live) client?.resume(live.jobId);
    },
    stop() {
      const live = get().live;
      if (live) client?.stop(live.jobId);
    },

    async deleteRun(runId) {
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

    async deleteCheckpoint(runId, tag) {
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

    async download(runId, tag) {
      const run = get().runs.find((r) => r.id === runId);
      const ref = run?.checkpoints[tag];
      if (!run || !ref) return;
      try {
        const bytes = await loadCheckpointBytes(ref.key);
        // Storage keeps one buffer; the user gets the weights file (loads in Hugging Face tools)
        // and, when the run kept it, the optimizer state beside it as NAME.optim.safetensors.
        const base = `${fileSafe(run.name)}-${run.stage}-${tag}-step${ref.step}.safetensors`;
        const files = checkpointFiles(bytes, base);
        const octets = (data: Uint8Array) => new Blob([data as BlobPart], { type: 'application/octet-stream' });
        saveFile(octets(files.weights), base);
        if (files.optimizer) saveFile(octets(files.optimizer), optimizerFileName(base));
      } catch (e) {
        set({ error: `Could not read the checkpoint: ${(e as Error).message}` });
      }
    },

    dismissError() {
      set({ error: null });
    },
  };
});

function fileSafe(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'run';
}
