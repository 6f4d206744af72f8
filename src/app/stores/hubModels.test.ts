// The app's Hub store against the mock Hub on 127.0.0.1 with Cache Storage in memory: each wrong
// input gets its own message (a malformed id, an unknown repo, a gated one without a token and
// with a refused one, the Hub out of reach), a model downloads with its bytes per file and comes
// back as a folder's files, and a second fetch takes it from the cache with no request; a gated
// model's token is sent to the Hub only. Also the endpoint rule of src/app/lib/hubEndpoint.ts.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MemoryCaches } from '../../hub/cacheStorage.testing.ts';
import { folderFiles, startMockHub, type MockHub } from '../../hub/testing.ts';
import { DEFAULT_HUB_ENDPOINT, hubEndpoint, TEST_HUB_ENDPOINT_KEY } from '../lib/hubEndpoint.ts';
import { isOnnxFiles } from '../../jobs/onnxFolder.ts';
import { createHubModelsStore } from './hubModels.ts';

const tiny = folderFiles(fileURLToPath(new URL('../../model/fixtures/hf/llama-chat', import.meta.url)), { skip: ['generate.json'] });
const TOKEN = 'hf_store_token';
/** An ONNX export as transformers.js lays it out: config and tokenizer at the top, the graph and its external data under onnx/. */
const onnxRepo: Record<string, Uint8Array> = {
  'config.json': tiny['config.json'],
  'tokenizer.json': tiny['tokenizer.json'],
  'tokenizer_config.json': tiny['tokenizer_config.json'],
  'onnx/model.onnx': new Uint8Array([8, 7, 18, 4, 108, 119, 109, 0]),
  'onnx/model.onnx_data': new Uint8Array(4096).map((_, i) => i % 251),
  'README.md': new TextEncoder().encode('# tiny onnx\n'),
};
let hub: MockHub;
let caches: MemoryCaches;
let token: string | null;

beforeAll(async () => {
  hub = await startMockHub([
    { repo: 'org/tiny', refs: { main: 0 }, commits: [tiny] },
    { repo: 'org/gated', refs: { main: 0 }, commits: [tiny], gatedToken: TOKEN },
    { repo: 'org/tiny-onnx', refs: { main: 0 }, commits: [onnxRepo] },
  ]);
});
afterAll(() => hub.close());
beforeEach(() => {
  caches = new MemoryCaches();
  token = null;
  hub.requests.length = 0;
});

const store = (endpoint = () => hub.endpoint) => createHubModelsStore({ caches: () => caches as unknown as CacheStorage, endpoint, token: () => token });

