// The Bench store with a fake worker: a new benchmark is stored without any API key and its job
// carries the keys, taken from the endpoint store it shares with the Playground; progress records
// fill in the results; a stored bench that was running when the page went away is offered for
// resuming, and resuming starts a job for it. After a reload (fresh modules, the same device
// storage) a remembered key is used and an unremembered one is asked for again.
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { deviceStorage } from './testing/deviceStorage.ts';
import { fakeJobs } from './testing/fakeJobs.ts';

vi.mock('./jobClient.ts', async () => (await import('./testing/fakeJobs.ts')).jobClientModule());
const { started, emit } = fakeJobs();

/** This device's localStorage: it outlives a reload, the modules' memory does not. */
const device = deviceStorage();
const MODEL = { id: 'ep-model', baseUrl: 'http://127.0.0.1:8000/v1/', model: 'qwen', contextLength: null, stream: true };
const JUDGE = { id: 'ep-judge', baseUrl: 'http://127.0.0.1:9000/v1', model: 'big', contextLength: 32768, stream: false };

beforeAll(() => {
  Object.defineProperty(globalThis, 'navigator', { value: { gpu: {} }, configurable: true });
});

describe('bench store', () => {
  it('stores a new bench without keys, sends them with the job, and merges progress', async () => {
    const { putBench, getBench } = await import('../../storage/bench.ts');
    const { useBenchStore } = await import('./bench.ts');
    // Endpoints set up as the Playground sets them up: the model's key in memory only, the judge's remembered.
    const { useEndpointStore, setApiKey } = await import('./endpoints.ts');
    useEndpointStore.getState().save(MODEL);
    useEndpointStore.getState().save(JUDGE);
    setApiKey(MODEL.id, 'sk-secret', false);
    setApiKey(JUDGE.id, 'sk-judge', true);
    // A bench left "running" by a closed page.
    await putBench({ ...(await import('./bench.ts')).benchFromDraft(draft(), 'old', 1), state: 'running' });
    await useBenchStore.getState().init();
    expect(useBenchStore.getState().interrupted.map((b) => b.id)).toEqual(['old']);

    const id = (await useBenchStore.getState().create(draft()))!;
    const stored = await getBench(id);
    expect(JSON.stringify(stored)).not.toMatch(/sk-(secret|judge|typed|kept)/);
    // The endpoint settings on this device hold no key; only the remembered one is stored, on its own.
    expect(device.get('lwm.endpoints')).toContain('127.0.0.1:9000');
    expect(device.get('lwm.endpoints')).not.toMatch(/sk-(secret|judge|typed|kept)/);
    expect([...device.values()].filter((v) => v.startsWith('sk-'))).toEqual(['sk-judge']);
    expect(stored!.backends.map((b) => [b.kind, b.name])).toEqual([
      ['checkpoint', 'local:sft-last-8 [abcd]'],
      ['endpoint', 'endpoint:qwen'],
      ['copy-last', 'copy-last'],
      ['reference', 'reference'],
    ]);
    expect(stored!.judges).toEqual([{ id: 'judge:big@127.0.0.1:9000', kind: 'endpoint', endpoint: { baseUrl: 'http://127.0.0.1:9000/v1', model: 'big' } }]);
    const job = started.at(-1)!;
    expect(job.spec).toEqual({
      kind: 'bench',
      benchId: id,
      secrets: { apiKeys: { 'endpoint:qwen@127.0.0.1:8000': 'sk-secret', 'judge:big@127.0.0.1:9000': 'sk-judge' } },
    });

    const result = {
      benchId: id,
      backend: 'copy-last',
      index: 0,
      prediction: { task: 'terminal', id: 'x', turn_idx: 1, prompt: ['a'], response: ['o'], gen: 'g' },
      judged: {},
    };
    emit({
      type: 'progress',
      jobId: job.jobId,
      data: { benchId: id, phase: 'generate', backend: 'copy-last', done: 1, total: 10, failed: 0, etaMs: 500, results: [result] },
    });
    // Applied a few times a second, not per record.
    expect(useBenchStore.getState().results).toEqual([]);
    await settle();
    expect(useBenchStore.getState().results).toEqual([result]);
    expect(useBenchStore.getState().live!.progress!.etaMs).toBe(500);
    // A second record for the same sample replaces it (its judgement arrived).
    const judged = { ...result, judged: { j: { ...result.prediction, failed: true } } };
    emit({
      type: 'progress',
      jobId: job.jobId,
      data: { benchId: id, phase: 'judge', backend: 'copy-last', judge: 'j', done: 2, total: 10, failed: 1, etaMs: 0, results: [judged] },
    });
    await settle();
    expect(useBenchStore.getState().results).toEqual([judged]);
    expect(useBenchStore.getState().live!.progress!.done).toBe(2);
    // Exports carry records only, never a key.
    const { exportJudged, exportPredictions } = await import('./benchModel.ts');
    for (const b of stored!.backends) {
      expect(exportPredictions(useBenchStore.getState().results, b).text).not.toMatch(/sk-(secret|judge|typed|kept)/);
      expect(exportJudged(useBenchStore.getState().results, b, 'j').text).not.toMatch(/sk-(secret|judge|typed|kept)/);
    }

    // Another job's messages are not this bench's.
    emit({ type: 'error', jobId: 'someone-else', message: 'nope' });
    await settle();
    expect(useBenchStore.getState().error).toBeNull();
    emit({ type: 'status', jobId: job.jobId, state: 'stopped' });
    expect(useBenchStore.getState().live).toBeNull();

    // A job that fails before its bench began (the status first, then the error; here: the bench
    // is open in another tab): the message shows, and the page leaves the record as the worker
    // left it (the worker is its only writer: the other tab's run is not marked failed).
    const before = (await getBench(id))!.state;
    await useBenchStore.getState().resume(id);
    const failing = started.at(-1)!.jobId;
    emit({ type: 'status', jobId: failing, state: 'failed', detail: 'in another tab' });
    emit({
      type: 'error',
      jobId: failing,
      message: 'This benchmark is running in another tab of LWM Studio; watch it there or close that tab first.',
      kind: 'user',
    });
    await expect.poll(() => useBenchStore.getState().error).toMatch(/^This benchmark is running in another tab/);
    expect(useBenchStore.getState().live).toBeNull();
    expect((await getBench(id))!.state).toBe(before);
    useBenchStore.getState().dismissError();

    // Resume the interrupted one: a job for it with the keys at hand, the offer gone.
    await useBenchStore.getState().resume('old');
    expect(started.at(-1)!.spec).toMatchObject({
      kind: 'bench',
      benchId: 'old',
      secrets: { apiKeys: { 'endpoint:qwen@127.0.0.1:8000': 'sk-secret', 'judge:big@127.0.0.1:9000': 'sk-judge' } },
    });
    expect(useBenchStore.getState().interrupted).toEqual([]);
    emit({ type: 'status', jobId: started.at(-1)!.jobId, state: 'stopped' });
    benchId = id;
  });

  it('after a reload uses a remembered key, asks again for one kept in memory only, and keeps typed keys off the records', async () => {
    vi.resetModules(); // a reload: this page's memory is gone, the device's storage is not
    const { getBench } = await import('../../storage/bench.ts');
    const { useBenchStore, benchKeys, missingKeys } = await import('./bench.ts');
    const { useEndpointStore, apiKey, KEY_PREFIX } = await import('./endpoints.ts');
    // The settings came back from this device; of the keys, only the remembered one.
    expect(
      useEndpointStore
        .getState()
        .endpoints.map((e) => e.id)
        .sort(),
    ).toEqual([JUDGE.id, MODEL.id]);
    expect(apiKey(MODEL.id)).toBe('');
    expect(apiKey(JUDGE.id)).toBe('sk-judge');
    const bench = (await getBench(benchId))!;
    expect(benchKeys(bench)).toEqual({ 'judge:big@127.0.0.1:9000': 'sk-judge' });
    expect(missingKeys(bench).map((r) => r.id)).toEqual(['endpoint:qwen@127.0.0.1:8000']);

    await useBenchStore.getState().init();
    // Resumed without typing the key: the job has the remembered key only.
    await useBenchStore.getState().resume(benchId);
    expect(started.at(-1)!.spec).toEqual({ kind: 'bench', benchId, secrets: { apiKeys: { 'judge:big@127.0.0.1:9000': 'sk-judge' } } });
    emit({ type: 'status', jobId: started.at(-1)!.jobId, state: 'stopped' });

    // The key typed on resume goes to the shared endpoint (in memory, as not ticked) and to the job.
    await useBenchStore.getState().resume(benchId, { 'endpoint:qwen@127.0.0.1:8000': { key: 'sk-typed', remember: false } });
    expect(started.at(-1)!.spec).toEqual({
      kind: 'bench',
      benchId,
      secrets: { apiKeys: { 'endpoint:qwen@127.0.0.1:8000': 'sk-typed', 'judge:big@127.0.0.1:9000': 'sk-judge' } },
    });
    emit({ type: 'status', jobId: started.at(-1)!.jobId, state: 'stopped' });
    expect(apiKey(MODEL.id)).toBe('sk-typed');
    expect(device.has(KEY_PREFIX + MODEL.id)).toBe(false);
    expect(missingKeys(await getBench(benchId).then((b) => b!))).toEqual([]);

    // An endpoint no longer set up here (removed in the Playground): a typed, remembered key sets it up again.
    useEndpointStore.getState().remove(MODEL.id);
    expect(missingKeys(bench).map((r) => r.id)).toEqual(['endpoint:qwen@127.0.0.1:8000']);
    await useBenchStore.getState().resume(benchId, { 'endpoint:qwen@127.0.0.1:8000': { key: 'sk-kept', remember: true } });
    emit({ type: 'status', jobId: started.at(-1)!.jobId, state: 'stopped' });
    const again = useEndpointStore.getState().endpoints.find((e) => e.model === 'qwen')!;
    expect(again).toMatchObject({ baseUrl: 'http://127.0.0.1:8000/v1', model: 'qwen' });
    expect(device.get(KEY_PREFIX + again.id)).toBe('sk-kept');
    expect(device.get('lwm.endpoints')).not.toMatch(/sk-(secret|judge|typed|kept)/);
    expect(JSON.stringify(await getBench(benchId))).not.toMatch(/sk-(secret|judge|typed|kept)/);

    vi.resetModules(); // and after another reload, that remembered key is used without asking
    const reloaded = await import('./bench.ts');
    expect(reloaded.benchKeys(bench)).toEqual({ 'endpoint:qwen@127.0.0.1:8000': 'sk-kept', 'judge:big@127.0.0.1:9000': 'sk-judge' });
    expect(reloaded.missingKeys(bench)).toEqual([]);
  });

  it('starts a bench of baselines and the local judge in a browser without WebGPU', async () => {
    vi.resetModules();
    Object.defineProperty(globalThis, 'navigator', { value: {}, configurable: true });
    try {
      const { useBenchStore } = await import('./bench.ts');
      const id = await useBenchStore.getState().create({ ...draft(), checkpoints: [], endpoints: [], judge: { kind: 'local' } });
      expect(id).not.toBeNull();
      expect(useBenchStore.getState().error).toBeNull();
      expect(started.at(-1)!.spec).toEqual({ kind: 'bench', benchId: id, secrets: { apiKeys: {} } });
      emit({ type: 'status', jobId: started.at(-1)!.jobId, state: 'stopped' });
    } finally {
      Object.defineProperty(globalThis, 'navigator', { value: { gpu: {} }, configurable: true });
    }
  });

  it('a Hugging Face folder: recorded by what it is (no files), its files sent with the job while it is open in the page', async () => {
    const { benchFromDraft, benchFolderFiles } = await import('./bench.ts');
    const hf = { folderId: 'Tiny#x', name: 'Tiny', architecture: 'LlamaForCausalLM', parameters: 60_000, context: 128, memoryGiB: 1 };
    const record = benchFromDraft({ ...draft(), folders: [hf, hf] }, 'h', 1);
    expect(record.backends.filter((b) => b.kind === 'hf')).toEqual([{ id: 'hf:Tiny#x', name: 'hf:Tiny', kind: 'hf', hf }]);
    const files = [{ path: 'Tiny/config.json', file: new Blob(['{}']) }];
    expect(benchFolderFiles(record, (id) => (id === 'Tiny#x' ? files : undefined))).toEqual({ 'hf:Tiny#x': files });
    // Not picked again since a reload: no files; the job tells the user to pick the folder again.
    expect(benchFolderFiles(record, () => undefined)).toEqual({});
  });

  it("an ONNX folder: recorded with its model file and where it runs (no files), its files sent with the job beside a Hugging Face folder's", async () => {
    const { benchFromDraft, benchFolderFiles } = await import('./bench.ts');
    const hf = { folderId: 'Tiny#x', name: 'Tiny', architecture: 'LlamaForCausalLM', parameters: 60_000, context: 128, memoryGiB: 1 };
    const onnx = { folderId: 'TinyOnnx#y', name: 'TinyOnnx', file: 'onnx/model_q4.onnx', execution: 'wasm' as const };
    const record = benchFromDraft({ ...draft(), folders: [hf], onnx: [onnx, onnx] }, 'o', 1);
    expect(record.backends.filter((b) => b.kind === 'onnx')).toEqual([{ id: 'onnx:TinyOnnx#y', name: 'onnx:TinyOnnx', kind: 'onnx', onnx }]);
    const hfFiles = [{ path: 'Tiny/config.json', file: new Blob(['{}']) }];
    const onnxFiles = [{ path: 'TinyOnnx/onnx/model_q4.onnx', file: new Blob(['x']) }];
    expect(
      benchFolderFiles(
        record,
        (id) => (id === 'Tiny#x' ? hfFiles : undefined),
        (id) => (id === 'TinyOnnx#y' ? onnxFiles : undefined),
      ),
    ).toEqual({ 'hf:Tiny#x': hfFiles, 'onnx:TinyOnnx#y': onnxFiles });
    expect(
      benchFolderFiles(
        record,
        () => undefined,
        () => undefined,
      ),
    ).toEqual({});
  });
});

let benchId = '';

const settle = () => new Promise((r) => setTimeout(r, 300));

function draft() {
  return {
    datasetId: 'd',
    datasetName: 'Default',
    domains: ['terminal'],
    perDomain: 4,
    evalFraction: 0.1,
    seed: 0,
    baselines: ['copy-last', 'reference'] as ('copy-last' | 'reference')[],
    checkpoints: [{ runId: 'run-x-abcd', runName: 'SFT run', stage: 'sft', tag: 'last' as const, step: 8, key: 'k1' }],
    endpoints: [MODEL],
    generation: {},
    judge: { kind: 'endpoint' as const, endpoint: JUDGE },
  };
}
