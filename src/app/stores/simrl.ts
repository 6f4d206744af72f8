// The Sim RL experiments (Train view → Sim RL): stored experiments, the one running in the
// worker ('simrl' job, src/jobs/simrl.ts) with its curves as they grow, and those a reload cut
// off, offered to resume from their last stored evaluation.
import { create, type StoreApi } from 'zustand';
import type { ExperimentRecord, RunRecord } from '../../core/records.ts';
import { deleteExperiment, getExperiment, listExperiments, newExperimentId, putExperiment, updateExperiment } from '../../storage/experiments.ts';
import { listRuns } from '../../storage/runs.ts';
import { experimentView, type ExperimentView, type SimRlProgress } from '../../jobs/simrlView.ts';
import { experimentLockName, type JobState } from '../../jobs/protocol.ts';
import { newAgentExperiment, type AgentExperimentSpec, type AgentExperimentState } from '../../train/agent/experiment.ts';
import { folderFingerprint, type HfTrainFolder } from '../../train/hfFolder.ts';
import { jobClient } from './jobClient.ts';
import { keyFor, provideEndpointKey, type KeyStorage, type TypedKey } from './endpoints.ts';
import { heldLocks } from '../lib/locks.ts';

/** A stored experiment as the page keeps it: its state without the policies' bytes. */
export type ExperimentSummary = Omit<ExperimentRecord, 'experiment'> & { experiment: ExperimentView };

export interface LiveExperiment {
  jobId: string;
  expId: string;
  state: JobState;
  /** The RL step last taken (arm and x), for the status line. */
  step: SimRlProgress['step'] | null;
}

/** What a new experiment is made of (the panel's form, checked). */
export interface ExperimentDraft {
  name?: string;
  spec: AgentExperimentSpec;
  world: ExperimentRecord['world'];
  worldMaxTokens: number;
  /** A Hugging Face policy's folder (spec.policy names it). */
  folder?: HfTrainFolder;
}

interface SimRlState {
  status: 'idle' | 'loading' | 'ready' | 'error';
  list: ExperimentSummary[];
  /** Runs with checkpoints, for the world-model picker. */
  runs: RunRecord[];
  selectedId: string | null;
  live: LiveExperiment | null;
  /** The Hugging Face folders of experiments picked in this page (never stored: a reload asks for them again). */
  folders: Record<string, HfTrainFolder>;
  /** Experiments whose stored state says they were running when the page went away. */
  interrupted: ExperimentSummary[];
  logs: string[];
  error: string | null;
  init(): Promise<void>;
  refresh(): Promise<void>;
  select(id: string | null): void;
  create(draft: ExperimentDraft): Promise<string | null>;
  /**
   * Goes on with a stored experiment; `folder`: its Hugging Face policy's folder, picked again;
   * `key`: its endpoint world's key, typed again (worldKeyMissing), kept here as the Playground keeps keys.
   */
  resume(id: string, folder?: HfTrainFolder, key?: TypedKey): Promise<void>;
  stop(): void;
  remove(id: string): Promise<void>;
  dismissInterrupted(id: string): Promise<void>;
  dismissError(): void;
}

const ACTIVE = ['queued', 'running', 'paused', 'stopping'];
const ONE_JOB = 'A Sim RL experiment is running; stop it first (one at a time shares the GPU).';
const MAX_LOGS = 100;

/** The page's copy of a stored record (the policies' bytes left in storage). */
export function experimentSummary(r: ExperimentRecord): ExperimentSummary {
  return { ...r, experiment: experimentView(r.experiment as AgentExperimentState) };
}

/** The stored record of a new experiment (its state checked and made by the library); `policy`: its Hugging Face folder's fingerprint. */
export function experimentFromDraft(d: ExperimentDraft, id: string, now: number, policy?: ExperimentRecord['policy']): ExperimentRecord<AgentExperimentState> {
  const experiment = newAgentExperiment(d.spec);
  return {
    id,
    name: d.name?.trim() || `Sim RL ${d.spec.train.domain} · ${new Date(now).toISOString().slice(0, 16).replace('T', ' ')}`,
    createdAt: now,
    updatedAt: now,
    state: 'queued',
    world: d.world,
    worldMaxTokens: d.worldMaxTokens,
    ...(policy && { policy }),
    experiment,
  };
}