describe('fetching a model by its Hub id', () => {
  it('names what is wrong with the id, the repo, the token or the network', async () => {
    const s = store();
    const error = async (text: string) => {
      expect(await s.getState().fetchModel('pg', text)).toBeNull();
      return s.getState().fetches.pg.error;
    };
    expect(await error('  ')).toMatch(/^Type a model id: org\/name or org\/name@revision/);
    expect(await error('tiny')).toBe(
      "'tiny' is not a Hugging Face model id: write org/name or org/name@revision (a branch, a tag or a commit), as on the model's page.",
    );
    expect(await error('org/tiny@../x')).toMatch(/^org\/tiny@\.\.\/x: '\.\.\/x' is not a revision/);
    expect(await error('org/tiny@nope')).toBe("org/tiny@nope: the model has no revision 'nope' (a branch, tag or commit sha)");
    expect(await error('org/nothing')).toBe(
      `org/nothing: no such model on ${hub.endpoint}: check the id (org/name, as on the model's page); if it is private or gated, add an access token.`,
    );
    expect(await error('org/gated')).toMatch(/^org\/gated: the model is gated or private: add a Hugging Face access token/);
    token = 'hf_wrong';
    expect(await error('org/gated')).toMatch(/^org\/gated: the Hub refused the access token/);
    const down = store(() => 'http://127.0.0.1:9');
    expect(await down.getState().fetchModel('pg', 'org/tiny')).toBeNull();
    expect(down.getState().fetches.pg.error).toBe(
      "org/tiny: cannot reach the Hugging Face Hub at http://127.0.0.1:9 (a network failure), and the model is not in this browser's cache: check the connection and try again.",
    );
    expect(await caches.keys()).toEqual([]);
  });

  it('downloads a model with its bytes per file, gives its files as a folder, then finds it in the cache with no request', async () => {
    const s = store();
    const files = (await s.getState().fetchModel('bench', 'org/tiny'))!;
    expect(files.map((f) => f.path).sort()).toEqual(
      Object.keys(tiny)
        .map((p) => `org/tiny/${p}`)
        .sort(),
    );
    for (const f of files) expect(new Uint8Array(await f.file.arrayBuffer())).toEqual(tiny[f.path.slice('org/tiny/'.length)]);
    const state = s.getState().fetches.bench;
    expect(state).toMatchObject({ label: 'org/tiny', status: 'done', fromCache: false, error: null });
    expect(state.files.map((f) => [f.path, f.done, f.total]).sort()).toEqual(
      Object.entries(tiny)
        .map(([p, b]) => [p, b.length, b.length])
        .sort(),
    );

    hub.requests.length = 0;
    const again = createHubModelsStore({ caches: () => caches as unknown as CacheStorage, endpoint: () => 'http://127.0.0.1:9', token: () => null });
    expect((await again.getState().fetchModel('bench', 'org/tiny'))!.length).toBe(files.length);
    expect(again.getState().fetches.bench).toMatchObject({ status: 'done', fromCache: true, files: [] });
    expect(hub.requests).toEqual([]);
  });

  it('sends a gated model its token, to the Hub and not to the storage it redirects to', async () => {
    token = TOKEN;
    const files = await store().getState().fetchModel('train', 'org/gated');
    expect(files?.length).toBe(Object.keys(tiny).length);
    expect(hub.requests.filter((r) => r.server === 'hub').every((r) => r.auth)).toBe(true);
    expect(hub.requests.filter((r) => r.server === 'cdn').some((r) => r.auth)).toBe(false);
  });
});

describe('an ONNX export by its Hub id', () => {
  it('downloads the graph with its external data, config and tokenizer, and gives files the ONNX folders take', async () => {
    const files = (await store().getState().fetchModel('pg-onnx', 'org/tiny-onnx'))!;
    expect(files.map((f) => f.path).sort()).toEqual(
      ['config.json', 'onnx/model.onnx', 'onnx/model.onnx_data', 'tokenizer.json', 'tokenizer_config.json'].map((p) => `org/tiny-onnx/${p}`),
    );
    for (const f of files) expect(new Uint8Array(await f.file.arrayBuffer())).toEqual(onnxRepo[f.path.slice('org/tiny-onnx/'.length)]);
    expect(isOnnxFiles(files)).toBe(true);
    expect(isOnnxFiles((await store().getState().fetchModel('pg', 'org/tiny'))!)).toBe(false);
  });
});

describe('hubEndpoint', () => {
  const storage = (v: string | null) => ({ getItem: (k: string) => (k === TEST_HUB_ENDPOINT_KEY ? v : null) });
  it('is the Hub, or the build-time mirror, or a loopback mock Hub a test names, and nothing else', () => {
    expect(hubEndpoint(undefined, null)).toBe(DEFAULT_HUB_ENDPOINT);
    expect(hubEndpoint('https://hf-mirror.example.org/', null)).toBe('https://hf-mirror.example.org');
    expect(hubEndpoint('https://hf-mirror.example.org', storage('http://127.0.0.1:8765'))).toBe('http://127.0.0.1:8765');
    for (const bad of ['https://evil.example.com', 'http://127.0.0.1.evil.com:80', 'http://localhost:1/x', 'javascript:alert(1)'])
      expect(hubEndpoint(undefined, storage(bad)), bad).toBe(DEFAULT_HUB_ENDPOINT);
  });
});
