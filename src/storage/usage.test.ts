// The Storage card's accounting and deletion over IndexedDB (fake-indexeddb in Node): sizes by
// kind add up to what was stored, a run goes with its checkpoints and metrics and nothing else, a
// checkpoint goes with the pointers that name it, a dataset goes and the runs that used it stay,
// and a delete that fails midway changes nothing. Cache Storage is an in-memory CacheStorage with
// real Response bodies (the e2e Storage spec uses the browser's own).
import 'fake-indexeddb/auto';
import { IDBFactory, IDBObjectStore as FDBObjectStore } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hubCacheName } from '../core/hubCache.ts';
import type { BenchRecord, OptimizationRecord, RunRecord } from '../core/records.ts';
import type { Trajectory } from '../core/schema/types.ts';
import { putBench, putResults } from './bench.ts';
import { saveDataset } from './datasets.ts';
import { closeStudioDB, openStudioDB } from './db.ts';
import { putOptimization } from './optimize.ts';
import { appendMetrics, getRun, loadMetrics, putRun, saveCheckpoint } from './runs.ts';
import { deleteStored, measureStorage, sizeOf, type StorageEnv, type StorageReport, type StoredKind } from './usage.ts';

/** Cache Storage in memory: caches by name, each a list of request URLs and their responses. */
class MemoryCaches {
  readonly caches = new Map<string, Map<string, Response>>();
  put(name: string, url: string, body: Uint8Array) {
    if (!this.caches.has(name)) this.caches.set(name, new Map());
    this.caches.get(name)!.set(url, new Response(body as Uint8Array<ArrayBuffer>));
  }
  async keys() {
    return [...this.caches.keys()];
  }
  async delete(name: string) {
    return this.caches.delete(name);
  }
  async open(name: string) {
    const c = this.caches.get(name) ?? new Map<string, Response>();
    return {
      keys: async () => [...c.keys()].map((u) => new Request(u)),
      match: async (r: Request) => c.get(r.url)?.clone(),
    };
  }
}

function env(caches = new MemoryCaches(), estimate = { usage: 1000, quota: 10_000 }): StorageEnv {
  return {
    estimate: async () => estimate,
    persisted: async () => false,
    persist: async () => true,
    caches: caches as unknown as CacheStorage,
    opfs: async () => null,
  };
}

const traj = (id: string): Trajectory =>
  ({
    id,
    domain: 'terminal',
    system_prompt: { task_description: 't', action_space: 'a', observation_space: 'o' },
    turns: [{ action: 'ls', observation: 'a.txt' }],
  }) as unknown as Trajectory;

function run(id: string, datasetId: string | null): RunRecord {
  return {
    id,
    name: `run ${id}`,
    createdAt: 1,
    updatedAt: 1,
    stage: 'sft',
    spec: { kind: 'train', stage: 'sft', preset: 'micro', steps: 8 },
    data: { datasetId, name: 'data', trajectories: 2 },
    from: null,
    state: 'done',
    step: 8,
    checkpoints: {},
    resumes: [],
  };
}

function bench(id: string): BenchRecord {
  return {
    id,
    name: `bench ${id}`,
    createdAt: 2,
    updatedAt: 2,
    origin: 'run',
    state: 'done',
    data: { datasetId: 'ds-a', name: 'a', perDomain: 4, evalFraction: 0.1, seed: 0, domains: ['terminal'] },
    samples: [],
    backends: [{ id: 'copy-last', name: 'copy-last', kind: 'copy-last' }],
    judges: [{ id: 'local-rubric', kind: 'local' }],
    generation: {},
    progress: { done: 1, total: 1 },
  };
}

const kind = (r: StorageReport, k: StoredKind) => r.kinds.find((x) => x.kind === k)!;

