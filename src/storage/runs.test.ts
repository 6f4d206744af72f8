// Runs, metrics and checkpoints in IndexedDB (fake-indexeddb in Node): the v1 → v2 upgrade keeps
// what was stored, checkpoint replacement survives an interruption at every point, and a full
// quota loses nothing.
import 'fake-indexeddb/auto';
import { IDBFactory, IDBObjectStore as FDBObjectStore } from 'fake-indexeddb';
import { openDB } from 'idb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Trajectory } from '../core/schema/types.ts';
import { listDatasets, loadTrajectories, saveDataset } from './datasets.ts';
import { closeStudioDB, DB_NAME, DB_VERSION, openStudioDB } from './db.ts';
import type { RunRecord } from '../core/records.ts';
import {
  appendMetrics,
  collectOrphans,
  deleteCheckpoint,
  deleteRun,
  getRun,
  listRuns,
  loadCheckpointBytes,
  loadMetrics,
  putRun,
  recordRunState,
  runMaskConfig,
  saveCheckpoint,
  STORAGE_FULL_MESSAGE,
  StorageFullError,
  truncateMetrics,
  updateRun,
} from './runs.ts';

const traj = (id: string): Trajectory =>
  ({
    id,
    domain: 'terminal',
    system_prompt: { task_description: 't', action_space: 'a', observation_space: 'o' },
    turns: [{ action: 'ls', observation: 'a.txt' }],
  }) as unknown as Trajectory;

function run(id: string, extra: Partial<RunRecord> = {}): RunRecord {
  return {
    id,
    name: id,
    createdAt: Date.now(),
    updatedAt: Date.now(),
    stage: 'sft',
    spec: { kind: 'train', stage: 'sft', preset: 'micro', steps: 8 },
    data: { datasetId: 'default', name: 'Default', trajectories: 1 },
    from: null,
    state: 'running',
    step: 0,
    checkpoints: {},
    resumes: [],
    ...extra,
  };
}

const bytesOf = (n: number, fill: number) => new Uint8Array(n).fill(fill);

async function checkpointRecords(runId: string): Promise<string[]> {
  const db = await openStudioDB();
  return db.getAllKeysFromIndex('checkpoints', 'byRun', runId);
}

beforeEach(async () => {
  await closeStudioDB();
  // A fresh, empty browser profile per test.
  globalThis.indexedDB = new IDBFactory();
});

afterEach(async () => {
  await closeStudioDB();
});

describe('database upgrade', () => {
  it('version 1 → current keeps datasets, chunks, templates and tokenizers and adds the run and bench stores', async () => {
    const v1 = await openDB(DB_NAME, 1, {
      upgrade(db) {
        db.createObjectStore('datasets', { keyPath: 'id' });
        db.createObjectStore('datasetChunks', { keyPath: ['datasetId', 'index'] });
        db.createObjectStore('templates', { keyPath: 'version' });
        db.createObjectStore('tokenizers', { keyPath: 'datasetId' });
      },
    });
    await v1.put('datasets', {
      id: 'd1',
      name: 'mine',
      createdAt: 1,
      origin: 'import',
      formats: ['native'],
      files: ['x.jsonl'],
      trajectories: 2,
      turns: 2,
      domains: ['terminal'],
      errorCount: 0,
      chunks: 1,
    });
    await v1.put('datasetChunks', { datasetId: 'd1', index: 0, trajectories: [traj('a'), traj('b')] });
    await v1.put('templates', { version: 'v3', parent: 'v2', note: 'mine', createdAt: 1, builtin: false, template: { version: 'v3' } });
    await v1.put('tokenizers', { datasetId: 'd1', vocabSize: 300, createdAt: 1, json: { merges: [] } });
    v1.close();

    const db = await openStudioDB();
    expect(db.version).toBe(DB_VERSION);
    expect([...db.objectStoreNames].sort()).toEqual([
      'benchResults',
      'benches',
      'checkpoints',
      'datasetChunks',
      'datasets',
      'experiments',
      'optimizations',
      'runMetrics',
      'runs',
      'templates',
      'tokenizers',
    ]);
    expect((await listDatasets()).map((d) => d.name)).toEqual(['mine']);
    expect((await loadTrajectories('d1')).map((t) => t.id)).toEqual(['a', 'b']);
    expect(await db.get('templates', 'v3')).toMatchObject({ note: 'mine' });
    expect(await db.get('tokenizers', 'd1')).toMatchObject({ vocabSize: 300 });
    await putRun(run('r1'));
    expect((await listRuns()).map((r) => r.id)).toEqual(['r1']);
  });
});

