import { describe, expect, it } from 'vitest';
import { WebGPUUnavailableError } from '../gpu/errors.ts';
import type { GpuRuntime, RuntimeEvent } from '../gpu/runtime.ts';
import { WorkerDevice } from './device.ts';
import { isToWorker, type FromWorker } from './protocol.ts';

/** A runtime stand-in: its device's destroy() reports a loss, as a real device's does. */
function fakeRuntime(n: number) {
  const listeners = new Set<(e: RuntimeEvent) => void>();
  const rt = {
    report: { vendor: `vendor-${n}`, architecture: 'arch', device: '', description: '', isFallbackAdapter: true },
    describe: () => `vendor-${n} / arch`,
    stats: () => ({ live: n, bytes: 1024 * n, peakLive: n, peakBytes: 1024 * n, byLabel: {} }),
    on: (l: (e: RuntimeEvent) => void) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    device: {
      destroy: () =>
        queueMicrotask(() =>
          listeners.forEach((l) =>
            l({ type: 'lost', error: Object.assign(new Error(`device ${n} was lost (destroyed)`), { reason: 'destroyed' }) } as RuntimeEvent),
          ),
        ),
    },
  };
  return rt as unknown as GpuRuntime;
}

const tick = () => new Promise((r) => setTimeout(r, 0));

function setup(create: (n: number) => Promise<GpuRuntime>) {
  const events: FromWorker[] = [];
  let created = 0;
  const device = new WorkerDevice(
    () => create(++created),
    (m) => events.push(m),
  );
  return { device, events, created: () => created };
}

describe('WorkerDevice (the jobs worker owns the one GPU device)', () => {
  it('acquires once and reports the adapter and its memory', async () => {
    const { device, events, created } = setup(async (n) => fakeRuntime(n));
    const [a, b] = await Promise.all([device.runtime(), device.runtime()]);
    expect(a).toBe(b);
    device.handle('report');
    device.handle('stats');
    await tick();
    expect(created()).toBe(1);
    expect(events).toEqual([
      { type: 'stats', stats: { live: 1, bytes: 1024, peakLive: 1, peakBytes: 1024, byLabel: {} } },
      {
        type: 'ready',
        adapter: { description: 'vendor-1 / arch', isFallbackAdapter: true },
        report: a.report,
        stats: { live: 1, bytes: 1024, peakLive: 1, peakBytes: 1024, byLabel: {} },
      },
    ]);
  });

  it('reports a destroyed device as lost and acquires a fresh one on the next report', async () => {
    const { device, events, created } = setup(async (n) => fakeRuntime(n));
    await device.report();
    device.handle('destroy');
    await tick();
    expect(events.at(-1)).toEqual({ type: 'lost', message: 'device 1 was lost (destroyed)' });
    device.handle('stats'); // no device held: nothing to say
    await device.report();
    expect(created()).toBe(2);
    expect(events.map((e) => e.type)).toEqual(['ready', 'lost', 'ready']);
    expect((events[2] as Extract<FromWorker, { type: 'ready' }>).report.vendor).toBe('vendor-2');
    expect(await device.runtime()).toBe(await device.runtime());
  });

  it('says why there is no device and how to get one, and tries again when asked again', async () => {
    const { device, events, created } = setup(async (n) => {
      if (n === 1) throw new WebGPUUnavailableError('no adapter', 'start Chromium with --enable-unsafe-webgpu');
      return fakeRuntime(n);
    });
    await device.report();
    expect(events[0]).toEqual({
      type: 'unavailable',
      message: 'no adapter\nstart Chromium with --enable-unsafe-webgpu',
      help: 'start Chromium with --enable-unsafe-webgpu',
    });
    await device.report();
    expect(created()).toBe(2);
    expect(events[1].type).toBe('ready');
  });

  it('device commands pass the protocol check; unknown requests do not', () => {
    expect(isToWorker({ type: 'device', request: 'report' })).toBe(true);
    expect(isToWorker({ type: 'device', request: 'destroy' })).toBe(true);
    expect(isToWorker({ type: 'device', request: 'format-disk' })).toBe(false);
  });
});
