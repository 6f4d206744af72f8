// Datasets in IndexedDB: metadata in 'datasets', trajectories in 'datasetChunks'. A dataset is
// written in one transaction, so a failed or interrupted save leaves no half dataset behind, and
// nothing already stored is touched by saving a new one. A full quota aborts that transaction and
// surfaces as a StorageFullError with the same message the runs give (runs.ts).
import type { Trajectory } from '../core/schema/types.ts';
import { openStudioDB } from './db.ts';
import type { DatasetMeta } from '../core/records.ts';
import { write } from './runs.ts';

export const CHUNK_SIZE = 500;

export async function listDatasets(): Promise<DatasetMeta[]> {
  const db = await openStudioDB();
  const all = await db.getAll('datasets');
  return all.sort((a, b) => a.createdAt - b.createdAt);
}

export function newDatasetId(): string {
  return `ds-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Stores a dataset atomically; fills in turns, domains and chunks from the trajectories. */
export async function saveDataset(meta: Omit<DatasetMeta, 'turns' | 'domains' | 'chunks' | 'trajectories'>, trajectories: Trajectory[]): Promise<DatasetMeta> {
  const full: DatasetMeta = {
    ...meta,
    trajectories: trajectories.length,
    turns: trajectories.reduce((n, t) => n + t.turns.length, 0),
    domains: [...new Set(trajectories.map((t) => t.domain))].sort(),
    chunks: Math.ceil(trajectories.length / CHUNK_SIZE),
  };
  const db = await openStudioDB();
  await write(db, ['datasets', 'datasetChunks'], async (tx) => {
    const chunks = tx.objectStore('datasetChunks');
    const writes: Promise<unknown>[] = [];
    // A request made after an abort throws at once; the earlier ones' rejections are awaited by
    // write() through the transaction, so none of them may surface as unhandled.
    const track = (p: Promise<unknown>) => {
      p.catch(() => {});
      writes.push(p);
    };
    for (let i = 0; i < full.chunks; i++) {
      track(chunks.put({ datasetId: full.id, index: i, trajectories: trajectories.slice(i * CHUNK_SIZE, (i + 1) * CHUNK_SIZE) }));
    }
    track(tx.objectStore('datasets').put(full));
    await Promise.all(writes);
  });
  return full;
}

export async function loadTrajectories(id: string): Promise<Trajectory[]> {
  const db = await openStudioDB();
  const chunks = await db.getAll('datasetChunks', IDBKeyRange.bound([id, 0], [id, Number.MAX_SAFE_INTEGER]));
  chunks.sort((a, b) => a.index - b.index);
  return chunks.flatMap((c) => c.trajectories);
}

/** Replaces one trajectory of a stored dataset (raw-trajectory editing), keeping its position. */
export async function updateTrajectory(datasetId: string, position: number, trajectory: Trajectory): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['datasets', 'datasetChunks'], async (tx) => {
    const store = tx.objectStore('datasetChunks');
    const key: [string, number] = [datasetId, Math.floor(position / CHUNK_SIZE)];
    const chunk = await store.get(key);
    const meta = await tx.objectStore('datasets').get(datasetId);
    const old = chunk?.trajectories[position % CHUNK_SIZE];
    if (!chunk || !meta || !old) throw new Error(`dataset ${datasetId} has no trajectory at position ${position}`);
    chunk.trajectories[position % CHUNK_SIZE] = trajectory;
    meta.turns += trajectory.turns.length - old.turns.length;
    if (!meta.domains.includes(trajectory.domain)) meta.domains = [...meta.domains, trajectory.domain].sort();
    await store.put(chunk);
    await tx.objectStore('datasets').put(meta);
  });
}

/**
 * Adds trajectories at the end of a stored dataset, or creates it with `meta` when there is none
 * under that id (the Playground's saved sessions). One transaction: a failure adds nothing. An id
 * the dataset already holds is refused, since splits and the RL pool key on ids.
 */
export async function appendTrajectories(meta: Omit<DatasetMeta, 'turns' | 'domains' | 'chunks' | 'trajectories'>, added: Trajectory[]): Promise<DatasetMeta> {
  const db = await openStudioDB();
  return write(db, ['datasets', 'datasetChunks'], async (tx) => {
    const store = tx.objectStore('datasetChunks');
    const old = await tx.objectStore('datasets').get(meta.id);
    const full: DatasetMeta = old ? { ...old } : { ...meta, trajectories: 0, turns: 0, domains: [], chunks: 0 };
    const last = full.chunks ? await store.get([full.id, full.chunks - 1]) : undefined;
    const ids = new Set((last?.trajectories ?? []).map((t) => t.id));
    if (old && full.chunks > 1)
      for (const c of await store.getAll(IDBKeyRange.bound([full.id, 0], [full.id, full.chunks - 2]))) for (const t of c.trajectories) ids.add(t.id);
    for (const t of added) {
      if (ids.has(t.id)) throw new Error(`the dataset ${full.name} already holds a trajectory with id ${t.id}`);
      ids.add(t.id);
    }
    let chunk = last && last.trajectories.length < CHUNK_SIZE ? last : { datasetId: full.id, index: full.chunks, trajectories: [] as Trajectory[] };
    for (const t of added) {
      if (chunk.trajectories.length >= CHUNK_SIZE) {
        await store.put(chunk);
        chunk = { datasetId: full.id, index: chunk.index + 1, trajectories: [] };
      }
      chunk.trajectories.push(t);
    }
    await store.put(chunk);
    full.chunks = chunk.index + 1;
    full.trajectories += added.length;
    full.turns += added.reduce((n, t) => n + t.turns.length, 0);
    full.domains = [...new Set([...full.domains, ...added.map((t) => t.domain)])].sort();
    await tx.objectStore('datasets').put(full);
    return full;
  });
}

export async function deleteDataset(id: string): Promise<void> {
  const db = await openStudioDB();
  const tx = db.transaction(['datasets', 'datasetChunks', 'tokenizers'], 'readwrite');
  await Promise.all([
    tx.objectStore('datasets').delete(id),
    tx.objectStore('datasetChunks').delete(IDBKeyRange.bound([id, 0], [id, Number.MAX_SAFE_INTEGER])),
    tx.objectStore('tokenizers').delete(id),
    tx.done,
  ]);
}
