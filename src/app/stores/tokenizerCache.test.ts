// The Trajectories view's tokenizer when its cache cannot be written (a full quota): it keeps
// working and says, with the storage-full message the runs give, that it was not cached.
import 'fake-indexeddb/auto';
import { IDBFactory, IDBObjectStore as FDBObjectStore } from 'fake-indexeddb';
import { describe, expect, it, vi } from 'vitest';
import { STORAGE_FULL_MESSAGE } from '../../storage/runs.ts';
import { Tokenizer } from '../../core/tokenizer/index.ts';

vi.mock('./bpe.worker.ts?worker', () => ({ default: class {} }));
vi.mock('./bpeRun.ts', () => ({ trainInWorker: async () => new Tokenizer([]).toJSON() }));

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

describe('viewer tokenizer cache at a full quota', () => {
  it("the Trajectories view's tokenizer keeps working and says it could not be cached", async () => {
    globalThis.indexedDB = new IDBFactory();
    const { useTokenizerStore, MIN_BPE_CHARS } = await import('./tokenizer.ts');
    const restore = fillQuota();
    try {
      const turns = [{ action: 'x'.repeat(MIN_BPE_CHARS), observation: 'y' }];
      useTokenizerStore.getState().ensure('big', [{ id: 't', domain: 'os', system_prompt: {} as never, turns }]);
      await vi.waitFor(() => expect(useTokenizerStore.getState().error).not.toBeNull());
    } finally {
      restore();
    }
    expect(useTokenizerStore.getState()).toMatchObject({ kind: 'bpe', error: `not cached for the next visit: ${STORAGE_FULL_MESSAGE}` });
  });
});
