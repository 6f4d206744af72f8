// Prompt optimization in the app (issue 16): stored optimizations (IndexedDB,
// src/storage/optimize.ts), the one on screen with its lineage, and the live 'optimize' job in the
// worker (src/jobs/optimize.ts). The worker stores the loop's state after every evaluation and
// sends it in a progress record; this store puts it in place so the lineage grows as the run goes,
// and after a reload offers to resume a run that was cut off (the job continues from the stored
// state). Endpoint keys (backend, judge, optimizer) come from the endpoint store (memory, or
// remembered on this device) and go to the worker with each job; the record names URL and model only.
// A Hugging Face or ONNX folder picked in this page (stores/hfFolders.ts, stores/onnxFolders.ts) is
// recorded by what it was, as the Bench records it; its files go with each job (start and resume)
// while the page has them; after a reload the job asks for the same folder to be picked again.
import type { CheckpointRef, HfModelRef, OnnxModelRef } from '../../core/backendRef.ts';
import { create, type StoreApi } from 'zustand';
import type { BenchBackendRef, BenchGeneration, OptimizationRecord, OptimizerRef, RunRecord } from '../../core/records.ts';
import { deleteOptimization, getOptimization, listOptimizations, newOptimizationId, putOptimization, updateOptimization } from '../../storage/optimize.ts';
import { listRuns } from '../../storage/runs.ts';
import type { LoopConfig, Version } from '../../core/optimize/loop.ts';
import type { PromptTemplate } from '../../core/templates/index.ts';
import type { OptimizeJobSpec, OptimizeProgress } from '../../jobs/optimize.ts';
import type { HfFolderFile } from '../../train/hfFolder.ts';
import { optimizeLockName, type JobState } from '../../jobs/protocol.ts';
import { judgeRef, type BenchDraft, type BenchEndpoint } from './bench.ts';
import { apiKey, findEndpoint, normalBaseUrl, useEndpointStore, type EndpointSettings } from './endpoints.ts';
import { jobClient } from './jobClient.ts';
import { useTemplateStore } from './templates.ts';
import { useHfFolderStore } from './hfFolders.ts';
import { useOnnxFolderStore } from './onnxFolders.ts';
import { heldLocks } from '../lib/locks.ts';

export interface OptimizeDraft {
  name?: string;
  /** The template version to start from, and its template. */
  version: string;
  template: PromptTemplate;
  datasetId: string;
  datasetName: string;
  domains: string[];
  evalFraction: number;
  seed: number;
  devPerDomain: number;
  testPerDomain: number;
  backend:
    | { kind: 'copy-last' | 'reference' }
    | { kind: 'checkpoint'; checkpoint: CheckpointRef & { stage: string } }
    | { kind: 'endpoint'; endpoint: BenchEndpoint }
    /** A Hugging Face folder picked in this page, by what the record keeps of it (the Bench's ref). */
    | { kind: 'hf'; hf: HfModelRef }
    /** An ONNX folder picked in this page: its model file and where it runs (the Bench's ref). */
    | { kind: 'onnx'; onnx: OnnxModelRef };
  judge: BenchDraft['judge'];
  optimizer: { kind: 'offline' } | { kind: 'endpoint'; endpoint: BenchEndpoint };
  generation: BenchGeneration;
  loop: Omit<LoopConfig, 'devSize' | 'testSize'>;
}

export interface LiveOptimization {
  jobId: string;
  optId: string;
  state: JobState;
  progress: OptimizeProgress | null;
}

