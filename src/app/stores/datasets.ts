// Datasets: the list kept in IndexedDB, the active one's trajectories in memory, and imports.
// An import parses every file completely first and only then writes one new dataset, so a bad
// file never changes or loses what is already stored.
import { create, type StoreApi } from 'zustand';
import { persist } from 'zustand/middleware';
import type { Trajectory } from '../../core/schema/types.ts';
import { formatDataError, type DataError } from '../../core/schema/validate.ts';
import { importStream, type FormatName, type IdSource } from '../../core/formats/index.ts';
import { deleteDataset, listDatasets, loadTrajectories, newDatasetId, saveDataset, updateTrajectory } from '../../storage/datasets.ts';
import { StorageFullError } from '../../storage/runs.ts';
import type { DatasetMeta } from '../../core/records.ts';

export const DEFAULT_DATASET_URL = './default-dataset.jsonl';
export const DEFAULT_DATASET_NAME = 'Default dataset (seven built-in environments)';

export interface ImportProgressState {
  file: string;
  /** Bytes read over all files of the import. */
  consumed: number;
  total: number;
  trajectories: number;
  errors: number;
}

export interface ImportOutcome {
  files: string[];
  imported: number;
  errors: DataError[];
  errorCount: number;
  datasetId: string | null;
  /** A problem with the import as a whole (nothing readable, storage failed). */
  failure: string | null;
}

interface DatasetState {
  status: 'idle' | 'loading' | 'ready' | 'error';
  /** What the loading status is doing, for the user. */
  message: string | null;
  error: string | null;
  datasets: DatasetMeta[];
  activeId: string | null;
  /** Trajectories of the active dataset (a new array on every change, so memos key on it). */
  trajectories: Trajectory[];
  loadedId: string | null;
  defaultSeeded: boolean;
  importing: ImportProgressState | null;
  lastImport: ImportOutcome | null;

  init(): Promise<void>;
  loadDefault(): Promise<void>;
  select(id: string): Promise<void>;
  importFiles(files: File[], format: FormatName | 'auto'): Promise<ImportOutcome>;
  remove(id: string): Promise<void>;
  /** Replaces one trajectory of the active dataset (raw editing); the caller has validated it. */
  replaceTrajectory(position: number, t: Trajectory): Promise<void>;
  dismissImport(): void;
  /** Re-reads the list and makes `id` the active dataset as stored now (another view wrote it, e.g. the Playground saved a session). */
  reload(id: string): Promise<void>;
}

async function* streamChunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

const MAX_SHOWN_ERRORS = 500;
/** Trajectories between progress reports: a smooth bar without a store update for every line. */
const PROGRESS_EVERY = 200;
const DEFAULT_FILE = 'default-dataset.jsonl';

let initPromise: Promise<void> | null = null;

type SetState = StoreApi<DatasetState>['setState'];
type GetState = StoreApi<DatasetState>['getState'];

const INITIAL: Pick<
  DatasetState,
  'status' | 'message' | 'error' | 'datasets' | 'activeId' | 'trajectories' | 'loadedId' | 'defaultSeeded' | 'importing' | 'lastImport'
> = {
  status: 'idle',
  message: null,
  error: null,
  datasets: [],
  activeId: null,
  trajectories: [],
  loadedId: null,
  defaultSeeded: false,
  importing: null,
  lastImport: null,
};

/** Fetches and reads the built-in dataset, reporting progress; throws when it holds no trajectory. */
async function readDefaultDataset(set: SetState): Promise<{ trajectories: Trajectory[]; errors: number }> {
  const url = new URL(DEFAULT_DATASET_URL, document.baseURI).href;
  const res = await fetch(url);
  if (!res.ok || !res.body) throw new Error(`${url} answered ${res.status} ${res.statusText}`);
  const total = Number(res.headers.get('content-length')) || 0;
  const trajectories: Trajectory[] = [];
  let errors = 0;
  set({ importing: { file: DEFAULT_FILE, consumed: 0, total, trajectories: 0, errors: 0 } });
  for await (const ev of importStream(streamChunks(res.body), {
    file: DEFAULT_FILE,
    format: 'native',
    total,
    progressEvery: PROGRESS_EVERY,
    onProgress: (p) => set({ importing: { file: DEFAULT_FILE, consumed: p.consumed, total, trajectories: p.trajectories, errors: p.errors } }),
  })) {
    if (ev.kind === 'trajectory') trajectories.push(ev.trajectory);
    else if (ev.kind === 'error') errors++;
  }
  if (!trajectories.length) throw new Error('the default dataset file holds no trajectories');
  return { trajectories, errors };
}