type SetState = StoreApi<SimRlState>['setState'];
type GetState = StoreApi<SimRlState>['getState'];
let initPromise: Promise<void> | null = null;

/** Experiments whose lock was held when the page opened (the reloaded page's worker may not have let go yet): looked at again a few times. */
function recheckHeld(ids: string[], set: SetState, get: GetState, tries: number) {
  setTimeout(async () => {
    const locks = await heldLocks();
    const freed = ids.filter((id) => !locks.has(experimentLockName(id)) && get().live?.expId !== id);
    if (freed.length) {
      const fresh = (await Promise.all(freed.map((id) => getExperiment(id).catch(() => undefined))))
        .filter((e): e is ExperimentRecord => !!e && ACTIVE.includes(e.state))
        .map(experimentSummary);
      set((s) => ({ interrupted: [...s.interrupted, ...fresh.filter((e) => !s.interrupted.some((x) => x.id === e.id))] }));
    }
    const still = ids.filter((id) => !freed.includes(id));
    if (still.length && tries > 1) recheckHeld(still, set, get, tries - 1);
  }, 1000);
}

/**
 * Whether an experiment's world is an endpoint whose key this device does not have (never given,
 * or kept in memory by a page since closed): a resume asks for it, and one that needs no key may be left blank.
 */
export function worldKeyMissing(world: ExperimentRecord['world']): boolean {
  return world?.kind === 'endpoint' && worldKey(world) === undefined;
}

/** An endpoint world's key, from the endpoints set up on this device (the record holds none); undefined for any other world. */
export function worldKey(world: ExperimentRecord['world'], storage?: KeyStorage | null): string | undefined {
  if (world?.kind !== 'endpoint') return undefined;
  return keyFor(world.endpoint, undefined, storage) || undefined;
}

function onProgress(p: SimRlProgress, set: SetState, get: GetState) {
  const live = get().live;
  if (!live || p.expId !== live.expId) return;
  if (p.step) set({ live: { ...live, step: p.step } });
  const state = p.state;
  if (state) set((s) => ({ list: s.list.map((e) => (e.id === p.expId ? { ...e, state: 'running', experiment: state } : e)) }));
}

