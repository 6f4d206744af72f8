// The Sim RL store with a fake worker: an experiment whose world model is an endpoint is stored
// without its API key, and each job for it (the start, a resume after a reload) carries the key
// the endpoint store has at hand for that endpoint; a key not at hand is asked for on resume.
import 'fake-indexeddb/auto';
import { describe, expect, it, vi } from 'vitest';
import { deviceStorage } from './testing/deviceStorage.ts';
import { fakeJobs } from './testing/fakeJobs.ts';

vi.mock('./jobClient.ts', async () => (await import('./testing/fakeJobs.ts')).jobClientModule());
const { started, emit } = fakeJobs();

/** This device's localStorage: it outlives a reload, the modules' memory does not. */
const device = deviceStorage();
const WORLD = { id: 'ep-world', baseUrl: 'http://127.0.0.1:8000/v1/', model: 'world', contextLength: null, stream: false };

describe('Sim RL store: an endpoint world model', () => {
  it('is stored without its key; the job gets the key this device has for it, before and after a reload', async () => {
    const { getExperiment } = await import('../../storage/experiments.ts');
    const { useEndpointStore, setApiKey } = await import('./endpoints.ts');
    const { useSimRlStore, worldKey } = await import('./simrl.ts');
    const { AGENT_DEFAULTS } = await import('../../train/agent/run.ts');
    useEndpointStore.getState().save(WORLD);
    setApiKey(WORLD.id, 'sk-world', true);
    // What the panel's form gives for this endpoint (views/train/simrl.test.ts checks that).
    const world = { kind: 'endpoint' as const, endpoint: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'world', stream: false, concurrency: 8 } };
    const spec = {
      train: { ...AGENT_DEFAULTS, domain: 'terminal' as const, families: ['write_word'] },
      arms: ['model' as const],
      world: 'world at http://127.0.0.1:8000/v1',
    };
    await useSimRlStore.getState().init();
    const id = (await useSimRlStore.getState().create({ spec, world, worldMaxTokens: 16 }))!;
    const stored = await getExperiment(id);
    expect(stored!.world).toEqual(world);
    expect(JSON.stringify(stored)).not.toMatch(/sk-(world|typed|again)/);
    expect(started.at(-1)!.spec).toEqual({ kind: 'simrl', expId: id, secrets: { apiKeys: { world: 'sk-world' } } });
    emit({ type: 'status', jobId: started.at(-1)!.jobId, state: 'stopped' });
    // Another world has no key to send; neither has an endpoint that is not set up here.
    expect(worldKey({ kind: 'copy-last' })).toBeUndefined();
    expect(worldKey({ kind: 'endpoint', endpoint: { baseUrl: 'http://127.0.0.1:9/v1', model: 'world' } })).toBeUndefined();

    vi.resetModules(); // a reload: the remembered key is still on this device
    const reloaded = await import('./simrl.ts');
    await reloaded.useSimRlStore.getState().init();
    await reloaded.useSimRlStore.getState().resume(id);
    expect(started.at(-1)!.spec).toEqual({ kind: 'simrl', expId: id, secrets: { apiKeys: { world: 'sk-world' } } });
    emit({ type: 'status', jobId: started.at(-1)!.jobId, state: 'stopped' });
    // Forgotten on this device: the resume asks for it; left blank, the job goes without one.
    const endpoints = await import('./endpoints.ts');
    endpoints.forgetApiKey(WORLD.id);
    expect(reloaded.worldKeyMissing(stored!.world)).toBe(true);
    await reloaded.useSimRlStore.getState().resume(id, undefined, { key: '', remember: false });
    expect(started.at(-1)!.spec).toEqual({ kind: 'simrl', expId: id });
    emit({ type: 'status', jobId: started.at(-1)!.jobId, state: 'stopped' });
    // Typed on resume: the job has it, this page keeps it in memory (not ticked), the record never.
    await reloaded.useSimRlStore.getState().resume(id, undefined, { key: 'sk-typed', remember: false });
    expect(started.at(-1)!.spec).toEqual({ kind: 'simrl', expId: id, secrets: { apiKeys: { world: 'sk-typed' } } });
    emit({ type: 'status', jobId: started.at(-1)!.jobId, state: 'stopped' });
    expect(reloaded.worldKeyMissing(stored!.world)).toBe(false);
    expect([...device.values()].some((v) => v.includes('sk-typed'))).toBe(false);
    expect(JSON.stringify(await getExperiment(id))).not.toMatch(/sk-(world|typed|again)/);
    // The endpoint removed here since: the typed key sets it up again.
    endpoints.useEndpointStore.getState().remove(WORLD.id);
    expect(reloaded.worldKeyMissing(stored!.world)).toBe(true);
    await reloaded.useSimRlStore.getState().resume(id, undefined, { key: 'sk-again', remember: true });
    expect(started.at(-1)!.spec).toEqual({ kind: 'simrl', expId: id, secrets: { apiKeys: { world: 'sk-again' } } });
    expect(endpoints.useEndpointStore.getState().endpoints.map((e) => [e.baseUrl, e.model])).toEqual([['http://127.0.0.1:8000/v1', 'world']]);
  });
});
