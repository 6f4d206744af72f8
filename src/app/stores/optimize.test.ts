// The prompt-optimisation store with a fake worker: a new optimisation is stored without any API
// key and its job carries them; the loop's state in progress records grows the lineage on screen;
// after a reload (fresh modules, the same storage) one left running is offered for resuming and
// resuming starts a job for the same record; promoting a candidate saves it as the next template
// version with its parent and note, and can add it to the SFT mix.
import 'fake-indexeddb/auto';
import { describe, expect, it, vi } from 'vitest';
import type { LoopState } from '../../core/optimize/loop.ts';
import { BUILTIN_TEMPLATES } from '../../core/templates/index.ts';
import { fakeJobs } from './testing/fakeJobs.ts';
import type { OptimiseDraft } from './optimize.ts';

vi.mock('./jobClient.ts', async () => (await import('./testing/fakeJobs.ts')).jobClientModule());
const { started, emit } = fakeJobs();

const device = new Map<string, string>();
Object.defineProperty(globalThis, 'localStorage', {
  configurable: true,
  value: {
    getItem: (k: string) => device.get(k) ?? null,
    setItem: (k: string, v: string) => void device.set(k, String(v)),
    removeItem: (k: string) => void device.delete(k),
    clear: () => device.clear(),
    key: (i: number) => [...device.keys()][i] ?? null,
    get length() {
      return device.size;
    },
  },
});
const OPTIMISER = { id: 'ep-opt', baseUrl: 'http://127.0.0.1:8000/v1', model: 'writer', contextLength: null, stream: true };

