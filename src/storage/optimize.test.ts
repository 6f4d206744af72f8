// Prompt optimizations in IndexedDB (fake-indexeddb): a version 4 database, whose store and
// record fields have the older spelling, upgrades to version 5 with every record moved to
// 'optimizations' under the current field names, nothing else touched, and the app's reads and
// writes working on the moved records; an upgrade cut off by a full quota leaves version 4 as it
// was and says why, and the next open moves everything.
import 'fake-indexeddb/auto';
import { IDBFactory, IDBObjectStore as FDBObjectStore } from 'fake-indexeddb';
import { openDB } from 'idb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OptimizationRecord } from '../core/records.ts';
import { OLD_OPTIMIZER_KEY, type LoopState } from '../core/optimize/loop.ts';
import { OLD_BLOCK_BEGIN, OLD_BLOCK_END } from '../core/optimize/offline.ts';
import { BUILTIN_TEMPLATES } from '../core/templates/builtin.ts';
import { closeStudioDB, DB_NAME, DB_VERSION, OLD_OPTIMIZATIONS_STORE, openStudioDB } from './db.ts';
import { getOptimization, listOptimizations, updateOptimization } from './optimize.ts';

beforeEach(async () => {
  await closeStudioDB();
  globalThis.indexedDB = new IDBFactory();
});
afterEach(async () => {
  await closeStudioDB();
});

function loop(round: number): LoopState {
  const config = { rounds: 3, candidates: 2, margin: 0, level: 0.95, seed: round, devSize: 6, testSize: 4 };
  return {
    config,
    versions: [
      { id: 'v0', parent: null, round: 0, text: BUILTIN_TEMPLATES.v0.text, note: 'v0 as it was', optimizer: 'start', status: 'start', mean: 40 },
      {
        id: 'r1c1',
        parent: 'v0',
        round: 1,
        text: `${BUILTIN_TEMPLATES.v0.text}\n${OLD_BLOCK_BEGIN}\n- Never invent files.\n${OLD_BLOCK_END}`,
        note: 'added "Never invent files." for factuality',
        optimizer: 'offline',
        status: 'accepted',
        mean: 55,
        reason: 'p 0.01',
        comparison: { n: 6, parentMean: 40, candidateMean: 55, meanDiff: 15, sdDiff: 9, ci: [3, 27], level: 0.95 },
      },
      { id: 'r1c2', parent: 'v0', round: 1, text: '', note: 'the optimizer gave no note', optimizer: 'endpoint', status: 'invalid', reason: 'no template' },
    ],
    best: 'r1c1',
    round,
    pending: [],
    calls: { model: 18, judge: 18 },
    rounds: [{ round: 1, best: 'r1c1', mean: 55, candidates: 2, accepted: 1 }],
  };
}

/** The records as the current code would write them. */
function records(): OptimizationRecord[] {
  const base = (i: number): OptimizationRecord => ({
    id: `opt-${i}`,
    name: `Optimize v0 · ${i}`,
    createdAt: 1_000 + i,
    updatedAt: 2_000 + i,
    state: 'done',
    start: { version: 'v0', template: structuredClone(BUILTIN_TEMPLATES.v0) },
    data: { datasetId: 'd', name: 'default', domains: ['terminal', 'mcp'], evalFraction: 0.5, seed: 1, devPerDomain: 3, testPerDomain: 2 },
    backend: { id: 'copy-last', name: 'copy-last', kind: 'copy-last' },
    judge: { id: 'local-rubric', kind: 'local' },
    optimizer: { kind: 'offline' },
    generation: { temperature: 0 },
    config: { rounds: 3, candidates: 2, margin: 0, level: 0.95, seed: i },
    loop: loop(i % 3),
  });
  const all = Array.from({ length: 40 }, (_, i) => base(i));
  // An endpoint optimizer, a failed run with promoted candidates, one never started.
  all[1].optimizer = { kind: 'endpoint', endpoint: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'writer' } };
  Object.assign(all[2], { state: 'failed', error: 'The GPU device was lost.', promoted: { r1c1: 'v3' } });
  Object.assign(all[3], { state: 'queued', loop: null });
  return all;
}

/** A record as version 4 stored it: the optimizer, and each version's, under the old key. */
function oldShaped(r: OptimizationRecord): Record<string, unknown> {
  const rename = (o: Record<string, unknown>) => {
    const { optimizer, ...rest } = o;
    return { ...rest, [OLD_OPTIMIZER_KEY]: optimizer };
  };
  const copy = structuredClone(r) as unknown as Record<string, unknown>;
  const l = copy.loop as { versions: Record<string, unknown>[] } | null;
  if (l) l.versions = l.versions.map(rename);
  return rename(copy);
}

