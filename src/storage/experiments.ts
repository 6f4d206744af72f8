// Sim RL experiments in IndexedDB: one ExperimentRecord per experiment, in 'experiments'. The
// worker's 'simrl' job writes the experiment's state into it after every evaluation (so a reload
// resumes from the last one); the page reads it to draw the curves and the results.
import { openStudioDB } from './db.ts';
import type { ExperimentRecord } from '../core/records.ts';
import { write } from './runs.ts';

export function newExperimentId(): string {
  return `exp-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Newest first. */
export async function listExperiments(): Promise<ExperimentRecord[]> {
  const db = await openStudioDB();
  return (await db.getAllFromIndex('experiments', 'byCreatedAt')).reverse();
}

export async function getExperiment(id: string): Promise<ExperimentRecord | undefined> {
  const db = await openStudioDB();
  return db.get('experiments', id);
}

export async function putExperiment(e: ExperimentRecord): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['experiments'], (tx) => tx.objectStore('experiments').put(e));
}

/** Read-modify-write of one experiment in one transaction (the page and the worker both update it). */
export async function updateExperiment(id: string, change: (e: ExperimentRecord) => void): Promise<ExperimentRecord> {
  const db = await openStudioDB();
  return write(db, ['experiments'], async (tx) => {
    const store = tx.objectStore('experiments');
    const e = await store.get(id);
    if (!e) throw new Error(`no Sim RL experiment with id ${id} in browser storage; it may have been deleted`);
    change(e);
    e.updatedAt = Date.now();
    await store.put(e);
    return e;
  });
}

export async function deleteExperiment(id: string): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['experiments'], (tx) => tx.objectStore('experiments').delete(id));
}
