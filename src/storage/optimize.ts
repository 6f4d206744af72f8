// Prompt optimizations in IndexedDB: one OptimizationRecord per run of the loop, in
// 'optimizations'. The worker's 'optimize' job writes the loop's state into it after every
// evaluation (so a reload resumes where it was); the page reads it to show the lineage, and
// records which candidates were promoted to template versions.
import { openStudioDB } from './db.ts';
import type { OptimizationRecord } from '../core/records.ts';
import { write } from './runs.ts';

export function newOptimizationId(): string {
  return `opt-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Newest first. */
export async function listOptimizations(): Promise<OptimizationRecord[]> {
  const db = await openStudioDB();
  return (await db.getAllFromIndex('optimizations', 'byCreatedAt')).reverse();
}

export async function getOptimization(id: string): Promise<OptimizationRecord | undefined> {
  const db = await openStudioDB();
  return db.get('optimizations', id);
}

export async function putOptimization(o: OptimizationRecord): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['optimizations'], (tx) => tx.objectStore('optimizations').put(o));
}

/** Read-modify-write of one optimization in one transaction (the page and the worker both update it). */
export async function updateOptimization(id: string, change: (o: OptimizationRecord) => void): Promise<OptimizationRecord> {
  const db = await openStudioDB();
  return write(db, ['optimizations'], async (tx) => {
    const store = tx.objectStore('optimizations');
    const o = await store.get(id);
    if (!o) throw new Error(`no prompt optimization with id ${id} in browser storage`);
    change(o);
    o.updatedAt = Date.now();
    await store.put(o);
    return o;
  });
}

export async function deleteOptimization(id: string): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['optimizations'], (tx) => tx.objectStore('optimizations').delete(id));
}
