// Datasets: the list kept in IndexedDB, the active one's trajectories in memory, and imports.
// An import parses every file completely first and only then writes one new dataset, so a bad
// file never changes or loses what is already stored.
import { create } from 'zustand';
import { persist } from 'zustand/middleware';
import type { Trajectory } from '../../core/schema/types.ts';
import { formatDataError, type DataError } from '../../core/schema/validate.ts';
import { importStream, type FormatName, type IdSource } from '../../core/formats/index.ts';
import { deleteDataset, listDatasets, loadTrajectories, newDatasetId, saveDataset, updateTrajectory } from '../../storage/datasets.ts';
import { StorageFullError } from '../../storage/runs.ts';
import type { DatasetMeta } from '../../storage/db.ts';

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

let initPromise: Promise<void> | null = null;

export const useDatasetStore = create<DatasetState>()(
  persist(
    (set, get) => {
      async function refreshList() {
        set({ datasets: await listDatasets() });
      }

      async function activate(id: string) {
        set({ status: 'loading', message: 'Loading the dataset from browser storage…', activeId: id });
        const trajectories = await loadTrajectories(id);
        // A later select() may have superseded this one while it loaded.
        if (get().activeId === id) set({ trajectories, loadedId: id, status: 'ready', message: null, error: null });
      }

      return {
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

        init() {
          initPromise ??= (async () => {
            try {
              set({ status: 'loading', message: 'Opening browser storage…' });
              await refreshList();
              const { datasets, activeId, defaultSeeded } = get();
              if (!datasets.length && !defaultSeeded) {
                await get().loadDefault();
                return;
              }
              const pick = datasets.find((d) => d.id === activeId) ?? datasets[0];
              if (pick) await activate(pick.id);
              else set({ status: 'ready', message: null, activeId: null, trajectories: [], loadedId: null });
            } catch (e) {
              set({ status: 'error', message: null, error: `Could not open browser storage: ${(e as Error).message}` });
            }
          })();
          return initPromise;
        },

        async loadDefault() {
          set({ status: 'loading', message: 'Loading the default dataset…', error: null });
          try {
            const url = new URL(DEFAULT_DATASET_URL, document.baseURI).href;
            const res = await fetch(url);
            if (!res.ok || !res.body) throw new Error(`${url} answered ${res.status} ${res.statusText}`);
            const total = Number(res.headers.get('content-length')) || 0;
            const trajectories: Trajectory[] = [];
            let errors = 0;
            set({ importing: { file: 'default-dataset.jsonl', consumed: 0, total, trajectories: 0, errors: 0 } });
            for await (const ev of importStream(streamChunks(res.body), {
              file: 'default-dataset.jsonl',
              format: 'native',
              total,
              progressEvery: 200,
              onProgress: (p) => set({ importing: { file: 'default-dataset.jsonl', consumed: p.consumed, total, trajectories: p.trajectories, errors: p.errors } }),
            })) {
              if (ev.kind === 'trajectory') trajectories.push(ev.trajectory);
              else if (ev.kind === 'error') errors++;
            }
            if (!trajectories.length) throw new Error('the default dataset file holds no trajectories');
            const meta = await saveDataset(
              { id: 'default', name: DEFAULT_DATASET_NAME, createdAt: Date.now(), origin: 'builtin', formats: ['native'], files: ['default-dataset.jsonl'], errorCount: errors },
              trajectories,
            );
            set({ defaultSeeded: true, importing: null });
            await refreshList();
            set({ activeId: meta.id, trajectories, loadedId: meta.id, status: 'ready', message: null });
          } catch (e) {
            set({ status: 'error', importing: null, message: null, error: `Could not load the default dataset: ${(e as Error).message}` });
          }
        },

        async select(id) {
          if (get().loadedId === id) return;
          try {
            await activate(id);
          } catch (e) {
            set({ status: 'error', error: `Could not load dataset: ${(e as Error).message}` });
          }
        },

        async importFiles(files, format) {
          const total = files.reduce((n, f) => n + f.size, 0);
          const trajectories: Trajectory[] = [];
          const errors: DataError[] = [];
          const formats = new Set<string>();
          let errorCount = 0;
          let before = 0;
          const outcome = (o: Partial<ImportOutcome>): ImportOutcome => {
            const out: ImportOutcome = { files: files.map((f) => f.name), imported: trajectories.length, errors, errorCount, datasetId: null, failure: null, ...o };
            set({ importing: null, lastImport: out });
            return out;
          };
          set({ importing: { file: files[0]?.name ?? '', consumed: 0, total, trajectories: 0, errors: 0 }, lastImport: null });
          // Ids must be unique within a dataset (splits and the RL pool key on them): one map of
          // taken ids across all files, so the importer leaves every later copy out with an error.
          const seenIds = new Map<string, IdSource>();
          try {
            for (const file of files) {
              const base = before;
              for await (const ev of importStream(streamChunks(file.stream()), {
                file: file.name,
                format,
                total: file.size,
                progressEvery: 200,
                seenIds,
                onProgress: (p) => set({ importing: { file: file.name, consumed: base + p.consumed, total, trajectories: trajectories.length, errors: errorCount } }),
              })) {
                if (ev.kind === 'format') formats.add(ev.format);
                else if (ev.kind === 'trajectory') trajectories.push(ev.trajectory);
                else {
                  errorCount++;
                  if (errors.length < MAX_SHOWN_ERRORS) errors.push(ev.error);
                }
              }
              before += file.size;
            }
          } catch (e) {
            return outcome({ failure: `Reading the file failed: ${(e as Error).message}. Nothing was stored.` });
          }
          if (!trajectories.length) return outcome({ failure: 'No trajectory could be read from the file. Nothing was stored.' });
          try {
            const meta = await saveDataset(
              {
                id: newDatasetId(),
                name: files.length === 1 ? files[0].name : `${files[0].name} and ${files.length - 1} more`,
                createdAt: Date.now(),
                origin: 'import',
                formats: [...formats],
                files: files.map((f) => f.name),
                errorCount,
              },
              trajectories,
            );
            await refreshList();
            set({ activeId: meta.id, trajectories: [...trajectories], loadedId: meta.id, status: 'ready' });
            return outcome({ datasetId: meta.id });
          } catch (e) {
            // A full quota has its own message (what to delete); it already says nothing was lost.
            if (e instanceof StorageFullError) return outcome({ failure: e.message });
            return outcome({ failure: `Saving to browser storage failed (${(e as Error).message}). Nothing was stored.` });
          }
        },

        async remove(id) {
          await deleteDataset(id);
          await refreshList();
          if (get().activeId === id || get().loadedId === id) {
            const next = get().datasets[0];
            set({ trajectories: [], loadedId: null, activeId: null });
            if (next) await activate(next.id);
          }
        },

        async replaceTrajectory(position, t) {
          const id = get().loadedId;
          if (!id) throw new Error('no dataset is loaded');
          await updateTrajectory(id, position, t);
          const trajectories = get().trajectories.slice();
          trajectories[position] = t;
          set({ trajectories });
          await refreshList();
        },

        dismissImport() {
          set({ lastImport: null });
        },

        async reload(id) {
          await refreshList();
          set({ loadedId: null });
          await activate(id);
        },
      };
    },
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

