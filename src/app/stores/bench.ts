// The Bench in the app: stored benchmarks (IndexedDB, src/storage/bench.ts), the one on screen
// with its results, and the live 'bench' job in the worker that owns the GPU (src/jobs/bench.ts).
// The worker writes every prediction and judgement itself and sends each in a progress record;
// this store merges them in, so the table fills in as the run goes, and reads them back from
// storage after a reload, when a run that was cut off is offered for resuming. Endpoints are the
// ones set up on this device (stores/endpoints.ts, shared with the Playground): their API keys
// stay in that store's memory, or its "remember on this device" storage, and go to the worker
// with each job; a bench's stored record and its exports name an endpoint's URL and model only.
import type { HfModelRef, OnnxModelRef } from '../../core/backendRef.ts';
import { create, type StoreApi } from 'zustand';
import type { CheckpointTag, RunRecord } from '../../core/records.ts';
import { deleteBench, getBench, listBenches, loadResults, newBenchId, putBench, saveImportedBench, updateBench } from '../../storage/bench.ts';
import type { BenchBackendRef, BenchGeneration, BenchJudgeRef, BenchRecord, BenchResult } from '../../core/records.ts';
import { listRuns } from '../../storage/runs.ts';
import type { BenchJobSpec, BenchProgress } from '../../jobs/bench.ts';
import { benchLockName, type JobState } from '../../jobs/protocol.ts';
import type { HfFolderFile } from '../../train/hfFolder.ts';
import { importJudgedFile } from './benchModel.ts';
import { useHfFolderStore } from './hfFolders.ts';
import { useOnnxFolderStore } from './onnxFolders.ts';
import { keyFor, normalBaseUrl, provideEndpointKey, useEndpointStore, type EndpointSettings, type TypedKey } from './endpoints.ts';
import { jobClient } from './jobClient.ts';
import { heldLocks } from '../lib/locks.ts';

/** An endpoint as a bench names it: where and which model (its key is found in the endpoint store). */
export type BenchEndpoint = Pick<EndpointSettings, 'baseUrl' | 'model'>;

export interface BenchDraft {
  name?: string;
  datasetId: string;
  datasetName: string;
  domains: string[];
  perDomain: number;
  evalFraction: number;
  seed: number;
  baselines: ('copy-last' | 'reference')[];
  checkpoints: { runId: string; runName: string; stage: string; tag: CheckpointTag; step: number; key: string }[];
  endpoints: BenchEndpoint[];
  /** Hugging Face folders picked in this page (stores/hfFolders.ts), by what the bench records of them. */
  folders?: HfModelRef[];
  /** ONNX folders picked in this page (stores/onnxFolders.ts): the model file and where it runs. */
  onnx?: OnnxModelRef[];
  generation: BenchGeneration;
  judge: { kind: 'local' } | { kind: 'endpoint'; endpoint: BenchEndpoint };
}

export interface LiveBench {
  jobId: string;
  benchId: string;
  state: JobState;
  progress: BenchProgress | null;
  startedAt: number;
}

interface BenchState {
  status: 'idle' | 'loading' | 'ready' | 'error';
  benches: BenchRecord[];
  /** Runs with checkpoints, for the backend picker. */
  runs: RunRecord[];
  selectedId: string | null;
  /** The selected bench's results. */
  results: BenchResult[];
  live: LiveBench | null;
  /** Benches whose stored state says they were running when the page went away. */
  interrupted: BenchRecord[];
  logs: string[];
  error: string | null;

  init(): Promise<void>;
  refresh(): Promise<void>;
  select(id: string | null): Promise<void>;
  create(draft: BenchDraft): Promise<string | null>;
  /**
   * Continues a stopped, failed or interrupted bench. `typed`: keys the user gave for endpoints
   * whose key was not at hand (see missingKeys), by endpoint ref id; they go to the endpoint store.
   */
  resume(id: string, typed?: Record<string, TypedKey>): Promise<void>;
  /** Judges a bench's predictions again with another judge (agreement needs two). */
  addJudge(id: string, judge: BenchDraft['judge']): Promise<void>;
  stop(): void;
  remove(id: string): Promise<void>;
  importFile(file: File): Promise<void>;
  dismissInterrupted(id: string): Promise<void>;
  dismissError(): void;
}