/** Two datasets, two runs with checkpoints and metrics, a bench with results, an optimization, a cache. */
async function seed(caches: MemoryCaches) {
  await saveDataset({ id: 'ds-a', name: 'A', createdAt: 1, origin: 'import', formats: ['lwm'], files: ['a.jsonl'], errorCount: 0 }, [traj('t1'), traj('t2')]);
  await saveDataset({ id: 'ds-b', name: 'B', createdAt: 2, origin: 'import', formats: ['lwm'], files: ['b.jsonl'], errorCount: 0 }, [traj('t3')]);
  await putRun(run('r1', 'ds-a'));
  await putRun(run('r2', 'ds-b'));
  await saveCheckpoint('r1', 'last', new Uint8Array(40_000).fill(1), { step: 4 });
  await saveCheckpoint('r1', 'best', new Uint8Array(30_000).fill(2), { step: 3, evalLoss: 1 });
  await saveCheckpoint('r2', 'last', new Uint8Array(50_000).fill(3), { step: 8 });
  await appendMetrics('r1', [{ step: 1, values: { loss: 2 } }]);
  await appendMetrics('r2', [{ step: 1, values: { loss: 3 } }]);
  await putBench(bench('b1'));
  await putResults([
    {
      benchId: 'b1',
      backend: 'copy-last',
      index: 0,
      prediction: { task: 'terminal', id: 's0', turn_idx: 1, prompt: ['a'], response: ['o'], gen: 'g' },
      judged: {},
    },
  ]);
  await putOptimization({ id: 'o1', name: 'opt one', createdAt: 3, updatedAt: 3, state: 'done', data: { datasetId: 'ds-a' } } as unknown as OptimizationRecord);
  caches.put('hub-models', 'http://127.0.0.1/model.safetensors', new Uint8Array(7000));
  caches.put('hub-models', 'http://127.0.0.1/config.json', new Uint8Array(300));
  caches.put('other', 'http://127.0.0.1/x', new Uint8Array(10));
}

beforeEach(async () => {
  await closeStudioDB();
  globalThis.indexedDB = new IDBFactory();
});
afterEach(async () => {
  await closeStudioDB();
});

describe('sizeOf', () => {
  it('counts binary data by length, Latin-1 text a byte a character, other text two, keys as text', () => {
    expect(sizeOf(new ArrayBuffer(1234))).toBe(1234);
    expect(sizeOf(new Uint8Array(new ArrayBuffer(100), 10, 20))).toBe(20);
    expect(sizeOf('héllo')).toBe(5);
    expect(sizeOf('日本')).toBe(4);
    expect(sizeOf({ ab: 'xyz', n: 1, list: [true, null] })).toBe(2 + 3 + 1 + 8 + 4 + 1 + 1);
  });
});

describe('measureStorage', () => {
  it('gives each kind its count and bytes, a run its checkpoints, a dataset its users, a cache its bodies', async () => {
    const caches = new MemoryCaches();
    await seed(caches);
    const r = await measureStorage(env(caches));
    expect(r.estimate).toEqual({ usage: 1000, quota: 10_000 });
    expect(r.persisted).toBe(false);
    for (const k of r.kinds) expect(k.bytes).toBe(k.items.reduce((n, i) => n + i.bytes, 0));

    const checkpoints = kind(r, 'checkpoints');
    expect(checkpoints.count).toBe(3);
    // The bytes, and a little for each record's key, run id, step and time.
    expect(checkpoints.bytes).toBeGreaterThanOrEqual(120_000);
    expect(checkpoints.bytes).toBeLessThan(120_000 + 3 * 200);
    expect(checkpoints.items.find((i) => i.runId === 'r2')?.detail).toBe('last');
    // Sized from the runs' pointers without reading the bytes: the same as measuring each record.
    const db = await openStudioDB();
    for (const i of checkpoints.items) expect(i.bytes).toBe(sizeOf(await db.get('checkpoints', i.id)));

    const runs = kind(r, 'runs');
    expect(runs.count).toBe(2);
    const r1 = runs.items.find((i) => i.id === 'r1')!;
    expect(r1.checkpoints?.count).toBe(2);
    expect(r1.checkpoints?.bytes).toBeGreaterThanOrEqual(70_000);
    expect(r1.bytes).toBeLessThan(2000); // the record and metrics; its checkpoints are the other kind's

    const datasets = kind(r, 'datasets');
    expect(datasets.count).toBe(2);
    expect(datasets.items.find((i) => i.id === 'ds-a')?.usedBy).toEqual(['run run r1', 'bench bench b1', 'optimization opt one']);
    expect(datasets.items.find((i) => i.id === 'ds-a')!.bytes).toBeGreaterThan(datasets.items.find((i) => i.id === 'ds-b')!.bytes);

    expect(kind(r, 'benches').count).toBe(1);
    expect(kind(r, 'optimizations').count).toBe(1);
    const cached = kind(r, 'caches');
    expect(cached.items.map((i) => [i.id, i.bytes])).toEqual([
      ['cache:hub-models', 7300],
      ['cache:other', 10],
    ]);
    expect(cached.items[0].detail).toBe('Cache Storage, 2 entries');
  });
});

