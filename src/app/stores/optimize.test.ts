// The prompt-optimization store with a fake worker: a new optimization is stored without any API
// key and its job carries them; the loop's state in progress records grows the lineage on screen;
// after a reload (fresh modules, the same storage) one left running is offered for resuming and
// resuming starts a job for the same record; promoting a candidate saves it as the next template
// version with its parent and note, and can add it to the SFT mix.
import 'fake-indexeddb/auto';
import { describe, expect, it, vi } from 'vitest';
import type { LoopState } from '../../core/optimize/loop.ts';
import { BUILTIN_TEMPLATES } from '../../core/templates/index.ts';
import { deviceStorage } from './testing/deviceStorage.ts';
import { fakeJobs } from './testing/fakeJobs.ts';
import type { OptimizeDraft } from './optimize.ts';

vi.mock('./jobClient.ts', async () => (await import('./testing/fakeJobs.ts')).jobClientModule());
const { started, emit } = fakeJobs();

/** This device's localStorage: it outlives a reload, the modules' memory does not. */
deviceStorage();
const OPTIMIZER = { id: 'ep-opt', baseUrl: 'http://127.0.0.1:8000/v1', model: 'writer', contextLength: null, stream: true };

function draft(): OptimizeDraft {
  return {
    version: 'v0',
    template: structuredClone(BUILTIN_TEMPLATES.v0),
    datasetId: 'd',
    datasetName: 'default',
    domains: ['terminal'],
    evalFraction: 0.5,
    seed: 1,
    devPerDomain: 6,
    testPerDomain: 4,
    backend: { kind: 'copy-last' },
    judge: { kind: 'local' },
    optimizer: { kind: 'endpoint', endpoint: { baseUrl: OPTIMIZER.baseUrl, model: OPTIMIZER.model } },
    generation: {},
    loop: { rounds: 2, candidates: 2, margin: 0, level: 0.95, seed: 1 },
  };
}

/** A loop state after round 1: v0, an accepted candidate and an invalid one. */
function loopState(): LoopState {
  const config = { rounds: 2, candidates: 2, margin: 0, level: 0.95, seed: 1, devSize: 6, testSize: 4 };
  return {
    config,
    versions: [
      { id: 'v0', parent: null, round: 0, text: BUILTIN_TEMPLATES.v0.text, note: 'v0 as it was', optimizer: 'start', status: 'start', mean: 40 },
      {
        id: 'r1c1',
        parent: 'v0',
        round: 1,
        text: `${BUILTIN_TEMPLATES.v0.text}\nNever invent files.`,
        note: 'added "Never invent files"',
        optimizer: 'offline',
        status: 'accepted',
        mean: 60,
      },
      {
        id: 'r1c2',
        parent: 'v0',
        round: 1,
        text: '',
        note: 'the optimizer gave no note',
        optimizer: 'endpoint',
        status: 'invalid',
        reason: 'no template in the reply',
      },
    ],
    best: 'r1c1',
    round: 1,
    pending: [],
    calls: { model: 12, judge: 12 },
    rounds: [{ round: 1, best: 'r1c1', mean: 60, candidates: 2, accepted: 1 }],
  };
}

