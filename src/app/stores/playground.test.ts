// The Playground store against a fake jobs worker and fake endpoints: a checkpoint's turn streams
// from the worker, a lost device keeps the session and its history, stop ends a stream with what
// it had, an unreachable endpoint explains CORS, the baselines run on the page, and a dropped file
// is sent to the worker again when a fresh worker does not hold it.
import { describe, expect, it } from 'vitest';
import type { DatasetMeta } from '../../core/records.ts';
import { type JobClient, JobError } from '../../jobs/client.ts';
import type { GenerateJobSpec } from '../../jobs/playground.ts';
import { scriptedWorker, type GenerateScript } from '../../jobs/generate.testing.ts';
import { MODEL_NOT_LOADED } from '../../jobs/protocol.ts';
import type { FromWorker } from '../../jobs/protocol.ts';
import type { Trajectory } from '../../core/schema/types.ts';
import { apiKey, endpointConfig, KEY_PREFIX, setApiKey, type EndpointSettings, type KeyStorage } from './endpoints.ts';
import { classifyError, createPlaygroundStore, type PlaygroundDeps } from './playground.ts';

const info = {
  id: 'checkpoint:k1:::f32',
  name: 'local:sft-4',
  stage: 'sft',
  step: 4,
  contextLength: 48,
  vocabSize: 400,
  layers: 2,
  dModel: 32,
  template: 'v0',
};

/** A worker whose 'generate' jobs answer by `script`. */
const fakeWorker = (script: GenerateScript) => scriptedWorker(script);

function deps(client: JobClient, extra: Partial<PlaygroundDeps> = {}): PlaygroundDeps {
  return { jobs: () => client, endpoint: () => undefined, webgpu: () => null, save: async () => ({}) as DatasetMeta, now: () => 1_700_000_000_000, ...extra };
}

const streamOk = (spec: GenerateJobSpec, jobId: string, post: (m: FromWorker) => void) => {
  if (!('request' in spec) || !spec.request) {
    post({ type: 'progress', jobId, data: { kind: 'model', model: info } });
    post({ type: 'done', jobId, result: { model: info } });
    return;
  }
  post({ type: 'progress', jobId, data: { kind: 'model', model: info } });
  post({ type: 'text', jobId, text: '<predicted_observation>\nREADME' });
  post({ type: 'progress', jobId, data: { kind: 'tokens', tokens: 3, ms: 30 } });
  post({ type: 'text', jobId, text: '.md' });
  post({ type: 'done', jobId, result: { model: info, text: '<predicted_observation>\nREADME.md', tokens: 4, ms: 40, stopped: false } });
};

