// The app's IndexedDB database: one versioned schema for everything the browser keeps between
// sessions. Upgrades run in order from the version the user has to DB_VERSION, so a user who
// skipped releases still gets every store; nothing already stored is rewritten by an upgrade.
//
// Version history (add a step to `upgrade` and a line here for each new version):
//   1  datasets, datasetChunks, templates, tokenizers
//   2  training runs (src/storage/runs.ts):
//      runs: keyPath 'id', index 'byCreatedAt'; a RunRecord: spec, state, and the 'last' and
//        'best' checkpoint pointers (small, so listing runs stays cheap);
//      checkpoints: keyPath 'key', index 'byRun'; safetensors bytes, one record per checkpoint,
//        never overwritten in place (atomic replacement: see runs.ts);
//      runMetrics: keyPath ['runId', 'step']; one record per logged step, values merged.
//   3  benchmarks (src/storage/bench.ts):
//      benches: keyPath 'id', index 'byCreatedAt'; a BenchRecord: the samples, backends, judges
//        and settings of one Bench run (or an imported judged file), its state and progress;
//      benchResults: keyPath ['benchId', 'backend', 'index']; one sample's prediction and its
//        judged records by judge, written as each finishes (what a resumed run skips).
//   4  prompt optimizations (src/storage/optimize.ts):
//      optimizations: keyPath 'id', index 'byCreatedAt'; an OptimizationRecord: the starting
//        template, data, backend, judge, optimizer and loop settings, and the loop's resumable
//        state (src/core/optimize/loop.ts), written after every evaluation.
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type {
  DatasetMeta,
  DatasetChunk,
  TemplateVersion,
  CachedTokenizer,
  RunRecord,
  StoredCheckpoint,
  RunMetric,
  BenchRecord,
  BenchResult,
  OptimizationRecord,
} from '../core/records.ts';

export const DB_NAME = 'lwm-studio';
export const DB_VERSION = 4;

export interface StudioDB extends DBSchema {
  datasets: { key: string; value: DatasetMeta };
  datasetChunks: { key: [string, number]; value: DatasetChunk };
  templates: { key: string; value: TemplateVersion };
  tokenizers: { key: string; value: CachedTokenizer };
  runs: { key: string; value: RunRecord; indexes: { byCreatedAt: number } };
  checkpoints: { key: string; value: StoredCheckpoint; indexes: { byRun: string } };
  runMetrics: { key: [string, number]; value: RunMetric };
  benches: { key: string; value: BenchRecord; indexes: { byCreatedAt: number } };
  benchResults: { key: [string, string, number]; value: BenchResult };
  optimizations: { key: string; value: OptimizationRecord; indexes: { byCreatedAt: number } };
}

let dbPromise: Promise<IDBPDatabase<StudioDB>> | null = null;

export function openStudioDB(): Promise<IDBPDatabase<StudioDB>> {
  dbPromise ??= openDB<StudioDB>(DB_NAME, DB_VERSION, {
    upgrade(db, oldVersion) {
      // Each step brings the schema one version forward, so every older version gets them all.
      if (oldVersion < 1) {
        db.createObjectStore('datasets', { keyPath: 'id' });
        db.createObjectStore('datasetChunks', { keyPath: ['datasetId', 'index'] });
        db.createObjectStore('templates', { keyPath: 'version' });
        db.createObjectStore('tokenizers', { keyPath: 'datasetId' });
      }
      if (oldVersion < 2) {
        const runs = db.createObjectStore('runs', { keyPath: 'id' });
        runs.createIndex('byCreatedAt', 'createdAt');
        const checkpoints = db.createObjectStore('checkpoints', { keyPath: 'key' });
        checkpoints.createIndex('byRun', 'runId');
        db.createObjectStore('runMetrics', { keyPath: ['runId', 'step'] });
      }
      if (oldVersion < 3) {
        const benches = db.createObjectStore('benches', { keyPath: 'id' });
        benches.createIndex('byCreatedAt', 'createdAt');
        db.createObjectStore('benchResults', { keyPath: ['benchId', 'backend', 'index'] });
      }
      if (oldVersion < 4) {
        const opts = db.createObjectStore('optimizations', { keyPath: 'id' });
        opts.createIndex('byCreatedAt', 'createdAt');
      }
    },
    blocked() {
      // Another tab holds an older version open; it will close its connection on versionchange.
    },
    blocking() {
      // A newer tab wants to upgrade: let it, and reopen lazily next time.
      void dbPromise?.then((db) => db.close());
      dbPromise = null;
    },
  });
  return dbPromise;
}

/** Closes the shared connection (tests reopen the database; a page never needs this). */
export async function closeStudioDB(): Promise<void> {
  const p = dbPromise;
  dbPromise = null;
  if (p) (await p.catch(() => null))?.close();
}
