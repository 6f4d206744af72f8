// The browser's Hub cache (browser.ts) on a Cache Storage kept in memory, against the mock Hub on
// 127.0.0.1: a model downloaded with crypto.subtle's hashes checking every file, read back as Blobs
// with the fixture's bytes, found again with no request, a cut-off download resumed from the
// pieces kept (a Range request), wrong bytes refused and not kept; and the hashes against Node's.
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { browserHash, cacheHubStorage, describeHubCache, gitBlobSha1, hubCacheName, repoOfHubCache } from './browser.ts';
import { hubSnapshot, type HubProgress } from './download.ts';
import { HubError } from './errors.ts';
import type { HubSettings } from './settings.ts';
import { MemoryCaches } from './cacheStorage.testing.ts';
import { folderFiles, gitBlobId, startMockHub, type MockHub } from './testing.ts';

const TINY = fileURLToPath(new URL('../model/fixtures/hf/llama-chat', import.meta.url));
const tiny = folderFiles(TINY, { skip: ['generate.json'] });

let hub: MockHub;
let caches: MemoryCaches;

beforeAll(async () => {
  hub = await startMockHub([
    { repo: 'org/tiny', refs: { main: 0 }, commits: [tiny] },
    { repo: 'org/cut', refs: { main: 0 }, commits: [tiny], cutOnce: ['model.safetensors'] },
    { repo: 'org/corrupt', refs: { main: 0 }, commits: [tiny], corrupt: ['model.safetensors', 'config.json'] },
  ]);
});
afterAll(() => hub.close());
beforeEach(() => {
  caches = new MemoryCaches();
  hub.requests.length = 0;
});

const settings = (): HubSettings => ({ cacheDir: 'Cache Storage', endpoint: hub.endpoint, offline: false, token: null });
const storage = () => cacheHubStorage(caches as unknown as CacheStorage, { locks: null, pieceBytes: 64 << 10 });

async function hubError(p: Promise<unknown>): Promise<HubError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(HubError);
  return e as HubError;
}

describe('the browser hasher (crypto.subtle)', () => {
  it('gives the sha256 and git blob ids Node gives, over bytes fed in pieces', async () => {
    const bytes = tiny['model.safetensors'];
    const h = browserHash('sha256');
    for (let at = 0; at < bytes.length; at += 1000) h.update(bytes.subarray(at, at + 1000));
    expect(await h.digest()).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(await gitBlobSha1(tiny['config.json'])).toBe(gitBlobId(tiny['config.json']));
    expect(await gitBlobSha1(new Uint8Array())).toBe('e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'); // git's empty blob
  });
});

describe('the Hub cache in Cache Storage', () => {
  it('downloads a model into its cache, checks it, and reads it back as Blobs with the same bytes', async () => {
    const s = storage();
    const progress: HubProgress[] = [];
    const snap = await hubSnapshot(
      { repo: 'org/tiny', revision: 'main' },
      { settings: settings(), storage: s, hash: browserHash, progress: (p) => progress.push(p) },
    );
    expect(snap.commit).toBe(hub.commit('org/tiny', 0));
    expect(snap.downloaded).toBe(Object.values(tiny).reduce((a, b) => a + b.length, 0));
    expect(await caches.keys()).toEqual([hubCacheName('org/tiny')]);
    expect(repoOfHubCache(hubCacheName('org/tiny'))).toBe('org/tiny');
    expect(repoOfHubCache('other')).toBeNull();
    const blobs = await s.snapshotBlobs('org/tiny', snap.commit, snap.files);
    expect(blobs.map((b) => b.path).sort()).toEqual(Object.keys(tiny).sort());
    for (const b of blobs) expect(new Uint8Array(await b.blob.arrayBuffer())).toEqual(tiny[b.path]);
    // Bytes per file, ending at its size.
    const done = progress.filter((p) => p.phase === 'done');
    expect(done.map((p) => [p.path, p.done]).sort()).toEqual(
      Object.entries(tiny)
        .map(([p, b]) => [p, b.length])
        .sort(),
    );
    expect(await describeHubCache((await caches.open(hubCacheName('org/tiny'))) as unknown as Cache)).toEqual({
      refs: { main: snap.commit },
      commits: [snap.commit],
    });

    // Again, offline: the ref and the snapshot are found in the cache, with no request.
    hub.requests.length = 0;
    const again = await hubSnapshot(
      { repo: 'org/tiny', revision: 'main' },
      { settings: { ...settings(), offline: true }, storage: storage(), hash: browserHash },
    );
    expect(again).toMatchObject({ commit: snap.commit, downloaded: 0 });
    expect(hub.requests).toEqual([]);
  });

  it('resumes a cut-off download from the pieces it kept, with a Range request', async () => {
    const id = { repo: 'org/cut', revision: 'main' };
    const first = await hubError(hubSnapshot(id, { settings: settings(), storage: storage(), hash: browserHash }));
    expect(first.about).toBe('network');
    const cache = caches.caches.get(hubCacheName('org/cut'))!;
    const pieces = [...cache.entries.keys()].filter((k) => k.includes('.incomplete/'));
    expect(pieces.length).toBeGreaterThan(0);
    const kept = (await Promise.all(pieces.map((k) => cache.entries.get(k)!.size))).reduce((a, b) => a + b, 0);
    expect(kept).toBeGreaterThan(0);
    hub.requests.length = 0;
    const snap = await hubSnapshot(id, { settings: settings(), storage: storage(), hash: browserHash });
    const ranged = hub.requests.filter((r) => r.range !== null && r.server === 'cdn');
    expect(ranged.map((r) => r.range)).toEqual([`bytes=${kept}-`]);
    const [model] = await storage().snapshotBlobs('org/cut', snap.commit, ['model.safetensors']);
    expect(new Uint8Array(await model.blob.arrayBuffer())).toEqual(tiny['model.safetensors']);
    expect([...cache.entries.keys()].filter((k) => k.includes('.incomplete/'))).toEqual([]);
  });

  it('refuses wrong bytes (sha256 of an LFS file, git blob id of a regular one) and keeps nothing of them', async () => {
    const e = await hubError(hubSnapshot({ repo: 'org/corrupt', revision: 'main' }, { settings: settings(), storage: storage(), hash: browserHash }));
    expect(e.about).toBe('integrity');
    expect(e.message).toMatch(/config\.json: its sha1 is [0-9a-f]{40}, not/);
    // An id the Hub does not know leaves no cache behind.
    await hubError(hubSnapshot({ repo: 'org/nothing', revision: 'main' }, { settings: settings(), storage: storage(), hash: browserHash }));
    await hubError(
      hubSnapshot({ repo: 'org/nothing', revision: 'main' }, { settings: { ...settings(), offline: true }, storage: storage(), hash: browserHash }),
    );
    expect(await caches.keys()).toEqual([hubCacheName('org/corrupt')]);
    const cache = caches.caches.get(hubCacheName('org/corrupt'))!;
    expect([...cache.entries.keys()].some((k) => k.includes('.incomplete/') || k.endsWith(`/blobs/${gitBlobId(tiny['config.json'])}`))).toBe(false);
  });
});
