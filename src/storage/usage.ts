// What the app keeps in this browser, by kind, and deleting it: the System view's Storage card.
//
// Kinds partition the stored bytes (nothing is counted twice):
//   datasets       'datasets' + 'datasetChunks' + 'tokenizers' (a dataset's cached tokenizer goes with it)
//   runs           'runs' + 'runMetrics' (a run's record and metric history)
//   checkpoints    'checkpoints' (safetensors bytes; each belongs to a run)
//   benches        'benches' + 'benchResults'
//   optimizations  the prompt optimizations' store
//   experiments    'experiments' (Sim RL experiments, their policies' checkpoints inside)
//   templates      'templates' (the prompt lineage; listed, deleted in the Prompts view only)
//   caches         Cache Storage caches (by name; a Hugging Face Hub model's cache, src/core/hubCache.ts,
//                  by its id, with the revisions fetched)
//                  and the origin private file system's top-level entries
//
// Sizes are an estimate of what the browser stores for each record: its structured-clone
// payload, measured as V8's serializer writes it (sizeOf below): binary data by its byte length,
// a string one byte a character when every character fits in Latin-1 and two otherwise, a number
// eight bytes, object keys as strings; per-record overhead, indexes and compression are not
// counted. A checkpoint a run points at is sized from that pointer, not read (runsAndCheckpoints);
// every other record is read once, one at a time, to be measured (a dataset's chunks among them).
// navigator.storage.estimate() gives the origin's own figure beside it.
//
// Deletion is one readwrite transaction per call (write() in runs.ts), so a failure midway
// aborts it and leaves everything as it was. Deleting a run deletes its checkpoints and metrics
// with it (a checkpoint is never left without its run). Deleting checkpoints alone clears the
// runs' pointers to them in the same transaction. Deleting a dataset leaves the runs, benches and
// optimizations that used it (they keep their own copy of its name; a bench keeps its samples):
// the report names them so the confirmation can.
import type { IDBPDatabase, StoreNames } from 'idb';
import type { CheckpointRef, CheckpointTag } from '../core/records.ts';
import { describeHubCache, repoOfHubCache } from '../core/hubCache.ts';
import { openStudioDB, type StudioDB } from './db.ts';
import { write } from './runs.ts';

type Store = StoreNames<StudioDB>;

/** The prompt optimizations' object store (one name to change when the store is renamed). */
const OPTIMIZATIONS = 'optimizations' satisfies Store;

export type StoredKind = 'datasets' | 'runs' | 'checkpoints' | 'benches' | 'optimizations' | 'experiments' | 'templates' | 'caches';

/** The object stores of each IndexedDB kind, in the order the report lists kinds. */
export const KIND_STORES: Record<Exclude<StoredKind, 'caches'>, readonly Store[]> = {
  datasets: ['datasets', 'datasetChunks', 'tokenizers'],
  runs: ['runs', 'runMetrics'],
  checkpoints: ['checkpoints'],
  benches: ['benches', 'benchResults'],
  optimizations: [OPTIMIZATIONS],
  experiments: ['experiments'],
  templates: ['templates'],
};

export const KIND_LABELS: Record<StoredKind, string> = {
  datasets: 'Datasets',
  runs: 'Training runs',
  checkpoints: 'Checkpoints',
  benches: 'Benches',
  optimizations: 'Prompt optimizations',
  experiments: 'Sim RL experiments',
  templates: 'Template versions',
  caches: 'Cached models and files',
};

/** Kinds the Storage card deletes (template versions are the Prompts view's). */
export const DELETABLE: readonly StoredKind[] = ['datasets', 'runs', 'checkpoints', 'benches', 'optimizations', 'experiments', 'caches'];

export interface StoredItem {
  /** The record's key (a cache: 'cache:NAME'; a file-system entry: 'opfs:NAME'). */
  id: string;
  name: string;
  bytes: number;
  createdAt: number | null;
  /** A short description: a run's state and step, a checkpoint's run and tags, a cache's entry count. */
  detail: string;
  /** A run's checkpoints, deleted with it. */
  checkpoints?: { count: number; bytes: number };
  /** A dataset: the runs, benches and optimizations that name it (kept when it is deleted). */
  usedBy?: string[];
  /** A checkpoint: the run it belongs to (null: none, left by an interrupted write). */
  runId?: string | null;
}

export interface KindUsage {
  kind: StoredKind;
  count: number;
  bytes: number;
  items: StoredItem[];
}