function draft(): OptimiseDraft {
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
    optimiser: { kind: 'endpoint', endpoint: { baseUrl: OPTIMISER.baseUrl, model: OPTIMISER.model } },
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
      { id: 'v0', parent: null, round: 0, text: BUILTIN_TEMPLATES.v0.text, note: 'v0 as it was', optimiser: 'start', status: 'start', mean: 40 },
      {
        id: 'r1c1',
        parent: 'v0',
        round: 1,
        text: `${BUILTIN_TEMPLATES.v0.text}\nNever invent files.`,
        note: 'added "Never invent files"',
        optimiser: 'offline',
        status: 'accepted',
        mean: 60,
      },
      {
        id: 'r1c2',
        parent: 'v0',
        round: 1,
        text: '',
        note: 'the optimiser gave no note',
        optimiser: 'endpoint',
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

describe('optimise store', () => {
  it('stores a new optimisation without keys, sends them with the job, and grows the lineage from progress', async () => {
    const { useEndpointStore, setApiKey } = await import('./endpoints.ts');
    useEndpointStore.getState().save(OPTIMISER);
    setApiKey(OPTIMISER.id, 'sk-writer', false);
    const { useOptimiseStore } = await import('./optimize.ts');
    const { getOptimisation } = await import('../../storage/optimize.ts');
    await useOptimiseStore.getState().init();
    const id = (await useOptimiseStore.getState().create(draft()))!;
    const stored = await getOptimisation(id);
    expect(JSON.stringify(stored)).not.toContain('sk-');
    expect(stored!.backend).toEqual({ id: 'copy-last', name: 'copy-last', kind: 'copy-last' });
    expect(stored!.optimiser).toEqual({ kind: 'endpoint', endpoint: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'writer' } });
    const job = started.at(-1)!;
    expect(job.spec).toEqual({ kind: 'optimize', optId: id, secrets: { apiKeys: { optimiser: 'sk-writer' } } });
    expect(useOptimiseStore.getState().live).toMatchObject({ jobId: job.jobId, optId: id });

    emit({ type: 'status', jobId: job.jobId, state: 'running' });
    emit({ type: 'progress', jobId: job.jobId, data: { optId: id, phase: 'state', state: loopState(), evaluations: { done: 2, planned: 6 }, etaMs: null } });
    // A sample record after the state does not drop the state before the page redraws.
    emit({
      type: 'progress',
      jobId: job.jobId,
      data: { optId: id, phase: 'evaluate', split: 'dev', samples: { done: 3, total: 6 }, evaluations: { done: 2, planned: 6 }, etaMs: 500 },
    });
    await vi.waitFor(() => expect(useOptimiseStore.getState().list.find((o) => o.id === id)?.loop?.best).toBe('r1c1'));
    expect(useOptimiseStore.getState().live?.progress).toMatchObject({ samples: { done: 3, total: 6 }, etaMs: 500 });
    // Another job's records are not this one's.
    emit({
      type: 'progress',
      jobId: 'other',
      data: { optId: 'x', phase: 'state', state: { ...loopState(), best: 'v0' }, evaluations: { done: 0, planned: 0 }, etaMs: null },
    });
    // The worker records the end in storage, then reports it.
    await (await import('../../storage/optimize.ts')).updateOptimisation(id, (o) => (o.state = 'stopped'));
    emit({ type: 'status', jobId: job.jobId, state: 'stopped' });
    await vi.waitFor(() => expect(useOptimiseStore.getState().live).toBeNull());
    await vi.waitFor(() => expect(useOptimiseStore.getState().list.find((o) => o.id === id)?.state).toBe('stopped'));
  });

  it('after a reload offers an optimisation left running, and resumes it as the same record', async () => {
    const { putOptimisation } = await import('../../storage/optimize.ts');
    const { optimisationFromDraft } = await import('./optimize.ts');
    await putOptimisation({ ...optimisationFromDraft(draft(), 'cut', 5), state: 'running', loop: loopState() });
    vi.resetModules();
    const { useOptimiseStore } = await import('./optimize.ts');
    await useOptimiseStore.getState().init();
    expect(useOptimiseStore.getState().interrupted.map((o) => o.id)).toEqual(['cut']);
    expect(useOptimiseStore.getState().selectedId).toBe('cut');
    const before = started.length;
    await useOptimiseStore.getState().resume('cut');
    expect(started.length).toBe(before + 1);
    expect(started.at(-1)!.spec).toMatchObject({ kind: 'optimize', optId: 'cut' });
    expect(useOptimiseStore.getState().interrupted).toEqual([]);
    // One job at a time.
    await useOptimiseStore.getState().resume('cut');
    expect(started.length).toBe(before + 1);
    expect(useOptimiseStore.getState().error).toMatch(/running; cancel it first/);
  });

  it('an ONNX folder: recorded as the Bench records it (no files), its files sent with the job on start and resume while the page has them', async () => {
    vi.resetModules(); // a fresh page (the one before still runs the job it resumed)
    const { useOnnxFolderStore } = await import('./onnxFolders.ts');
    const files = [
      { path: 'TinyOnnx/config.json', file: new Blob(['{}']) },
      { path: 'TinyOnnx/onnx/model.onnx', file: new Blob(['x']) },
    ];
    useOnnxFolderStore.setState({ folders: [{ id: 'TinyOnnx#y', name: 'TinyOnnx', files, file: null, status: 'ready', info: null, error: null }] });
    const { useOptimiseStore } = await import('./optimize.ts');
    const { getOptimisation, updateOptimisation } = await import('../../storage/optimize.ts');
    await useOptimiseStore.getState().init();
    const onnx = { folderId: 'TinyOnnx#y', name: 'TinyOnnx', file: 'onnx/model.onnx', execution: 'wasm' as const };
    const id = (await useOptimiseStore.getState().create({ ...draft(), optimiser: { kind: 'offline' }, backend: { kind: 'onnx', onnx } }))!;
    const stored = await getOptimisation(id);
    expect(stored!.backend).toEqual({ id: 'onnx:TinyOnnx#y', name: 'onnx:TinyOnnx', kind: 'onnx', onnx });
    const job = started.at(-1)!;
    expect(job.spec).toEqual({ kind: 'optimize', optId: id, secrets: { apiKeys: {} }, folder: { id: 'TinyOnnx#y', files } });
    await updateOptimisation(id, (o) => (o.state = 'stopped'));
    emit({ type: 'status', jobId: job.jobId, state: 'stopped' });
    await vi.waitFor(() => expect(useOptimiseStore.getState().live).toBeNull());
    // Resumed in the same page: the files go again.
    await useOptimiseStore.getState().resume(id);
    expect(started.at(-1)!.spec).toMatchObject({ optId: id, folder: { id: 'TinyOnnx#y', files } });
    await updateOptimisation(id, (o) => (o.state = 'stopped'));
    emit({ type: 'status', jobId: started.at(-1)!.jobId, state: 'stopped' });
    await vi.waitFor(() => expect(useOptimiseStore.getState().live).toBeNull());
    // After a reload the page has no files: the job goes without, and says to pick the folder again.
    vi.resetModules();
    const reloaded = await import('./optimize.ts');
    await reloaded.useOptimiseStore.getState().init();
    await reloaded.useOptimiseStore.getState().resume(id);
    expect(started.at(-1)!.spec).toEqual({ kind: 'optimize', optId: id, secrets: { apiKeys: {} } });
    await updateOptimisation(id, (o) => (o.state = 'stopped'));
    emit({ type: 'status', jobId: started.at(-1)!.jobId, state: 'stopped' });
    await vi.waitFor(() => expect(reloaded.useOptimiseStore.getState().live).toBeNull());
  });

  it('a Hugging Face folder: its ref in the record, its files only when the page has that folder', async () => {
    const { optimisationFromDraft, optimisationFolder } = await import('./optimize.ts');
    const hf = { folderId: 'Tiny#x', name: 'Tiny', architecture: 'LlamaForCausalLM', parameters: 60_000, context: 128, memoryGiB: 1 };
    const o = optimisationFromDraft({ ...draft(), backend: { kind: 'hf', hf } }, 'h', 1);
    expect(o.backend).toEqual({ id: 'hf:Tiny#x', name: 'hf:Tiny', kind: 'hf', hf });
    const files = [{ path: 'Tiny/config.json', file: new Blob(['{}']) }];
    expect(
      optimisationFolder(
        o,
        (id) => (id === 'Tiny#x' ? files : undefined),
        () => files,
      ),
    ).toEqual({ id: 'Tiny#x', files });
    expect(
      optimisationFolder(
        o,
        () => undefined,
        () => files,
      ),
    ).toBeUndefined();
    expect(
      optimisationFolder(
        optimisationFromDraft(draft(), 'c', 1),
        () => files,
        () => files,
      ),
    ).toBeUndefined();
  });

  it('promotes a candidate to the next template version, with its parent and note, into the SFT mix', async () => {
    vi.resetModules();
    const { putOptimisation, getOptimisation } = await import('../../storage/optimize.ts');
    const { optimisationFromDraft, useOptimiseStore } = await import('./optimize.ts');
    const { useTemplateStore } = await import('./templates.ts');
    await putOptimisation({ ...optimisationFromDraft(draft(), 'p', 7), name: 'mine', state: 'done', loop: loopState() });
    const version = await useOptimiseStore.getState().promote('p', 'r1c1', { addToSft: true });
    const names = useTemplateStore.getState().versions.map((v) => v.version);
    expect(version).toBe('v3');
    expect(names).toContain('v3');
    const saved = useTemplateStore.getState().versions.find((v) => v.version === 'v3')!;
    expect(saved.parent).toBe('v0');
    expect(saved.note).toMatch(/^optimised \(mine, r1c1, dev 60\.0\): added "Never invent files"/);
    expect(saved.template.text).toMatch(/Never invent files\.$/);
    expect(useTemplateStore.getState().stages.sft.v3).toBe(1);
    expect((await getOptimisation('p'))!.promoted).toEqual({ r1c1: 'v3' });
    // Twice, or an invalid candidate: refused with the reason.
    expect(await useOptimiseStore.getState().promote('p', 'r1c1')).toBeNull();
    expect(useOptimiseStore.getState().error).toMatch(/promoted already, as v3/);
    expect(await useOptimiseStore.getState().promote('p', 'r1c2')).toBeNull();
    expect(useOptimiseStore.getState().error).toMatch(/not a usable template \(no template in the reply\)/);
  });
});