interface OptimizeState {
  status: 'idle' | 'loading' | 'ready' | 'error';
  list: OptimizationRecord[];
  /** Runs with checkpoints, for the backend picker. */
  runs: RunRecord[];
  selectedId: string | null;
  live: LiveOptimization | null;
  /** Optimizations whose stored state says they were running when the page went away. */
  interrupted: OptimizationRecord[];
  logs: string[];
  error: string | null;
  init(): Promise<void>;
  refresh(): Promise<void>;
  select(id: string | null): void;
  create(draft: OptimizeDraft): Promise<string | null>;
  resume(id: string): Promise<void>;
  stop(): void;
  remove(id: string): Promise<void>;
  dismissInterrupted(id: string): Promise<void>;
  /** Saves a candidate as the next template version (and adds it to the SFT mix when asked); returns its name. */
  promote(optId: string, candidateId: string, options?: { addToSft?: boolean }): Promise<string | null>;
  dismissError(): void;
}

const ACTIVE = ['queued', 'running', 'paused', 'stopping'];
const ONE_JOB = 'A prompt optimization is running; cancel it first (one at a time shares the GPU).';
const FLUSH_MS = 150;
const MAX_LOGS = 100;

/** The backend ref of a draft (the Bench's shapes and names). */
function backendRef(b: OptimizeDraft['backend']): BenchBackendRef {
  if (b.kind === 'checkpoint') {
    const { stage, ...c } = b.checkpoint;
    return { id: `ckpt:${c.key}`, name: `local:${stage}-${c.tag}-${c.step}`, kind: 'checkpoint', checkpoint: c };
  }
  if (b.kind === 'hf') return { id: `hf:${b.hf.folderId}`, name: `hf:${b.hf.name}`, kind: 'hf', hf: { ...b.hf } };
  if (b.kind === 'onnx') return { id: `onnx:${b.onnx.folderId}`, name: `onnx:${b.onnx.name}`, kind: 'onnx', onnx: { ...b.onnx } };
  if (b.kind !== 'endpoint') return { id: b.kind, name: b.kind, kind: b.kind };
  const endpoint = { baseUrl: normalBaseUrl(b.endpoint.baseUrl), model: b.endpoint.model.trim() };
  return { id: `endpoint:${endpoint.model}`, name: `endpoint:${endpoint.model}`, kind: 'endpoint', endpoint };
}

function optimizerRef(o: OptimizeDraft['optimizer']): OptimizerRef {
  return o.kind === 'offline' ? o : { kind: 'endpoint', endpoint: { baseUrl: normalBaseUrl(o.endpoint.baseUrl), model: o.endpoint.model.trim() } };
}

/** The stored record of a new optimization (no key in it). */
export function optimizationFromDraft(d: OptimizeDraft, id: string, now: number): OptimizationRecord {
  return {
    id,
    name: d.name?.trim() || `Optimize ${d.version} · ${new Date(now).toISOString().slice(0, 16).replace('T', ' ')}`,
    createdAt: now,
    updatedAt: now,
    state: 'queued',
    start: { version: d.version, template: structuredClone(d.template) },
    data: {
      datasetId: d.datasetId,
      name: d.datasetName,
      domains: d.domains,
      evalFraction: d.evalFraction,
      seed: d.seed,
      devPerDomain: d.devPerDomain,
      testPerDomain: d.testPerDomain,
    },
    backend: backendRef(d.backend),
    judge: judgeRef(d.judge),
    optimizer: optimizerRef(d.optimizer),
    generation: d.generation,
    config: d.loop,
    loop: null,
  };
}

/** The job's API keys: the backend's, the judge's and the optimizer's endpoint keys found in the endpoint store. */
export function optimizationKeys(
  o: Pick<OptimizationRecord, 'backend' | 'judge' | 'optimizer'>,
  endpoints: readonly EndpointSettings[] = useEndpointStore.getState().endpoints,
): NonNullable<OptimizeJobSpec['secrets']>['apiKeys'] {
  const out: Record<string, string> = {};
  const add = (k: string, e: BenchEndpoint | undefined) => {
    const found = e ? findEndpoint(endpoints, e) : undefined;
    const key = found ? apiKey(found.id) : '';
    if (key) out[k] = key;
  };
  if (o.backend.kind === 'endpoint') add('backend', o.backend.endpoint);
  if (o.judge.kind === 'endpoint') add('judge', o.judge.endpoint);
  if (o.optimizer.kind === 'endpoint') add('optimizer', o.optimizer.endpoint);
  return out;
}

