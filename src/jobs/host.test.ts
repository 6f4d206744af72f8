import { describe, expect, it } from 'vitest';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { DeviceLostError } from '../gpu/errors.ts';
import type { RuntimeEvent } from '../gpu/runtime.ts';
import { JobHost, type JobHostTiming, type JobRunner } from './host.ts';
import { UserFacingError } from '../train/context.ts';
import type { FromWorker } from './protocol.ts';

const fakeRuntime = async () => ({ lost: null, on: () => () => {} }) as unknown as GpuRuntime;
const tick = () => new Promise((r) => setTimeout(r, 0));

function makeHost(runners: Record<string, JobRunner>) {
  const events: FromWorker[] = [];
  const host = new JobHost(fakeRuntime, runners, (m) => events.push(m));
  const states = (id: string) => events.filter((e): e is Extract<FromWorker, { type: 'status' }> => e.type === 'status' && e.jobId === id).map((e) => e.state);
  return { host, events, states };
}

/** A job of `n` steps that waits on `gate()` before each step so tests control time. */
function steppedJob(n: number, gates: (() => void)[]): JobRunner {
  return async (_spec, ctx) => {
    for (let i = 0; i < n; i++) {
      await ctx.step();
      await new Promise<void>((r) => gates.push(r));
      ctx.metric(i, { loss: 1 / (i + 1) });
    }
    return { steps: n };
  };
}