describe('playground store', () => {
  it("plays a checkpoint's turn through the worker: streamed, recorded with its rate, judged", async () => {
    const w = fakeWorker(streamOk);
    const store = createPlaygroundStore(deps(w.client), null);
    store.getState().setBackend({ kind: 'run', key: 'k1', label: 'SFT · last · step 4' });
    await store.getState().send('ls');
    const s = store.getState();
    expect(s.model).toEqual(info);
    const t = s.session.turns[0];
    expect(t.prediction).toMatchObject({ observation: 'README.md', tokens: 4, ms: 40, backend: 'local:sft-4', mode: 'teacher' });
    expect(t.grade!.verdict.scores.format).toBeGreaterThanOrEqual(1);
    // The job was sent the turn: the real history (none yet), the action, the sampling.
    const job = w.started.find((j) => 'request' in j && j.request)! as Extract<GenerateJobSpec, { request?: unknown }>;
    expect(job.request!.sample.action).toBe('ls');
    expect(job.model).toEqual({ kind: 'checkpoint', checkpoint: { key: 'k1', label: 'SFT · last · step 4' } });
    expect(job.sampling).toMatchObject({ maxTokens: 48, temperature: 0, seed: 0 });
  });

  it('keeps the session and its history when the GPU device is lost mid-generation, and runs the turn again after', async () => {
    let lose = true;
    const w = fakeWorker((spec, jobId, post) => {
      if (lose && 'request' in spec && spec.request && spec.request.sample.action === 'pwd') {
        post({ type: 'text', jobId, text: '<predicted_observation>\n/ho' });
        post({ type: 'lost', message: 'The GPU device was lost (reason: unknown). Re-create the device to continue.' });
        post({
          type: 'error',
          jobId,
          message:
            'The GPU device was lost (reason: unknown). The job stopped; a training run can be resumed from its last checkpoint, and the next job uses a fresh device.',
        });
        return;
      }
      streamOk(spec, jobId, post);
    });
    const store = createPlaygroundStore(deps(w.client), null);
    store.getState().setBackend({ kind: 'run', key: 'k1', label: 'ck' });
    await store.getState().send('ls');
    await store.getState().send('pwd');
    const s = store.getState();
    expect(s.error).toMatchObject({ kind: 'device-lost', turn: 1 });
    expect(s.error!.message).toContain('The session and its history are kept');
    expect(s.session.turns).toHaveLength(2);
    expect(s.session.turns[0].prediction!.observation).toBe('README.md');
    expect(s.session.turns[1].prediction).toMatchObject({ observation: '/ho', error: s.error!.message });
    expect(s.session.turns[1].real!.observation).toContain('/home');
    expect(s.live).toBeNull();
    // The next try (a fresh device) fills the turn in.
    lose = false;
    await store.getState().runPending(1);
    expect(store.getState().session.turns[1].prediction).toMatchObject({ observation: 'README.md' });
    expect(store.getState().session.turns[1].prediction!.error).toBeUndefined();
  });

  it('stops a generation: the worker job is stopped and the text so far is kept', async () => {
    const w = fakeWorker((spec, jobId, post) => {
      if (!('request' in spec) || !spec.request) return streamOk(spec, jobId, post);
      post({ type: 'text', jobId, text: '<predicted_observation>\npart' });
    });
    const store = createPlaygroundStore(deps(w.client), null);
    store.getState().setBackend({ kind: 'run', key: 'k1', label: 'ck' });
    const sending = store.getState().send('ls');
    await new Promise((r) => setTimeout(r, 10));
    expect(store.getState().live?.text).toContain('part');
    const jobId = store.getState().live!.jobId!;
    store.getState().stop();
    expect(w.stopped).toEqual([jobId]);
    // The worker answers a stop with the job's end.
    // biome-ignore lint/complexity/useLiteralKeys: reaches the client's private emit, as its worker would
    w.client['emit']({ type: 'done', jobId, result: { model: info, text: '<predicted_observation>\npart', tokens: 2, ms: 9, stopped: true } });
    await sending;
    expect(store.getState().session.turns[0].prediction).toMatchObject({ observation: 'part', stopped: true, tokens: 2 });
  });

  it('sends a dropped file again when a fresh worker does not hold it', async () => {
    const held = new Set<string>();
    const w = fakeWorker((spec, jobId, post) => {
      if ('release' in spec) return post({ type: 'done', jobId, result: { released: true } });
      if (spec.model.kind === 'checkpoint' && spec.model.checkpoint.key.startsWith('file:')) {
        if (spec.bytes) held.add(spec.model.checkpoint.key);
        else if (!held.has(spec.model.checkpoint.key)) return post({ type: 'error', jobId, message: MODEL_NOT_LOADED });
      }
      streamOk(spec, jobId, post);
    });
    const store = createPlaygroundStore(deps(w.client), null);
    store.getState().setBackend({ kind: 'file', id: 'f1', name: 'mine.safetensors' }, new Uint8Array([1, 2, 3]));
    await new Promise((r) => setTimeout(r, 10));
    await store.getState().send('ls');
    expect(store.getState().session.turns[0].prediction!.observation).toBe('README.md');
    const generateJobs = () => w.started.filter((j) => 'request' in j && j.request) as { bytes?: Uint8Array }[];
    expect(generateJobs().at(-1)!.bytes).toBeUndefined(); // the worker held it: not sent again
    held.clear(); // a fresh worker
    await store.getState().send('pwd');
    expect(store.getState().session.turns[1].prediction!.observation).toBe('README.md');
    expect(generateJobs().at(-1)!.bytes).toEqual(new Uint8Array([1, 2, 3]));
    expect(store.getState().error).toBeNull();
  });

  it("plays a Hugging Face folder's turn: its files and settings go with each job, in the endpoint's message layout", async () => {
    const folder = {
      id: 'Tiny#1',
      name: 'Tiny',
      files: [{ path: 'Tiny/config.json', file: new Blob(['{}']) }],
      settings: { context: 64, memoryGiB: 1 },
      status: 'ready' as const,
      info: null,
      error: null,
    };
    const hfInfo = { ...info, id: 'hf:Tiny#1:64:1', name: 'hf:Tiny', template: 'chat template', architecture: 'LlamaForCausalLM' };
    const w = fakeWorker((spec, jobId, post) => {
      if ('release' in spec) return post({ type: 'done', jobId, result: { released: true } });
      post({ type: 'progress', jobId, data: { kind: 'model', model: hfInfo } });
      if (!spec.request) return post({ type: 'done', jobId, result: { model: hfInfo } });
      post({ type: 'text', jobId, text: '<predicted_observation>\nREADME.md' });
      post({ type: 'done', jobId, result: { model: hfInfo, text: '<predicted_observation>\nREADME.md', tokens: 5, ms: 50, stopped: false } });
    });
    let open: typeof folder | undefined = folder;
    const store = createPlaygroundStore(deps(w.client, { folder: (id) => (id === open?.id ? open : undefined) }), null);
    store.getState().setBackend({ kind: 'hf', id: 'Tiny#1', name: 'Tiny' });
    await new Promise((r) => setTimeout(r, 10));
    expect(w.started[0]).toEqual({
      kind: 'generate',
      model: { kind: 'hf', hf: { folderId: 'Tiny#1', name: 'Tiny', context: 64, memoryGiB: 1 } },
      files: folder.files,
    });
    expect(store.getState().model).toEqual(hfInfo);
    await store.getState().send('ls');
    const job = w.started.at(-1)! as Extract<GenerateJobSpec, { request?: unknown }>;
    // No template of ours: the worker renders the AgentWorldBench messages with the model's chat template.
    expect(job.template).toBeUndefined();
    expect(job.request!.awb).toBeUndefined();
    expect(store.getState().session.turns[0].prediction).toMatchObject({ observation: 'README.md', backend: 'hf:Tiny', tokens: 5 });
    // A folder forgotten in the page (or gone with a reload) says to pick it again; the session is kept.
    open = undefined;
    await store.getState().send('pwd');
    expect(store.getState().error).toMatchObject({ kind: 'folder', message: expect.stringMatching(/pick the folder again/) });
    expect(store.getState().session.turns).toHaveLength(2);
  });

  it('plays an ONNX folder in a page without WebGPU: its files, model file and WASM go with each job; a checkpoint is still refused', async () => {
    const folder = { id: 'Onnx#1', name: 'Onnx', files: [{ path: 'Onnx/onnx/model_q4.onnx', file: new Blob(['x']) }], file: 'onnx/model_q4.onnx' };
    const onnxInfo = {
      ...info,
      id: 'onnx:Onnx#1:onnx/model_q4.onnx:wasm',
      name: 'onnx:Onnx',
      stage: 'onnx',
      template: 'chat template',
      architecture: 'LlamaForCausalLM',
      onnx: { file: 'onnx/model_q4.onnx', executionProvider: 'wasm' },
    };
    const w = fakeWorker((spec, jobId, post) => {
      if ('release' in spec) return post({ type: 'done', jobId, result: { released: true } });
      post({ type: 'progress', jobId, data: { kind: 'model', model: onnxInfo } });
      if (!spec.request) return post({ type: 'done', jobId, result: { model: onnxInfo } });
      post({ type: 'text', jobId, text: '<predicted_observation>\nREADME.md' });
      post({ type: 'done', jobId, result: { model: onnxInfo, text: '<predicted_observation>\nREADME.md', tokens: 5, ms: 50, stopped: false } });
    });
    const noGpu = { message: 'This browser does not expose WebGPU (navigator.gpu is missing).', help: 'get WebGPU' };
    const store = createPlaygroundStore(
      deps(w.client, { webgpu: () => noGpu, onnxFolder: (id) => (id === folder.id ? folder : undefined), onnxExecution: () => 'wasm' }),
      null,
    );
    store.getState().setBackend({ kind: 'onnx', id: 'Onnx#1', name: 'Onnx' });
    await new Promise((r) => setTimeout(r, 10));
    expect(store.getState().error).toBeNull();
    expect(w.started[0]).toEqual({
      kind: 'generate',
      model: { kind: 'onnx', onnx: { folderId: 'Onnx#1', name: 'Onnx', file: 'onnx/model_q4.onnx', execution: 'wasm' } },
      files: folder.files,
    });
    expect(store.getState().model).toEqual(onnxInfo);
    await store.getState().send('ls');
    const job = w.started.at(-1)! as Extract<GenerateJobSpec, { request?: unknown }>;
    expect(job.template).toBeUndefined();
    expect(store.getState().session.turns[0].prediction).toMatchObject({ observation: 'README.md', backend: 'onnx:Onnx', tokens: 5 });
    // Leaving the view frees it even without WebGPU.
    store.getState().release();
    expect(w.started.at(-1)).toEqual({ kind: 'generate', release: true });
    // A checkpoint in the same page is refused before anything is sent.
    const before = w.started.length;
    store.getState().setBackend({ kind: 'run', key: 'k1', label: 'SFT' });
    expect(store.getState().error).toMatchObject({
      kind: 'no-webgpu',
      message: expect.stringMatching(/^A checkpoint runs on the GPU, and This browser does not expose WebGPU/),
    });
    expect(w.started).toHaveLength(before);
  });

  it("shows a folder's load failure as the folder's, naming the file", async () => {
    const folder = { id: 'B#1', name: 'B', files: [], settings: { context: null, memoryGiB: 1 }, status: 'ready' as const, info: null, error: null };
    const w = fakeWorker((_spec, jobId, post) => post({ type: 'error', jobId, message: 'B/model.safetensors: the header is cut short' }));
    const store = createPlaygroundStore(deps(w.client, { folder: () => folder }), null);
    store.getState().setBackend({ kind: 'hf', id: 'B#1', name: 'B' });
    await new Promise((r) => setTimeout(r, 10));
    expect(store.getState().error).toEqual({ kind: 'folder', message: 'B/model.safetensors: the header is cut short' });
    expect(store.getState().model).toBeNull();
  });

  it('runs the baselines on the page, the reference only where there is a real observation', async () => {
    const w = fakeWorker(() => {});
    const store = createPlaygroundStore(deps(w.client), null);
    store.getState().setBackend({ kind: 'reference' });
    await store.getState().send('ls');
    const t = store.getState().session.turns[0];
    expect(t.prediction!.observation).toBe(t.real!.observation);
    expect(t.grade!.reward.reward).toBeCloseTo(25);
    expect(w.started).toEqual([]);
    store.getState().setWorld({ kind: 'free', domain: 'game' });
    await store.getState().send('look');
    expect(store.getState().error!.message).toContain('a free world has none');
    store.getState().setBackend({ kind: 'copy-last' });
    store.getState().setField('initial_state', 'A dark room.');
    await store.getState().runPending(0);
    expect(store.getState().session.turns[0].prediction!.observation).toBe('A dark room.');
  });

  it('explains CORS when an endpoint cannot be reached from the page, and keeps the turn', async () => {
    const ep: EndpointSettings = { id: 'e1', baseUrl: 'http://10.0.0.5:8000/v1', model: 'qwen', contextLength: 4096, stream: true };
    const failingFetch = (async () => {
      throw new TypeError('Failed to fetch');
    }) as unknown as typeof fetch;
    const w = fakeWorker(() => {});
    const store = createPlaygroundStore(deps(w.client, { endpoint: () => ep }), null);
    const realFetch = globalThis.fetch;
    globalThis.fetch = failingFetch;
    const loc = Object.getOwnPropertyDescriptor(globalThis, 'location');
    Object.defineProperty(globalThis, 'location', { value: { origin: 'https://studio.example' }, configurable: true });
    try {
      store.getState().setBackend({ kind: 'endpoint', id: 'e1' });
      await store.getState().send('ls');
    } finally {
      globalThis.fetch = realFetch;
      if (loc) Object.defineProperty(globalThis, 'location', loc);
      else delete (globalThis as { location?: unknown }).location;
    }
    const s = store.getState();
    expect(s.error!.kind).toBe('cors');
    expect(s.error!.help).toContain('What CORS is');
    expect(s.error!.help).toContain(`--allowed-origins '["https://studio.example"]'`);
    expect(s.error!.help).toContain('OLLAMA_ORIGINS=https://studio.example ollama serve');
    expect(s.session.turns[0].real!.observation.length).toBeGreaterThan(0);
    expect(s.session.turns[0].prediction!.error).toBe(s.error!.message);
    // The estimated context bar of the request that was tried.
    expect(s.context).toMatchObject({ exact: false, context: 4096, maxTokens: 48 });
  });
});