/** The files of an optimization's folder backend, when that folder is open in this page (none for other backends). */
export function optimizationFolder(
  o: Pick<OptimizationRecord, 'backend'>,
  hfFiles: (folderId: string) => HfFolderFile[] | undefined,
  onnxFiles: (folderId: string) => HfFolderFile[] | undefined,
): OptimizeJobSpec['folder'] {
  const b = o.backend;
  const id = b.kind === 'hf' ? b.hf?.folderId : b.kind === 'onnx' ? b.onnx?.folderId : undefined;
  if (!id) return undefined;
  const files = b.kind === 'hf' ? hfFiles(id) : onnxFiles(id);
  return files?.length ? { id, files } : undefined;
}

/** The job of a stored optimization: its keys, and its folder's files when the page has them. */
export function optimizationJobSpec(
  o: OptimizationRecord,
  hfFiles: (folderId: string) => HfFolderFile[] | undefined = (id) => useHfFolderStore.getState().get(id)?.files,
  onnxFiles: (folderId: string) => HfFolderFile[] | undefined = (id) => useOnnxFolderStore.getState().get(id)?.files,
): OptimizeJobSpec {
  const folder = optimizationFolder(o, hfFiles, onnxFiles);
  return { kind: 'optimize', optId: o.id, secrets: { apiKeys: optimizationKeys(o) }, ...(folder && { folder }) };
}

/** The template a candidate's text makes: the start's, with one text for every domain. */
export function candidateTemplate(start: PromptTemplate, text: string): Omit<PromptTemplate, 'version'> {
  const { version: _v, domains: _d, ...rest } = start;
  void _v;
  void _d;
  return { ...rest, text };
}

/** The template version a promoted candidate derives from: its parent's promoted version, else the start's. */
export function promotedParent(o: Pick<OptimizationRecord, 'start' | 'promoted'>, v: Version): string {
  const p = v.parent && o.promoted && Object.hasOwn(o.promoted, v.parent) ? o.promoted[v.parent] : null;
  return p ?? o.start.version;
}

type SetState = StoreApi<OptimizeState>['setState'];
type GetState = StoreApi<OptimizeState>['getState'];

/** The latest progress not yet applied (a fast backend sends many a second). */
const pending: { progress: OptimizeProgress | null; timer: ReturnType<typeof setTimeout> | null } = { progress: null, timer: null };
let initPromise: Promise<void> | null = null;

/** Applies buffered progress: the live record, and the loop's state into its optimization in the list. */
function flush(set: SetState, get: GetState) {
  const live = get().live;
  const p = pending.progress;
  pending.progress = null;
  pending.timer = null;
  if (!live || !p || p.optId !== live.optId) return;
  const state = p.state;
  set((s) => ({
    live: { ...live, progress: { ...(live.progress ?? p), ...p } },
    list: state ? s.list.map((o) => (o.id === p.optId ? { ...o, state: 'running', loop: state } : o)) : s.list,
  }));
}

function onProgress(p: OptimizeProgress, set: SetState, get: GetState) {
  // A state record is never dropped for a later sample record: merge it into what is pending.
  pending.progress = pending.progress?.state && !p.state ? { ...p, state: pending.progress.state } : p;
  pending.timer ??= setTimeout(() => flush(set, get), FLUSH_MS);
}

/** The live job's status: buffered progress first; a finished job's record is read back. */
function onStatus(state: JobState, live: LiveOptimization, set: SetState, get: GetState) {
  const finished = state === 'done' || state === 'stopped' || state === 'failed';
  if (pending.timer) {
    clearTimeout(pending.timer);
    flush(set, get);
  }
  set({ live: finished ? null : { ...(get().live ?? live), state } });
  if (finished) void get().refresh();
}

