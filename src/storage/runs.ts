// Training runs in IndexedDB: run records, their metric history, and their checkpoints.
//
// Checkpoint writes are atomic in the sense that matters to a user: at every moment a run's
// 'last' (and 'best') pointer names a complete checkpoint. A new checkpoint is
//   1. written under a new key (its own transaction; the run still points at the old one),
//   2. made current by switching the run's pointer (one small transaction),
//   3. and only then is the old record deleted.
// Closing the tab or a crash during 1 or 2 leaves the previous checkpoint current and whole;
// during 3 it leaves an unreferenced record that `collectOrphans` removes. Checkpoint bytes are
// never overwritten in place.
//
// A full quota (QuotaExceededError, which IndexedDB raises when a transaction commits) aborts
// the transaction it happened in, so nothing stored before is touched; it surfaces here as a
// StorageFullError with a message for the user.
import type { IDBPDatabase, IDBPTransaction, StoreNames } from 'idb';
import { maskConfig, maskConfigFromJson, type MaskConfig } from '../core/masking/index.ts';
import { openStudioDB, type StudioDB } from './db.ts';
import type { CheckpointRef, CheckpointTag, RunMetric, RunRecord, RunState } from '../core/records.ts';

export const STORAGE_FULL_MESSAGE =
  'Browser storage is full: delete old runs or checkpoints (Train view) or datasets (Data view), or see what takes the space in System → Browser storage, then try again. Nothing already stored was lost.';

export class StorageFullError extends Error {
  constructor(cause?: unknown) {
    super(STORAGE_FULL_MESSAGE, { cause });
    this.name = 'StorageFullError';
  }
}

export function isQuotaError(e: unknown): boolean {
  if (!e || typeof e !== 'object') return false;
  const name = (e as { name?: unknown }).name;
  if (name === 'QuotaExceededError' || name === 'StorageFullError') return true;
  // Some engines report a quota abort as a generic error whose message says so.
  const message = String((e as { message?: unknown }).message ?? '');
  return /quota/i.test(message);
}

type Stores = StoreNames<StudioDB>;
type Tx<S extends Stores[]> = IDBPTransaction<StudioDB, S, 'readwrite'>;

/**
 * Runs `body` in one readwrite transaction and waits for it to commit. Any failure aborts the
 * transaction (so none of its writes land) and a quota failure becomes a StorageFullError.
 */
export async function write<S extends Stores[], T>(db: IDBPDatabase<StudioDB>, stores: S, body: (tx: Tx<S>) => Promise<T>): Promise<T> {
  const tx = db.transaction(stores, 'readwrite');
  // The commit's rejection is awaited below; this keeps an early abort from surfacing as unhandled.
  tx.done.catch(() => {});
  try {
    const out = await body(tx);
    await tx.done;
    return out;
  } catch (e) {
    try {
      tx.abort();
    } catch {
      /* already finished or aborted */
    }
    const cause = tx.error ?? e;
    if (isQuotaError(cause) || isQuotaError(e)) throw new StorageFullError(cause);
    throw e;
  }
}

