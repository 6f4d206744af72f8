// A Hugging Face Hub of our own on 127.0.0.1, for tests and for checking against huggingface_hub
// and transformers by hand (scripts/mock-hub.ts starts it alone). It speaks the Hub's protocol as
// huggingface_hub reads it: the revision API (`/api/models/{repo}/revision/{rev}`, `?blobs=true`
// for sizes and LFS hashes), the tree API (`/api/models/{repo}/tree/{rev}`), and
// `/{repo}/resolve/{rev}/{path}`, which redirects a regular file relatively to
// `/api/resolve-cache/models/{repo}/{commit}/{path}` (ETag: its git blob id) and an LFS file
// (*.safetensors) with a 302 to a second server, the "CDN" (X-Linked-Etag: its sha256,
// X-Linked-Size), which answers Range requests. Both listen on 127.0.0.1; the CDN is named
// `localhost` in redirects, another host name as huggingface_hub tells a CDN from the Hub (it
// follows a HEAD's redirect on the same host name only). It can cut a file off midway once, give a
// file a wrong size or wrong bytes, and keep a repo gated behind a token. It sends the Hub's CORS
// headers, so the app in a browser can use it too. Tests only.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface MockRepo {
  /** `org/name`. */
  repo: string;
  /** Branch and tag names → the index of a commit in `commits`. */
  refs: Record<string, number>;
  /** Each commit's files (path → bytes); its sha is made from its contents. */
  commits: Record<string, Uint8Array>[];
  /** Files are served only to `Authorization: Bearer {gatedToken}` (401 GatedRepo without one, 403 with another). */
  gatedToken?: string;
  /** Paths whose first GET is cut off after half the bytes. */
  cutOnce?: string[];
  /** Paths whose first GET stops sending after half the bytes and keeps the connection open. */
  stallOnce?: string[];
  /** Paths the listing and headers say are 7 bytes longer than they are. */
  wrongSize?: string[];
  /** Paths served with one byte changed (the right size, the wrong hash). */
  corrupt?: string[];
}

export interface MockRequest {
  server: 'hub' | 'cdn';
  method: string;
  path: string;
  range: string | null;
  /** Whether an Authorization header came (its value is never recorded). */
  auth: boolean;
}

export interface MockHub {
  endpoint: string;
  requests: MockRequest[];
  /** Set: every API request (listings) answers 503, as a Hub having trouble. */
  apiDown: boolean;
  /** The sha of commit `i` of `repo`. */
  commit(repo: string, i: number): string;
  close(): Promise<void>;
}

const LFS = (path: string) => path.endsWith('.safetensors');

export function gitBlobId(bytes: Uint8Array): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The files of a fixture folder (top level), optionally renamed or left out. */
export function folderFiles(dir: string, o: { skip?: string[] } = {}): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  for (const name of readdirSync(dir).sort()) if (!o.skip?.includes(name)) out[name] = new Uint8Array(readFileSync(join(dir, name)));
  return out;
}

interface Commit {
  sha: string;
  files: Record<string, Uint8Array>;
}

function commitSha(repo: string, i: number, files: Record<string, Uint8Array>): string {
  const h = createHash('sha1').update(`${repo}\0${i}\0`);
  for (const [p, b] of Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1))) h.update(`${p}\0${gitBlobId(b)}\0`);
  return h.digest('hex');
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

/** `bytes=N-` or `bytes=N-M`: the start and end (exclusive) within `size`, or null. */
function parseRange(h: string | undefined, size: number): [number, number] | null {
  const m = h && /^bytes=(\d+)-(\d*)$/.exec(h.trim());
  if (!m) return null;
  const start = Number(m[1]);
  const end = m[2] ? Math.min(size, Number(m[2]) + 1) : size;
  return start < size && start < end ? [start, end] : null;
}

/**
 * The CORS headers huggingface.co sends, so a page on another origin (the app's end-to-end tests)
 * can read the answers; a preflight (OPTIONS) is answered here and not recorded. True when answered.
 */
function cors(req: IncomingMessage, res: ServerResponse): boolean {
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader(
    'access-control-expose-headers',
    'x-repo-commit, x-linked-etag, x-linked-size, x-error-code, x-error-message, etag, content-range, content-length, location',
  );
  if (req.method !== 'OPTIONS') return false;
  res.writeHead(204, {
    'access-control-allow-methods': 'GET, HEAD',
    'access-control-allow-headers': 'authorization, range',
    'access-control-max-age': '600',
  });
  res.end();
  return true;
}