/** What an import has read so far: every trajectory, the first MAX_SHOWN_ERRORS of errorCount errors, the formats seen. */
interface ImportRead {
  trajectories: Trajectory[];
  errors: DataError[];
  errorCount: number;
  formats: Set<string>;
}

/** Reads every file completely into `read` (which keeps what was read when a file fails), reporting progress. */
async function readImportFiles(files: File[], format: FormatName | 'auto', read: ImportRead, set: SetState): Promise<void> {
  const total = files.reduce((n, f) => n + f.size, 0);
  // Ids must be unique within a dataset (splits and the RL pool key on them): one map of
  // taken ids across all files, so the importer leaves every later copy out with an error.
  const seenIds = new Map<string, IdSource>();
  let before = 0;
  for (const file of files) {
    const base = before;
    for await (const ev of importStream(streamChunks(file.stream()), {
      file: file.name,
      format,
      total: file.size,
      progressEvery: PROGRESS_EVERY,
      seenIds,
      onProgress: (p) =>
        set({ importing: { file: file.name, consumed: base + p.consumed, total, trajectories: read.trajectories.length, errors: read.errorCount } }),
    })) {
      if (ev.kind === 'format') read.formats.add(ev.format);
      else if (ev.kind === 'trajectory') read.trajectories.push(ev.trajectory);
      else {
        read.errorCount++;
        if (read.errors.length < MAX_SHOWN_ERRORS) read.errors.push(ev.error);
      }
    }
    before += file.size;
  }
}

/** Stores what an import read as one new dataset. */
function saveImport(files: File[], read: ImportRead): Promise<DatasetMeta> {
  return saveDataset(
    {
      id: newDatasetId(),
      name: files.length === 1 ? files[0].name : `${files[0].name} and ${files.length - 1} more`,
      createdAt: Date.now(),
      origin: 'import',
      formats: [...read.formats],
      files: files.map((f) => f.name),
      errorCount: read.errorCount,
    },
    read.trajectories,
  );
}

async function refreshList(set: SetState) {
  set({ datasets: await listDatasets() });
}

async function activate(id: string, set: SetState, get: GetState) {
  set({ status: 'loading', message: 'Loading the dataset from browser storage…', activeId: id });
  const trajectories = await loadTrajectories(id);
  // A later select() may have superseded this one while it loaded.
  if (get().activeId === id) set({ trajectories, loadedId: id, status: 'ready', message: null, error: null });
}

/** Opening storage (seeding the built-in dataset on the first visit) and choosing the active dataset. */
function openActions(set: SetState, get: GetState) {
  return {
    init(): Promise<void> {
      initPromise ??= (async () => {
        try {
          set({ status: 'loading', message: 'Opening browser storage…' });
          await refreshList(set);
          const { datasets, activeId, defaultSeeded } = get();
          if (!datasets.length && !defaultSeeded) {
            await get().loadDefault();
            return;
          }
          const pick = datasets.find((d) => d.id === activeId) ?? datasets[0];
          if (pick) await activate(pick.id, set, get);
          else set({ status: 'ready', message: null, activeId: null, trajectories: [], loadedId: null });
        } catch (e) {
          set({ status: 'error', message: null, error: `Could not open browser storage: ${(e as Error).message}` });
        }
      })();
      return initPromise;
    },

    async loadDefault(): Promise<void> {
      set({ status: 'loading', message: 'Loading the default dataset…', error: null });
      try {
        const { trajectories, errors } = await readDefaultDataset(set);
        const meta = await saveDataset(
          {
            id: 'default',
            name: DEFAULT_DATASET_NAME,
            createdAt: Date.now(),
            origin: 'builtin',
            formats: ['native'],
            files: [DEFAULT_FILE],
            errorCount: errors,
          },
          trajectories,
        );
        set({ defaultSeeded: true, importing: null });
        await refreshList(set);
        set({ activeId: meta.id, trajectories, loadedId: meta.id, status: 'ready', message: null });
      } catch (e) {
        set({ status: 'error', importing: null, message: null, error: `Could not load the default dataset: ${(e as Error).message}` });
      }
    },

    async select(id: string): Promise<void> {
      if (get().loadedId === id) return;
      try {
        await activate(id, set, get);
      } catch (e) {
        set({ status: 'error', error: `Could not load dataset: ${(e as Error).message}` });
      }
    },
  };
}

