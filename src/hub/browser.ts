// The Hub's cache in a browser: huggingface_hub's layout (storage.ts) kept in Cache Storage, one
// cache per repo named `lwm-hub:models--{org}--{name}` (src/core/hubCache.ts), its entries keyed by the cache's paths
// under a fixed URL that is never fetched (`https://hub-cache.invalid/blobs/{etag}`,
// `refs/{revision}`, `snapshots/{commit}/{path}`). A blob is one entry (a disk-backed Response);
// a snapshot file's entry holds its blob's etag (the link); a download under way is
// `blobs/{etag}.incomplete/{n}`, one entry per flushed piece, so a cut-off download resumes after
// the pieces kept. Cache Storage rather than the origin private file system: it keeps a Blob the
// worker reads as it is (no copy), every browser with WebGPU has it in windows and workers alike,
// and the System view's storage card already lists and deletes its caches. Web APIs only
// (Cache Storage, crypto.subtle, navigator.locks when there); the page's own code never fetches
// these keys.
import { HUB_CACHE_KEY_BASE, hubCacheName, hubCachePath } from '../core/hubCache.ts';
import { HubError } from './errors.ts';
import type { HashFactory, HubStorage, PartialBlob } from './storage.ts';

export { describeHubCache, HUB_CACHE_PREFIX, hubCacheName, repoOfHubCache } from '../core/hubCache.ts';

/** Bytes a partial download holds in memory before it writes them as a piece (a cut-off download keeps the pieces written). */
const PIECE_BYTES = 4 << 20;

const key = (path: string) => HUB_CACHE_KEY_BASE + path.split('/').map(encodeURIComponent).join('/');
const pathOf = (url: string) => hubCachePath(url) ?? '';

/**
 * sha256 and sha1 with crypto.subtle: it hashes whole buffers only, so the bytes are held until
 * digest() (a file's size in memory once, at its end).
 */
export const browserHash: HashFactory = (algorithm) => {
  const chunks: Uint8Array[] = [];
  let total = 0;
  return {
    update(bytes) {
      chunks.push(bytes.slice());
      total += bytes.length;
    },
    async digest() {
      const all = new Uint8Array(total);
      let at = 0;
      for (const c of chunks) {
        all.set(c, at);
        at += c.length;
      }
      const d = await crypto.subtle.digest(algorithm === 'sha256' ? 'SHA-256' : 'SHA-1', all);
      return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, '0')).join('');
    },
  };
};

/** The git blob id of a file (sha1 of `blob {size}\0` and its bytes), as the Hub names a regular file. */
export async function gitBlobSha1(bytes: Uint8Array): Promise<string> {
  const h = browserHash('sha1');
  h.update(new TextEncoder().encode(`blob ${bytes.length}\0`));
  h.update(bytes);
  return h.digest();
}

/** One lock a name in this page (or worker) when navigator.locks is missing. */
const localLocks = new Map<string, Promise<void>>();

async function localLock(name: string): Promise<() => Promise<void>> {
  for (let held = localLocks.get(name); held; held = localLocks.get(name)) await held;
  let release!: () => void;
  localLocks.set(
    name,
    new Promise<void>((r) => {
      release = r;
    }),
  );
  return async () => {
    localLocks.delete(name);
    release();
  };
}

interface Locks {
  request(name: string, options: { signal?: AbortSignal }, cb: () => Promise<void>): Promise<unknown>;
}

function storageError(repo: string, e: unknown): HubError {
  const quota = (e as DOMException).name === 'QuotaExceededError';
  return new HubError(
    `${repo}: cannot keep the model in this browser's storage (${quota ? 'the storage quota is full: free some in the System view' : (e as Error).message})`,
    'storage',
  );
}

export interface CacheHubStorage extends HubStorage {
  /** The bytes of each file of a snapshot, as Blobs (disk-backed where the browser keeps them so). */
  snapshotBlobs(repo: string, commit: string, paths: readonly string[]): Promise<{ path: string; blob: Blob }[]>;
}