export async function startMockHub(repos: MockRepo[], o: { port?: number; cdnPort?: number } = {}): Promise<MockHub> {
  const requests: MockRequest[] = [];
  const mock = { apiDown: false } as MockHub;
  const table = new Map<string, { repo: MockRepo; commits: Commit[] }>();
  for (const r of repos) table.set(r.repo, { repo: r, commits: r.commits.map((files, i) => ({ sha: commitSha(r.repo, i, files), files })) });
  const cut = new Set<string>();
  // The CDN's objects by repo and sha256 (the same bytes in two repos are two objects, each with its repo's faults).
  const lfsObjects = new Map<string, { bytes: Uint8Array; repo: MockRepo; path: string }>();
  for (const { repo, commits } of table.values())
    for (const c of commits) for (const [p, b] of Object.entries(c.files)) if (LFS(p)) lfsObjects.set(`${repo.repo}/${sha256(b)}`, { bytes: b, repo, path: p });

  const served = (repo: MockRepo, path: string, bytes: Uint8Array): Uint8Array => {
    if (!repo.corrupt?.includes(path)) return bytes;
    const copy = bytes.slice();
    copy[copy.length >> 1] ^= 0xff;
    return copy;
  };
  const faultOf = (repo: MockRepo, path: string) =>
    repo.cutOnce?.includes(path) || repo.stallOnce?.includes(path) ? { key: `${repo.repo}/${path}`, stall: !!repo.stallOnce?.includes(path) } : null;
  const claimed = (repo: MockRepo, path: string, bytes: Uint8Array) => bytes.length + (repo.wrongSize?.includes(path) ? 7 : 0);

  /** Serves bytes with Range support; the first GET of a cut-off path stops halfway (closing, or stalling with the connection open). */
  function sendBytes(
    req: IncomingMessage,
    res: ServerResponse,
    bytes: Uint8Array,
    headers: Record<string, string>,
    fault: { key: string; stall: boolean } | null,
  ): void {
    const range = parseRange(req.headers.range, bytes.length);
    const [start, end] = range ?? [0, bytes.length];
    res.writeHead(range ? 206 : 200, {
      ...headers,
      'accept-ranges': 'bytes',
      'content-length': String(end - start),
      ...(range && { 'content-range': `bytes ${start}-${end - 1}/${bytes.length}` }),
    });
    if (req.method === 'HEAD') return void res.end();
    if (fault !== null && !cut.has(fault.key)) {
      cut.add(fault.key);
      const half = start + ((end - start) >> 1);
      res.write(bytes.subarray(start, half), () => fault.stall || res.destroy());
      return;
    }
    res.end(bytes.subarray(start, end));
  }

  function error(res: ServerResponse, status: number, code: string, message: string): void {
    res.writeHead(status, { 'content-type': 'application/json', 'x-error-code': code, 'x-error-message': message });
    res.end(JSON.stringify({ error: message }));
  }

  function lookup(repoName: string, rev: string) {
    const entry = table.get(repoName);
    if (!entry) return { status: 'no-repo' as const };
    const i = entry.repo.refs[rev];
    const c = i !== undefined ? entry.commits[i] : entry.commits.find((x) => x.sha === rev);
    return c ? { status: 'ok' as const, entry, c } : { status: 'no-rev' as const };
  }

  let cdnOrigin = '';
  const hub = createServer((req, res) => {
    if (cors(req, res)) return;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = decodeURIComponent(url.pathname);
    requests.push({
      server: 'hub',
      method: req.method ?? '',
      path: url.pathname + url.search,
      range: req.headers.range ?? null,
      auth: !!req.headers.authorization,
    });
    let m = /^\/api\/models\/([^/]+\/[^/]+)\/(revision|tree)\/(.+?)(?:\/)?$/.exec(url.pathname);
    if (m && req.method === 'GET' && mock.apiDown) return error(res, 503, 'ServiceUnavailable', 'Service temporarily unavailable');
    if (m && req.method === 'GET') {
      const found = lookup(decodeURIComponent(m[1]), decodeURIComponent(m[3]));
      if (found.status === 'no-repo') return error(res, 401, 'RepoNotFound', 'Repository not found');
      if (found.status === 'no-rev') return error(res, 404, 'RevisionNotFound', 'Invalid rev id');
      const { entry, c } = found;
      const files = Object.entries(c.files).sort(([a], [b]) => (a < b ? -1 : 1));
      const lfs = (p: string, b: Uint8Array) => (LFS(p) ? { size: claimed(entry.repo, p, b), pointerSize: 134 } : null);
      res.writeHead(200, { 'content-type': 'application/json' });
      if (m[2] === 'tree')
        return res.end(
          JSON.stringify(
            files.map(([p, b]) => ({
              type: 'file',
              oid: gitBlobId(b),
              size: claimed(entry.repo, p, b),
              path: p,
              ...(LFS(p) && { lfs: { ...lfs(p, b), oid: sha256(b) } }),
            })),
          ),
        );
      const blobs = url.searchParams.get('blobs') === 'true' || url.searchParams.get('blobs') === 'True';
      return res.end(
        JSON.stringify({
          _id: entry.repo.repo,
          id: entry.repo.repo,
          modelId: entry.repo.repo,
          sha: c.sha,
          private: false,
          gated: entry.repo.gatedToken ? 'manual' : false,
          disabled: false,
          tags: [],
          siblings: files.map(([p, b]) =>
            blobs
              ? { rfilename: p, size: claimed(entry.repo, p, b), blobId: gitBlobId(b), ...(LFS(p) && { lfs: { ...lfs(p, b), sha256: sha256(b) } }) }
              : { rfilename: p },
          ),
        }),
      );
    }
    m = /^\/api\/resolve-cache\/models\/([^/]+\/[^/]+)\/([0-9a-f]{40})\/(.+)$/.exec(path);
    const r = m ? null : /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    if ((m || r) && (req.method === 'GET' || req.method === 'HEAD')) {
      const [, repoName, rev, file] = (m ?? r)!;
      const found = lookup(repoName, rev);
      if (found.status === 'no-repo') return error(res, 401, 'RepoNotFound', 'Repository not found');
      if (found.status === 'no-rev') return error(res, 404, 'RevisionNotFound', 'Invalid rev id');
      const { entry, c } = found;
      const gate = entry.repo.gatedToken;
      if (gate !== undefined) {
        const given = req.headers.authorization;
        if (!given) return error(res, 401, 'GatedRepo', 'Access to model is restricted. You must have access to it and be authenticated.');
        if (given !== `Bearer ${gate}`) return error(res, 403, 'GatedRepo', 'Access to model is restricted and you are not in the authorized list.');
      }
      const bytes = c.files[file];
      if (!bytes) return error(res, 404, 'EntryNotFound', 'Entry not found');
      const common = { 'x-repo-commit': c.sha };
      if (LFS(file)) {
        res.writeHead(302, {
          ...common,
          location: `${cdnOrigin}/lfs/${repoName}/${sha256(bytes)}`,
          'x-linked-etag': `"${sha256(bytes)}"`,
          'x-linked-size': String(claimed(entry.repo, file, bytes)),
          etag: `"${gitBlobId(bytes)}"`,
          'content-length': '0',
        });
        return res.end();
      }
      if (r) {
        res.writeHead(307, {
          ...common,
          location: `/api/resolve-cache/models/${repoName}/${c.sha}/${encodeURI(file)}`,
          etag: `"${gitBlobId(bytes)}"`,
          'content-length': '0',
        });
        return res.end();
      }
      return sendBytes(req, res, served(entry.repo, file, bytes), { ...common, etag: `"${gitBlobId(bytes)}"` }, faultOf(entry.repo, file));
    }
    error(res, 404, 'NotFound', `no route ${url.pathname}`);
  });
  const cdn = createServer((req, res) => {
    if (cors(req, res)) return;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push({ server: 'cdn', method: req.method ?? '', path: url.pathname, range: req.headers.range ?? null, auth: !!req.headers.authorization });
    const m = /^\/lfs\/([^/]+\/[^/]+)\/([0-9a-f]{64})$/.exec(url.pathname);
    const obj = m && lfsObjects.get(`${m[1]}/${m[2]}`);
    if (!obj || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404);
      return res.end();
    }
    sendBytes(req, res, served(obj.repo, obj.path, obj.bytes), { etag: `"${m![2]}"` }, faultOf(obj.repo, obj.path));
  });
  const port = await listen(hub, o.port ?? 0);
  cdnOrigin = `http://localhost:${await listen(cdn, o.cdnPort ?? 0)}`;
  const endpoint = `http://127.0.0.1:${port}`;
  Object.assign(mock, {
    endpoint,
    requests,
    commit: (repo: string, i: number) => table.get(repo)!.commits[i].sha,
    close: () =>
      Promise.all(
        [hub, cdn].map(
          (s) =>
            new Promise<void>((resolve) => {
              s.closeAllConnections();
              s.close(() => resolve());
            }),
        ),
      ).then(() => undefined),
  });
  return mock;
}