export interface OriginEstimate {
  usage: number;
  quota: number;
}

export interface StorageReport {
  kinds: KindUsage[];
  /** navigator.storage.estimate() (null where the browser gives none). */
  estimate: OriginEstimate | null;
  /** Whether the browser keeps this origin's storage under pressure (null: unknown). */
  persisted: boolean | null;
}

/** The browser's storage APIs the report reads, injectable for tests. */
export interface StorageEnv {
  estimate(): Promise<OriginEstimate | null>;
  persisted(): Promise<boolean | null>;
  persist(): Promise<boolean>;
  caches: CacheStorage | null;
  opfs(): Promise<FileSystemDirectoryHandle | null>;
}

/** The page's own storage APIs; each missing one reads as unknown or empty. */
export function browserStorageEnv(): StorageEnv {
  const storage = typeof navigator === 'undefined' ? undefined : navigator.storage;
  return {
    async estimate() {
      const e = await storage?.estimate?.();
      return e ? { usage: e.usage ?? 0, quota: e.quota ?? 0 } : null;
    },
    async persisted() {
      return storage?.persisted ? storage.persisted() : null;
    },
    async persist() {
      return storage?.persist ? storage.persist() : false;
    },
    caches: typeof caches === 'undefined' ? null : caches,
    async opfs() {
      try {
        return storage?.getDirectory ? await storage.getDirectory() : null;
      } catch {
        return null; // a private window may refuse it
      }
    },
  };
}

/** Bytes of a string as V8 serialises it: one a character for Latin-1 text, else two. */
function stringBytes(s: string): number {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) return 2 * s.length;
  return s.length;
}

/** Estimated structured-clone size of a stored value (see the header). */
export function sizeOf(value: unknown): number {
  if (value === null || value === undefined) return 1;
  switch (typeof value) {
    case 'string':
      return stringBytes(value);
    case 'number':
      return 8;
    case 'boolean':
      return 1;
    case 'bigint':
      return 8;
    case 'object':
      break;
    default:
      return 0;
  }
  if (value instanceof ArrayBuffer) return value.byteLength;
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (typeof Blob !== 'undefined' && value instanceof Blob) return value.size;
  if (value instanceof Date) return 8;
  if (Array.isArray(value)) {
    let n = 0;
    for (const v of value) n += sizeOf(v);
    return n;
  }
  if (value instanceof Map) {
    let n = 0;
    for (const [k, v] of value) n += sizeOf(k) + sizeOf(v);
    return n;
  }
  if (value instanceof Set) {
    let n = 0;
    for (const v of value) n += sizeOf(v);
    return n;
  }
  let n = 0;
  for (const [k, v] of Object.entries(value)) n += stringBytes(k) + sizeOf(v);
  return n;
}

/** Visits every record of a store, one at a time (a large store is never all in memory at once). */
async function scan<S extends Store>(db: IDBPDatabase<StudioDB>, store: S, each: (value: StudioDB[S]['value']) => void): Promise<void> {
  const tx = db.transaction(store, 'readonly');
  let cursor = await tx.store.openCursor();
  while (cursor) {
    each(cursor.value);
    cursor = await cursor.continue();
  }
  await tx.done;
}

function item(id: string, name: string, createdAt: number | null, detail = ''): StoredItem {
  return { id, name, bytes: 0, createdAt, detail };
}

function kindOf(kind: StoredKind, items: StoredItem[]): KindUsage {
  const sorted = [...items].sort((a, b) => (b.createdAt ?? 0) - (a.createdAt ?? 0));
  return { kind, count: items.length, bytes: items.reduce((n, i) => n + i.bytes, 0), items: sorted };
}

async function datasetsUsage(db: IDBPDatabase<StudioDB>, users: Map<string, string[]>): Promise<KindUsage> {
  const items = new Map<string, StoredItem>();
  const of = (id: string) => {
    let i = items.get(id);
    if (!i) items.set(id, (i = item(id, `${id} (incomplete: no metadata)`, null)));
    return i;
  };
  await scan(db, 'datasets', (d) => {
    const i = of(d.id);
    i.name = d.name;
    i.createdAt = d.createdAt;
    i.detail = `${d.trajectories.toLocaleString('en')} trajectories`;
    i.bytes += sizeOf(d);
  });
  await scan(db, 'datasetChunks', (c) => {
    of(c.datasetId).bytes += sizeOf(c);
  });
  await scan(db, 'tokenizers', (t) => {
    of(t.datasetId).bytes += sizeOf(t);
  });
  for (const i of items.values()) i.usedBy = users.get(i.id) ?? [];
  return kindOf('datasets', [...items.values()]);
}

