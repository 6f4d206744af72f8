// Property-based fuzzing of what the Hub sends: revision and tree listings (malformed JSON shapes,
// hostile file names such as `../x`, `/etc/passwd`, `a\b`, `C:x`, control characters, huge or
// negative sizes), a file's headers (ETag, X-Linked-Size, X-Repo-Commit), a shard index, and model
// ids. Every input is read or refused with a HubError; nothing read can name a file outside the
// snapshot folder or a size that is not a byte count. End to end, a Hub answering generated
// listings and headers leaves nothing outside the cache folder.
import fc from 'fast-check';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hubSnapshot } from './download.ts';
import { HubError } from './errors.ts';
import { parseHubId } from './id.ts';
import { fileMetadata, parseRevisionInfo, parseTreePage, safeRepoPath, shardsOfIndex } from './listing.ts';
import { nodeHash, nodeHubStorage } from './node.ts';

const SHA1 = 'a'.repeat(40);
const SHA256 = 'b'.repeat(64);

/** Returns what `f` gives, or the HubError it throws; any other error fails the property. */
function readOrRefuse<T>(f: () => T): T | HubError {
  try {
    return f();
  } catch (e) {
    if (!(e instanceof HubError)) throw e;
    return e;
  }
}

const hostileName = fc.oneof(
  fc.constantFrom(
    '../x',
    '../../etc/passwd',
    '/etc/passwd',
    'a/../../b',
    'a\\..\\b',
    'C:x',
    'C:\\x',
    '~/.ssh/id_rsa',
    './',
    '.',
    '..',
    '',
    'a//b',
    'a/',
    'x\u0000y',
    'x\ny',
    'con.',
    'a /b',
  ),
  fc.tuple(fc.constantFrom('../', '/', '\\', '\u0007'), fc.string()).map(([a, b]) => a + b),
);
const anyName = fc.oneof(hostileName, fc.string(), fc.constantFrom('config.json', 'model.safetensors', 'onnx/model.onnx'));
const anySize = fc.oneof(fc.integer({ min: 0, max: 1 << 30 }), fc.constantFrom(-1, 1.5, 2 ** 53, 1e300, Number.NaN, null, '12', {}), fc.anything());
const sibling = fc.record(
  {
    rfilename: anyName,
    size: anySize,
    blobId: fc.oneof(fc.constant(SHA1), fc.string()),
    lfs: fc.oneof(fc.constant(undefined), fc.record({ sha256: fc.oneof(fc.constant(SHA256), fc.string()), size: anySize }), fc.anything()),
  },
  { requiredKeys: [] },
);
const listing = fc.oneof(
  fc.anything(),
  fc.record({ sha: fc.oneof(fc.constant(SHA1), fc.string()), siblings: fc.oneof(fc.array(sibling, { maxLength: 6 }), fc.anything()) }, { requiredKeys: [] }),
);