const ACTIVE = ['queued', 'running', 'paused', 'stopping'];
const FLUSH_MS = 150;
/** Progress records not yet applied (see flush). */
const pending: { progress: BenchProgress | null; results: BenchResult[]; timer: ReturnType<typeof setTimeout> | null } = {
  progress: null,
  results: [],
  timer: null,
};
const MAX_LOGS = 100;

let initPromise: Promise<void> | null = null;

/** An endpoint backend's or judge's id: its model at its host (unique within a bench). */
function endpointId(prefix: string, e: BenchEndpoint): string {
  let host = e.baseUrl;
  try {
    host = new URL(e.baseUrl).host;
  } catch {
    /* checked by the form */
  }
  return `${prefix}:${e.model.trim()}@${host}`;
}

export function judgeRef(j: BenchDraft['judge']): BenchJudgeRef {
  if (j.kind === 'local') return { id: 'local-rubric', kind: 'local' };
  return { id: endpointId('judge', j.endpoint), kind: 'endpoint', endpoint: { baseUrl: normalBaseUrl(j.endpoint.baseUrl), model: j.endpoint.model.trim() } };
}

/** The stored record of a new bench (no key in it). */
export function benchFromDraft(draft: BenchDraft, id: string, now: number): BenchRecord {
  const backends: BenchBackendRef[] = [];
  for (const { stage, ...c } of draft.checkpoints) {
    // Short enough for a table column; the run's tail tells two runs of one stage apart.
    backends.push({ id: `ckpt:${c.key}`, name: `local:${stage}-${c.tag}-${c.step} [${c.runId.slice(-4)}]`, kind: 'checkpoint', checkpoint: c });
  }
  for (const e of draft.endpoints) {
    const bid = endpointId('endpoint', e);
    if (!backends.some((b) => b.id === bid))
      backends.push({ id: bid, name: `endpoint:${e.model.trim()}`, kind: 'endpoint', endpoint: { baseUrl: normalBaseUrl(e.baseUrl), model: e.model.trim() } });
  }
  for (const f of draft.folders ?? []) {
    const bid = `hf:${f.folderId}`;
    if (!backends.some((b) => b.id === bid)) backends.push({ id: bid, name: `hf:${f.name}`, kind: 'hf', hf: f });
  }
  for (const o of draft.onnx ?? []) {
    const bid = `onnx:${o.folderId}`;
    if (!backends.some((b) => b.id === bid)) backends.push({ id: bid, name: `onnx:${o.name}`, kind: 'onnx', onnx: o });
  }
  for (const b of draft.baselines) backends.push({ id: b, name: b, kind: b });
  const judge = judgeRef(draft.judge);
  return {
    id,
    name: draft.name?.trim() || `Bench ${new Date(now).toISOString().slice(0, 16).replace('T', ' ')}`,
    createdAt: now,
    updatedAt: now,
    origin: 'run',
    state: 'queued',
    data: {
      datasetId: draft.datasetId,
      name: draft.datasetName,
      perDomain: draft.perDomain,
      evalFraction: draft.evalFraction,
      seed: draft.seed,
      domains: draft.domains,
    },
    samples: [],
    backends,
    judges: [judge],
    generation: draft.generation,
    progress: { done: 0, total: 0 },
  };
}

type SetState = StoreApi<BenchState>['setState'];
type GetState = StoreApi<BenchState>['getState'];
/** Starts a stored bench's job in the worker and makes it the live one. */
type StartJob = (bench: BenchRecord) => void;

const ONE_JOB_AT_A_TIME = 'A benchmark is running; cancel it first (one job at a time shares the GPU).';

/**
 * A job that failed: its message is shown. The worker records a bench's end in its stored record
 * (a job that failed before its bench began, such as one open in another tab, left the record as
 * it was, which is right), so the page only reads the record back.
 */
function onJobError(message: string, set: SetState, get: GetState) {
  set({ error: message });
  void get()
    .refresh()
    .catch(() => {});
}

