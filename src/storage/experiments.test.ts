// Sim RL experiments in IndexedDB (fake-indexeddb): a version 5 database upgrades to version 6
// with every record of every store kept and an empty 'experiments' store; experiments are stored
// with their checkpoint bytes, listed newest first, updated in one transaction, and counted,
// listed and deleted by the System view's storage report as a kind of their own.
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { openDB } from 'idb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ExperimentRecord } from '../core/records.ts';
import { closeStudioDB, DB_NAME, DB_VERSION, openStudioDB } from './db.ts';
import { deleteExperiment, getExperiment, listExperiments, putExperiment, updateExperiment } from './experiments.ts';
import { getOptimization } from './optimize.ts';
import { getRun, loadCheckpointBytes } from './runs.ts';
import { deleteStored, measureStorage, type StorageEnv } from './usage.ts';

beforeEach(async () => {
  await closeStudioDB();
  globalThis.indexedDB = new IDBFactory();
});
afterEach(async () => {
  await closeStudioDB();
});

const env: StorageEnv = {
  estimate: async () => null,
  persisted: async () => null,
  persist: async () => false,
  caches: null,
  opfs: async () => null,
};

function experiment(id: string, createdAt: number, bytes = new Uint8Array([1, 2, 3, 4])): ExperimentRecord {
  return {
    id,
    name: `exp ${id}`,
    createdAt,
    updatedAt: createdAt,
    state: 'running',
    world: { kind: 'copy-last' },
    worldMaxTokens: 64,
    experiment: { version: 1, imitation: bytes, cursor: { arm: 1, step: 2, checkpoint: bytes }, arms: [{ arm: 'real', evals: [{ step: 0, success: 0.25 }] }] },
  };
}

/** A version 5 database as version 5 made it, with one record in each store a user fills. */
async function version5(): Promise<void> {
  const v5 = await openDB(DB_NAME, 5, {
    upgrade(db) {
      db.createObjectStore('datasets', { keyPath: 'id' });
      db.createObjectStore('datasetChunks', { keyPath: ['datasetId', 'index'] });
      db.createObjectStore('templates', { keyPath: 'version' });
      db.createObjectStore('tokenizers', { keyPath: 'datasetId' });
      db.createObjectStore('runs', { keyPath: 'id' }).createIndex('byCreatedAt', 'createdAt');
      db.createObjectStore('checkpoints', { keyPath: 'key' }).createIndex('byRun', 'runId');
      db.createObjectStore('runMetrics', { keyPath: ['runId', 'step'] });
      db.createObjectStore('benches', { keyPath: 'id' }).createIndex('byCreatedAt', 'createdAt');
      db.createObjectStore('benchResults', { keyPath: ['benchId', 'backend', 'index'] });
      db.createObjectStore('optimizations', { keyPath: 'id' }).createIndex('byCreatedAt', 'createdAt');
    },
  });
  await v5.put('datasets', { id: 'd1', name: 'mine', createdAt: 1 });
  await v5.put('datasetChunks', { datasetId: 'd1', index: 0, trajectories: [] });
  await v5.put('templates', { version: 'v3', parent: 'v0', note: 'promoted', createdAt: 5, builtin: false, template: { version: 'v3', text: 'x' } });
  await v5.put('tokenizers', { datasetId: 'd1', vocabSize: 300 });
  await v5.put('runs', { id: 'r1', name: 'run one', createdAt: 2, checkpoints: { last: { key: 'r1:last:1', step: 8 } } });
  await v5.put('checkpoints', { key: 'r1:last:1', runId: 'r1', tag: 'last', step: 8, bytes: new Uint8Array([9, 8, 7]) });
  await v5.put('runMetrics', { runId: 'r1', step: 1, values: { loss: 2 } });
  await v5.put('benches', { id: 'b1', name: 'b1', createdAt: 3 });
  await v5.put('benchResults', { benchId: 'b1', backend: 'x', index: 0 });
  await v5.put('optimizations', { id: 'opt-1', name: 'opt one', createdAt: 4, state: 'done', loop: null });
  v5.close();
}

describe('database upgrade 5 → 6', () => {
  it('keeps every record stored before and adds an empty experiments store', async () => {
    await version5();
    const db = await openStudioDB();
    expect(db.version).toBe(DB_VERSION);
    expect(DB_VERSION).toBe(6);
    expect(await db.get('datasets', 'd1')).toMatchObject({ name: 'mine' });
    expect(await db.count('datasetChunks')).toBe(1);
    expect(await db.get('templates', 'v3')).toMatchObject({ note: 'promoted' });
    expect(await db.get('tokenizers', 'd1')).toMatchObject({ vocabSize: 300 });
    expect(await getRun('r1')).toMatchObject({ name: 'run one' });
    expect([...(await loadCheckpointBytes('r1:last:1'))]).toEqual([9, 8, 7]);
    expect(await db.count('runMetrics')).toBe(1);
    expect(await db.get('benches', 'b1')).toMatchObject({ name: 'b1' });
    expect(await db.count('benchResults')).toBe(1);
    expect(await getOptimization('opt-1')).toMatchObject({ name: 'opt one', state: 'done' });
    expect(await db.count('experiments')).toBe(0);
    // The new store takes records at once.
    await putExperiment(experiment('e1', 10));
    expect((await listExperiments()).map((e) => e.id)).toEqual(['e1']);
  });
});

describe('experiments', () => {
  it('are stored with their bytes, listed newest first, updated and deleted', async () => {
    await putExperiment(experiment('e1', 10));
    await putExperiment(experiment('e2', 20, new Uint8Array([5, 6])));
    expect((await listExperiments()).map((e) => e.id)).toEqual(['e2', 'e1']);
    const e2 = (await getExperiment('e2')) as ExperimentRecord<{ imitation: Uint8Array }>;
    expect(e2.experiment.imitation).toBeInstanceOf(Uint8Array);
    expect([...e2.experiment.imitation]).toEqual([5, 6]);
    const changed = await updateExperiment('e1', (e) => {
      e.state = 'done';
      e.experiment = { version: 1, done: true };
    });
    expect(changed.state).toBe('done');
    expect(changed.updatedAt).toBeGreaterThanOrEqual(10);
    expect(await getExperiment('e1')).toMatchObject({ state: 'done', experiment: { done: true } });
    await expect(updateExperiment('nope', () => {})).rejects.toThrow(/no Sim RL experiment with id nope/);
    await deleteExperiment('e1');
    expect((await listExperiments()).map((e) => e.id)).toEqual(['e2']);
  });

  it('are a kind of the storage report, sized with their checkpoints, and deleted from it', async () => {
    await putExperiment(experiment('e1', 10, new Uint8Array(1000)));
    await putExperiment(experiment('e2', 20, new Uint8Array(10)));
    const r = await measureStorage(env);
    const k = r.kinds.find((x) => x.kind === 'experiments')!;
    expect(k.count).toBe(2);
    expect(k.items.map((i) => [i.id, i.name, i.detail])).toEqual([
      ['e2', 'exp e2', 'running'],
      ['e1', 'exp e1', 'running'],
    ]);
    // e1's checkpoint bytes count twice (imitation and cursor): 2000 bytes and more.
    expect(k.items[1].bytes).toBeGreaterThan(2000);
    expect(k.items[0].bytes).toBeLessThan(1000);
    await deleteStored('experiments', ['e1'], env);
    expect((await listExperiments()).map((e) => e.id)).toEqual(['e2']);
    await deleteStored('experiments', 'all', env);
    expect(await listExperiments()).toEqual([]);
  });
});