/** A checkpoint record as runs.ts writes it, its bytes left out: what sizeOf counts besides them. */
function checkpointOverhead(key: string, runId: string, step: number, createdAt: number): number {
  return sizeOf({ key, runId, step, createdAt, bytes: new ArrayBuffer(0) });
}

/**
 * Runs with their metrics, and checkpoints. A checkpoint a run points at is measured from the
 * pointer (its size is the record's byte length, its step and time the record's: runs.ts writes
 * them together), so the System view never reads a checkpoint's bytes to size it; only a record no
 * run points at (left by an interrupted write) is read.
 */
async function runsAndCheckpoints(db: IDBPDatabase<StudioDB>): Promise<[KindUsage, KindUsage]> {
  const runs = new Map<string, StoredItem>();
  const refs = new Map<string, { runId: string; ref: CheckpointRef; tags: CheckpointTag[] }>();
  await scan(db, 'runs', (r) => {
    const i = item(r.id, r.name, r.createdAt, `${r.stage}, ${r.state}, step ${r.step}`);
    i.bytes = sizeOf(r);
    i.checkpoints = { count: 0, bytes: 0 };
    runs.set(r.id, i);
    for (const [tag, ref] of Object.entries(r.checkpoints)) {
      if (!ref) continue;
      const known = refs.get(ref.key) ?? { runId: r.id, ref, tags: [] };
      known.tags.push(tag as CheckpointTag);
      refs.set(ref.key, known);
    }
  });
  await scan(db, 'runMetrics', (m) => {
    const r = runs.get(m.runId);
    if (r) r.bytes += sizeOf(m);
  });
  const checkpoints: StoredItem[] = [];
  for (const key of await db.getAllKeys('checkpoints')) {
    const known = refs.get(key);
    let record: { runId: string; step: number; createdAt: number; bytes: number } | undefined;
    if (known) {
      const { runId, ref } = known;
      record = { runId, step: ref.step, createdAt: ref.createdAt, bytes: checkpointOverhead(key, runId, ref.step, ref.createdAt) + ref.size };
    } else {
      const c = await db.get('checkpoints', key);
      if (c) record = { runId: c.runId, step: c.step, createdAt: c.createdAt, bytes: sizeOf(c) };
    }
    if (!record) continue; // deleted since the keys were read
    const run = runs.get(record.runId);
    const detail = known ? known.tags.join(', ') : 'not current (left by an interrupted write)';
    const i = item(key, `${run?.name ?? 'no run'} · step ${record.step}`, record.createdAt, detail);
    i.bytes = record.bytes;
    i.runId = run ? record.runId : null;
    checkpoints.push(i);
    if (run?.checkpoints) {
      run.checkpoints.count++;
      run.checkpoints.bytes += record.bytes;
    }
  }
  return [kindOf('runs', [...runs.values()]), kindOf('checkpoints', checkpoints)];
}

async function recordsUsage(
  db: IDBPDatabase<StudioDB>,
): Promise<{ benches: KindUsage; optimizations: KindUsage; experiments: KindUsage; templates: KindUsage; users: Map<string, string[]> }> {
  const users = new Map<string, string[]>();
  const use = (datasetId: string | null, who: string) => {
    if (datasetId) users.set(datasetId, [...(users.get(datasetId) ?? []), who]);
  };
  await scan(db, 'runs', (r) => use(r.data.datasetId, `run ${r.name}`));
  const benches = new Map<string, StoredItem>();
  await scan(db, 'benches', (b) => {
    const i = item(b.id, b.name, b.createdAt, `${b.state}, ${b.progress.done} of ${b.progress.total}`);
    i.bytes = sizeOf(b);
    benches.set(b.id, i);
    use(b.data.datasetId, `bench ${b.name}`);
  });
  await scan(db, 'benchResults', (r) => {
    let b = benches.get(r.benchId);
    if (!b) benches.set(r.benchId, (b = item(r.benchId, `${r.benchId} (results without their bench)`, null)));
    b.bytes += sizeOf(r);
  });
  const optimizations: StoredItem[] = [];
  await scan(db, OPTIMIZATIONS, (o) => {
    const i = item(o.id, o.name, o.createdAt, o.state);
    i.bytes = sizeOf(o);
    optimizations.push(i);
    use(o.data.datasetId, `optimization ${o.name}`);
  });
  const experiments: StoredItem[] = [];
  await scan(db, 'experiments', (e) => {
    const i = item(e.id, e.name, e.createdAt, e.state);
    i.bytes = sizeOf(e);
    experiments.push(i);
  });
  const templates: StoredItem[] = [];
  await scan(db, 'templates', (t) => {
    const i = item(t.version, t.version, t.createdAt || null, t.builtin ? 'built in' : t.note);
    i.bytes = sizeOf(t);
    templates.push(i);
  });
  return {
    benches: kindOf('benches', [...benches.values()]),
    optimizations: kindOf('optimizations', optimizations),
    experiments: kindOf('experiments', experiments),
    templates: kindOf('templates', templates),
    users,
  };
}