describe('playground store with a working endpoint', () => {
  it('streams the reply in the AgentWorldBench layout with the key in the header, and grades it', async () => {
    const ep: EndpointSettings = { id: 'e3', baseUrl: 'http://127.0.0.1:8000/v1', model: 'qwen', contextLength: null, stream: true };
    setApiKey('e3', 'sk-live', false, null);
    const sent: { url: string; headers: Record<string, string>; body: { messages: { role: string; content: string }[]; stream: boolean } }[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = (async (url: string, init: RequestInit) => {
      sent.push({ url, headers: init.headers as Record<string, string>, body: JSON.parse(init.body as string) });
      const sse =
        ['<predicted_observation>\n', 'inventory', '\n</predicted_observation>']
          .map((c) => `data: ${JSON.stringify({ choices: [{ delta: { content: c } }] })}\n\n`)
          .join('') + 'data: [DONE]\n\n';
      return new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }) as typeof fetch;
    try {
      const store = createPlaygroundStore(deps(fakeWorker(() => {}).client, { endpoint: () => ep }), null);
      store.getState().setBackend({ kind: 'endpoint', id: 'e3' });
      await store.getState().send('ls');
      await store.getState().send('pwd');
      const [t1, t2] = store.getState().session.turns;
      expect(t1.prediction).toMatchObject({ observation: 'inventory', tokens: 3, backend: 'endpoint:qwen' });
      expect(t1.grade).not.toBeNull();
      expect(sent[0].url).toBe('http://127.0.0.1:8000/v1/chat/completions');
      expect(sent[0].headers.Authorization).toBe('Bearer sk-live');
      expect(sent[0].body.stream).toBe(true);
      expect(sent[0].body.messages[0].role).toBe('system');
      // Turn 2 is sent turn 1 as an earlier user/assistant pair: the real observation under teacher forcing.
      expect(sent[1].body.messages.slice(1).map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
      expect(sent[1].body.messages[2].content).toContain(t1.real!.observation);
      expect(sent[1].body.messages[3].content).toContain('pwd');
      expect(t2.prediction!.observation).toBe('inventory');
    } finally {
      globalThis.fetch = realFetch;
    }
  });
});

describe('endpoint keys', () => {
  const storage = (): KeyStorage & { data: Map<string, string> } => {
    const data = new Map<string, string>();
    return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v), removeItem: (k) => void data.delete(k) };
  };

  it('keeps a key in memory unless remembered, and forgets a remembered one when unticked', () => {
    const st = storage();
    setApiKey('a', 'sk-mem', false, st);
    expect(apiKey('a', st)).toBe('sk-mem');
    expect([...st.data.values()]).toEqual([]);
    setApiKey('a', 'sk-kept', true, st);
    expect(st.data.get(`${KEY_PREFIX}a`)).toBe('sk-kept');
    setApiKey('a', 'sk-kept', false, st);
    expect(st.data.size).toBe(0);
    const cfg = endpointConfig({ id: 'a', baseUrl: ' http://127.0.0.1:8000/v1 ', model: 'm', contextLength: null, stream: true }, st);
    expect(cfg).toMatchObject({ baseUrl: 'http://127.0.0.1:8000/v1', model: 'm', apiKey: 'sk-kept', stream: true });
  });

  it('never puts a key into a saved session', async () => {
    let saved: Trajectory[] = [];
    const w = fakeWorker(() => {});
    setApiKey('e2', 'sk-secret-in-memory', false, null);
    const store = createPlaygroundStore(deps(w.client, { save: async (_m, t) => ((saved = t), {} as DatasetMeta) }), null);
    store.getState().setBackend({ kind: 'copy-last' });
    await store.getState().send('ls');
    await store.getState().save();
    expect(saved).toHaveLength(1);
    expect(store.getState().saved).toMatchObject({ datasetId: 'playground-sessions', trajectoryId: saved[0].id });
    expect(JSON.stringify(saved)).not.toContain('sk-secret');
  });
});