/** The live job's status change: buffered progress is applied first; a finished job's bench is read back. */
function onJobStatus(state: JobState, live: LiveBench, set: SetState, get: GetState) {
  const finished = state === 'done' || state === 'stopped' || state === 'failed';
  if (pending.timer) {
    clearTimeout(pending.timer);
    flush(set, get);
  }
  set({ live: finished ? null : { ...(get().live ?? live), state } });
  if (finished)
    void get()
      .refresh()
      .then(() => (get().selectedId === live.benchId ? get().select(live.benchId) : undefined));
}

/** A progress record of the live job: buffered, since a fast backend or judge sends hundreds a second and the page redraws a few times a second. */
function onProgress(p: BenchProgress, set: SetState, get: GetState) {
  pending.progress = p;
  pending.results.push(...p.results);
  pending.timer ??= setTimeout(() => flush(set, get), FLUSH_MS);
}

/** Results with newer ones put in place of those of the same backend and sample, the rest appended. */
function mergeResults(current: BenchResult[], newer: BenchResult[]): BenchResult[] {
  const at = new Map(current.map((r, i) => [`${r.backend}\u0000${r.index}`, i]));
  const merged = current.slice();
  for (const r of newer) {
    const k = `${r.backend}\u0000${r.index}`;
    const i = at.get(k);
    if (i === undefined) {
      at.set(k, merged.length);
      merged.push(r);
    } else merged[i] = r;
  }
  return merged;
}

/** Applies the buffered progress: the latest record, and every result since the last flush. */
function flush(set: SetState, get: GetState) {
  const live = get().live;
  const { progress, results } = pending;
  pending.progress = null;
  pending.results = [];
  pending.timer = null;
  if (!live || !progress || progress.benchId !== live.benchId) return;
  set({ live: { ...live, progress } });
  if (get().selectedId !== live.benchId || !results.length) return;
  set((s) => ({ results: mergeResults(s.results, results) }));
}

/** Reading the stored benches and runs, choosing the one on screen, removing and dismissing. */
function storedBenchActions(set: SetState, get: GetState) {
  return {
    init() {
      initPromise ??= (async () => {
        set({ status: 'loading' });
        try {
          const [benches, runs, locks] = await Promise.all([listBenches(), listRuns(), heldLocks()]);
          // No bench job runs in this fresh page yet: a running-looking bench was cut off, unless another tab holds it.
          const interrupted = benches.filter((b) => b.origin === 'run' && ACTIVE.includes(b.state) && !locks.has(benchLockName(b.id)));
          set({ benches, runs: runs.filter((r) => r.checkpoints.last || r.checkpoints.best), status: 'ready', interrupted });
          const first = interrupted[0] ?? benches[0];
          if (first && !get().selectedId) await get().select(first.id);
        } catch (e) {
          set({ status: 'error', error: `Could not read benchmarks from browser storage: ${(e as Error).message}` });
        }
      })();
      return initPromise;
    },

    async refresh() {
      try {
        const [benches, runs] = await Promise.all([listBenches(), listRuns()]);
        set({ benches, runs: runs.filter((r) => r.checkpoints.last || r.checkpoints.best) });
      } catch (e) {
        set({ error: `Could not read benchmarks from browser storage: ${(e as Error).message}` });
      }
    },

    async select(id: string | null) {
      set({ selectedId: id, results: id === get().selectedId ? get().results : [] });
      if (!id) return;
      try {
        const results = await loadResults(id);
        if (get().selectedId === id) set({ results });
      } catch (e) {
        set({ error: `Could not read the benchmark's results: ${(e as Error).message}` });
      }
    },

    async remove(id: string) {
      if (get().live?.benchId === id) {
        set({ error: 'This benchmark is running; cancel it before deleting it.' });
        return;
      }
      try {
        await deleteBench(id);
      } catch (e) {
        set({ error: `Could not delete the benchmark: ${(e as Error).message}` });
      }
      set((s) => ({
        selectedId: s.selectedId === id ? null : s.selectedId,
        results: s.selectedId === id ? [] : s.results,
        interrupted: s.interrupted.filter((b) => b.id !== id),
      }));
      await get().refresh();
    },

    async dismissInterrupted(id: string) {
      set((s) => ({ interrupted: s.interrupted.filter((b) => b.id !== id) }));
      try {
        await updateBench(id, (b) => {
          if (ACTIVE.includes(b.state)) b.state = 'stopped';
        });
      } catch (e) {
        set({ error: (e as Error).message });
      }
      await get().refresh();
    },
  };
}