/**
 * Optimizations whose lock was held when the page opened: another tab's, or the job of the page
 * just reloaded, whose worker may not have let go yet. Looked at again a few times; one whose lock
 * is gone and whose record still says it runs was cut off.
 */
function recheckHeld(ids: string[], set: SetState, get: GetState, tries: number) {
  setTimeout(async () => {
    const locks = await heldLocks();
    const freed = ids.filter((id) => !locks.has(optimizeLockName(id)) && get().live?.optId !== id);
    if (freed.length) {
      const fresh = (await Promise.all(freed.map((id) => getOptimization(id).catch(() => undefined)))).filter(
        (o): o is OptimizationRecord => !!o && ACTIVE.includes(o.state),
      );
      set((s) => ({ interrupted: [...s.interrupted, ...fresh.filter((o) => !s.interrupted.some((x) => x.id === o.id))] }));
    }
    const still = ids.filter((id) => !freed.includes(id));
    if (still.length && tries > 1) recheckHeld(still, set, get, tries - 1);
  }, 1000);
}

/** Reading, choosing, removing and dismissing stored optimizations. */
function storedActions(set: SetState, get: GetState) {
  return {
    init() {
      initPromise ??= (async () => {
        set({ status: 'loading' });
        try {
          const [list, runs, locks] = await Promise.all([listOptimizations(), listRuns(), heldLocks()]);
          // No job runs in this fresh page yet: a running-looking optimization was cut off, unless another tab holds it.
          const interrupted = list.filter((o) => ACTIVE.includes(o.state) && !locks.has(optimizeLockName(o.id)));
          set({ list, runs: runs.filter((r) => r.checkpoints.last || r.checkpoints.best), interrupted, status: 'ready' });
          const held = list.filter((o) => ACTIVE.includes(o.state) && locks.has(optimizeLockName(o.id))).map((o) => o.id);
          if (held.length) recheckHeld(held, set, get, 5);
          if (!get().selectedId && list[0]) set({ selectedId: (interrupted[0] ?? list[0]).id });
        } catch (e) {
          set({ status: 'error', error: `Could not read prompt optimizations from browser storage: ${(e as Error).message}` });
        }
      })();
      return initPromise;
    },
    async refresh() {
      try {
        const [list, runs] = await Promise.all([listOptimizations(), listRuns()]);
        set({ list, runs: runs.filter((r) => r.checkpoints.last || r.checkpoints.best) });
      } catch (e) {
        set({ error: `Could not read prompt optimizations from browser storage: ${(e as Error).message}` });
      }
    },
    select(id: string | null) {
      set({ selectedId: id });
    },
    async remove(id: string) {
      if (get().live?.optId === id) return set({ error: 'This optimization is running; cancel it before deleting it.' });
      try {
        await deleteOptimization(id);
      } catch (e) {
        set({ error: `Could not delete the optimization: ${(e as Error).message}` });
      }
      set((s) => ({ selectedId: s.selectedId === id ? null : s.selectedId, interrupted: s.interrupted.filter((o) => o.id !== id) }));
      await get().refresh();
    },
    async dismissInterrupted(id: string) {
      set((s) => ({ interrupted: s.interrupted.filter((o) => o.id !== id) }));
      try {
        await updateOptimization(id, (o) => {
          if (ACTIVE.includes(o.state)) o.state = 'stopped';
        });
      } catch (e) {
        set({ error: (e as Error).message });
      }
      await get().refresh();
    },
  };
}

