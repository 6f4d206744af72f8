// The Hub downloader against a mock Hub on 127.0.0.1 (src/hub/testing.ts) serving the tiny
// Hugging Face fixture folders: huggingface_hub's cache layout (refs, relative snapshot links,
// blobs named by sha256 or git blob id), no second download, branch, tag and commit revisions,
// offline mode, a download cut off and resumed with a Range request, a wrong size and wrong bytes
// refused and not cached, a gated repo and its token (never sent to the LFS host), a sharded
// model, and clean errors for an unknown repo, revision or endpoint.
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HubError } from './errors.ts';
import { hubSnapshot } from './download.ts';
import { nodeHash, nodeHubSettings, nodeHubStorage, progressLines, resolveHubPath } from './node.ts';
import { folderFiles, gitBlobId, startMockHub, type MockHub } from './testing.ts';

const TINY = fileURLToPath(new URL('../model/fixtures/hf/llama-chat', import.meta.url));
const SHARDED = fileURLToPath(new URL('../model/hf/fixtures/safetensors/sharded-f16', import.meta.url));
const tiny = folderFiles(TINY, { skip: ['generate.json'] });
const changed: Record<string, Uint8Array> = { ...tiny, 'generation_config.json': new TextEncoder().encode('{"max_new_tokens": 7}\n') };
const TOKEN = 'hf_test_secret_token_123';

let hub: MockHub;
let root: string;
let cache: string;

beforeAll(async () => {
  hub = await startMockHub([
    { repo: 'org/tiny', refs: { main: 1, v1: 0 }, commits: [tiny, changed] },
    { repo: 'org/cut', refs: { main: 0 }, commits: [tiny], cutOnce: ['model.safetensors', 'tokenizer.json'] },
    { repo: 'org/stall', refs: { main: 0 }, commits: [tiny], stallOnce: ['model.safetensors'] },
    { repo: 'org/wrong-size', refs: { main: 0 }, commits: [tiny], wrongSize: ['model.safetensors'] },
    { repo: 'org/corrupt', refs: { main: 0 }, commits: [tiny], corrupt: ['model.safetensors'] },
    { repo: 'org/corrupt-json', refs: { main: 0 }, commits: [tiny], corrupt: ['config.json'] },
    { repo: 'org/gated', refs: { main: 0 }, commits: [tiny], gatedToken: TOKEN },
    { repo: 'org/sharded', refs: { main: 0 }, commits: [folderFiles(SHARDED)] },
  ]);
  root = await mkdtemp(join(tmpdir(), 'lwm-hub-'));
});

afterAll(async () => {
  await hub.close();
  await rm(root, { recursive: true, force: true });
});

beforeEach(async () => {
  cache = join(root, `cache-${Math.random().toString(36).slice(2)}`);
  hub.requests.length = 0;
});

const env = (extra: Record<string, string> = {}) => ({ HF_ENDPOINT: hub.endpoint, HF_HUB_CACHE: cache, HF_HOME: join(root, 'no-home'), ...extra });
const get = (model: string, extra: Record<string, string> = {}) => resolveHubPath(model, { env: env(extra) });
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function hubError(p: Promise<unknown>): Promise<HubError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(HubError);
  return e as HubError;
}