/** Size of one cached response: its body's length. */
async function responseBytes(r: Response | undefined): Promise<number> {
  if (!r) return 0;
  const header = Number(r.headers.get('content-length'));
  if (Number.isFinite(header) && header > 0) return header;
  return (await r.blob()).size;
}

async function entryBytes(handle: FileSystemHandle): Promise<{ bytes: number; files: number }> {
  if (handle.kind === 'file') return { bytes: (await (handle as FileSystemFileHandle).getFile()).size, files: 1 };
  let bytes = 0;
  let files = 0;
  for await (const child of (handle as FileSystemDirectoryHandle & { values(): AsyncIterable<FileSystemHandle> }).values()) {
    const s = await entryBytes(child);
    bytes += s.bytes;
    files += s.files;
  }
  return { bytes, files };
}

const plural = (n: number, one: string) => `${n.toLocaleString('en')} ${one}${n === 1 ? '' : 's'}`;

/** A Hub model's cache as the card describes it: the revisions fetched and the commits they named. */
async function hubModelDetail(cache: Cache): Promise<string> {
  const { refs, commits } = await describeHubCache(cache);
  const named = new Set(Object.values(refs));
  const revisions = [
    ...Object.entries(refs).map(([rev, commit]) => `${rev} (${commit.slice(0, 7)})`),
    ...commits.filter((c) => !named.has(c)).map((c) => c.slice(0, 7)),
  ];
  return `Hugging Face Hub model, ${revisions.length ? `revision ${revisions.join(', ')}` : 'download not finished'}`;
}

async function cachesUsage(env: StorageEnv): Promise<KindUsage> {
  const items: StoredItem[] = [];
  if (env.caches) {
    for (const name of await env.caches.keys()) {
      const cache = await env.caches.open(name);
      const requests = await cache.keys();
      const repo = repoOfHubCache(name);
      const i = repo
        ? item(`cache:${name}`, repo, null, await hubModelDetail(cache))
        : item(`cache:${name}`, name, null, `Cache Storage, ${plural(requests.length, 'entry')}`.replace('entrys', 'entries'));
      for (const req of requests) i.bytes += await responseBytes(await cache.match(req));
      items.push(i);
    }
  }
  const root = await env.opfs();
  if (root) {
    for await (const entry of (root as FileSystemDirectoryHandle & { values(): AsyncIterable<FileSystemHandle> }).values()) {
      const s = await entryBytes(entry);
      const i = item(`opfs:${entry.name}`, entry.name, null, `file system, ${plural(s.files, 'file')}`);
      i.bytes = s.bytes;
      items.push(i);
    }
  }
  return kindOf('caches', items);
}

/** Everything the app stores in this browser, by kind, and the origin's usage and quota. */
export async function measureStorage(env: StorageEnv = browserStorageEnv()): Promise<StorageReport> {
  const db = await openStudioDB();
  const records = await recordsUsage(db);
  const datasets = await datasetsUsage(db, records.users);
  const [runs, checkpoints] = await runsAndCheckpoints(db);
  const caches = await cachesUsage(env);
  const [estimate, persisted] = await Promise.all([env.estimate().catch(() => null), env.persisted().catch(() => null)]);
  return {
    kinds: [datasets, runs, checkpoints, records.benches, records.optimizations, records.experiments, records.templates, caches],
    estimate,
    persisted,
  };
}

