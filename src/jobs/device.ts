// The jobs worker's one GPU device: acquired on first use, dropped when lost (the next job or
// report acquires a fresh one), and described to the page on request. The System view shows
// this device and runs its self-test here, so the page never opens a device of its own.
import type { GpuRuntime } from '../gpu/runtime.ts';
import type { DeviceRequest, FromWorker } from './protocol.ts';

export class WorkerDevice {
  private pending: Promise<GpuRuntime> | null = null;
  private held: GpuRuntime | null = null;

  constructor(
    private readonly create: () => Promise<GpuRuntime>,
    private readonly post: (m: FromWorker) => void,
  ) {}

  /** The device jobs run on (JobHost's runtime getter). */
  runtime(): Promise<GpuRuntime> {
    if (this.pending) return this.pending;
    const pending = this.create().then((rt) => {
      rt.on((e) => {
        if (e.type !== 'lost' || this.held !== rt) return;
        this.held = null;
        this.pending = null;
        this.post({ type: 'lost', message: e.error.message });
      });
      this.held = rt;
      return rt;
    });
    // A failed acquisition is retried by the next use (the user may have fixed the browser).
    pending.catch(() => {
      if (this.pending === pending) this.pending = null;
    });
    this.pending = pending;
    return pending;
  }

  /** Answers 'ready' with the adapter report and memory, or 'unavailable' with what to do. */
  async report(): Promise<void> {
    let rt: GpuRuntime;
    try {
      rt = await this.runtime();
    } catch (e) {
      const help = (e as { help?: unknown }).help;
      this.post({ type: 'unavailable', message: (e as Error).message, ...(typeof help === 'string' ? { help } : {}) });
      return;
    }
    this.post({ type: 'ready', adapter: { description: rt.describe(), isFallbackAdapter: rt.report.isFallbackAdapter }, report: rt.report, stats: rt.stats() });
  }

  handle(request: DeviceRequest): void {
    switch (request) {
      case 'report':
        void this.report();
        return;
      case 'stats':
        if (this.held) this.post({ type: 'stats', stats: this.held.stats() });
        return;
      case 'destroy':
        this.held?.device.destroy();
        return;
    }
  }
}
