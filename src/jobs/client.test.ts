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
    const jobId = client.start({ kind: 'selftest' });
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
    const jobId = client.start({ kind: 'selftest' });
    const done = client.wait(jobId);
    workers[0].reply({ type: 'ready' } as FromWorker);
    workers[0].reply({ type: 'status', jobId, state: 'running' });
    workers[0].reply({ type: 'metric', jobId, step: 1, values: { loss: 3 } });
    workers[0].crash('Uncaught RangeError: out of memory');
    expect(await settled(done)).toEqual({ err: expect.stringContaining('it raised "Uncaught RangeError: out of memory"') });
    // A worker that had a device loses it (the stores offer to resume), it is not 'unavailable'.
    expect(events.filter((e) => e.type === 'lost' || e.type === 'unavailable').map((e) => e.type)).toEqual(['lost']);
    expect(events.findIndex((e) => e.type === 'lost')).toBeLessThan(events.findIndex((e) => e.type === 'status' && e.state === 'failed'));

    const next = client.start({ kind: 'selftest' });
    expect(workers).toHaveLength(2);
    expect(workers[1].posted).toEqual([{ type: 'start', jobId: next, spec: { kind: 'selftest' } }]);
    const second = client.wait(next);
    workers[1].reply({ type: 'done', jobId: next, result: 7 });
    expect(await settled(second)).toEqual({ ok: 7 });
  });

  it('an unreadable message fails the worker too', async () => {
    const { client, workers } = setup();
    const jobId = client.start({ kind: 'selftest' });
    const done = client.wait(jobId);
    workers[0].onmessageerror?.(new MessageEvent('messageerror'));
    expect(await settled(done)).toEqual({ err: expect.stringContaining('could not read') });
  });

  it('jobs that finished before the failure are not failed again; late events of a dead worker are ignored', () => {
    const { client, workers, events } = setup();
    const a = client.start({ kind: 'selftest' });
    workers[0].reply({ type: 'done', jobId: a, result: null });
    const dead = workers[0];
    dead.failToLoad();
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
    dead.reply({ type: 'log', jobId: a, message: 'late' });
    expect(events.some((e) => e.type === 'log')).toBe(false);
  });
});

describe('JobClient.run: one typed way to start and follow a job', () => {
  it("hands each event to its handler and settles with the kind's result", async () => {
    const { client, workers } = setup();
    const seen: string[] = [];
    const { jobId, outcome } = client.run(
      { kind: 'selftest' },
      {
        onProgress: (r) => seen.push(`progress ${r.name} ${r.pass}`),
        onLog: (m) => seen.push(`log ${m}`),
        onStatus: (s) => seen.push(`status ${s}`),
      },
    );
    expect(workers[0].posted).toEqual([{ type: 'start', jobId, spec: { kind: 'selftest' } }]);
    const w = workers[0];
    w.reply({ type: 'status', jobId, state: 'running' });
    w.reply({ type: 'progress', jobId: 'another-job', data: { name: 'not mine', pass: false, detail: '', ms: 0 } });
    w.reply({ type: 'progress', jobId, data: { name: 'matmul', pass: true, detail: 'ok', ms: 3 } });
    w.reply({ type: 'log', jobId, message: 'pass matmul' });
    w.reply({ type: 'done', jobId, result: { passed: 1, total: 1, results: [] } });
    expect(await outcome).toEqual({ state: 'done', result: { passed: 1, total: 1, results: [] } });
    expect(seen).toEqual(['status running', 'progress matmul true', 'log pass matmul']);
  });

  it("fails with a JobError carrying the worker's kind; a device loss meanwhile marks it lost", async () => {
    const { client, workers } = setup();
    const a = client.run({ kind: 'selftest' });
    workers[0].reply({ type: 'error', jobId: a.jobId, message: 'The checkpoint holds no tokenizer.', kind: 'checkpoint' });
    const out = await a.outcome;
    expect(out).toMatchObject({ state: 'failed', error: { name: 'JobError', kind: 'checkpoint', lost: false, message: 'The checkpoint holds no tokenizer.' } });
    const b = client.run({ kind: 'selftest' });
    workers[0].reply({ type: 'lost', message: 'The GPU device was lost.' });
    workers[0].reply({ type: 'error', jobId: b.jobId, message: 'The job failed: mapAsync aborted' });
    expect(await b.outcome).toMatchObject({ state: 'failed', error: { kind: 'bug', lost: true } });
  });

  it('aborting the signal asks the worker to stop the job; its stop settles the outcome', async () => {
    const { client, workers } = setup();
    const abort = new AbortController();
    const { jobId, outcome } = client.run({ kind: 'selftest' }, { signal: abort.signal });
    abort.abort();
    expect(workers[0].posted.at(-1)).toEqual({ type: 'stop', jobId });
    workers[0].reply({ type: 'status', jobId, state: 'stopped' });
    expect(await outcome).toEqual({ state: 'stopped' });
    const r = client.result({ kind: 'selftest' });
    const id = (workers[0].posted.at(-1) as { jobId: string }).jobId;
    workers[0].reply({ type: 'status', jobId: id, state: 'stopped' });
    await expect(r).rejects.toThrow('The job was stopped.');
  });
});