describe('a Hugging Face Hub model cached by the app (src/core/hubCache.ts)', () => {
  it('is listed by its id, with the revisions fetched and its size, and deleted by it', async () => {
    const caches = new MemoryCaches();
    const name = hubCacheName('org/tiny');
    const commit = 'a'.repeat(40);
    const at = (path: string) => `https://hub-cache.invalid/${path}`;
    const text = (t: string) => new TextEncoder().encode(t);
    caches.put(name, at('refs/main'), text(commit));
    caches.put(name, at(`snapshots/${commit}/model.safetensors`), text('f'.repeat(64)));
    caches.put(name, at(`blobs/${'f'.repeat(64)}`), new Uint8Array(5000));
    caches.put(name, at(`snapshots/${'b'.repeat(40)}/config.json`), text('c'.repeat(40)));
    caches.put(name, at(`blobs/${'c'.repeat(40)}`), new Uint8Array(200));
    caches.put('other', 'http://127.0.0.1/x', new Uint8Array(10));
    const r = await measureStorage(env(caches));
    const hub = kind(r, 'caches').items.find((i) => i.id === `cache:${name}`)!;
    expect(hub.name).toBe('org/tiny');
    expect(hub.detail).toBe(`Hugging Face Hub model, revision main (aaaaaaa), bbbbbbb`);
    expect(hub.bytes).toBe(40 + 64 + 5000 + 40 + 200);
    await deleteStored('caches', [`cache:${name}`], env(caches));
    expect(kind(await measureStorage(env(caches)), 'caches').items.map((i) => i.name)).toEqual(['other']);
  });
});

