// The app's IndexedDB database: one versioned schema for everything the browser keeps between
// sessions. Upgrades run in order from the version the user has to DB_VERSION, so a user who
// skipped releases still gets every store; nothing already stored is rewritten by an upgrade.
//
// Version history (add a case to `upgrade` and a line here for each new version):
//   1  datasets, datasetChunks, templates, tokenizers
//   2  (reserved for the training pipeline) checkpoints: keyPath 'id', values
//      { id, name, createdAt, config, bytes: ArrayBuffer (safetensors) }, index 'byCreatedAt';
//      runs: keyPath 'id', values { id, stage, startedAt, config, history: {step, loss, ...}[] },
//      index 'byStartedAt'. Large tensors go in their own records so listing stays cheap.
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { Trajectory } from '../core/schema/types.ts';
import type { PromptTemplate } from '../core/templates/index.ts';
import type { TokenizerJSON } from '../core/tokenizer/index.ts';

export const DB_NAME = 'lwm-studio';
export const DB_VERSION = 1;

/** What the dataset list shows, without loading any trajectory. */
export interface DatasetMeta {
  id: string;
  name: string;
  createdAt: number;
  /** 'builtin' for the default dataset, 'import' for files a user added. */
  origin: 'builtin' | 'import';
  /** Format the importer used (detected or chosen), per file. */
  formats: string[];
  files: string[];
  trajectories: number;
  turns: number;
  domains: string[];
  /** Lines that failed to import (the dataset holds only what imported cleanly). */
  errorCount: number;
  chunks: number;
}

/** Trajectories are stored in chunks so a large dataset is not one huge structured-clone value. */
export interface DatasetChunk {
  datasetId: string;
  index: number;
  trajectories: Trajectory[];
}

/** One template in the lineage v0…vN (SPEC §9): a parent it was derived from and why. */
export interface TemplateVersion {
  version: string;
  parent: string | null;
  note: string;
  createdAt: number;
  builtin: boolean;
  template: PromptTemplate;
}

export interface CachedTokenizer {
  datasetId: string;
  vocabSize: number;
  createdAt: number;
  json: TokenizerJSON;
}

export interface StudioDB extends DBSchema {
  datasets: { key: string; value: DatasetMeta };
  datasetChunks: { key: [string, number]; value: DatasetChunk };
  templates: { key: string; value: TemplateVersion };
  tokenizers: { key: string; value: CachedTokenizer };
}

let dbPromise: Promise<IDBPDatabase<StudioDB>> | null = null;

export function openStudioDB(): Promise<IDBPDatabase<StudioDB>> {
  dbPromise ??= openDB<StudioDB>(DB_NAME, DB_VERSION, {
    upgrade(db, oldVersion) {
      // Fall through on purpose: each case brings the schema one version forward.
      switch (oldVersion) {
        case 0:
          db.createObjectStore('datasets', { keyPath: 'id' });
          db.createObjectStore('datasetChunks', { keyPath: ['datasetId', 'index'] });
          db.createObjectStore('templates', { keyPath: 'version' });
          db.createObjectStore('tokenizers', { keyPath: 'datasetId' });
        // case 1: the training pipeline adds 'checkpoints' and 'runs' here (see the header).
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
