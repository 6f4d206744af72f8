// The app's storage store: the quota warning stops a job until the user answers (continue,
// free space, not now), and a delete is refused while a job holds the item's lock.
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../core/records.ts';
import { runLockName } from '../../jobs/protocol.ts';
import { closeStudioDB } from '../../storage/db.ts';
import { getRun, putRun, saveCheckpoint } from '../../storage/runs.ts';
import type { OriginEstimate } from '../../storage/usage.ts';
import { createStorageStore, newTrainWrite, resumeWrite } from './storage.ts';

const MiB = 1024 * 1024;

function setup(estimate: OriginEstimate | null, locks: string[] = []) {
  const log: string[] = [];
  const store = createStorageStore({
    env: () => ({ estimate: async () => estimate, persisted: async () => null, persist: async () => false, caches: null, opfs: async () => null }),
    locks: async () => new Set(locks),
    changed: async (kind, ids) => void log.push(`changed ${kind} ${JSON.stringify(ids)}`),
    openStorage: () => void log.push('open storage'),
  });
  return { store, log };
}

const run = (id: string): RunRecord => ({
  id,
  name: `run ${id}`,
  createdAt: 1,
  updatedAt: 1,
  stage: 'sft',
  spec: { kind: 'train', stage: 'sft', preset: 'micro', steps: 8 },
  data: { datasetId: null, name: 'x', trajectories: 1 },
  from: null,
  state: 'done',
  step: 8,
  checkpoints: {},
  resumes: [],
});

beforeEach(async () => {
  await closeStudioDB();
  globalThis.indexedDB = new IDBFactory();
});
afterEach(async () => {
  await closeStudioDB();
});

describe('the quota warning before a job', () => {
  it('lets a job start at once when there is room', async () => {
    const { store } = setup({ usage: 10 * MiB, quota: 1000 * MiB });
    expect(await store.getState().checkBeforeJob({ what: 'this bench', bytes: MiB })).toBe(true);
    expect(store.getState().warning).toBeNull();
  });

  it('holds the job until the user answers: start anyway, free space, not now', async () => {
    const { store, log } = setup({ usage: 990 * MiB, quota: 1000 * MiB });
    const answers: boolean[] = [];
    for (const a of ['continue', 'storage', 'cancel'] as const) {
      const ok = store.getState().checkBeforeJob({ what: 'this training run', bytes: 50 * MiB });
      await new Promise((r) => setTimeout(r, 0));
      expect(store.getState().warning?.reason).toBe('job');
      expect(store.getState().warning?.message).toContain('10.0 MiB free of 1000 MiB');
      store.getState().answerWarning(a);
      answers.push(await ok);
      expect(store.getState().warning).toBeNull();
    }
    expect(answers).toEqual([true, false, false]);
    expect(log).toEqual(['open storage']);
    expect(store.getState().focus).toBe(true);
  });

  it('expects a new run to write three checkpoints of its preset, a resume two of its last', () => {
    const fresh = newTrainWrite({ kind: 'train', train: { kind: 'train', stage: 'sft', preset: 'micro', steps: 4 }, data: { datasetId: 'd' } });
    expect(fresh.bytes).toBeGreaterThan(0);
    const withCheckpoint = { ...run('r'), checkpoints: { last: { key: 'k', step: 4, size: 5000, createdAt: 1 } } };
    expect(resumeWrite(withCheckpoint).bytes).toBe(10_000);
    expect(resumeWrite(run('r')).bytes).toBe(fresh.bytes);
    expect(newTrainWrite({ kind: 'train', recipe: { name: 'quick', domain: 'terminal' } }).bytes).toBeGreaterThan(fresh.bytes);
  });
});

describe('deleting from the Storage card', () => {
  it('refuses a run that a job holds, and deletes it with its checkpoint once free', async () => {
    await putRun(run('r1'));
    await saveCheckpoint('r1', 'last', new Uint8Array(1000), { step: 8 });
    const held = setup(null, [runLockName('r1')]);
    await held.store.getState().refresh();
    await held.store.getState().remove('runs', ['r1']);
    expect(held.store.getState().error).toContain('run r1 is in use by a job that is running');
    expect(await getRun('r1')).toBeDefined();
    expect(held.log).toEqual([]);
    // Its checkpoint is the run's too.
    const key = held.store.getState().report!.kinds.find((k) => k.kind === 'checkpoints')!.items[0].id;
    await held.store.getState().remove('checkpoints', [key]);
    expect(held.store.getState().error).toContain('in use by a job');

    // All runs while a job trains one that the last measure did not see yet.
    const other = setup(null, [runLockName('run-started-since')]);
    await other.store.getState().refresh();
    await other.store.getState().remove('runs', 'all');
    expect(other.store.getState().error).toBe('A job is writing training runs (in this tab or another): stop it, then delete.');
    expect(await getRun('r1')).toBeDefined();

    const free = setup(null);
    await free.store.getState().refresh();
    await free.store.getState().remove('runs', ['r1']);
    expect(free.store.getState().error).toBeNull();
    expect(await getRun('r1')).toBeUndefined();
    expect(free.log).toEqual(['changed runs ["r1"]']);
    const after = free.store.getState().report!;
    expect(after.kinds.find((k) => k.kind === 'runs')?.count).toBe(0);
    expect(after.kinds.find((k) => k.kind === 'checkpoints')?.count).toBe(0);
  });
});
