// The Bench store with a fake worker: a new benchmark is stored without any API key and its job
// carries the keys; progress records fill in the results; a stored bench that was running when
// the page went away is offered for resuming, and resuming starts a job for it.
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { FromWorker, JobSpecBase } from '../../train/protocol.ts';

const listeners = new Set<(m: FromWorker) => void>();
const started: { jobId: string; spec: JobSpecBase }[] = [];
const fakeClient = {
  on(l: (m: FromWorker) => void) {
    listeners.add(l);
    return () => listeners.delete(l);
  },
  start(spec: JobSpecBase) {
    const jobId = `job-${started.length + 1}`;
    started.push({ jobId, spec });
    return jobId;
  },
  device() {},
  stop() {},
};
vi.mock('./jobClient.ts', () => ({ jobClient: () => fakeClient }));
const emit = (m: FromWorker) => listeners.forEach((l) => l(m));

beforeAll(() => {
  Object.defineProperty(globalThis, 'navigator', { value: { gpu: {} }, configurable: true });
});

describe('bench store', () => {
  it('stores a new bench without keys, sends them with the job, and merges progress', async () => {
    const { putBench, getBench } = await import('../../storage/bench.ts');
    const { useBenchStore } = await import('./bench.ts');
    // A bench left "running" by a closed page.
    await putBench({ ...(await import('./bench.ts')).benchFromDraft(draft(), 'old', 1), state: 'running' });
    await useBenchStore.getState().init();
    expect(useBenchStore.getState().interrupted.map((b) => b.id)).toEqual(['old']);

    const id = (await useBenchStore.getState().create(draft()))!;
    const stored = await getBench(id);
    expect(JSON.stringify(stored)).not.toContain('sk-secret');
    expect(stored!.backends.map((b) => [b.kind, b.name])).toEqual([
      ['checkpoint', 'local:sft-last-8 [abcd]'],
      ['endpoint', 'endpoint:qwen'],
      ['copy-last', 'copy-last'],
      ['reference', 'reference'],
    ]);
    expect(stored!.judges).toEqual([{ id: 'judge:big@127.0.0.1:9000', kind: 'endpoint', endpoint: { baseUrl: 'http://127.0.0.1:9000/v1', model: 'big' } }]);
    const job = started.at(-1)!;
    expect(job.spec).toEqual({ kind: 'bench', benchId: id, secrets: { apiKeys: { 'endpoint:qwen@127.0.0.1:8000': 'sk-secret', 'judge:big@127.0.0.1:9000': 'sk-judge' } } });

    const result = { benchId: id, backend: 'copy-last', index: 0, prediction: { task: 'terminal', id: 'x', turn_idx: 1, prompt: ['a'], response: ['o'], gen: 'g' }, judged: {} };
    emit({ type: 'progress', jobId: job.jobId, data: { benchId: id, phase: 'generate', backend: 'copy-last', done: 1, total: 10, failed: 0, etaMs: 500, results: [result] } });
    // Applied a few times a second, not per record.
    expect(useBenchStore.getState().results).toEqual([]);
    await settle();
    expect(useBenchStore.getState().results).toEqual([result]);
    expect(useBenchStore.getState().live!.progress!.etaMs).toBe(500);
    // A second record for the same sample replaces it (its judgement arrived).
    const judged = { ...result, judged: { j: { ...result.prediction, failed: true } } };
    emit({ type: 'progress', jobId: job.jobId, data: { benchId: id, phase: 'judge', backend: 'copy-last', judge: 'j', done: 2, total: 10, failed: 1, etaMs: 0, results: [judged] } });
    await settle();
    expect(useBenchStore.getState().results).toEqual([judged]);
    expect(useBenchStore.getState().live!.progress!.done).toBe(2);

    // Another job's messages are not this bench's.
    emit({ type: 'error', jobId: 'someone-else', message: 'nope' });
    expect(useBenchStore.getState().error).toBeNull();
    emit({ type: 'status', jobId: job.jobId, state: 'stopped' });
    expect(useBenchStore.getState().live).toBeNull();

    // A job that fails before its bench began (the status first, then the error): the message
    // shows, and the bench is marked failed with it instead of staying "queued".
    await useBenchStore.getState().resume(id);
    const failing = started.at(-1)!.jobId;
    emit({ type: 'status', jobId: failing, state: 'failed', detail: 'no GPU' });
    emit({ type: 'error', jobId: failing, message: 'WebGPU is not available in this browser.' });
    expect(useBenchStore.getState().error).toBe('WebGPU is not available in this browser.');
    await expect.poll(async () => (await getBench(id))!.state).toBe('failed');
    expect((await getBench(id))!.error).toBe('WebGPU is not available in this browser.');
    useBenchStore.getState().dismissError();

    // Resume the interrupted one: a job for it, the offer gone.
    await useBenchStore.getState().resume('old', { 'endpoint:qwen@127.0.0.1:8000': 'sk-again' });
    expect(started.at(-1)!.spec).toMatchObject({ kind: 'bench', benchId: 'old', secrets: { apiKeys: { 'endpoint:qwen@127.0.0.1:8000': 'sk-again' } } });
    expect(useBenchStore.getState().interrupted).toEqual([]);
  });
});

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
    endpoints: [{ baseUrl: 'http://127.0.0.1:8000/v1/', model: 'qwen', apiKey: 'sk-secret' }],
    generation: {},
    judge: { kind: 'endpoint' as const, baseUrl: 'http://127.0.0.1:9000/v1', model: 'big', apiKey: 'sk-judge' },
  };
}
