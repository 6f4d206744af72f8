// Browser storage in the app: the System view's Storage card (what is stored, by kind, its size,
// deleting it, asking the browser to keep it) and the quota warning shown before a long job
// starts (training, a bench, judging, a prompt optimization). The browser's storage APIs come in
// as StorageDeps, so tests give their own estimate and caches.
//
// A job is started through guardJob(): it asks for the origin's estimate and, when the quota rule
// (src/storage/quota.ts) says storage is near full, opens the warning; the job starts only when
// the user chooses to continue. "Free space" opens the Storage card instead.
import { create, type StoreApi, type UseBoundStore } from 'zustand';
import type { RunRecord } from '../../core/records.ts';
import type { NewTrainJob, RecipeJobSpec } from '../../jobs/jobs.ts';
import { benchLockName, experimentLockName, optimizeLockName, runLockName } from '../../jobs/protocol.ts';
import { quotaWarning, trainWriteBytes, type JobWrite, type QuotaWarning } from '../../storage/quota.ts';
import { browserStorageEnv, deleteStored, KIND_LABELS, measureStorage, type StorageEnv, type StorageReport, type StoredKind } from '../../storage/usage.ts';
import { recipeByName } from '../../train/recipe.ts';
import { heldLocks } from '../lib/locks.ts';

export interface StorageDeps {
  env(): StorageEnv;
  /** Names of the Web Locks held in this origin (a live job holds its record's). */
  locks(): Promise<Set<string>>;
  /** Items of `kind` were deleted: the stores that list them read again. */
  changed(kind: StoredKind, ids: readonly string[] | 'all'): Promise<void>;
  /** Shows the Storage card (from the quota warning). */
  openStorage(): void;
}

export type WarningAnswer = 'continue' | 'storage' | 'cancel';

export interface StorageState {
  report: StorageReport | null;
  status: 'idle' | 'loading' | 'ready' | 'error';
  error: string | null;
  /** What is being deleted ('kind' or 'kind:id'), while it is. */
  deleting: string | null;
  /** The quota warning on screen, waiting for an answer. */
  warning: QuotaWarning | null;
  /** The Storage card should scroll into view (set by the warning's "Free space"). */
  focus: boolean;

  refresh(): Promise<void>;
  /** Deletes items of a kind, or all of it; refused while a job uses one of them. */
  remove(kind: StoredKind, ids: readonly string[] | 'all'): Promise<void>;
  /** Asks the browser to keep this origin's storage under pressure. */
  persist(): Promise<void>;
  /** Resolves true when the job may start: at once when there is room, else when the user says so. */
  checkBeforeJob(job: JobWrite): Promise<boolean>;
  answerWarning(answer: WarningAnswer): void;
  focused(): void;
  dismissError(): void;
}

/** The lock a live job holds on an item of a kind, if any kind of job writes it. */
function lockOf(kind: StoredKind, id: string, runOf: (checkpointKey: string) => string | null): string | null {
  if (kind === 'runs') return runLockName(id);
  if (kind === 'checkpoints') {
    const run = runOf(id);
    return run ? runLockName(run) : null;
  }
  if (kind === 'benches') return benchLockName(id);
  if (kind === 'optimizations') return optimizeLockName(id);
  if (kind === 'experiments') return experimentLockName(id);
  return null;
}

export function createStorageStore(deps: StorageDeps): UseBoundStore<StoreApi<StorageState>> {
  let answer: ((ok: boolean) => void) | null = null;
  let reads = 0;
  return create<StorageState>()((set, get) => ({
    report: null,
    status: 'idle',
    error: null,
    deleting: null,
    warning: null,
    focus: false,

    async refresh() {
      const read = ++reads;
      if (!get().report) set({ status: 'loading' });
      try {
        const report = await measureStorage(deps.env());
        if (read === reads) set({ report, status: 'ready' });
      } catch (e) {
        if (read === reads) set({ status: 'error', error: `Could not measure browser storage: ${(e as Error).message}` });
      }
    },

    async remove(kind, ids) {
      const items = get().report?.kinds.find((k) => k.kind === kind)?.items ?? [];
      const chosen = ids === 'all' ? items : items.filter((i) => ids.includes(i.id));
      const locks = await deps.locks();
      const runOf = (key: string) => items.find((i) => i.id === key)?.runId ?? null;
      const busy = chosen.find((i) => {
        const lock = lockOf(kind, i.id, runOf);
        return lock !== null && locks.has(lock);
      });
      if (busy) {
        set({ error: `${busy.name} is in use by a job that is running (in this tab or another): stop it, then delete.` });
        return;
      }
      // All of a kind takes what a job started since the last measure too: refused while any job of that kind runs.
      const prefix = kind === 'checkpoints' ? runLockName('') : lockOf(kind, '', () => null);
      if (ids === 'all' && prefix !== null && [...locks].some((l) => l.startsWith(prefix))) {
        set({ error: `A job is writing ${KIND_LABELS[kind].toLowerCase()} (in this tab or another): stop it, then delete.` });
        return;
      }
      set({ deleting: ids === 'all' ? kind : `${kind}:${ids.join(',')}`, error: null });
      try {
        await deleteStored(kind, ids, deps.env());
        await deps.changed(kind, ids);
      } catch (e) {
        set({ error: `Could not delete: ${(e as Error).message}. Nothing was deleted.` });
      } finally {
        set({ deleting: null });
        await get().refresh();
      }
    },

    async persist() {
      try {
        const granted = await deps.env().persist();
        if (!granted) set({ error: 'The browser did not make storage persistent (it decides by how the site is used; bookmarking or installing it helps).' });
      } catch (e) {
        set({ error: `Could not ask for persistent storage: ${(e as Error).message}` });
      }
      await get().refresh();
    },

    async checkBeforeJob(job) {
      let estimate = null;
      try {
        estimate = await deps.env().estimate();
      } catch {
        /* no estimate: nothing to warn about */
      }
      const warning = quotaWarning(estimate, job);
      if (!warning) return true;
      answer?.(false);
      return new Promise<boolean>((resolve) => {
        answer = resolve;
        set({ warning });
      });
    },

    answerWarning(a) {
      const resolve = answer;
      answer = null;
      set({ warning: null });
      resolve?.(a === 'continue');
      if (a === 'storage') {
        set({ focus: true });
        deps.openStorage();
      }
    },

    focused() {
      set({ focus: false });
    },

    dismissError() {
      set({ error: null });
    },
  }));
}