/** huggingface_hub's cache layout in `caches` (the page's or a worker's Cache Storage; a fake in tests). */
export function cacheHubStorage(caches: CacheStorage, o: { locks?: Locks | null; pieceBytes?: number } = {}): CacheHubStorage {
  const pieceBytes = o.pieceBytes ?? PIECE_BYTES;
  const open = (repo: string) => caches.open(hubCacheName(repo));
  /** The repo's cache when there is one: reading never creates an empty cache (an unknown id leaves nothing behind). */
  const existing = async (repo: string): Promise<Cache | null> => ((await caches.has(hubCacheName(repo))) ? open(repo) : null);
  const match = async (repo: string, url: string) => (await existing(repo))?.match(url);
  const text = async (repo: string, path: string): Promise<string | null> => {
    const res = await match(repo, key(path));
    return res ? (await res.text()).trim() : null;
  };
  const put = async (repo: string, path: string, body: BodyInit) => {
    try {
      await (await open(repo)).put(key(path), new Response(body));
    } catch (e) {
      throw storageError(repo, e);
    }
  };
  const blobOf = async (repo: string, etag: string): Promise<Blob | null> => {
    const res = await match(repo, key(`blobs/${etag}`));
    return res ? res.blob() : null;
  };
  /** The pieces of a download under way, in order. */
  const pieces = async (repo: string, etag: string): Promise<{ url: string; n: number }[]> => {
    const prefix = key(`blobs/${etag}.incomplete/`);
    const out: { url: string; n: number }[] = [];
    for (const req of await (await open(repo)).keys()) {
      if (!req.url.startsWith(prefix)) continue;
      const n = Number(req.url.slice(prefix.length));
      if (Number.isInteger(n) && n >= 0) out.push({ url: req.url, n });
    }
    return out.sort((a, b) => a.n - b.n);
  };
  const locks = o.locks === undefined ? ((globalThis.navigator as { locks?: Locks } | undefined)?.locks ?? null) : o.locks;

  return {
    readRef: (repo, revision) => text(repo, `refs/${revision}`),
    writeRef: (repo, revision, commit) => put(repo, `refs/${revision}`, commit),
    async hasSnapshotFile(repo, commit, path) {
      const etag = await text(repo, `snapshots/${commit}/${path}`);
      return etag !== null && (await match(repo, key(`blobs/${etag}`))) !== undefined;
    },
    async snapshotFiles(repo, commit) {
      const prefix = key(`snapshots/${commit}/`);
      const files: string[] = [];
      for (const req of (await (await existing(repo))?.keys()) ?? [])
        if (req.url.startsWith(prefix)) files.push(pathOf(req.url).slice(`snapshots/${commit}/`.length));
      return files.length ? files.sort() : null;
    },
    async readSnapshotFile(repo, commit, path) {
      const etag = await text(repo, `snapshots/${commit}/${path}`);
      const blob = etag === null ? null : await blobOf(repo, etag);
      if (!blob) throw new HubError(`${repo}: ${path} is not in the browser's cache`, 'storage');
      return new Uint8Array(await blob.arrayBuffer());
    },
    async blobSize(repo, etag) {
      return (await blobOf(repo, etag))?.size ?? null;
    },
    async partial(repo, etag) {
      const cache = await open(repo);
      let kept = await pieces(repo, etag);
      let size = 0;
      for (const p of kept) size += (await (await cache.match(p.url))!.blob()).size;
      let buffer: Uint8Array[] = [];
      let buffered = 0;
      let next = kept.length ? kept[kept.length - 1].n + 1 : 0;
      const flush = async () => {
        if (!buffered) return;
        const url = key(`blobs/${etag}.incomplete/${next}`);
        const body = new Blob(buffer as BlobPart[]);
        buffer = [];
        buffered = 0;
        try {
          await cache.put(url, new Response(body));
        } catch (e) {
          throw storageError(repo, e);
        }
        kept.push({ url, n: next++ });
      };
      const drop = async () => {
        buffer = [];
        buffered = 0;
        for (const p of await pieces(repo, etag)) await cache.delete(p.url);
        kept = [];
        size = 0;
      };
      const part: PartialBlob = {
        get size() {
          return size;
        },
        async *read() {
          for (const p of kept) {
            const res = await cache.match(p.url);
            if (res) yield new Uint8Array(await res.arrayBuffer());
          }
        },
        truncate: drop,
        async append(chunk) {
          buffer.push(chunk.slice());
          buffered += chunk.length;
          size += chunk.length;
          if (buffered >= pieceBytes) await flush();
        },
        async complete() {
          await flush();
          const parts: Blob[] = [];
          for (const p of kept) parts.push(await (await cache.match(p.url))!.blob());
          await put(repo, `blobs/${etag}`, new Blob(parts));
          await drop();
        },
        discard: drop,
        close: flush,
      };
      return part;
    },
    async lock(repo, etag, signal) {
      const name = `${hubCacheName(repo)}/blobs/${etag}`;
      if (!locks) return localLock(name);
      return new Promise((resolve, reject) => {
        locks.request(name, signal ? { signal } : {}, () => new Promise<void>((done) => resolve(async () => done()))).catch(reject);
      });
    },
    link: (repo, commit, path, etag) => put(repo, `snapshots/${commit}/${path}`, etag),
    snapshotLocation: (repo, commit) => `${hubCacheName(repo)} (Cache Storage), snapshot ${commit}`,
    async snapshotBlobs(repo, commit, paths) {
      const out: { path: string; blob: Blob }[] = [];
      for (const path of paths) {
        const etag = await text(repo, `snapshots/${commit}/${path}`);
        const blob = etag === null ? null : await blobOf(repo, etag);
        if (!blob) throw new HubError(`${repo}: ${path} is not in the browser's cache; fetch the model again`, 'storage');
        out.push({ path, blob });
      }
      return out;
    },
  };
}
