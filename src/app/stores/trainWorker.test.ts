// The Train store when the jobs worker fails to load: the user gets the message, the form is not
// left blocked (the store does not call it a lack of WebGPU), and the next start spawns a fresh
// worker that runs the job.
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { JobClient, type WorkerLike } from '../../jobs/client.ts';
import type { FromWorker, ToWorker } from '../../jobs/protocol.ts';

class FakeWorker implements WorkerLike {
  onmessage: ((ev: MessageEvent) => void) | null = null;
  onerror: ((ev: Event) => void) | null = null;
  posted: ToWorker[] = [];
  postMessage(m: ToWorker) {
    this.posted.push(m);
  }
  terminate() {}
  reply(m: FromWorker) {
    this.onmessage?.({ data: m } as MessageEvent);
  }
}
const workers: FakeWorker[] = [];
const client = new JobClient(() => {
  const w = new FakeWorker();
  workers.push(w);
  return w;
});
vi.mock('./jobClient.ts', () => ({ jobClient: () => client }));

beforeAll(() => {
  Object.defineProperty(globalThis, 'navigator', { value: { gpu: {} }, configurable: true });
});

const SPEC = { kind: 'train', train: { kind: 'train', stage: 'sft', preset: 'micro', steps: 4 } } as never;

describe('train store, worker that fails to load', () => {
  it('reports it, keeps the form usable, and the next start runs on a fresh worker', async () => {
    const { useTrainStore } = await import('./train.ts');
    const store = useTrainStore;
    await store.getState().init();
    expect(store.getState().worker).toBe('starting');
    expect(workers).toHaveLength(1);

    // The script 404s: the browser fires a bare error event.
    workers[0].onerror?.(new Event('error'));
    expect(store.getState().worker).not.toBe('unavailable'); // the form's WebGPU check passes
    expect(store.getState().worker).not.toBe('starting'); // and its button is enabled
    expect(store.getState().error).toMatch(/The GPU worker stopped: its script could not be loaded.*the next action starts a fresh worker/);

    // A start while the first worker fails again also ends, and is not left live.
    const first = store.getState().start(SPEC)!;
    expect(first).toBeTruthy();
    expect(workers).toHaveLength(2);
    workers[1].onerror?.(Object.assign(new Event('error'), { message: 'SyntaxError: bad chunk' }));
    expect(store.getState().live).toBeNull();
    expect(store.getState().worker).not.toBe('unavailable');

    // The third worker loads: the job starts there and its events reach the store.
    const runId = store.getState().start(SPEC)!;
    expect(workers).toHaveLength(3);
    const start = workers[2].posted.find((m) => m.type === 'start') as Extract<ToWorker, { type: 'start' }>;
    expect(start.spec).toMatchObject({ runId });
    workers[2].reply({ type: 'ready', adapter: { description: 'fake', isFallbackAdapter: false } } as FromWorker);
    workers[2].reply({ type: 'status', jobId: start.jobId, state: 'running' });
    expect(store.getState().worker).toBe('ready');
    expect(store.getState().live).toMatchObject({ runId, state: 'running' });
  });

  it('a browser without WebGPU still blocks the form', async () => {
    const { useTrainStore } = await import('./train.ts');
    workers[2].reply({ type: 'unavailable', message: 'No WebGPU adapter.' });
    expect(useTrainStore.getState()).toMatchObject({ worker: 'unavailable', workerError: 'No WebGPU adapter.' });
  });
});