/** Starting a new bench, continuing a stopped one, and stopping the live one. */
function jobActions(set: SetState, get: GetState, startJob: StartJob) {
  return {
    async create(draft: BenchDraft) {
      if (get().live) {
        set({ error: ONE_JOB_AT_A_TIME });
        return null;
      }
      const id = newBenchId();
      const bench = benchFromDraft(draft, id, Date.now());
      try {
        await putBench(bench);
      } catch (e) {
        set({ error: `Could not store the benchmark: ${(e as Error).message}` });
        return null;
      }
      set((s) => ({ benches: [bench, ...s.benches], results: [] }));
      startJob(bench);
      return id;
    },

    async resume(id: string, typed?: Record<string, TypedKey>) {
      if (get().live) {
        set({ error: ONE_JOB_AT_A_TIME });
        return;
      }
      let bench: BenchRecord | undefined;
      try {
        bench = await getBench(id);
      } catch (e) {
        set({ error: `Could not read the benchmark: ${(e as Error).message}` });
        return;
      }
      if (!bench) {
        set({ error: 'This benchmark is no longer stored.' });
        return;
      }
      for (const r of endpointRefs(bench)) {
        const t = typed?.[r.id];
        if (t?.key) provideEndpointKey(r.endpoint, t.key, t.remember);
      }
      await get().select(id);
      startJob(bench);
    },

    stop() {
      const live = get().live;
      if (live) jobClient().stop(live.jobId);
    },
  };
}

/** Adding a judge to a stored bench, and importing a judged file as a bench. */
function judgedActions(set: SetState, get: GetState, startJob: StartJob) {
  return {
    async addJudge(id: string, judge: BenchDraft['judge']) {
      if (get().live) {
        set({ error: 'A benchmark is running; wait for it or cancel it first.' });
        return;
      }
      const ref = judgeRef(judge);
      let updated: BenchRecord | undefined;
      try {
        const bench = await getBench(id);
        if (!bench) throw new Error('it is no longer stored');
        if (bench.judges.some((j) => j.id === ref.id)) {
          set({ error: `${ref.id} has judged this benchmark already.` });
          return;
        }
        updated = await updateBench(id, (b) => {
          b.judges = [...b.judges, ref];
          b.state = 'queued';
        });
      } catch (e) {
        set({ error: `Could not add the judge: ${(e as Error).message}` });
        return;
      }
      await get().refresh();
      await get().select(id);
      if (updated) startJob(updated);
    },

    async importFile(file: File) {
      let text: string;
      try {
        text = await file.text();
      } catch (e) {
        set({ error: `${file.name}: cannot read (${(e as Error).message})` });
        return;
      }
      const out = importJudgedFile(text, file.name, newBenchId());
      if ('errors' in out) {
        const shown = out.errors.slice(0, 20);
        set({
          error: `${file.name} is not a judged AgentWorldBench file; nothing was imported.\n${shown.join('\n')}${out.errors.length > shown.length ? `\n… and ${out.errors.length - shown.length} more` : ''}`,
        });
        return;
      }
      try {
        await saveImportedBench(out.bench, out.results);
      } catch (e) {
        set({ error: `Could not store the imported file: ${(e as Error).message}` });
        return;
      }
      await get().refresh();
      set({ selectedId: out.bench.id, results: out.results, error: null });
    },
  };
}