/**
 * The stores that list a kind read it again after a delete (a deleted dataset that was active is
 * replaced by the next). Imported when needed, so the quota warning in every page stays light.
 */
async function storesRead(kind: StoredKind, ids: readonly string[] | 'all'): Promise<void> {
  const gone = (id: string | null) => id !== null && (ids === 'all' || ids.includes(id));
  if (kind === 'datasets') {
    const ds = (await import('./datasets.ts')).useDatasetStore.getState();
    for (const d of ds.datasets) if (gone(d.id)) await ds.remove(d.id);
  }
  if (kind === 'runs' || kind === 'checkpoints') {
    const [train, bench, opt] = await Promise.all([import('./train.ts'), import('./bench.ts'), import('./optimize.ts')]);
    const t = train.useTrainStore.getState();
    if (kind === 'runs' && gone(t.selectedRunId)) await t.select(null);
    await Promise.all([t.refreshRuns(), bench.useBenchStore.getState().refresh(), opt.useOptimizeStore.getState().refresh()]);
  }
  if (kind === 'benches') {
    const bench = (await import('./bench.ts')).useBenchStore.getState();
    if (gone(bench.selectedId)) await bench.select(null);
    await bench.refresh();
  }
  if (kind === 'optimizations') {
    const opt = (await import('./optimize.ts')).useOptimizeStore.getState();
    if (gone(opt.selectedId)) opt.select(null);
    await opt.refresh();
  }
  if (kind === 'experiments') await (await import('./simrl.ts')).useSimRlStore.getState().refresh();
}

export const useStorageStore = createStorageStore({
  env: browserStorageEnv,
  locks: heldLocks,
  changed: storesRead,
  openStorage() {
    location.hash = '#/system';
  },
});

/** Starts a long job through the quota check: `start` runs when there is room, or when the user continues past the warning. */
export function guardJob(job: JobWrite, start: () => void): void {
  void useStorageStore
    .getState()
    .checkBeforeJob(job)
    .then((ok) => (ok ? start() : undefined));
}

/** A bench, judging again, a prompt optimization: records of text, small beside a checkpoint (only the 10% rule applies). */
export const BENCH_WRITE: JobWrite = { what: 'this bench', bytes: 0 };
export const JUDGE_WRITE: JobWrite = { what: 'this judging', bytes: 0 };
export const OPTIMIZE_WRITE: JobWrite = { what: 'this prompt optimization', bytes: 0 };

/** What a new training job is expected to store (0 for a Hugging Face folder's: its size is the folder's, not known here). */
export function newTrainWrite(spec: Omit<RecipeJobSpec, 'runId'> | Omit<NewTrainJob, 'runId'>): JobWrite {
  if ('recipe' in spec) {
    const stages = recipeByName(spec.recipe.name).stages;
    return { what: 'this training run', bytes: stages.reduce((n, s) => n + trainWriteBytes(s.preset, s.vocabSize), 0) };
  }
  return { what: 'this training run', bytes: spec.hf ? 0 : trainWriteBytes(spec.train.preset, spec.train.vocabSize) };
}

/** What resuming a run is expected to store: a new 'last' and 'best' beside the old (sized as its last checkpoint), or a new run's. */
export function resumeWrite(run: RunRecord | undefined): JobWrite {
  const what = 'this training run';
  if (!run) return { what, bytes: 0 };
  const last = run.checkpoints.last?.size;
  if (last) return { what, bytes: 2 * last };
  return { what, bytes: run.hf ? 0 : trainWriteBytes(run.spec.preset, run.spec.vocabSize) };
}