export const useSimRlStore = create<SimRlState>()((set, get) => {
  function startJob(id: string) {
    let live: LiveExperiment | null = null;
    const isLive = () => live !== null && get().live?.jobId === live.jobId;
    const folder = get().folders[id];
    const apiKey = worldKey(get().list.find((e) => e.id === id)?.world ?? null);
    const { jobId, outcome } = jobClient().run(
      { kind: 'simrl', expId: id, ...(folder && { folder }), ...(apiKey && { secrets: { apiKeys: { world: apiKey } } }) },
      {
        onProgress: (p) => (isLive() ? onProgress(p, set, get) : undefined),
        onLog: (message) => (isLive() ? set((s) => ({ logs: [...s.logs.slice(-MAX_LOGS + 1), message] })) : undefined),
        onStatus: (state) => {
          if (!live || !isLive()) return;
          const finished = state === 'done' || state === 'stopped' || state === 'failed';
          set({ live: finished ? null : { ...(get().live ?? live), state } });
          if (finished) void get().refresh();
        },
      },
    );
    void outcome.then((end) => {
      if (end.state !== 'failed') return;
      set({ error: end.error.message });
      void get().refresh();
    });
    live = { jobId, expId: id, state: 'queued', step: null };
    set((s) => ({ live, selectedId: id, interrupted: s.interrupted.filter((x) => x.id !== id), logs: [], error: null }));
  }

  return {
    status: 'idle',
    list: [],
    runs: [],
    selectedId: null,
    live: null,
    folders: {},
    interrupted: [],
    logs: [],
    error: null,
    init() {
      initPromise ??= (async () => {
        set({ status: 'loading' });
        try {
          const [records, runs, locks] = await Promise.all([listExperiments(), listRuns(), heldLocks()]);
          const list = records.map(experimentSummary);
          const interrupted = list.filter((e) => ACTIVE.includes(e.state) && !locks.has(experimentLockName(e.id)));
          set({ list, runs: runs.filter((r) => r.checkpoints.last || r.checkpoints.best), interrupted, status: 'ready' });
          const held = list.filter((e) => ACTIVE.includes(e.state) && locks.has(experimentLockName(e.id))).map((e) => e.id);
          if (held.length) recheckHeld(held, set, get, 5);
          if (!get().selectedId && list[0]) set({ selectedId: (interrupted[0] ?? list[0]).id });
        } catch (e) {
          set({ status: 'error', error: `Could not read Sim RL experiments from browser storage: ${(e as Error).message}` });
        }
      })();
      return initPromise;
    },
    async refresh() {
      try {
        const [records, runs] = await Promise.all([listExperiments(), listRuns()]);
        set((s) => ({
          list: records.map(experimentSummary),
          runs: runs.filter((r) => r.checkpoints.last || r.checkpoints.best),
          selectedId: s.selectedId && records.some((r) => r.id === s.selectedId) ? s.selectedId : (records[0]?.id ?? null),
          interrupted: s.interrupted.filter((x) => records.some((r) => r.id === x.id)),
        }));
      } catch (e) {
        set({ error: `Could not read Sim RL experiments from browser storage: ${(e as Error).message}` });
      }
    },
    select(id) {
      set({ selectedId: id });
    },
    async create(draft) {
      if (get().live) {
        set({ error: ONE_JOB });
        return null;
      }
      let record: ExperimentRecord;
      const id = newExperimentId();
      try {
        const folder = draft.folder;
        const policy = folder && { folder: await folderFingerprint(folder.files, folder.name), memoryGiB: folder.memoryGiB };
        record = experimentFromDraft(draft, id, Date.now(), policy);
        if (folder) set((s) => ({ folders: { ...s.folders, [id]: folder } }));
      } catch (e) {
        set({ error: (e as Error).message });
        return null;
      }
      try {
        await putExperiment(record);
      } catch (e) {
        set({ error: `Could not store the experiment: ${(e as Error).message}` });
        return null;
      }
      set((s) => ({ list: [experimentSummary(record), ...s.list] }));
      startJob(record.id);
      return record.id;
    },
    async resume(id, folder, key) {
      if (get().live) return set({ error: ONE_JOB });
      if (folder) set((s) => ({ folders: { ...s.folders, [id]: folder } }));
      const world = get().list.find((e) => e.id === id)?.world;
      if (key?.key && world?.kind === 'endpoint') provideEndpointKey(world.endpoint, key.key, key.remember);
      startJob(id);
    },
    stop() {
      const live = get().live;
      if (live) jobClient().stop(live.jobId);
    },
    async remove(id) {
      if (get().live?.expId === id) return set({ error: 'This experiment is running; stop it before deleting it.' });
      try {
        await deleteExperiment(id);
      } catch (e) {
        set({ error: `Could not delete the experiment: ${(e as Error).message}` });
      }
      set((s) => ({ selectedId: s.selectedId === id ? null : s.selectedId, interrupted: s.interrupted.filter((x) => x.id !== id) }));
      await get().refresh();
    },
    async dismissInterrupted(id) {
      set((s) => ({ interrupted: s.interrupted.filter((x) => x.id !== id) }));
      try {
        await updateExperiment(id, (e) => {
          if (ACTIVE.includes(e.state)) e.state = 'stopped';
        });
      } catch (e) {
        set({ error: (e as Error).message });
      }
      await get().refresh();
    },
    dismissError() {
      set({ error: null });
    },
  };
});