describe('deleteStored', () => {
  it('a run goes with its checkpoints and metrics; the other run and every other kind stay as they were', async () => {
    const caches = new MemoryCaches();
    await seed(caches);
    const before = await measureStorage(env(caches));
    await deleteStored('runs', ['r1'], env(caches));
    const after = await measureStorage(env(caches));
    expect(kind(after, 'runs').items.map((i) => i.id)).toEqual(['r2']);
    expect(kind(after, 'checkpoints').items.map((i) => i.runId)).toEqual(['r2']);
    expect(await loadMetrics('r1')).toEqual([]);
    expect((await loadMetrics('r2')).length).toBe(1);
    for (const k of ['benches', 'optimizations', 'templates', 'caches'] as const) expect(kind(after, k)).toEqual(kind(before, k));
    // The datasets are as they were; only the list of who used them lost the run.
    expect(kind(after, 'datasets').items.map((i) => [i.id, i.bytes])).toEqual(kind(before, 'datasets').items.map((i) => [i.id, i.bytes]));
    expect(kind(after, 'datasets').items.find((i) => i.id === 'ds-a')?.usedBy).toEqual(['bench bench b1', 'optimization opt one']);
    expect(kind(after, 'checkpoints').bytes).toBe(kind(before, 'checkpoints').bytes - before.kinds[1].items.find((i) => i.id === 'r1')!.checkpoints!.bytes);
  });

  it('a checkpoint no run points at is read to be sized, and listed as such', async () => {
    await seed(new MemoryCaches());
    const db = await openStudioDB();
    await db.put('checkpoints', { key: 'stray', runId: 'r1', step: 2, createdAt: 5, bytes: new ArrayBuffer(9000) });
    const stray = kind(await measureStorage(env()), 'checkpoints').items.find((i) => i.id === 'stray');
    expect(stray).toMatchObject({ runId: 'r1', detail: 'not current (left by an interrupted write)', bytes: sizeOf(await db.get('checkpoints', 'stray')) });
    expect(stray!.bytes).toBeGreaterThan(9000);
  });

  it('a checkpoint goes with the run pointers that name it; the run stays', async () => {
    await seed(new MemoryCaches());
    const r1 = await getRun('r1');
    await deleteStored('checkpoints', [r1!.checkpoints.best!.key]);
    const after = await getRun('r1');
    expect(after?.checkpoints.best).toBeUndefined();
    expect(after?.checkpoints.last?.key).toBe(r1!.checkpoints.last!.key);
    await deleteStored('checkpoints', 'all');
    expect((await getRun('r1'))?.checkpoints).toEqual({});
    expect((await getRun('r2'))?.checkpoints).toEqual({});
    expect(await (await openStudioDB()).count('checkpoints')).toBe(0);
    expect(await (await openStudioDB()).count('runs')).toBe(2);
  });

  it('a dataset goes with its chunks; the runs, benches and optimizations that used it stay', async () => {
    await seed(new MemoryCaches());
    await deleteStored('datasets', ['ds-a']);
    const db = await openStudioDB();
    expect(await db.getAllKeys('datasets')).toEqual(['ds-b']);
    expect((await db.getAll('datasetChunks')).map((c) => c.datasetId)).toEqual(['ds-b']);
    expect((await getRun('r1'))?.data.datasetId).toBe('ds-a');
    expect(await db.count('benches')).toBe(1);
    expect(await db.count('optimizations')).toBe(1);
  });

  it('all of a kind at once, and only that kind', async () => {
    const caches = new MemoryCaches();
    await seed(caches);
    await deleteStored('benches', 'all', env(caches));
    await deleteStored('optimizations', 'all', env(caches));
    await deleteStored('caches', ['cache:other'], env(caches));
    let r = await measureStorage(env(caches));
    expect(kind(r, 'benches').count).toBe(0);
    expect(kind(r, 'optimizations').count).toBe(0);
    expect(kind(r, 'caches').items.map((i) => i.id)).toEqual(['cache:hub-models']);
    expect(kind(r, 'runs').count).toBe(2);
    expect(kind(r, 'datasets').count).toBe(2);
    await deleteStored('runs', 'all', env(caches));
    await deleteStored('caches', 'all', env(caches));
    r = await measureStorage(env(caches));
    expect([kind(r, 'runs').count, kind(r, 'checkpoints').count, kind(r, 'caches').count, kind(r, 'datasets').count]).toEqual([0, 0, 0, 2]);
    await expect(deleteStored('templates', 'all')).rejects.toThrow('Prompts view');
  });

  it('a delete that fails midway deletes nothing', async () => {
    await seed(new MemoryCaches());
    const before = await measureStorage(env());
    const proto = FDBObjectStore.prototype as unknown as { delete(this: { name: string }, key: unknown): unknown };
    const saved = proto.delete;
    // The second run's record cannot be deleted: the first run's deletes, already made in the same transaction, must not land.
    proto.delete = function (key) {
      if (this.name === 'runs' && key === 'r2') throw new Error('disk went away');
      return saved.call(this, key);
    };
    try {
      await expect(deleteStored('runs', ['r1', 'r2'])).rejects.toThrow('disk went away');
    } finally {
      proto.delete = saved;
    }
    const after = await measureStorage(env());
    expect(after.kinds).toEqual(before.kinds);
    expect((await loadMetrics('r1')).length).toBe(1);
  });
});