describe('what the Hub sends, read or refused', () => {
  it('revision listings: files are safe paths with byte-count sizes, else a HubError', () => {
    fc.assert(
      fc.property(listing, (json) => {
        const r = readOrRefuse(() => parseRevisionInfo(json, 'org/x'));
        if (r instanceof HubError) return;
        expect(r.commit).toMatch(/^[0-9a-f]{40}$/);
        for (const f of r.files) {
          expect(safeRepoPath(f.path)).toBe(true);
          expect(f.path.split('/')).not.toContain('..');
          if (f.size !== null) expect(Number.isSafeInteger(f.size) && f.size >= 0).toBe(true);
          if (f.lfs) expect(f.lfs.sha256).toMatch(/^[0-9a-f]{64}$/);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('a hostile name anywhere in a listing refuses the listing', () => {
    fc.assert(
      fc.property(hostileName, fc.nat(3), (name, at) => {
        const siblings = ['config.json', 'model.safetensors', 'tokenizer.json'].map((rfilename) => ({ rfilename, size: 1 }));
        siblings.splice(Math.min(at, siblings.length), 0, { rfilename: name, size: 1 });
        const r = readOrRefuse(() => parseRevisionInfo({ sha: SHA1, siblings }, 'org/x'));
        expect(r).toBeInstanceOf(HubError);
        expect((r as HubError).about).toBe('listing');
        const tree = readOrRefuse(() => parseTreePage([{ type: 'file', path: name, oid: SHA1, size: 1 }], 'org/x'));
        expect(tree).toBeInstanceOf(HubError);
      }),
      { numRuns: 300 },
    );
  });

  it('tree pages and shard indexes', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.array(
            fc.record(
              { type: fc.constantFrom('file', 'directory', 'x'), path: anyName, oid: fc.constant(SHA1), size: anySize, lfs: fc.anything() },
              { requiredKeys: [] },
            ),
          ),
        ),
        (json) => {
          const r = readOrRefuse(() => parseTreePage(json, 'org/x'));
          if (!(r instanceof HubError)) for (const f of r) expect(safeRepoPath(f.path)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.record({ weight_map: fc.dictionary(fc.string(), anyName) })), (json) => {
        const r = readOrRefuse(() => shardsOfIndex(json, 'org/x'));
        if (!(r instanceof HubError)) for (const s of r) expect(safeRepoPath(s)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('headers: the etag is a hash, the size a byte count, the commit a sha, else a HubError', () => {
    const value = fc.oneof(fc.string(), fc.constantFrom(`"${SHA256}"`, `W/"${SHA1}"`, SHA1, '"../../x"', '12', '-1', '99999999999999999999', '1e3', ' 7 '));
    fc.assert(
      fc.property(
        fc.record({ 'x-linked-etag': value, etag: value, 'x-linked-size': value, 'content-length': value, 'x-repo-commit': value }, { requiredKeys: [] }),
        (h) => {
          let headers: Headers;
          try {
            headers = new Headers(h as Record<string, string>);
          } catch {
            return; // not a header value at all: fetch could not have given it
          }
          const r = readOrRefuse(() => fileMetadata(headers, 'org/x: f'));
          if (r instanceof HubError) return;
          if (r.etag !== null) expect(r.etag).toMatch(/^([0-9a-f]{40}|[0-9a-f]{64})$/);
          if (r.size !== null) expect(Number.isSafeInteger(r.size) && r.size >= 0).toBe(true);
          if (r.commit !== null) expect(r.commit).toMatch(/^[0-9a-f]{40}$/);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('model ids: an id with a safe repo and revision, a path (null), or a HubError', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.tuple(fc.string(), fc.constantFrom('/', '@', '/../', '--', '..'), fc.string()).map((p) => p.join('')),
        ),
        (s) => {
          const r = readOrRefuse(() => parseHubId(s));
          if (r === null || r instanceof HubError) return;
          expect(r.repo).toMatch(/^[A-Za-z0-9][\w\-.]*\/[A-Za-z0-9][\w\-.]*$/);
          expect(r.repo).not.toMatch(/\.\.|--/);
          expect(r.revision.split('/')).not.toContain('..');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('end to end: a Hub answering generated listings and headers writes nothing outside the cache', async () => {
    const root = await mkdtemp(join(tmpdir(), 'lwm-hub-fuzz-'));
    try {
      const cache = join(root, 'cache');
      await fc.assert(
        fc.asyncProperty(
          listing,
          fc.record({ etag: fc.oneof(fc.constant(`"${SHA1}"`), fc.string()), size: fc.oneof(fc.constant('5'), fc.string()) }),
          async (json, h) => {
            const fetchFake = (async (url: string | URL | Request) => {
              const u = String(url);
              if (u.includes('/api/models/')) return new Response(JSON.stringify(json), { status: 200 });
              const headers: Record<string, string> = {};
              try {
                new Headers({ etag: h.etag, 'content-length': h.size });
                headers.etag = h.etag;
              } catch {
                // not a header value: left out
              }
              return new Response('hello', { status: 200, headers });
            }) as typeof fetch;
            const r = await hubSnapshot(
              { repo: 'org/x', revision: 'main' },
              {
                settings: { cacheDir: cache, endpoint: 'http://127.0.0.1:1', offline: false, token: null },
                storage: nodeHubStorage(cache),
                hash: nodeHash,
                fetch: fetchFake,
              },
            ).catch((e: unknown) => {
              if (!(e instanceof HubError)) throw e;
              return e;
            });
            if (!(r instanceof HubError)) expect(r.location.startsWith(join(cache, 'models--org--x', 'snapshots'))).toBe(true);
            const top = await readdir(root);
            expect(top).toEqual(top.length ? ['cache'] : []);
          },
        ),
        { numRuns: 150 },
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