describe('runs and metrics', () => {
  it('merges metrics of a step, lists them in step order, and truncates after a step', async () => {
    await putRun(run('r'));
    await appendMetrics('r', [
      { step: 2, values: { loss: 2 } },
      { step: 1, values: { loss: 3 } },
      { step: 10, values: { loss: 1 } },
    ]);
    await appendMetrics('r', [{ step: 2, values: { eval_loss: 2.5 } }]);
    await putRun(run('other'));
    await appendMetrics('other', [{ step: 1, values: { loss: 9 } }]);
    expect((await loadMetrics('r')).map((m) => [m.step, m.values])).toEqual([
      [1, { loss: 3 }],
      [2, { loss: 2, eval_loss: 2.5 }],
      [10, { loss: 1 }],
    ]);
    await truncateMetrics('r', 2);
    expect((await loadMetrics('r')).map((m) => m.step)).toEqual([1, 2]);
    expect((await loadMetrics('other')).length).toBe(1);
    const updated = await updateRun('r', (r) => (r.state = 'paused'));
    expect(updated.state).toBe('paused');
    expect((await getRun('r'))?.state).toBe('paused');
  });

  it("records a run's end once: a late state write (pause, resume, the runner unwinding) does not reopen it", async () => {
    await putRun(run('e'));
    expect(await recordRunState('e', 'paused')).toMatchObject({ state: 'paused' });
    const lost = 'The GPU device was lost (destroyed): gone. The job stopped.';
    expect(await recordRunState('e', 'failed', lost)).toMatchObject({ state: 'failed', error: lost });
    for (const late of ['running', 'paused', 'stopping', 'done', 'stopped'] as const) await recordRunState('e', late);
    await recordRunState('e', 'failed', 'The job failed: mapAsync: OperationError');
    expect(await getRun('e')).toMatchObject({ state: 'failed', error: lost });
    // Only a new job moves it on (a resume writes its state directly).
    await updateRun('e', (r) => (r.state = 'running'));
    expect(await recordRunState('e', 'done')).toMatchObject({ state: 'done', error: undefined });
  });

  it('keeps the mask settings an SFT run trains with', async () => {
    const { maskConfig, DEFAULT_MASK_CONFIG } = await import('../core/masking/index.ts');
    const mask = maskConfig({ echoMinJaccard: 0.4, ratios: { echo: 0.1 } });
    await putRun(run('m', { spec: { kind: 'train', stage: 'sft', preset: 'micro', steps: 8, mask } }));
    await updateRun('m', (r) => (r.state = 'stopped'));
    expect(runMaskConfig((await getRun('m'))!)).toEqual(mask);
    expect(runMaskConfig(run('old'))).toEqual(DEFAULT_MASK_CONFIG);
    expect(runMaskConfig(run('c', { stage: 'cpt', spec: { kind: 'train', stage: 'cpt', preset: 'micro', steps: 8 } }))).toBeNull();
  });

  it('deleteRun removes the run, its metrics and its checkpoints, and nothing of other runs', async () => {
    await putRun(run('a'));
    await putRun(run('b'));
    await saveCheckpoint('a', 'last', bytesOf(10, 1), { step: 2 });
    await saveCheckpoint('b', 'last', bytesOf(10, 2), { step: 2 });
    await appendMetrics('a', [{ step: 1, values: { loss: 1 } }]);
    await deleteRun('a');
    expect(await getRun('a')).toBeUndefined();
    expect(await checkpointRecords('a')).toEqual([]);
    expect(await loadMetrics('a')).toEqual([]);
    expect(await loadCheckpointBytes((await getRun('b'))!.checkpoints.last!.key)).toEqual(bytesOf(10, 2));
  });
});