describe('JobHost', () => {
  it('runs a job to completion, streaming metrics', async () => {
    const gates: (() => void)[] = [];
    const { host, events, states } = makeHost({ t: steppedJob(3, gates) });
    host.handle({ type: 'start', jobId: 'a', spec: { kind: 't' } });
    for (let i = 0; i < 3; i++) {
      while (!gates.length) await tick();
      gates.shift()!();
    }
    while (!events.some((e) => e.type === 'done')) await tick();
    expect(states('a')).toEqual(['queued', 'running', 'done']);
    expect(events.filter((e) => e.type === 'metric').map((e) => (e as { step: number }).step)).toEqual([0, 1, 2]);
    expect(events.find((e) => e.type === 'done')).toMatchObject({ result: { steps: 3 } });
  });

  it('pauses between steps, resumes, and stops on request', async () => {
    const gates: (() => void)[] = [];
    const { host, events, states } = makeHost({ t: steppedJob(100, gates) });
    host.handle({ type: 'start', jobId: 'b', spec: { kind: 't' } });
    while (!gates.length) await tick();
    host.handle({ type: 'pause', jobId: 'b' });
    gates.shift()!(); // finishes step 0; step 1 must wait for resume
    for (let i = 0; i < 5; i++) await tick();
    expect(gates.length).toBe(0);
    expect(events.filter((e) => e.type === 'metric').length).toBe(1);
    host.handle({ type: 'resume', jobId: 'b' });
    while (!gates.length) await tick();
    host.handle({ type: 'stop', jobId: 'b' });
    gates.shift()!();
    while (!states('b').includes('stopped')) await tick();
    expect(states('b')).toEqual(['queued', 'running', 'paused', 'running', 'stopping', 'stopped']);
    expect(events.some((e) => e.type === 'done')).toBe(false);
  });

  it('reports a skipGpu job with a user-facing message and keeps serving', async () => {
    const { host, events, states } = makeHost({
      bad: async () => {
        throw new UserFacingError('The dataset has no turns to train on.');
      },
      ok: async () => 42,
    });
    host.handle({ type: 'start', jobId: 'c', spec: { kind: 'bad' } });
    host.handle({ type: 'start', jobId: 'd', spec: { kind: 'ok' } });
    while (!events.some((e) => e.type === 'done')) await tick();
    expect(events.find((e) => e.type === 'error')).toMatchObject({ jobId: 'c', message: 'The dataset has no turns to train on.' });
    expect(states('c')).toContain('failed');
    expect(events.find((e) => e.type === 'done')).toMatchObject({ jobId: 'd', result: 42 });
  });

  it('rejects unknown kinds and duplicate ids with a message', () => {
    const { host, events } = makeHost({ ok: async () => 1 });
    host.handle({ type: 'start', jobId: 'e', spec: { kind: 'nope' } });
    expect(events.at(-1)).toMatchObject({ type: 'error', message: expect.stringContaining("Unknown job kind 'nope'") });
    host.handle({ type: 'start', jobId: 'f', spec: { kind: 'ok' } });
    host.handle({ type: 'start', jobId: 'f', spec: { kind: 'ok' } });
    expect(events.at(-1)).toMatchObject({ type: 'error', message: expect.stringContaining('already exists') });
  });

  describe('a lost device', () => {
    /** A runtime whose device the test loses; each job after a loss gets a fresh one. */
    function losingRuntimes() {
      const made: { lose(): void; listeners: Set<(e: RuntimeEvent) => void> }[] = [];
      const runtime = async () => {
        const listeners = new Set<(e: RuntimeEvent) => void>();
        const rt = {
          lost: null as DeviceLostError | null,
          on(l: (e: RuntimeEvent) => void) {
            listeners.add(l);
            return () => listeners.delete(l);
          },
        };
        made.push({
          listeners,
          lose() {
            rt.lost = new DeviceLostError('destroyed', 'Device was destroyed.');
            for (const l of [...listeners]) l({ type: 'lost', error: rt.lost });
          },
        });
        return rt as unknown as GpuRuntime;
      };
      return { runtime, made };
    }

    function hostOn(runtime: () => Promise<GpuRuntime>, runners: Record<string, JobRunner>, timing: JobHostTiming = { unwindWaitMs: 50, lossSettleMs: 50 }) {
      const events: FromWorker[] = [];
      const host = new JobHost(runtime, runners, (m) => events.push(m), timing);
      const states = (id: string) =>
        events.filter((e): e is Extract<FromWorker, { type: 'status' }> => e.type === 'status' && e.jobId === id).map((e) => e.state);
      return { host, events, states };
    }

    const LOST = /^The GPU device was lost \(destroyed\): Device was destroyed\. The job stopped; a training run can be resumed from its last checkpoint/;

    it('fails a job waiting on the GPU at once, with a message, and the next job runs on a fresh device', async () => {
      const { runtime, made } = losingRuntimes();
      const { host, events, states } = hostOn(runtime, {
        // A step whose GPU work never completes (what a readback on a lost device may do).
        hang: async (_spec, ctx) => {
          await ctx.step();
          await new Promise(() => {});
        },
        ok: async () => 'fine',
      });
      host.handle({ type: 'start', jobId: 'g', spec: { kind: 'hang' } });
      while (!made.length) await tick();
      await tick();
      made[0].lose();
      while (!states('g').includes('failed')) await tick();
      expect(events.find((e) => e.type === 'error')).toMatchObject({ jobId: 'g', message: expect.stringMatching(LOST) });
      expect(events.find((e) => e.type === 'status' && e.state === 'failed')).toMatchObject({ detail: expect.stringMatching(LOST) });
      expect(made[0].listeners.size).toBe(0);
      made.length = 0;
      host.handle({ type: 'start', jobId: 'h', spec: { kind: 'ok' } });
      while (!events.some((e) => e.type === 'done')) await tick();
      expect(events.find((e) => e.type === 'done')).toMatchObject({ jobId: 'h', result: 'fine' });
    });

    it('fails a paused job, and one whose own error follows the loss, with the device-lost message', async () => {
      const { runtime, made } = losingRuntimes();
      const gates: (() => void)[] = [];
      const { host, events, states } = hostOn(runtime, {
        stepped: steppedJob(5, gates),
        readback: async (_spec, ctx) => {
          await ctx.step();
          await new Promise<void>((r) => gates.push(r));
          throw new Error('mapAsync: OperationError'); // the device's loss as a readback sees it
        },
      });
      host.handle({ type: 'start', jobId: 'p', spec: { kind: 'stepped' } });
      while (!gates.length) await tick();
      host.handle({ type: 'pause', jobId: 'p' });
      gates.shift()!();
      await tick();
      made[0].lose();
      while (!states('p').includes('failed')) await tick();
      expect(events.find((e) => e.type === 'error' && e.jobId === 'p')).toMatchObject({ message: expect.stringMatching(LOST) });

      host.handle({ type: 'start', jobId: 'r', spec: { kind: 'readback' } });
      while (made.length < 2 || !gates.length) await tick();
      made[1].lose();
      gates.shift()!();
      while (!states('r').includes('failed')) await tick();
      expect(events.find((e) => e.type === 'error' && e.jobId === 'r')).toMatchObject({ message: expect.stringMatching(LOST) });
    });

    it('starts the next job once the runner the loss cut off has unwound (it still records the run and holds its lock)', async () => {
      const { runtime, made } = losingRuntimes();
      const order: string[] = [];
      let unwind = () => {};
      const { host, states } = hostOn(
        runtime,
        {
          slow: async (_spec, ctx) => {
            await ctx.step();
            await new Promise<void>((r) => (unwind = r)); // a readback the loss has not rejected yet
            order.push('cut-off runner unwound');
            throw new Error('mapAsync: OperationError');
          },
          next: async () => {
            order.push('next job ran');
            return 1;
          },
        },
        { unwindWaitMs: 60_000 },
      );
      host.handle({ type: 'start', jobId: 'u', spec: { kind: 'slow' } });
      while (!made.length) await tick();
      await tick();
      made[0].lose();
      while (!states('u').includes('failed')) await tick(); // reported at once
      host.handle({ type: 'start', jobId: 'v', spec: { kind: 'next' } });
      for (let i = 0; i < 10; i++) await tick();
      expect(states('v')).toEqual(['queued']);
      unwind();
      while (!states('v').includes('done')) await tick();
      expect(order).toEqual(['cut-off runner unwound', 'next job ran']);
    });

    it('a GPU error that comes just before the loss (a readback on the destroyed device) fails the job as lost; one with no loss keeps its own message', async () => {
      const { runtime, made } = losingRuntimes();
      const runner: JobRunner = async (_spec, ctx) => {
        await ctx.step();
        await tick();
        throw new Error("Failed to execute 'mapAsync' on 'GPUBuffer': Buffer was unmapped before mapping was resolved.");
      };
      const { host, events, states } = hostOn(runtime, { readback: runner }, { lossSettleMs: 60_000 });
      host.handle({ type: 'start', jobId: 'w', spec: { kind: 'readback' } });
      while (!made.length) await tick();
      for (let i = 0; i < 5; i++) await tick(); // the readback has failed; the loss is on its way
      expect(states('w')).toEqual(['queued', 'running']);
      made[0].lose();
      while (!states('w').includes('failed')) await tick();
      expect(events.find((e) => e.type === 'error' && e.jobId === 'w')).toMatchObject({ message: expect.stringMatching(LOST) });

      const other = hostOn(runtime, { readback: runner }, { lossSettleMs: 20 });
      other.host.handle({ type: 'start', jobId: 'x', spec: { kind: 'readback' } });
      while (!other.states('x').includes('failed')) await tick();
      expect(other.events.find((e) => e.type === 'error')).toMatchObject({ message: expect.stringMatching(/^The job failed: Failed to execute 'mapAsync'/) });
    });

    it('acquires no runtime for a job that runs the GPU on demand until it asks, and a loss after that ends it', async () => {
      const { runtime, made } = losingRuntimes();
      let skipGpu = true;
      const gates: (() => void)[] = [];
      const onDemand: JobRunner = Object.assign(
        async (_spec: unknown, ctx: Parameters<JobRunner>[1]) => {
          expect(() => ctx.rt).toThrow(/no GPU runtime yet/);
          await new Promise<void>((r) => gates.push(r));
          if (skipGpu) return 'no gpu needed';
          const rt = await ctx.gpu();
          expect(ctx.rt).toBe(rt);
          await new Promise(() => {});
        },
        { gpuOnDemand: true },
      );
      const { host, events, states } = hostOn(runtime, { lazy: onDemand });
      host.handle({ type: 'start', jobId: 'n', spec: { kind: 'lazy' } });
      while (!gates.length) await tick();
      gates.shift()!();
      while (!events.some((e) => e.type === 'done')) await tick();
      expect(made.length).toBe(0);

      skipGpu = false;
      host.handle({ type: 'start', jobId: 'm', spec: { kind: 'lazy' } });
      while (!gates.length) await tick();
      expect(made.length).toBe(0);
      gates.shift()!();
      while (!made.length) await tick();
      await tick();
      made[0].lose();
      while (!states('m').includes('failed')) await tick();
      expect(events.find((e) => e.type === 'error' && e.jobId === 'm')).toMatchObject({ message: expect.stringMatching(LOST) });
    });

    it('fails a job whose device was lost before it began', async () => {
      const { runtime, made } = losingRuntimes();
      let ran = false;
      const { host, events } = hostOn(
        async () => {
          const rt = await runtime();
          made[0].lose();
          return rt;
        },
        {
          t: async () => {
            ran = true;
            return 1;
          },
        },
      );
      host.handle({ type: 'start', jobId: 's', spec: { kind: 't' } });
      while (!events.some((e) => e.type === 'error')) await tick();
      expect(events.find((e) => e.type === 'error')).toMatchObject({ jobId: 's', message: expect.stringMatching(LOST) });
      expect(events.some((e) => e.type === 'done')).toBe(false);
      expect(ran).toBe(false);
    });
  });
});
