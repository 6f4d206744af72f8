// Prompt optimisations in IndexedDB: one OptimisationRecord per run of the loop, in
// 'optimisations'. The worker's 'optimize' job writes the loop's state into it after every
// evaluation (so a reload resumes where it was); the page reads it to show the lineage, and
// records which candidates were promoted to template versions.
import { openStudioDB } from './db.ts';
import type { OptimisationRecord } from '../core/records.ts';
import { write } from './runs.ts';

export function newOptimisationId(): string {
  return `opt-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Newest first. */
export async function listOptimisations(): Promise<OptimisationRecord[]> {
  const db = await openStudioDB();
  return (await db.getAllFromIndex('optimisations', 'byCreatedAt')).reverse();
}

export async function getOptimisation(id: string): Promise<OptimisationRecord | undefined> {
  const db = await openStudioDB();
  return db.get('optimisations', id);
}

export async function putOptimisation(o: OptimisationRecord): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['optimisations'], (tx) => tx.objectStore('optimisations').put(o));
}

/** Read-modify-write of one optimisation in one transaction (the page and the worker both update it). */
export async function updateOptimisation(id: string, change: (o: OptimisationRecord) => void): Promise<OptimisationRecord> {
  const db = await openStudioDB();
  return write(db, ['optimisations'], async (tx) => {
    const store = tx.objectStore('optimisations');
    const o = await store.get(id);
    if (!o) throw new Error(`no prompt optimisation with id ${id} in browser storage`);
    change(o);
    o.updatedAt = Date.now();
    await store.put(o);
    return o;
  });
}

export async function deleteOptimisation(id: string): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['optimisations'], (tx) => tx.objectStore('optimisations').delete(id));
}
