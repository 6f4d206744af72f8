// Benchmarks in IndexedDB (fake-indexeddb): the v2 → v3 upgrade keeps runs and adds the bench
// stores; results are read and deleted per bench only (no prefix bleed between ids); an import
// is written whole.
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { openDB } from 'idb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deleteBench, getBench, listBenches, loadResults, putBench, putResults, saveImportedBench, updateBench } from './bench.ts';
import { closeStudioDB, DB_NAME, DB_VERSION, openStudioDB } from './db.ts';
import type { BenchRecord, BenchResult } from '../core/records.ts';
import { getRun } from './runs.ts';

beforeEach(async () => {
  await closeStudioDB();
  globalThis.indexedDB = new IDBFactory();
});
afterEach(async () => {
  await closeStudioDB();
});

function bench(id: string, createdAt = 1): BenchRecord {
  return {
    id,
    name: id,
    createdAt,
    updatedAt: createdAt,
    origin: 'run',
    state: 'queued',
    data: { datasetId: 'd', name: 'd', perDomain: 4, evalFraction: 0.1, seed: 0, domains: ['terminal'] },
    samples: [],
    backends: [{ id: 'copy-last', name: 'copy-last', kind: 'copy-last' }],
    judges: [{ id: 'local-rubric', kind: 'local' }],
    generation: {},
    progress: { done: 0, total: 0 },
  };
}

function result(benchId: string, backend: string, index: number): BenchResult {
  return { benchId, backend, index, prediction: { task: 'terminal', id: `s${index}`, turn_idx: 1, prompt: ['a'], response: ['o'], gen: 'g' }, judged: {} };
}

describe('bench storage', () => {
  it('version 2 → the current one keeps the runs and adds the bench stores', async () => {
    const v2 = await openDB(DB_NAME, 2, {
      upgrade(db) {
        for (const s of ['datasets', 'templates']) db.createObjectStore(s, { keyPath: s === 'templates' ? 'version' : 'id' });
        db.createObjectStore('datasetChunks', { keyPath: ['datasetId', 'index'] });
        db.createObjectStore('tokenizers', { keyPath: 'datasetId' });
        db.createObjectStore('runs', { keyPath: 'id' }).createIndex('byCreatedAt', 'createdAt');
        db.createObjectStore('checkpoints', { keyPath: 'key' }).createIndex('byRun', 'runId');
        db.createObjectStore('runMetrics', { keyPath: ['runId', 'step'] });
      },
    });
    await v2.put('runs', { id: 'r1', name: 'old run', createdAt: 1 });
    v2.close();
    const db = await openStudioDB();
    expect(db.version).toBe(DB_VERSION);
    expect(await getRun('r1')).toMatchObject({ name: 'old run' });
    await putBench(bench('b1'));
    expect((await listBenches()).map((b) => b.id)).toEqual(['b1']);
  });

  it('lists newest first, updates in place, and keeps each bench’s results apart', async () => {
    await putBench(bench('b1', 1));
    await putBench(bench('b10', 2));
    expect((await listBenches()).map((b) => b.id)).toEqual(['b10', 'b1']);
    const updated = await updateBench('b1', (b) => (b.state = 'running'));
    expect(updated.state).toBe('running');
    expect((await getBench('b1'))!.state).toBe('running');
    await expect(updateBench('nope', () => {})).rejects.toThrow('no benchmark with id nope');

    await putResults([result('b1', 'copy-last', 1), result('b1', 'copy-last', 0), result('b1', 'ckpt:x', 0), result('b10', 'copy-last', 0)]);
    expect((await loadResults('b1')).map((r) => `${r.backend}#${r.index}`)).toEqual(['ckpt:x#0', 'copy-last#0', 'copy-last#1']);
    // A result written again replaces the stored one (a judgement added to a prediction).
    await putResults([{ ...result('b1', 'copy-last', 0), judged: { j: { ...result('b1', 'copy-last', 0).prediction, failed: true } } }]);
    expect((await loadResults('b1')).find((r) => r.backend === 'copy-last' && r.index === 0)!.judged).toHaveProperty('j');

    await deleteBench('b1');
    expect(await getBench('b1')).toBeUndefined();
    expect(await loadResults('b1')).toEqual([]);
    expect((await loadResults('b10')).length).toBe(1);
  });

  it('stores an import with its results in one go', async () => {
    await saveImportedBench({ ...bench('imp'), origin: 'import', state: 'done' }, [result('imp', 'b0', 0), result('imp', 'b0', 1)]);
    expect((await getBench('imp'))!.origin).toBe('import');
    expect((await loadResults('imp')).length).toBe(2);
  });
});