/** A version 4 database, made as version 4 made it, holding `old` optimizations and one of each other record kind. */
async function version4(old: Record<string, unknown>[]): Promise<void> {
  const v4 = await openDB(DB_NAME, 4, {
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
      db.createObjectStore(OLD_OPTIMIZATIONS_STORE, { keyPath: 'id' }).createIndex('byCreatedAt', 'createdAt');
    },
  });
  for (const o of old) await v4.put(OLD_OPTIMIZATIONS_STORE, o);
  await v4.put('templates', { version: 'v3', parent: 'v0', note: 'promoted', createdAt: 5, builtin: false, template: { version: 'v3', text: 'x' } });
  await v4.put('benches', { id: 'b1', name: 'b1', createdAt: 3 });
  v4.close();
}

describe('database upgrade 4 → 5', () => {
  it('moves every stored optimization to the new store under the new field names, intact', async () => {
    const expected = records();
    const old = expected.map(oldShaped);
    expect(JSON.stringify(old)).not.toContain('"optimizer"');
    await version4(old);

    const db = await openStudioDB();
    expect(db.version).toBe(DB_VERSION);
    expect(DB_VERSION).toBeGreaterThanOrEqual(5);
    expect([...db.objectStoreNames]).not.toContain(OLD_OPTIMIZATIONS_STORE);
    expect(await db.count('optimizations')).toBe(expected.length);
    for (const r of expected) expect(await getOptimization(r.id)).toEqual(r);
    expect(JSON.stringify(await db.getAll('optimizations'))).not.toContain(`"${OLD_OPTIMIZER_KEY}"`);
    // The index came along: newest first.
    expect((await listOptimizations()).map((o) => o.id)).toEqual(expected.map((o) => o.id).reverse());
    // Other stores are as they were.
    expect(await db.get('templates', 'v3')).toMatchObject({ note: 'promoted', template: { text: 'x' } });
    expect(await db.get('benches', 'b1')).toMatchObject({ name: 'b1' });
    // The app's writes work on a moved record.
    const changed = await updateOptimization('opt-3', (o) => (o.state = 'stopped'));
    expect(changed).toMatchObject({ id: 'opt-3', state: 'stopped', optimizer: { kind: 'offline' }, loop: null });

    // Opened again: nothing moves twice, nothing is lost.
    await closeStudioDB();
    const again = await openStudioDB();
    expect(await again.count('optimizations')).toBe(expected.length);
    expect(await getOptimization('opt-1')).toEqual(expected[1]);
  });

  it('a full quota during the move leaves version 4 as it was, says why, and the next open moves every record', async () => {
    const expected = records();
    await version4(expected.map(oldShaped));
    // The browser aborts the transaction with QuotaExceededError at the 10th record.
    const proto = FDBObjectStore.prototype as unknown as { add: (...a: unknown[]) => unknown };
    const add = proto.add;
    let calls = 0;
    proto.add = function (this: { transaction: { _abort(name: string): void } }, ...args: unknown[]) {
      const req = add.apply(this, args);
      if (++calls === 10) this.transaction._abort('QuotaExceededError');
      return req;
    };
    try {
      await expect(openStudioDB()).rejects.toThrow(
        new RegExp(
          `^Could not move the stored prompt optimizations to version ${DB_VERSION} of the browser database \\(.*quota.*\\); nothing was changed, and they stay stored as they were\\.$`,
          'i',
        ),
      );
    } finally {
      proto.add = add;
    }
    await closeStudioDB();
    const v4 = await openDB(DB_NAME);
    expect(v4.version).toBe(4);
    expect([...v4.objectStoreNames]).toContain(OLD_OPTIMIZATIONS_STORE);
    expect([...v4.objectStoreNames]).not.toContain('optimizations');
    const byId = <T extends { id: unknown }>(xs: T[]) => [...xs].sort((a, b) => String(a.id).localeCompare(String(b.id)));
    expect(await v4.getAll(OLD_OPTIMIZATIONS_STORE)).toEqual(byId(expected.map(oldShaped) as { id: unknown }[]));
    v4.close();

    const db = await openStudioDB();
    expect(db.version).toBe(DB_VERSION);
    expect(await db.getAll('optimizations')).toEqual(byId(expected));
  });

  it('an empty version 4 store upgrades to an empty new one', async () => {
    await version4([]);
    const db = await openStudioDB();
    expect(db.version).toBe(DB_VERSION);
    expect([...db.objectStoreNames]).toContain('optimizations');
    expect([...db.objectStoreNames]).not.toContain(OLD_OPTIMIZATIONS_STORE);
    expect(await listOptimizations()).toEqual([]);
  });
});
