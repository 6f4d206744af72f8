import { describe, expect, it } from 'vitest';
import { JobClient, type WorkerLike } from './client.ts';
import type { FromWorker, ToWorker } from './protocol.ts';

/** A Worker stand-in: records what the page posts and lets the test fire its events. */
class FakeWorker implements WorkerLike {
  onmessage: ((ev: MessageEvent) => void) | null = null;
  onerror: ((ev: Event) => void) | null = null;
  onmessageerror: ((ev: MessageEvent) => void) | null = null;
  posted: ToWorker[] = [];
  terminated = false;
  postMessage(m: ToWorker) {
    this.posted.push(m);
  }
  terminate() {
    this.terminated = true;
  }
  reply(m: FromWorker) {
    this.onmessage?.({ data: m } as MessageEvent);
  }
  /** What a browser fires when the script fails to load: a bare Event, no message. */
  failToLoad() {
    this.onerror?.(new Event('error'));
  }
  crash(message: string) {
    this.onerror?.(Object.assign(new Event('error'), { message }));
  }
}

function setup() {
  const workers: FakeWorker[] = [];
  const client = new JobClient(() => {
    const w = new FakeWorker();
    workers.push(w);
    return w;
  });
  const events: FromWorker[] = [];
  client.on((m) => events.push(m));
  return { client, workers, events };
}

/** Settles within a macrotask or reports 'pending' (a promise that would wait forever). */
async function settled(p: Promise<unknown>): Promise<{ ok: unknown } | { err: string } | 'pending'> {
  const pending = new Promise<'pending'>((r) => setTimeout(() => r('pending'), 0));
  return Promise.race([
    p.then(
      (ok) => ({ ok }),
      (e: Error) => ({ err: e.message }),
    ),
    pending,
  ]);
}

describe('JobClient worker faults', () => {
  it('starts no worker until first use', () => {
    const { workers } = setup();
    expect(workers).toHaveLength(0);
  });

  it('a worker that fails to load rejects the pending job and reports the device unavailable', async () => {
    const { client, workers, events } = setup();
    const jobId = client.start({ kind: 'train' });
    const done = client.wait(jobId);
    workers[0].failToLoad();
    const r = await settled(done);
    expect(r).toEqual({ err: expect.stringContaining('The GPU worker stopped: its script could not be loaded') });
    expect((r as { err: string }).err).toContain('resumed from its last checkpoint');
    expect(events).toContainEqual(expect.objectContaining({ type: 'status', jobId, state: 'failed' }));
    expect(events[0]).toEqual({ type: 'unavailable', message: expect.stringContaining('The GPU worker stopped'), retry: true });
    expect(workers[0].terminated).toBe(true);
  });

  it('a device report pending on a worker that fails to load is answered', () => {
    const { client, workers, events } = setup();
    client.device('report');
    workers[0].failToLoad();
    expect(events).toEqual([{ type: 'unavailable', message: expect.stringContaining('could not be loaded'), retry: true }]);
  });

  it('a worker that crashes mid-job rejects with its error, and the next request starts a fresh worker', async () => {
    const { client, workers, events } = setup();
    const jobId = client.start({ kind: 'train' });
    const done = client.wait(jobId);
    workers[0].reply({ type: 'ready' } as FromWorker);
    workers[0].reply({ type: 'status', jobId, state: 'running' });
    workers[0].reply({ type: 'metric', jobId, step: 1, values: { loss: 3 } });
    workers[0].crash('Uncaught RangeError: out of memory');
    expect(await settled(done)).toEqual({ err: expect.stringContaining('it raised "Uncaught RangeError: out of memory"') });
    // A worker that had a device loses it (the stores offer to resume), it is not 'unavailable'.
    expect(events.filter((e) => e.type === 'lost' || e.type === 'unavailable').map((e) => e.type)).toEqual(['lost']);
    expect(events.findIndex((e) => e.type === 'lost')).toBeLessThan(events.findIndex((e) => e.type === 'status' && e.state === 'failed'));

    const next = client.start({ kind: 'train' });
    expect(workers).toHaveLength(2);
    expect(workers[1].posted).toEqual([{ type: 'start', jobId: next, spec: { kind: 'train' } }]);
    const second = client.wait(next);
    workers[1].reply({ type: 'done', jobId: next, result: 7 });
    expect(await settled(second)).toEqual({ ok: 7 });
  });

  it('an unreadable message fails the worker too', async () => {
    const { client, workers } = setup();
    const jobId = client.start({ kind: 'train' });
    const done = client.wait(jobId);
    workers[0].onmessageerror?.(new MessageEvent('messageerror'));
    expect(await settled(done)).toEqual({ err: expect.stringContaining('could not read') });
  });

  it('jobs that finished before the failure are not failed again; late events of a dead worker are ignored', () => {
    const { client, workers, events } = setup();
    const a = client.start({ kind: 'train' });
    workers[0].reply({ type: 'done', jobId: a, result: null });
    const dead = workers[0];
    dead.failToLoad();
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
    dead.reply({ type: 'log', jobId: a, message: 'late' });
    expect(events.some((e) => e.type === 'log')).toBe(false);
  });
});