/** Deletes checkpoint records by key and, in the same transaction, every run pointer that names them. */
async function deleteCheckpoints(db: IDBPDatabase<StudioDB>, keys: readonly string[] | 'all'): Promise<void> {
  await write(db, ['runs', 'checkpoints'], async (tx) => {
    const runs = tx.objectStore('runs');
    const gone = keys === 'all' ? null : new Set(keys);
    for (const r of await runs.getAll()) {
      const kept = Object.fromEntries(Object.entries(r.checkpoints).filter(([, ref]) => ref && gone && !gone.has(ref.key)));
      if (Object.keys(kept).length === Object.keys(r.checkpoints).length) continue;
      r.checkpoints = kept;
      r.updatedAt = Date.now();
      await runs.put(r);
    }
    const store = tx.objectStore('checkpoints');
    if (gone) for (const k of gone) await store.delete(k);
    else await store.clear();
  });
}

/** Deletes runs with their metrics and checkpoints, in one transaction. */
async function deleteRuns(db: IDBPDatabase<StudioDB>, ids: readonly string[] | 'all'): Promise<void> {
  await write(db, ['runs', 'runMetrics', 'checkpoints'], async (tx) => {
    if (ids === 'all') {
      await Promise.all([tx.objectStore('runs').clear(), tx.objectStore('runMetrics').clear(), tx.objectStore('checkpoints').clear()]);
      return;
    }
    for (const id of ids) {
      for (const k of await tx.objectStore('checkpoints').index('byRun').getAllKeys(id)) await tx.objectStore('checkpoints').delete(k);
      await tx.objectStore('runMetrics').delete(IDBKeyRange.bound([id, -Infinity], [id, Infinity]));
      await tx.objectStore('runs').delete(id);
    }
  });
}

async function deleteCacheItems(env: StorageEnv, ids: readonly string[] | 'all'): Promise<void> {
  const names = ids === 'all' ? null : new Set(ids);
  if (env.caches) for (const name of await env.caches.keys()) if (!names || names.has(`cache:${name}`)) await env.caches.delete(name);
  const root = await env.opfs();
  if (!root) return;
  const entries: string[] = [];
  for await (const e of (root as FileSystemDirectoryHandle & { values(): AsyncIterable<FileSystemHandle> }).values()) entries.push(e.name);
  for (const name of entries) if (!names || names.has(`opfs:${name}`)) await root.removeEntry(name, { recursive: true });
}

/**
 * Deletes some items of one kind (`ids`), or all of it ('all'): one transaction, so a failure
 * deletes nothing. Items already gone are skipped. Templates are not deleted here.
 */
export async function deleteStored(kind: StoredKind, ids: readonly string[] | 'all', env: StorageEnv = browserStorageEnv()): Promise<void> {
  const db = await openStudioDB();
  const range = (id: string) => IDBKeyRange.bound([id, 0], [id, Number.MAX_SAFE_INTEGER]);
  switch (kind) {
    case 'datasets':
      return write(db, ['datasets', 'datasetChunks', 'tokenizers'], async (tx) => {
        if (ids === 'all') {
          await Promise.all([tx.objectStore('datasets').clear(), tx.objectStore('datasetChunks').clear(), tx.objectStore('tokenizers').clear()]);
          return;
        }
        for (const id of ids) {
          await tx.objectStore('datasets').delete(id);
          await tx.objectStore('datasetChunks').delete(range(id));
          await tx.objectStore('tokenizers').delete(id);
        }
      });
    case 'runs':
      return deleteRuns(db, ids);
    case 'checkpoints':
      return deleteCheckpoints(db, ids);
    case 'benches':
      return write(db, ['benches', 'benchResults'], async (tx) => {
        if (ids === 'all') {
          await Promise.all([tx.objectStore('benches').clear(), tx.objectStore('benchResults').clear()]);
          return;
        }
        for (const id of ids) {
          await tx.objectStore('benches').delete(id);
          // Arrays sort after strings, so [id, []] is above every [id, backend, n] (bench.ts).
          await tx.objectStore('benchResults').delete(IDBKeyRange.bound([id, ''], [id, []]));
        }
      });
    case 'optimizations':
      return write(db, [OPTIMIZATIONS], async (tx) => {
        const store = tx.objectStore(OPTIMIZATIONS);
        if (ids === 'all') await store.clear();
        else for (const id of ids) await store.delete(id);
      });
    case 'experiments':
      return write(db, ['experiments'], async (tx) => {
        const store = tx.objectStore('experiments');
        if (ids === 'all') await store.clear();
        else for (const id of ids) await store.delete(id);
      });
    case 'caches':
      return deleteCacheItems(env, ids);
    case 'templates':
      throw new Error('template versions are deleted in the Prompts view, not here');
  }
}
