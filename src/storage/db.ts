// The app's IndexedDB database: one versioned schema for everything the browser keeps between
// sessions. Upgrades run in order from the version the user has to DB_VERSION, so a user who
// skipped releases still gets every store; an upgrade rewrites stored records only to move them
// (version 5), never dropping one.
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
//   4  prompt optimizations (src/storage/optimize.ts), in a store and record fields named in the
//      older spelling (OLD_OPTIMIZATIONS_STORE here, OLD_OPTIMIZER_KEY in src/core/optimize/loop.ts).
//   5  the prompt optimizations under the one spelling the project uses:
//      optimizations: keyPath 'id', index 'byCreatedAt'; an OptimizationRecord: the starting
//        template, data, backend, judge, optimizer and loop settings, and the loop's resumable
//        state (src/core/optimize/loop.ts), written after every evaluation.
//      From version 4 every record moves to it, its optimizer and its versions' optimizer under
//      the new key, in the upgrade's one transaction (all of them or, on any failure, none: the
//      database stays at version 4 as it was), and the old store is deleted.
//   6  Sim RL experiments (src/storage/experiments.ts):
//      experiments: keyPath 'id', index 'byCreatedAt'; an ExperimentRecord: its settings, world
//        model and the experiment's resumable state (checkpoints as bytes), written after every
//        evaluation. A new store only: nothing stored before is touched.
import { openDB, type DBSchema, type IDBPDatabase, type IDBPTransaction, type StoreNames } from 'idb';
import { storedLoopState, withOptimizerKey } from '../core/optimize/loop.ts';
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
  ExperimentRecord,
} from '../core/records.ts';

export const DB_NAME = 'lwm-studio';
export const DB_VERSION = 6;

/** Version 4's store of prompt optimizations; version 5 moves its records to 'optimizations'. */
export const OLD_OPTIMIZATIONS_STORE = 'optimisations'; // old spelling, read for stored data

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
  experiments: { key: string; value: ExperimentRecord; indexes: { byCreatedAt: number } };
}

/** A record of version 4's store in the current field names (in place): its optimizer, and its loop's versions'. */
export function optimizationFromStored(o: unknown): OptimizationRecord {
  withOptimizerKey(o);
  storedLoopState((o as { loop?: unknown }).loop);
  return o as OptimizationRecord;
}

/**
 * Copies every record of version 4's store into 'optimizations' and deletes the old store, within
 * the upgrade's transaction. Any failure aborts that transaction, so the database stays at
 * version 4 with every record where it was (the open fails with the reason; nothing is lost).
 */
async function moveOldOptimizations(
  db: IDBPDatabase<StudioDB>,
  transaction: IDBPTransaction<StudioDB, StoreNames<StudioDB>[], 'versionchange'>,
): Promise<void> {
  // The old store is no part of the schema's types.
  const tx = transaction as unknown as IDBPTransaction<unknown, string[], 'versionchange'>;
  try {
    const to = tx.objectStore('optimizations');
    let cursor = await tx.objectStore(OLD_OPTIMIZATIONS_STORE).openCursor();
    while (cursor) {
      await to.add(optimizationFromStored(cursor.value));
      cursor = await cursor.continue();
    }
    (db as unknown as IDBPDatabase).deleteObjectStore(OLD_OPTIMIZATIONS_STORE);
  } catch (e) {
    // The transaction's own error when the browser aborted it (a full quota), else what failed.
    const failure = tx.error ?? (e as Error);
    upgradeFailure = new Error(failure.message ? `${failure.name}: ${failure.message}` : failure.name);
    try {
      tx.abort();
    } catch {
      // Already aborted by the failed request.
    }
  }
}

let dbPromise: Promise<IDBPDatabase<StudioDB>> | null = null;
/** Why the last upgrade's record move failed (the open then fails with this reason, not the bare abort). */
let upgradeFailure: Error | null = null;

export function openStudioDB(): Promise<IDBPDatabase<StudioDB>> {
  dbPromise ??= openDB<StudioDB>(DB_NAME, DB_VERSION, {
    upgrade(db, oldVersion, _newVersion, transaction) {
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
      // Version 4 made the optimizations' store under its old name; version 5 makes it under the
      // new one (before 4: simply made) and moves what version 4 stored.
      if (oldVersion < 5) {
        const opts = db.createObjectStore('optimizations', { keyPath: 'id' });
        opts.createIndex('byCreatedAt', 'createdAt');
        if (oldVersion === 4) {
          void moveOldOptimizations(db, transaction);
          // An abort is reported by the open's rejection (with its reason), not as well by this promise.
          transaction.done.catch(() => undefined);
        }
      }
      if (oldVersion < 6) {
        const experiments = db.createObjectStore('experiments', { keyPath: 'id' });
        experiments.createIndex('byCreatedAt', 'createdAt');
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
  }).catch((e: unknown) => {
    const failure = upgradeFailure;
    upgradeFailure = null;
    if (!failure) throw e;
    throw new Error(
      `Could not move the stored prompt optimizations to version ${DB_VERSION} of the browser database (${failure.message}); nothing was changed, and they stay stored as they were.`,
    );
  });
  return dbPromise;
}

/** Closes the shared connection (tests reopen the database; a page never needs this). */
export async function closeStudioDB(): Promise<void> {
  const p = dbPromise;
  dbPromise = null;
  if (p) (await p.catch(() => null))?.close();
}