describe('a worker failure is shown by its kind, not its words', () => {
  const origin = 'http://localhost:5173';
  it('maps each job error kind to what the Playground shows', () => {
    const shown = (e: JobError) => classifyError(e, 2, false, origin).kind;
    expect(shown(new JobError('local:sft-3: 64 new tokens leave no room for a prompt', 'settings'))).toBe('context');
    expect(shown(new JobError('x.safetensors holds no tokenizer', 'checkpoint'))).toBe('checkpoint');
    expect(shown(new JobError('Tiny/config.json: is not valid JSON', 'folder'))).toBe('folder');
    expect(shown(new JobError('no WebGPU here', 'no-webgpu'))).toBe('no-webgpu');
    expect(shown(new JobError('The storage is full', 'storage'))).toBe('storage');
    // Words that once meant a checkpoint fault do not make one: the kind decides.
    expect(shown(new JobError('The job failed: a safetensors checkpoint tensor is NaN', 'bug'))).toBe('other');
    expect(shown(new JobError('The GPU worker stopped: it crashed', 'device-lost', true))).toBe('device-lost');
    expect(shown(new JobError('The job failed: mapAsync aborted', 'bug', true))).toBe('device-lost');
    expect(classifyError(new JobError('x holds no tokenizer', 'checkpoint'), 0, false, origin).help).toBeTruthy();
  });
});