describe('atomic checkpoint replacement', () => {
  async function withPrevious() {
    await putRun(run('r'));
    const first = await saveCheckpoint('r', 'last', bytesOf(64, 1), { step: 2, evalLoss: 3 });
    return first;
  }

  it('replaces last: the new bytes load, the old record is gone', async () => {
    const first = await withPrevious();
    const second = await saveCheckpoint('r', 'last', bytesOf(64, 2), { step: 4 });
    const r = (await getRun('r'))!;
    expect(r.checkpoints.last).toEqual(second);
    expect(await loadCheckpointBytes(second.key)).toEqual(bytesOf(64, 2));
    expect(await checkpointRecords('r')).toEqual([second.key]);
    await expect(loadCheckpointBytes(first.key)).rejects.toThrow(/not in browser storage/);
  });

  it('an aborted write (tab closed mid-write) leaves the previous checkpoint current and whole', async () => {
    const first = await withPrevious();
    await expect(saveCheckpoint('r', 'last', bytesOf(64, 2), { step: 4 }, { afterPut: (tx) => tx.abort() })).rejects.toThrow();
    await closeStudioDB(); // as a reloaded page would: a new connection
    const r = (await getRun('r'))!;
    expect(r.checkpoints.last).toEqual(first);
    expect(await loadCheckpointBytes(r.checkpoints.last!.key)).toEqual(bytesOf(64, 1));
    expect(await checkpointRecords('r')).toEqual([first.key]);
  });

  it('a crash after the write but before the switch keeps the previous checkpoint; the orphan is collected', async () => {
    const first = await withPrevious();
    await expect(
      saveCheckpoint(
        'r',
        'last',
        bytesOf(64, 2),
        { step: 4 },
        {
          beforeSwitch: () => {
            throw new Error('crash');
          },
        },
      ),
    ).rejects.toThrow('crash');
    await closeStudioDB();
    const r = (await getRun('r'))!;
    expect(r.checkpoints.last).toEqual(first);
    expect(await loadCheckpointBytes(first.key)).toEqual(bytesOf(64, 1));
    expect((await checkpointRecords('r')).length).toBe(2);
    expect(await collectOrphans('r')).toBe(1);
    expect(await checkpointRecords('r')).toEqual([first.key]);
  });

  it('an aborted pointer switch keeps the previous checkpoint', async () => {
    const first = await withPrevious();
    await expect(saveCheckpoint('r', 'last', bytesOf(64, 2), { step: 4 }, { afterSwitch: (tx) => tx.abort() })).rejects.toThrow();
    const r = (await getRun('r'))!;
    expect(r.checkpoints.last).toEqual(first);
    expect(await loadCheckpointBytes(first.key)).toEqual(bytesOf(64, 1));
    await collectOrphans('r');
    expect(await checkpointRecords('r')).toEqual([first.key]);
  });

  it("'best' at the step of 'last' shares its record; each survives the other's replacement or deletion", async () => {
    await putRun(run('r'));
    const last = await saveCheckpoint('r', 'last', bytesOf(8, 1), { step: 2, evalLoss: 3 });
    const best = await saveCheckpoint('r', 'best', bytesOf(8, 1), { step: 2, evalLoss: 3 });
    expect(best.key).toBe(last.key);
    expect(await checkpointRecords('r')).toEqual([last.key]);
    const last2 = await saveCheckpoint('r', 'last', bytesOf(8, 2), { step: 4, evalLoss: 3.5 });
    expect((await checkpointRecords('r')).sort()).toEqual([last.key, last2.key].sort());
    expect(await loadCheckpointBytes((await getRun('r'))!.checkpoints.best!.key)).toEqual(bytesOf(8, 1));
    await deleteCheckpoint('r', 'best');
    expect(await checkpointRecords('r')).toEqual([last2.key]);
    expect((await getRun('r'))!.checkpoints).toEqual({ last: last2 });
  });
});

describe('a full quota', () => {
  /** Makes IndexedDB fail the way a browser does at its quota: the transaction aborts with QuotaExceededError. */
  function fillQuota(when: (store: string, value: unknown) => boolean): () => void {
    const proto = FDBObjectStore.prototype as unknown as { put: (...a: unknown[]) => unknown };
    const put = proto.put;
    proto.put = function (this: { name: string; transaction: { _abort(name: string): void } }, value: unknown, ...rest: unknown[]) {
      const req = put.call(this, value, ...rest);
      if (when(this.name, value)) this.transaction._abort('QuotaExceededError');
      return req;
    };
    return () => (proto.put = put);
  }

  it('a checkpoint that does not fit gives the storage-full message and loses nothing', async () => {
    await saveDataset({ id: 'd', name: 'data', createdAt: 1, origin: 'import', formats: ['native'], files: ['f'], errorCount: 0 }, [traj('a')]);
    await putRun(run('r'));
    const first = await saveCheckpoint('r', 'last', bytesOf(64, 1), { step: 2 });
    await appendMetrics('r', [{ step: 2, values: { loss: 1 } }]);
    const restore = fillQuota((store) => store === 'checkpoints' || store === 'runMetrics');
    try {
      const err = await saveCheckpoint('r', 'last', bytesOf(64, 2), { step: 4 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StorageFullError);
      expect((err as Error).message).toBe(STORAGE_FULL_MESSAGE);
      expect((err as Error).message).toMatch(/browser storage is full: delete old runs or checkpoints/i);
      await expect(appendMetrics('r', [{ step: 3, values: { loss: 0.5 } }])).rejects.toBeInstanceOf(StorageFullError);
    } finally {
      restore();
    }
    const r = (await getRun('r'))!;
    expect(r.checkpoints.last).toEqual(first);
    expect(await loadCheckpointBytes(first.key)).toEqual(bytesOf(64, 1));
    expect(await checkpointRecords('r')).toEqual([first.key]);
    expect((await loadMetrics('r')).map((m) => m.values)).toEqual([{ loss: 1 }]);
    expect((await loadTrajectories('d')).map((t) => t.id)).toEqual(['a']);
  });
});
