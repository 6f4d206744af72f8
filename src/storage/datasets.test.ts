// Datasets in IndexedDB (fake-indexeddb in Node) at a full quota: the save or edit gives the
// storage-full message the runs give, and the dataset stored before is intact.
import 'fake-indexeddb/auto';
import { IDBFactory, IDBObjectStore as FDBObjectStore } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Trajectory } from '../core/schema/types.ts';
import { appendTrajectories, CHUNK_SIZE, listDatasets, loadTrajectories, saveDataset, updateTrajectory } from './datasets.ts';
import { closeStudioDB } from './db.ts';
import { STORAGE_FULL_MESSAGE, StorageFullError } from './runs.ts';

const traj = (id: string, action = 'ls'): Trajectory =>
  ({
    id,
    domain: 'terminal',
    system_prompt: { task_description: 't', action_space: 'a', observation_space: 'o' },
    turns: [{ action, observation: 'a.txt' }],
  }) as unknown as Trajectory;

const meta = (id: string) => ({ id, name: id, createdAt: 1, origin: 'import' as const, formats: ['native'], files: ['f'], errorCount: 0 });

/** Makes `put` fail the way a browser does at its quota: the transaction aborts with QuotaExceededError. */
function fillQuota(): () => void {
  const proto = FDBObjectStore.prototype as unknown as { put: (...a: unknown[]) => unknown };
  const put = proto.put;
  proto.put = function (this: { transaction: { _abort(name: string): void } }, ...args: unknown[]) {
    const req = put.apply(this, args);
    this.transaction._abort('QuotaExceededError');
    return req;
  };
  return () => (proto.put = put);
}

beforeEach(async () => {
  await closeStudioDB();
  globalThis.indexedDB = new IDBFactory();
});

afterEach(async () => {
  await closeStudioDB();
});

describe('datasets at a full quota', () => {
  it('a dataset that does not fit gives the storage-full message and the stored one is intact', async () => {
    await saveDataset(meta('old'), [traj('a'), traj('b')]);
    const restore = fillQuota();
    let err: unknown;
    try {
      err = await saveDataset(meta('new'), [traj('c')]).catch((e: unknown) => e);
    } finally {
      restore();
    }
    expect(err).toBeInstanceOf(StorageFullError);
    expect((err as Error).message).toBe(STORAGE_FULL_MESSAGE);
    expect((await listDatasets()).map((d) => d.id)).toEqual(['old']);
    expect((await loadTrajectories('old')).map((t) => t.id)).toEqual(['a', 'b']);
    expect(await loadTrajectories('new')).toEqual([]);
  });

  it('an edit that does not fit gives the storage-full message and leaves the trajectory as it was', async () => {
    await saveDataset(meta('old'), [traj('a'), traj('b')]);
    const restore = fillQuota();
    let err: unknown;
    try {
      err = await updateTrajectory('old', 1, traj('b', 'cat a.txt')).catch((e: unknown) => e);
    } finally {
      restore();
    }
    expect((err as Error).message).toBe(STORAGE_FULL_MESSAGE);
    expect((await loadTrajectories('old')).map((t) => t.turns[0].action)).toEqual(['ls', 'ls']);
    expect((await listDatasets())[0].turns).toBe(2);
  });
});

describe('appending trajectories', () => {
  it('creates the dataset, then adds at its end across chunks, and refuses an id it holds', async () => {
    const m = { ...meta('play'), origin: 'playground' as const };
    const first = await appendTrajectories(m, [traj('p1')]);
    expect(first).toMatchObject({ id: 'play', trajectories: 1, turns: 1, chunks: 1, domains: ['terminal'], origin: 'playground' });
    const many = Array.from({ length: CHUNK_SIZE }, (_, i) => traj(`q${i}`));
    const after = await appendTrajectories(m, many);
    expect(after).toMatchObject({ trajectories: CHUNK_SIZE + 1, chunks: 2 });
    expect((await loadTrajectories('play')).map((t) => t.id)).toEqual(['p1', ...many.map((t) => t.id)]);
    await expect(appendTrajectories(m, [traj('p1')])).rejects.toThrow(/already holds a trajectory with id p1/);
    expect((await loadTrajectories('play')).length).toBe(CHUNK_SIZE + 1);
    expect((await listDatasets()).find((d) => d.id === 'play')!.trajectories).toBe(CHUNK_SIZE + 1);
  });
});