describe('Hub ids into the huggingface_hub cache', () => {
  it("downloads a model in huggingface_hub's layout, and a second run downloads nothing", async () => {
    const lines: string[] = [];
    const r = await resolveHubPath('org/tiny', { env: env(), progress: progressLines((l) => lines.push(l)) });
    const commit = hub.commit('org/tiny', 1);
    const repoDir = join(cache, 'models--org--tiny');
    expect(r.path).toBe(join(repoDir, 'snapshots', commit));
    expect(readFileSync(join(repoDir, 'refs', 'main'), 'utf8')).toBe(commit);
    for (const [name, bytes] of Object.entries(changed)) {
      const link = join(r.path, name);
      const etag = name.endsWith('.safetensors') ? sha256(bytes) : gitBlobId(bytes);
      expect(lstatSync(link).isSymbolicLink(), name).toBe(true);
      expect(readlinkSync(link), name).toBe(`../../blobs/${etag}`);
      expect(new Uint8Array(readFileSync(link)), name).toEqual(bytes);
    }
    expect(readdirSync(join(repoDir, 'blobs')).sort()).toEqual(
      Object.entries(changed)
        .map(([n, b]) => (n.endsWith('.safetensors') ? sha256(b) : gitBlobId(b)))
        .sort(),
    );
    expect(readFileSync(join(cache, 'CACHEDIR.TAG'), 'utf8')).toMatch(/^Signature: 8a477f597d28d172789f06886806bc55\n/);
    expect(lines.some((l) => l.startsWith('downloading org/tiny: model.safetensors (0.2 MB)'))).toBe(true);
    expect(lines).toContain('  org/tiny: model.safetensors: done\n');
    // The LFS file came from the other host, with no token sent there (none was set here either).
    expect(hub.requests.some((q) => q.server === 'cdn' && q.method === 'GET')).toBe(true);
    // Its HEAD stopped at the Hub's redirect (X-Linked-Etag, X-Linked-Size), as huggingface_hub's does.
    expect(hub.requests.some((q) => q.server === 'cdn' && q.method === 'HEAD')).toBe(false);
    hub.requests.length = 0;
    const again = await get('org/tiny');
    expect(again.path).toBe(r.path);
    expect(again.snapshot?.downloaded).toBe(0);
    expect(hub.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['GET /api/models/org/tiny/revision/main?blobs=true']);
  });

  it('revisions: a tag and a commit sha name their own snapshots; a commit writes no ref', async () => {
    const c0 = hub.commit('org/tiny', 0);
    const tag = await get('org/tiny@v1');
    expect(tag.path.endsWith(join('snapshots', c0))).toBe(true);
    expect(readFileSync(join(tag.path, 'generation_config.json'))).toEqual(Buffer.from(tiny['generation_config.json']));
    expect(readFileSync(join(cache, 'models--org--tiny', 'refs', 'v1'), 'utf8')).toBe(c0);
    const c1 = hub.commit('org/tiny', 1);
    const bySha = await get(`org/tiny@${c1}`);
    expect(bySha.path.endsWith(join('snapshots', c1))).toBe(true);
    expect(readdirSync(join(cache, 'models--org--tiny', 'refs'))).toEqual(['v1']);
    // The two commits share every blob but generation_config.json.
    expect(readdirSync(join(cache, 'models--org--tiny', 'blobs'))).toHaveLength(Object.keys(tiny).length + 1);
    const e = await hubError(get('org/tiny@nope'));
    expect(e.message).toBe("org/tiny@nope: the model has no revision 'nope' (a branch, tag or commit sha)");
  });

  it('offline: the cache alone, no request; a model not there is named', async () => {
    await get('org/tiny');
    await get('org/tiny@v1');
    hub.requests.length = 0;
    const off = { HF_HUB_OFFLINE: '1' };
    expect((await get('org/tiny', off)).path.endsWith(hub.commit('org/tiny', 1))).toBe(true);
    expect((await get('org/tiny@v1', off)).path.endsWith(hub.commit('org/tiny', 0))).toBe(true);
    expect((await get(`org/tiny@${hub.commit('org/tiny', 0)}`, off)).path.endsWith(hub.commit('org/tiny', 0))).toBe(true);
    expect(hub.requests).toEqual([]);
    const e = await hubError(get('org/sharded', { HF_HUB_OFFLINE: 'yes' }));
    expect(e.about).toBe('offline');
    expect(e.message).toBe(
      `org/sharded: is not in the Hugging Face cache (${cache}) and HF_HUB_OFFLINE is set; download it once without HF_HUB_OFFLINE (or point HF_HUB_CACHE at a cache that has it)`,
    );
    expect((await hubError(get('org/tiny@v2', off))).message).toMatch(/^org\/tiny@v2: is not in the Hugging Face cache/);
  });

  it('a download cut off midway is resumed with a Range request and checked', async () => {
    const e = await hubError(get('org/cut'));
    expect(e.about).toBe('network');
    expect(e.message).toMatch(/^org\/cut: tokenizer\.json: the download stopped at \d+ of 90496 bytes .*; run the command again to resume it$/);
    const blobs = join(cache, 'models--org--cut', 'blobs');
    const partial = join(blobs, `${gitBlobId(tiny['tokenizer.json'])}.incomplete`);
    const kept = lstatSync(partial).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(90496);
    const second = await hubError(get('org/cut'));
    expect(second.message).toMatch(/^org\/cut: model\.safetensors: the download stopped/);
    hub.requests.length = 0;
    const range = `bytes=${lstatSync(join(blobs, `${sha256(tiny['model.safetensors'])}.incomplete`)).size}-`;
    const r = await get('org/cut');
    const ranges = hub.requests.filter((q) => q.range !== null);
    // The Range goes to the Hub's resolve URL and on to the LFS host it redirects to.
    expect(ranges.map((q) => [q.server, q.method, q.range])).toEqual([
      ['hub', 'GET', range],
      ['cdn', 'GET', range],
    ]);
    expect(new Uint8Array(readFileSync(join(r.path, 'model.safetensors')))).toEqual(tiny['model.safetensors']);
    expect(new Uint8Array(readFileSync(join(r.path, 'tokenizer.json')))).toEqual(tiny['tokenizer.json']);
    expect(readdirSync(blobs).filter((f) => f.endsWith('.incomplete'))).toEqual([]);
  });

  it('a download that stalls ends after HF_HUB_DOWNLOAD_TIMEOUT with its bytes kept, and resumes', async () => {
    const quick = { HF_HUB_DOWNLOAD_TIMEOUT: '0.5' };
    const e = await hubError(get('org/stall', quick));
    expect(e.about).toBe('network');
    expect(e.message).toMatch(
      /^org\/stall: model\.safetensors: the download stopped at \d+ of 245008 bytes \(no data for 0\.5 s\); run the command again to resume it$/,
    );
    hub.requests.length = 0;
    const r = await get('org/stall', quick);
    expect(new Uint8Array(readFileSync(join(r.path, 'model.safetensors')))).toEqual(tiny['model.safetensors']);
    expect(hub.requests.filter((q) => q.server === 'cdn').map((q) => q.range)).toEqual([expect.stringMatching(/^bytes=\d+-$/)]);
    expect((await hubError(get('org/stall', { HF_HUB_DOWNLOAD_TIMEOUT: 'soon' }))).message).toBe(
      "HF_HUB_DOWNLOAD_TIMEOUT='soon' must be a number of seconds above 0",
    );
  });

  it('a wrong size or wrong bytes is a clean error and nothing of that file is kept', async () => {
    for (const [repo, pattern] of [
      ['org/wrong-size', /^org\/wrong-size: model\.safetensors: the Hub said 245015 bytes but sends 245008; the file was not kept$/],
      ['org/corrupt', /^org\/corrupt: model\.safetensors: its sha256 is [0-9a-f]{64}, not [0-9a-f]{64} as the Hub said; the file was not kept$/],
      ['org/corrupt-json', /^org\/corrupt-json: config\.json: its sha1 is [0-9a-f]{40}, not [0-9a-f]{40} as the Hub said; the file was not kept$/],
    ] as const) {
      const e = await hubError(get(repo));
      expect(e.about, repo).toBe('integrity');
      expect(e.message, repo).toMatch(pattern);
      const dir = join(cache, `models--${repo.replace('/', '--')}`);
      const name = repo === 'org/corrupt-json' ? 'config.json' : 'model.safetensors';
      const etag = name === 'config.json' ? gitBlobId(tiny[name]) : sha256(tiny[name]);
      expect(existsSync(join(dir, 'blobs', etag)), repo).toBe(false);
      expect(existsSync(join(dir, 'blobs', `${etag}.incomplete`)), repo).toBe(false);
      expect(existsSync(join(dir, 'snapshots', hub.commit(repo, 0), name)), repo).toBe(false);
      expect(existsSync(join(dir, 'refs', 'main')), repo).toBe(false);
    }
  });

  it('a gated model needs a token (HF_TOKEN or the token file), sent to the Hub only', async () => {
    const none = await hubError(get('org/gated'));
    expect(none.about).toBe('auth');
    expect(none.message).toBe(
      `org/gated: is a gated model on ${hub.endpoint}; accept its terms on its page, then set HF_TOKEN to an access token (or log in with \`hf auth login\`)`,
    );
    const wrong = await hubError(get('org/gated', { HF_TOKEN: 'hf_wrong' }));
    expect(wrong.message).toMatch(/^org\/gated: is a gated model on .*; the token in HF_TOKEN \(or the token file\) has no access to it/);
    expect(wrong.message).not.toContain('hf_wrong');
    hub.requests.length = 0;
    const r = await get('org/gated', { HF_TOKEN: TOKEN });
    expect(new Uint8Array(readFileSync(join(r.path, 'model.safetensors')))).toEqual(tiny['model.safetensors']);
    expect(hub.requests.filter((q) => q.server === 'hub').every((q) => q.auth)).toBe(true);
    expect(hub.requests.filter((q) => q.server === 'cdn').map((q) => q.auth)).toEqual([false]);
    // The token file under HF_HOME, as `hf auth login` writes it.
    const home = join(root, 'home');
    await mkdir(home, { recursive: true });
    await writeFile(join(home, 'token'), `${TOKEN}\n`);
    cache = join(root, 'cache-token-file');
    const byFile = await resolveHubPath('org/gated', { env: { HF_ENDPOINT: hub.endpoint, HF_HUB_CACHE: cache, HF_HOME: home } });
    expect(existsSync(join(byFile.path, 'config.json'))).toBe(true);
  });

  it('two downloads of one model at once: one writer a blob, both complete; a lock left by an ended process is taken over', async () => {
    const stale = join(cache, '.locks', 'models--org--tiny', `${sha256(changed['model.safetensors'])}.lwm.lock`);
    await mkdir(join(cache, '.locks', 'models--org--tiny'), { recursive: true });
    await writeFile(stale, `99999999@${hostname()}\n`);
    const [a, b] = await Promise.all([get('org/tiny'), get('org/tiny')]);
    expect(a.path).toBe(b.path);
    for (const [name, bytes] of Object.entries(changed)) expect(new Uint8Array(readFileSync(join(a.path, name))), name).toEqual(bytes);
    // Each file's bytes were fetched once.
    expect((a.snapshot?.downloaded ?? 0) + (b.snapshot?.downloaded ?? 0)).toBe(Object.values(changed).reduce((n, x) => n + x.length, 0));
    expect(readdirSync(join(cache, '.locks', 'models--org--tiny'))).toEqual([]);
    expect(readdirSync(join(cache, 'models--org--tiny', 'blobs')).filter((f) => !/^[0-9a-f]+$/.test(f))).toEqual([]);
  });

  it('a fetch that follows redirects itself, as a browser does: the listing names and sizes the files, the same layout', async () => {
    const followed: string[] = [];
    const browserLike = (async (url: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(url, { ...init, redirect: 'follow' });
      if (res.redirected) followed.push(`${init?.method} ${res.url}`);
      return res;
    }) as typeof fetch;
    const settings = nodeHubSettings(env());
    const snap = await hubSnapshot({ repo: 'org/tiny', revision: 'main' }, { settings, storage: nodeHubStorage(cache), hash: nodeHash, fetch: browserLike });
    expect(followed.some((l) => l.startsWith('HEAD http://localhost:'))).toBe(true);
    for (const [name, bytes] of Object.entries(changed)) {
      expect(readlinkSync(join(snap.location, name)), name).toBe(`../../blobs/${name.endsWith('.safetensors') ? sha256(bytes) : gitBlobId(bytes)}`);
      expect(new Uint8Array(readFileSync(join(snap.location, name))), name).toEqual(bytes);
    }
  });

  it('a sharded model: the index and every shard it names', async () => {
    const r = await get('org/sharded');
    expect(readdirSync(r.path).sort()).toEqual([
      'generation_config.json',
      'model-00001-of-00002.safetensors',
      'model-00002-of-00002.safetensors',
      'model.safetensors.index.json',
    ]);
    expect(r.snapshot?.files).toEqual([
      'generation_config.json',
      'model.safetensors.index.json',
      'model-00001-of-00002.safetensors',
      'model-00002-of-00002.safetensors',
    ]);
  });

  it('an unknown repo, an endpoint out of reach (the cache used when it has the model), paths', async () => {
    const e = await hubError(get('org/none'));
    expect(e.message).toBe(`org/none: no such model on ${hub.endpoint} (if it is private or gated, set HF_TOKEN to an access token)`);
    const closed = await startMockHub([]);
    await closed.close();
    const down = { HF_ENDPOINT: closed.endpoint };
    const net = await hubError(get('org/tiny', down));
    expect(net.about).toBe('network');
    expect(net.message).toBe(
      `org/tiny: cannot reach the Hugging Face Hub at ${closed.endpoint} (ECONNREFUSED); check the network or HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to use the cache alone`,
    );
    const online = await get('org/tiny');
    const logs: string[] = [];
    const fallback = await resolveHubPath('org/tiny', { env: env(down), log: (m) => logs.push(m) });
    expect(fallback.path).toBe(online.path);
    expect(logs).toEqual([`org/tiny: the Hub cannot be reached; using the cached snapshot ${hub.commit('org/tiny', 1)}`]);
    // A Hub in trouble (503): the cached snapshot, said; a model not cached, the error.
    hub.apiDown = true;
    try {
      const logged: string[] = [];
      expect((await resolveHubPath('org/tiny', { env: env(), log: (m) => logged.push(m) })).path).toBe(online.path);
      expect(logged).toEqual([`org/tiny: the Hub answered HTTP 503; using the cached snapshot ${hub.commit('org/tiny', 1)}`]);
      expect((await hubError(get('org/sharded'))).message).toBe('org/sharded: the Hub answered HTTP 503 for the model; try again later');
    } finally {
      hub.apiDown = false;
    }
    // A folder on disk wins; what is written as a path is never looked up.
    hub.requests.length = 0;
    const local = join(root, 'org');
    await mkdir(join(local, 'tiny'), { recursive: true });
    const cwd = process.cwd();
    process.chdir(root);
    try {
      expect((await get('org/tiny')).path).toBe('org/tiny');
    } finally {
      process.chdir(cwd);
    }
    expect((await get('./org/tiny')).path).toBe('./org/tiny');
    expect((await get('org/tiny/')).path).toBe('org/tiny/');
    expect((await get('/abs/model')).path).toBe('/abs/model');
    // A model file's name is a (mistyped) path, never a repository: runs/w.safetensors.
    expect((await get('runs/w.safetensors')).path).toBe('runs/w.safetensors');
    expect((await get('org/model.ONNX')).path).toBe('org/model.ONNX');
    expect(hub.requests).toEqual([]);
  });
});
