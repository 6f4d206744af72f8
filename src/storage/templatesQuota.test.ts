// Template versions and the viewer's tokenizer cache at a full quota: the storage-full message
// the runs and datasets give, and nothing half-written.
import 'fake-indexeddb/auto';
import { IDBFactory, IDBObjectStore as FDBObjectStore } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeStudioDB } from './db.ts';
import { STORAGE_FULL_MESSAGE, StorageFullError } from './runs.ts';
import { addTemplateVersion, getCachedTokenizer, listTemplateVersions, putCachedTokenizer } from './templates.ts';
import { BUILTIN_TEMPLATES } from '../core/templates/index.ts';
import { Tokenizer } from '../core/tokenizer/index.ts';

/** Makes `put` / `add` fail the way a browser does at its quota: the transaction aborts with QuotaExceededError. */
function fillQuota(): () => void {
  const proto = FDBObjectStore.prototype as unknown as Record<'put' | 'add', (...a: unknown[]) => unknown>;
  const saved = { put: proto.put, add: proto.add };
  for (const k of ['put', 'add'] as const) {
    proto[k] = function (this: { transaction: { _abort(name: string): void } }, ...args: unknown[]) {
      const req = saved[k].apply(this, args);
      this.transaction._abort('QuotaExceededError');
      return req;
    };
  }
  return () => Object.assign(proto, saved);
}

async function atFullQuota<T>(f: () => Promise<T>): Promise<unknown> {
  const restore = fillQuota();
  try {
    return await f().catch((e: unknown) => e);
  } finally {
    restore();
  }
}

beforeEach(async () => {
  await closeStudioDB();
  globalThis.indexedDB = new IDBFactory();
});
afterEach(async () => {
  await closeStudioDB();
});

describe('template versions and tokenizer cache at a full quota', () => {
  it('a new template version gives the storage-full message and is not stored', async () => {
    await listTemplateVersions();
    const err = await atFullQuota(() =>
      addTemplateVersion({ version: 'v9', parent: 'v0', note: '', createdAt: 1, builtin: false, template: { ...BUILTIN_TEMPLATES.v0, version: 'v9' } }),
    );
    expect(err).toBeInstanceOf(StorageFullError);
    expect((await listTemplateVersions()).map((v) => v.version)).not.toContain('v9');
    // A name taken is still its own error.
    await expect(addTemplateVersion({ version: 'v0', parent: null, note: '', createdAt: 1, builtin: false, template: BUILTIN_TEMPLATES.v0 })).rejects.toThrow(
      'already exists',
    );
  });

  it('a tokenizer cache write gives the storage-full message', async () => {
    const err = await atFullQuota(() => putCachedTokenizer('d1', 300, new Tokenizer([]).toJSON()));
    expect((err as Error).message).toBe(STORAGE_FULL_MESSAGE);
    expect(await getCachedTokenizer('d1')).toBeUndefined();
  });
});