/** Saves a candidate as a template version, records it in the optimization, and adds it to the SFT mix when asked. */
async function promoteCandidate(optId: string, candidateId: string, addToSft: boolean, set: SetState, get: GetState): Promise<string | null> {
  const o = await getOptimization(optId).catch(() => undefined);
  const v = o?.loop?.versions.find((x) => x.id === candidateId);
  if (!o || !v) {
    set({ error: `There is no candidate ${candidateId} in this optimization.` });
    return null;
  }
  if (v.status === 'invalid' || !v.text) {
    set({ error: `${candidateId} was not a usable template (${v.reason ?? 'no text'}); it cannot be promoted.` });
    return null;
  }
  if (o.promoted && Object.hasOwn(o.promoted, candidateId)) {
    set({ error: `${candidateId} was promoted already, as ${o.promoted[candidateId]}.` });
    return null;
  }
  const templates = useTemplateStore.getState();
  let version: string;
  try {
    if (templates.status !== 'ready') await templates.load();
    const score = typeof v.mean === 'number' ? `, dev ${v.mean.toFixed(1)}` : '';
    const note = `optimized (${o.name}, ${candidateId}${score}): ${v.note}`.slice(0, 300);
    version = await useTemplateStore
      .getState()
      .createVersion({ ...candidateTemplate(o.start.template, v.text), description: v.note.slice(0, 200) }, promotedParent(o, v), note);
    await updateOptimization(optId, (r) => (r.promoted = { ...r.promoted, [candidateId]: version }));
  } catch (e) {
    set({ error: `Could not save ${candidateId} as a template version: ${(e as Error).message}` });
    return null;
  }
  if (addToSft) {
    const t = useTemplateStore.getState();
    const problems = t.setStage('sft', { ...t.stages.sft, [version]: 1 });
    if (problems.length) set({ error: `${version} was saved, but not added to the SFT mix: ${problems.join('; ')}` });
  }
  await get().refresh();
  return version;
}

export const useOptimizeStore = create<OptimizeState>()((set, get) => {
  function startJob(o: OptimizationRecord) {
    let live: LiveOptimization | null = null;
    const isLive = () => live !== null && get().live?.jobId === live.jobId;
    const { jobId, outcome } = jobClient().run(optimizationJobSpec(o), {
      onProgress: (p) => (isLive() ? onProgress(p, set, get) : undefined),
      onLog: (message) => (isLive() ? set((s) => ({ logs: [...s.logs.slice(-MAX_LOGS + 1), message] })) : undefined),
      onStatus: (state) => (live && isLive() ? onStatus(state, live, set, get) : undefined),
    });
    // The worker records an optimization's end; one that failed before it began (another tab holds
    // it) left the record as it was, which is right: the page shows the message and reads the list back.
    void outcome.then((end) => {
      if (end.state !== 'failed') return;
      set({ error: end.error.message });
      void get()
        .refresh()
        .catch(() => {});
    });
    live = { jobId, optId: o.id, state: 'queued', progress: null };
    set((s) => ({
      live,
      selectedId: o.id,
      interrupted: s.interrupted.filter((x) => x.id !== o.id),
      logs: [],
      error: null,
    }));
  }

  return {
    status: 'idle',
    list: [],
    runs: [],
    selectedId: null,
    live: null,
    interrupted: [],
    logs: [],
    error: null,
    ...storedActions(set, get),
    async create(draft: OptimizeDraft) {
      if (get().live) {
        set({ error: ONE_JOB });
        return null;
      }
      const o = optimizationFromDraft(draft, newOptimizationId(), Date.now());
      try {
        await putOptimization(o);
      } catch (e) {
        set({ error: `Could not store the optimization: ${(e as Error).message}` });
        return null;
      }
      set((s) => ({ list: [o, ...s.list] }));
      startJob(o);
      return o.id;
    },
    async resume(id: string) {
      if (get().live) return set({ error: ONE_JOB });
      const o = await getOptimization(id).catch((e: Error) => {
        set({ error: `Could not read the optimization: ${e.message}` });
        return undefined;
      });
      if (!o) return;
      startJob(o);
    },
    stop() {
      const live = get().live;
      if (live) jobClient().stop(live.jobId);
    },
    promote: (optId, candidateId, options = {}) => promoteCandidate(optId, candidateId, options.addToSft ?? false, set, get),
    dismissError() {
      set({ error: null });
    },
  };
});