describe('optimize store', () => {
  it('stores a new optimization without keys, sends them with the job, and grows the lineage from progress', async () => {
    const { useEndpointStore, setApiKey } = await import('./endpoints.ts');
    useEndpointStore.getState().save(OPTIMIZER);
    setApiKey(OPTIMIZER.id, 'sk-writer', false);
    const { useOptimizeStore } = await import('./optimize.ts');
    const { getOptimization } = await import('../../storage/optimize.ts');
    await useOptimizeStore.getState().init();
    const id = (await useOptimizeStore.getState().create(draft()))!;
    const stored = await getOptimization(id);
    expect(JSON.stringify(stored)).not.toMatch(/sk-writer/);
    expect(stored!.backend).toEqual({ id: 'copy-last', name: 'copy-last', kind: 'copy-last' });
    expect(stored!.optimizer).toEqual({ kind: 'endpoint', endpoint: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'writer' } });
    const job = started.at(-1)!;
    expect(job.spec).toEqual({ kind: 'optimize', optId: id, secrets: { apiKeys: { optimizer: 'sk-writer' } } });
    expect(useOptimizeStore.getState().live).toMatchObject({ jobId: job.jobId, optId: id });

    emit({ type: 'status', jobId: job.jobId, state: 'running' });
    emit({ type: 'progress', jobId: job.jobId, data: { optId: id, phase: 'state', state: loopState(), evaluations: { done: 2, planned: 6 }, etaMs: null } });
    // A sample record after the state does not drop the state before the page redraws.
    emit({
      type: 'progress',
      jobId: job.jobId,
      data: { optId: id, phase: 'evaluate', split: 'dev', samples: { done: 3, total: 6 }, evaluations: { done: 2, planned: 6 }, etaMs: 500 },
    });
    await vi.waitFor(() => expect(useOptimizeStore.getState().list.find((o) => o.id === id)?.loop?.best).toBe('r1c1'));
    expect(useOptimizeStore.getState().live?.progress).toMatchObject({ samples: { done: 3, total: 6 }, etaMs: 500 });
    // Another job's records are not this one's.
    emit({
      type: 'progress',
      jobId: 'other',
      data: { optId: 'x', phase: 'state', state: { ...loopState(), best: 'v0' }, evaluations: { done: 0, planned: 0 }, etaMs: null },
    });
    // The worker records the end in storage, then reports it.
    await (await import('../../storage/optimize.ts')).updateOptimization(id, (o) => (o.state = 'stopped'));
    emit({ type: 'status', jobId: job.jobId, state: 'stopped' });
    await vi.waitFor(() => expect(useOptimizeStore.getState().live).toBeNull());
    await vi.waitFor(() => expect(useOptimizeStore.getState().list.find((o) => o.id === id)?.state).toBe('stopped'));
  });

  it('after a reload offers an optimization left running, and resumes it as the same record', async () => {
    const { putOptimization } = await import('../../storage/optimize.ts');
    const { optimizationFromDraft } = await import('./optimize.ts');
    await putOptimization({ ...optimizationFromDraft(draft(), 'cut', 5), state: 'running', loop: loopState() });
    vi.resetModules();
    const { useOptimizeStore } = await import('./optimize.ts');
    await useOptimizeStore.getState().init();
    expect(useOptimizeStore.getState().interrupted.map((o) => o.id)).toEqual(['cut']);
    expect(useOptimizeStore.getState().selectedId).toBe('cut');
    const before = started.length;
    await useOptimizeStore.getState().resume('cut');
    expect(started.length).toBe(before + 1);
    expect(started.at(-1)!.spec).toMatchObject({ kind: 'optimize', optId: 'cut' });
    expect(useOptimizeStore.getState().interrupted).toEqual([]);
    // One job at a time.
    await useOptimizeStore.getState().resume('cut');
    expect(started.length).toBe(before + 1);
    expect(useOptimizeStore.getState().error).toMatch(/running; cancel it first/);
  });

  it('an ONNX folder: recorded as the Bench records it (no files), its files sent with the job on start and resume while the page has them', async () => {
    vi.resetModules(); // a fresh page (the one before still runs the job it resumed)
    const { useOnnxFolderStore } = await import('./onnxFolders.ts');
    const files = [
      { path: 'TinyOnnx/config.json', file: new Blob(['{}']) },
      { path: 'TinyOnnx/onnx/model.onnx', file: new Blob(['x']) },
    ];
    useOnnxFolderStore.setState({ folders: [{ id: 'TinyOnnx#y', name: 'TinyOnnx', files, file: null, status: 'ready', info: null, error: null }] });
    const { useOptimizeStore } = await import('./optimize.ts');
    const { getOptimization, updateOptimization } = await import('../../storage/optimize.ts');
    await useOptimizeStore.getState().init();
    const onnx = { folderId: 'TinyOnnx#y', name: 'TinyOnnx', file: 'onnx/model.onnx', execution: 'wasm' as const };
    const id = (await useOptimizeStore.getState().create({ ...draft(), optimizer: { kind: 'offline' }, backend: { kind: 'onnx', onnx } }))!;
    const stored = await getOptimization(id);
    expect(stored!.backend).toEqual({ id: 'onnx:TinyOnnx#y', name: 'onnx:TinyOnnx', kind: 'onnx', onnx });
    const job = started.at(-1)!;
    expect(job.spec).toEqual({ kind: 'optimize', optId: id, secrets: { apiKeys: {} }, folder: { id: 'TinyOnnx#y', files } });
    await updateOptimization(id, (o) => (o.state = 'stopped'));
    emit({ type: 'status', jobId: job.jobId, state: 'stopped' });
    await vi.waitFor(() => expect(useOptimizeStore.getState().live).toBeNull());
    // Resumed in the same page: the files go again.
    await useOptimizeStore.getState().resume(id);
    expect(started.at(-1)!.spec).toMatchObject({ optId: id, folder: { id: 'TinyOnnx#y', files } });
    await updateOptimization(id, (o) => (o.state = 'stopped'));
    emit({ type: 'status', jobId: started.at(-1)!.jobId, state: 'stopped' });
    await vi.waitFor(() => expect(useOptimizeStore.getState().live).toBeNull());
    // After a reload the page has no files: the job goes without, and says to pick the folder again.
    vi.resetModules();
    const reloaded = await import('./optimize.ts');
    await reloaded.useOptimizeStore.getState().init();
    await reloaded.useOptimizeStore.getState().resume(id);
    expect(started.at(-1)!.spec).toEqual({ kind: 'optimize', optId: id, secrets: { apiKeys: {} } });
    await updateOptimization(id, (o) => (o.state = 'stopped'));
    emit({ type: 'status', jobId: started.at(-1)!.jobId, state: 'stopped' });
    await vi.waitFor(() => expect(reloaded.useOptimizeStore.getState().live).toBeNull());
  });

  it('a Hugging Face folder: its ref in the record, its files only when the page has that folder', async () => {
    const { optimizationFromDraft, optimizationFolder } = await import('./optimize.ts');
    const hf = { folderId: 'Tiny#x', name: 'Tiny', architecture: 'LlamaForCausalLM', parameters: 60_000, context: 128, memoryGiB: 1 };
    const o = optimizationFromDraft({ ...draft(), backend: { kind: 'hf', hf } }, 'h', 1);
    expect(o.backend).toEqual({ id: 'hf:Tiny#x', name: 'hf:Tiny', kind: 'hf', hf });
    const files = [{ path: 'Tiny/config.json', file: new Blob(['{}']) }];
    expect(
      optimizationFolder(
        o,
        (id) => (id === 'Tiny#x' ? files : undefined),
        () => files,
      ),
    ).toEqual({ id: 'Tiny#x', files });
    expect(
      optimizationFolder(
        o,
        () => undefined,
        () => files,
      ),
    ).toBeUndefined();
    expect(
      optimizationFolder(
        optimizationFromDraft(draft(), 'c', 1),
        () => files,
        () => files,
      ),
    ).toBeUndefined();
  });

  it('promotes a candidate to the next template version, with its parent and note, into the SFT mix', async () => {
    vi.resetModules();
    const { putOptimization, getOptimization } = await import('../../storage/optimize.ts');
    const { optimizationFromDraft, useOptimizeStore } = await import('./optimize.ts');
    const { useTemplateStore } = await import('./templates.ts');
    await putOptimization({ ...optimizationFromDraft(draft(), 'p', 7), name: 'mine', state: 'done', loop: loopState() });
    const version = await useOptimizeStore.getState().promote('p', 'r1c1', { addToSft: true });
    const names = useTemplateStore.getState().versions.map((v) => v.version);
    expect(version).toBe('v3');
    expect(names).toContain('v3');
    const saved = useTemplateStore.getState().versions.find((v) => v.version === 'v3')!;
    expect(saved.parent).toBe('v0');
    expect(saved.note).toMatch(/^optimized \(mine, r1c1, dev 60\.0\): added "Never invent files"/);
    expect(saved.template.text).toMatch(/Never invent files\.$/);
    expect(useTemplateStore.getState().stages.sft.v3).toBe(1);
    expect((await getOptimization('p'))!.promoted).toEqual({ r1c1: 'v3' });
    // Twice, or an invalid candidate: refused with the reason.
    expect(await useOptimizeStore.getState().promote('p', 'r1c1')).toBeNull();
    expect(useOptimizeStore.getState().error).toMatch(/promoted already, as v3/);
    expect(await useOptimizeStore.getState().promote('p', 'r1c2')).toBeNull();
    expect(useOptimizeStore.getState().error).toMatch(/not a usable template \(no template in the reply\)/);
  });
});