/** What a test file that runs commands against the mock Hub holds: the Hub and the temporary folder of its cache. */
export interface MockHubEnv {
  hub: MockHub;
  root: string;
  /** Start the Hub and point HF_ENDPOINT, HF_HOME and HF_HUB_CACHE at it and a fresh folder (no token, online). */
  start(): Promise<void>;
  /** Put the environment back, stop the Hub and remove the folder. */
  stop(): Promise<void>;
}

/** The mock Hub as a test file's environment: `start()` in beforeAll, `stop()` in afterAll. */
export function mockHubEnv(repos: MockRepo[], prefix: string): MockHubEnv {
  const saved = { ...process.env };
  const env: MockHubEnv = {
    hub: null as unknown as MockHub,
    root: '',
    async start() {
      env.hub = await startMockHub(repos);
      env.root = await mkdtemp(join(tmpdir(), prefix));
      for (const k of ['HF_TOKEN', 'HF_HUB_OFFLINE', 'TRANSFORMERS_OFFLINE', 'HF_TOKEN_PATH', 'HUGGINGFACE_HUB_CACHE']) delete process.env[k];
      Object.assign(process.env, { HF_ENDPOINT: env.hub.endpoint, HF_HOME: join(env.root, 'hf'), HF_HUB_CACHE: join(env.root, 'hub') });
    },
    async stop() {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
      await env.hub?.close();
      if (env.root) await rm(env.root, { recursive: true, force: true });
    },
  };
  return env;
}
