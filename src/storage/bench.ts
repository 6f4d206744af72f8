// Benchmarks in IndexedDB: one BenchRecord per Bench run (or imported judged file) in 'benches',
// and one BenchResult per (backend, sample) in 'benchResults', written by the worker as each
// prediction and judgement finishes, so a run cut off by a reload resumes where it was and a
// finished one is shown again without recomputing anything. A full quota is a StorageFullError
// (runs.ts), and what was stored before stays.
import { openStudioDB } from './db.ts';
import type { BenchRecord, BenchResult } from '../core/records.ts';
import { write } from './runs.ts';

export function newBenchId(): string {
  return `bench-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Newest first. */
export async function listBenches(): Promise<BenchRecord[]> {
  const db = await openStudioDB();
  return (await db.getAllFromIndex('benches', 'byCreatedAt')).reverse();
}

export async function getBench(id: string): Promise<BenchRecord | undefined> {
  const db = await openStudioDB();
  return db.get('benches', id);
}

export async function putBench(bench: BenchRecord): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['benches'], (tx) => tx.objectStore('benches').put(bench));
}

/** Read-modify-write of one bench in one transaction (the page and the worker both update it). */
export async function updateBench(id: string, change: (bench: BenchRecord) => void): Promise<BenchRecord> {
  const db = await openStudioDB();
  return write(db, ['benches'], async (tx) => {
    const store = tx.objectStore('benches');
    const bench = await store.get(id);
    if (!bench) throw new Error(`no benchmark with id ${id} in browser storage`);
    change(bench);
    bench.updatedAt = Date.now();
    await store.put(bench);
    return bench;
  });
}

/** Every key of one bench's results: [id, any backend, any index]. */
function resultRange(benchId: string): IDBKeyRange {
  // Arrays sort after strings in IndexedDB's key order, so [id, []] is above every [id, backend, n].
  return IDBKeyRange.bound([benchId, ''], [benchId, []]);
}

export async function putResults(results: readonly BenchResult[]): Promise<void> {
  if (!results.length) return;
  const db = await openStudioDB();
  await write(db, ['benchResults'], async (tx) => {
    const store = tx.objectStore('benchResults');
    await Promise.all(results.map((r) => store.put(r)));
  });
}

/** A bench's results, by backend then sample index. */
export async function loadResults(benchId: string): Promise<BenchResult[]> {
  const db = await openStudioDB();
  return db.getAll('benchResults', resultRange(benchId));
}

/** A bench and all its results, in one transaction. */
export async function deleteBench(id: string): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['benches', 'benchResults'], async (tx) => {
    await Promise.all([tx.objectStore('benches').delete(id), tx.objectStore('benchResults').delete(resultRange(id))]);
  });
}

/** An imported judged file as a bench: its record and results written together. */
export async function saveImportedBench(bench: BenchRecord, results: readonly BenchResult[]): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['benches', 'benchResults'], async (tx) => {
    const store = tx.objectStore('benchResults');
    await Promise.all([tx.objectStore('benches').put(bench), ...results.map((r) => store.put(r))]);
  });
}