export function newRunId(): string {
  return `run-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

export async function listRuns(): Promise<RunRecord[]> {
  const db = await openStudioDB();
  return (await db.getAllFromIndex('runs', 'byCreatedAt')).reverse();
}

export async function getRun(id: string): Promise<RunRecord | undefined> {
  const db = await openStudioDB();
  return db.get('runs', id);
}

/**
 * The loss-mask settings an SFT run trains with, as stored in its spec (`spec.mask`, written when
 * the run starts and reused when it resumes); runs stored before the mask was recorded trained
 * with the defaults. null for CPT and RL, which do not weigh by the mask.
 */
export function runMaskConfig(run: RunRecord): MaskConfig | null {
  if (run.stage !== 'sft') return null;
  return run.spec.mask ? maskConfigFromJson(run.spec.mask, `run ${run.id}`) : maskConfig();
}

export async function putRun(run: RunRecord): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['runs'], (tx) => tx.objectStore('runs').put(run));
}

/** Read-modify-write of one run in one transaction (the page and the worker both update runs). */
export async function updateRun(id: string, change: (run: RunRecord) => void): Promise<RunRecord> {
  const db = await openStudioDB();
  return write(db, ['runs'], async (tx) => {
    const store = tx.objectStore('runs');
    const run = await store.get(id);
    if (!run) throw new Error(`no run with id ${id} in browser storage`);
    change(run);
    run.updatedAt = Date.now();
    await store.put(run);
    return run;
  });
}

/** The states a run's job ends in; only a new job (a start or a resume) moves a run out of one. */
export const ENDED_RUN_STATES: readonly RunState[] = ['done', 'failed', 'stopped'];

/**
 * Records the state a run's job reached (and its error, for 'failed'), unless the run has ended
 * already: the worker's runner, its late state writes and the page (which records a failure the
 * worker could not, e.g. when the device or the worker died) may write in any order, and the
 * first end wins. So a late 'running' or 'paused' never reopens a failed run. Returns the record
 * as stored afterwards.
 */
export async function recordRunState(id: string, state: RunState, error?: string): Promise<RunRecord> {
  return updateRun(id, (r) => {
    if (ENDED_RUN_STATES.includes(r.state)) return;
    r.state = state;
    r.error = state === 'failed' ? error : undefined;
  });
}

/** Appends metric records; values of the same step are merged (train loss and eval arrive apart). */
export async function appendMetrics(runId: string, metrics: { step: number; values: Record<string, number> }[]): Promise<void> {
  if (!metrics.length) return;
  const merged = new Map<number, Record<string, number>>();
  for (const m of metrics) merged.set(m.step, { ...merged.get(m.step), ...m.values });
  const db = await openStudioDB();
  await write(db, ['runMetrics'], async (tx) => {
    const store = tx.objectStore('runMetrics');
    for (const [step, values] of merged) {
      const old = await store.get([runId, step]);
      await store.put({ runId, step, values: { ...old?.values, ...values } });
    }
  });
}

export async function loadMetrics(runId: string): Promise<RunMetric[]> {
  const db = await openStudioDB();
  // Keys are [runId, step]: this range is every step of one run, in step order.
  return db.getAll('runMetrics', IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]));
}

/** Drops the metrics after `step` (a resumed run recomputes them from its checkpoint). */
export async function truncateMetrics(runId: string, step: number): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['runMetrics'], (tx) => tx.objectStore('runMetrics').delete(IDBKeyRange.bound([runId, step], [runId, Infinity], true, false)));
}

/** Fault-injection points for tests: each may throw, or abort the transaction it is given. */
export interface CheckpointWriteHooks {
  /** Inside step 1, after the bytes were put, before that transaction commits. */
  afterPut?(tx: IDBTransaction): void | Promise<void>;
  /** Between step 1 and step 2 (a crash here leaves an orphan record). */
  beforeSwitch?(): void | Promise<void>;
  /** Inside step 2, after the pointer was put, before that transaction commits. */
  afterSwitch?(tx: IDBTransaction): void | Promise<void>;
}

/**
 * Stores a checkpoint of `runId` and makes it the run's `tag` checkpoint, atomically (see the
 * header). A 'best' at the same step as the current 'last' shares its record: the pipeline
 * offers the same bytes twice when an evaluation improves.
 */
export async function saveCheckpoint(
  runId: string,
  tag: CheckpointTag,
  bytes: Uint8Array,
  info: { step: number; evalLoss?: number },
  hooks: CheckpointWriteHooks = {},
): Promise<CheckpointRef> {
  const db = await openStudioDB();
  const run = await db.get('runs', runId);
  if (!run) throw new Error(`no run with id ${runId} in browser storage`);
  const current = run.checkpoints.last;
  let ref: CheckpointRef;
  if (tag === 'best' && current && current.step === info.step) {
    ref = { ...current, evalLoss: info.evalLoss };
  } else {
    ref = {
      key: `${runId}/${info.step}/${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`,
      step: info.step,
      size: bytes.byteLength,
      createdAt: Date.now(),
      evalLoss: info.evalLoss,
    };
    // A copy that owns exactly these bytes (the view may be a window on a larger buffer).
    const buffer = bytes.slice().buffer as ArrayBuffer;
    await write(db, ['checkpoints'], async (tx) => {
      await tx.objectStore('checkpoints').put({ key: ref.key, runId, step: info.step, createdAt: ref.createdAt, bytes: buffer });
      await hooks.afterPut?.(tx as unknown as IDBTransaction);
    });
  }
  await hooks.beforeSwitch?.();
  let previous: string | undefined;
  await write(db, ['runs'], async (tx) => {
    const store = tx.objectStore('runs');
    const r = await store.get(runId);
    if (!r) throw new Error(`run ${runId} was deleted while its checkpoint was written`);
    previous = r.checkpoints[tag]?.key;
    r.checkpoints = { ...r.checkpoints, [tag]: ref };
    r.updatedAt = Date.now();
    await store.put(r);
    await hooks.afterSwitch?.(tx as unknown as IDBTransaction);
  });
  if (previous && previous !== ref.key) await deleteIfUnreferenced(runId, previous);
  return ref;
}

async function deleteIfUnreferenced(runId: string, key: string): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['runs', 'checkpoints'], async (tx) => {
    const r = await tx.objectStore('runs').get(runId);
    const used = r && Object.values(r.checkpoints).some((c) => c?.key === key);
    if (!used) await tx.objectStore('checkpoints').delete(key);
  });
}

/** The bytes of a stored checkpoint. */
export async function loadCheckpointBytes(key: string): Promise<Uint8Array> {
  const db = await openStudioDB();
  const rec = await db.get('checkpoints', key);
  if (!rec) throw new Error(`checkpoint ${key} is not in browser storage (it may have been deleted)`);
  return new Uint8Array(rec.bytes);
}

/** Deletes checkpoint records of a run that neither pointer names (left by an interrupted write). */
export async function collectOrphans(runId: string): Promise<number> {
  const db = await openStudioDB();
  return write(db, ['runs', 'checkpoints'], async (tx) => {
    const r = await tx.objectStore('runs').get(runId);
    const keep = new Set(Object.values(r?.checkpoints ?? {}).map((c) => c?.key));
    const keys = await tx.objectStore('checkpoints').index('byRun').getAllKeys(runId);
    let n = 0;
    for (const k of keys) {
      if (keep.has(k)) continue;
      await tx.objectStore('checkpoints').delete(k);
      n++;
    }
    return n;
  });
}

/** Removes one pointer of a run, and the record unless the other pointer shares it. */
export async function deleteCheckpoint(runId: string, tag: CheckpointTag): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['runs', 'checkpoints'], async (tx) => {
    const runs = tx.objectStore('runs');
    const r = await runs.get(runId);
    const ref = r?.checkpoints[tag];
    if (!r || !ref) return;
    const checkpoints = { ...r.checkpoints };
    delete checkpoints[tag];
    r.checkpoints = checkpoints;
    r.updatedAt = Date.now();
    await runs.put(r);
    if (!Object.values(checkpoints).some((c) => c?.key === ref.key)) await tx.objectStore('checkpoints').delete(ref.key);
  });
}

/** Deletes a run, its metrics and its checkpoints in one transaction. */
export async function deleteRun(runId: string): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['runs', 'checkpoints', 'runMetrics'], async (tx) => {
    const keys = await tx.objectStore('checkpoints').index('byRun').getAllKeys(runId);
    for (const k of keys) await tx.objectStore('checkpoints').delete(k);
    await tx.objectStore('runMetrics').delete(IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]));
    await tx.objectStore('runs').delete(runId);
  });
}