/** Importing files as one new dataset. */
function importActions(set: SetState) {
  return {
    async importFiles(files: File[], format: FormatName | 'auto'): Promise<ImportOutcome> {
      const read: ImportRead = { trajectories: [], errors: [], errorCount: 0, formats: new Set() };
      const outcome = (o: Partial<ImportOutcome>): ImportOutcome => {
        const out: ImportOutcome = {
          files: files.map((f) => f.name),
          imported: read.trajectories.length,
          errors: read.errors,
          errorCount: read.errorCount,
          datasetId: null,
          failure: null,
          ...o,
        };
        set({ importing: null, lastImport: out });
        return out;
      };
      const total = files.reduce((n, f) => n + f.size, 0);
      set({ importing: { file: files[0]?.name ?? '', consumed: 0, total, trajectories: 0, errors: 0 }, lastImport: null });
      try {
        await readImportFiles(files, format, read, set);
      } catch (e) {
        return outcome({ failure: `Reading the file failed: ${(e as Error).message}. Nothing was stored.` });
      }
      if (!read.trajectories.length) return outcome({ failure: 'No trajectory could be read from the file. Nothing was stored.' });
      try {
        const meta = await saveImport(files, read);
        await refreshList(set);
        set({ activeId: meta.id, trajectories: [...read.trajectories], loadedId: meta.id, status: 'ready' });
        return outcome({ datasetId: meta.id });
      } catch (e) {
        // A full quota has its own message (what to delete); it already says nothing was lost.
        if (e instanceof StorageFullError) return outcome({ failure: e.message });
        return outcome({ failure: `Saving to browser storage failed (${(e as Error).message}). Nothing was stored.` });
      }
    },
  };
}

/** Changes to stored datasets. */
function editActions(set: SetState, get: GetState) {
  return {
    async remove(id: string): Promise<void> {
      await deleteDataset(id);
      await refreshList(set);
      if (get().activeId === id || get().loadedId === id) {
        const next = get().datasets[0];
        set({ trajectories: [], loadedId: null, activeId: null });
        if (next) await activate(next.id, set, get);
      }
    },

    async replaceTrajectory(position: number, t: Trajectory): Promise<void> {
      const id = get().loadedId;
      if (!id) throw new Error('no dataset is loaded');
      await updateTrajectory(id, position, t);
      const trajectories = get().trajectories.slice();
      trajectories[position] = t;
      set({ trajectories });
      await refreshList(set);
    },

    dismissImport() {
      set({ lastImport: null });
    },

    async reload(id: string): Promise<void> {
      await refreshList(set);
      set({ loadedId: null });
      await activate(id, set, get);
    },
  };
}

export const useDatasetStore = create<DatasetState>()(
  persist(
    (set, get) => ({
      ...INITIAL,
      ...openActions(set, get),
      ...importActions(set),
      ...editActions(set, get),
    }),
    {
      name: 'lwm.datasets',
      version: 1,
      partialize: (s) => ({ activeId: s.activeId, defaultSeeded: s.defaultSeeded }),
    },
  ),
);

export function describeError(e: DataError): string {
  return formatDataError(e);
}