export const useBenchStore = create<BenchState>()((set, get) => {
  // No WebGPU check here: the job acquires the GPU only for a checkpoint backend, so baselines,
  // endpoints and the local judge run in any browser (a checkpoint there fails on its own row).
  function startJob(bench: BenchRecord) {
    const benchId = bench.id;
    const folders = benchFolderFiles(
      bench,
      (id) => useHfFolderStore.getState().get(id)?.files,
      (id) => useOnnxFolderStore.getState().get(id)?.files,
    );
    const spec: BenchJobSpec = { kind: 'bench', benchId, secrets: { apiKeys: benchKeys(bench) }, ...(Object.keys(folders).length ? { folders } : {}) };
    let live: LiveBench | null = null;
    const isLive = () => live !== null && get().live?.jobId === live.jobId;
    const { jobId, outcome } = jobClient().run(spec, {
      onProgress: (p) => (isLive() ? onProgress(p, set, get) : undefined),
      onLog: (message) => set((s) => ({ logs: [...s.logs.slice(-MAX_LOGS + 1), message] })),
      onStatus: (state) => (live && isLive() ? onJobStatus(state, live, set, get) : undefined),
    });
    void outcome.then((o) => (o.state === 'failed' ? onJobError(o.error.message, set, get) : undefined));
    live = { jobId, benchId, state: 'queued', progress: null, startedAt: Date.now() };
    set((s) => ({
      live,
      selectedId: benchId,
      interrupted: s.interrupted.filter((b) => b.id !== benchId),
      logs: [],
      error: null,
    }));
  }

  return {
    status: 'idle',
    benches: [],
    runs: [],
    selectedId: null,
    results: [],
    live: null,
    interrupted: [],
    logs: [],
    error: null,
    ...storedBenchActions(set, get),
    ...jobActions(set, get, startJob),
    ...judgedActions(set, get, startJob),
    dismissError() {
      set({ error: null });
    },
  };
});

/** The files of a bench's Hugging Face and ONNX folders that are open in this page, by backend id (a folder not picked again since a reload is left out: the job says so). */
export function benchFolderFiles(
  bench: Pick<BenchRecord, 'backends'>,
  files: (folderId: string) => HfFolderFile[] | undefined,
  onnxFiles: (folderId: string) => HfFolderFile[] | undefined = () => undefined,
): Record<string, HfFolderFile[]> {
  const out: Record<string, HfFolderFile[]> = {};
  for (const b of bench.backends) {
    const f = b.kind === 'hf' && b.hf ? files(b.hf.folderId) : b.kind === 'onnx' && b.onnx ? onnxFiles(b.onnx.folderId) : undefined;
    if (f?.length) out[b.id] = f;
  }
  return out;
}

export interface EndpointRef {
  /** The backend's or judge's id in the bench. */
  id: string;
  label: string;
  endpoint: BenchEndpoint;
}

/** A bench's endpoint backends and judges. */
export function endpointRefs(bench: Pick<BenchRecord, 'backends' | 'judges'>): EndpointRef[] {
  const out: EndpointRef[] = [];
  for (const b of bench.backends)
    if (b.kind === 'endpoint' && b.endpoint) out.push({ id: b.id, label: `${b.name} at ${b.endpoint.baseUrl}`, endpoint: b.endpoint });
  for (const j of bench.judges)
    if (j.kind === 'endpoint' && j.endpoint) out.push({ id: j.id, label: `judge ${j.endpoint.model} at ${j.endpoint.baseUrl}`, endpoint: j.endpoint });
  return out;
}

/** The API keys a bench's job takes, by backend/judge id: from the endpoint store (memory, or remembered on this device). */
export function benchKeys(
  bench: Pick<BenchRecord, 'backends' | 'judges'>,
  endpoints: readonly EndpointSettings[] = useEndpointStore.getState().endpoints,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of endpointRefs(bench)) {
    const key = keyFor(r.endpoint, endpoints);
    if (key) out[r.id] = key;
  }
  return out;
}

/**
 * The endpoints of a bench whose key is not at hand (never given, or kept in memory only by a
 * page since closed): a resume asks for them; one that needs no key may be left blank.
 */
export function missingKeys(
  bench: Pick<BenchRecord, 'backends' | 'judges'>,
  endpoints: readonly EndpointSettings[] = useEndpointStore.getState().endpoints,
): EndpointRef[] {
  const have = benchKeys(bench, endpoints);
  return endpointRefs(bench).filter((r) => !have[r.id]);
}
