// App state for the GPU: the page's runtime (for the System view and its self-test), its
// status, and device-loss recovery. Training jobs own their own device in a worker.
import { create } from 'zustand';
import { WebGPUUnavailableError } from '../../gpu/errors.ts';
import { GpuRuntime, type AdapterReport, type BufferStats } from '../../gpu/runtime.ts';
import { runSelfTest, type SelfTestResult } from '../../gpu/selftest.ts';

export type GpuStatus = 'idle' | 'acquiring' | 'ready' | 'unavailable' | 'lost';

interface GpuState {
  status: GpuStatus;
  runtime: GpuRuntime | null;
  report: AdapterReport | null;
  /** Why WebGPU is unavailable or the device was lost, in words for the user. */
  error: string | null;
  help: string | null;
  stats: BufferStats | null;
  selfTest: { running: boolean; results: SelfTestResult[]; finishedAt: number | null };
  acquire(): Promise<void>;
  recreate(): Promise<void>;
  refreshStats(): void;
  runSelfTest(): Promise<void>;
  /** Destroys the device on purpose, to exercise recovery. */
  simulateLoss(): void;
}

export const useGpuStore = create<GpuState>()((set, get) => {
  function adopt(rt: GpuRuntime) {
    rt.on((e) => {
      if (e.type === 'lost' && get().runtime === rt) {
        set({ status: 'lost', error: e.error.message, help: null, stats: null });
      }
    });
    set({ runtime: rt, report: rt.report, status: 'ready', error: null, help: null, stats: rt.stats() });
  }

  return {
    status: 'idle',
    runtime: null,
    report: null,
    error: null,
    help: null,
    stats: null,
    selfTest: { running: false, results: [], finishedAt: null },

    async acquire() {
      if (get().status === 'acquiring' || get().status === 'ready') return;
      set({ status: 'acquiring', error: null });
      try {
        adopt(await GpuRuntime.create());
      } catch (e) {
        const help = e instanceof WebGPUUnavailableError ? e.help : null;
        const message = e instanceof WebGPUUnavailableError ? e.message.split('\n')[0] : (e as Error).message;
        set({ status: 'unavailable', error: message, help, runtime: null });
      }
    },

    async recreate() {
      const old = get().runtime;
      set({ status: 'acquiring', runtime: null, selfTest: { running: false, results: [], finishedAt: null } });
      try {
        adopt(old ? await old.recreate() : await GpuRuntime.create());
      } catch (e) {
        set({ status: 'unavailable', error: (e as Error).message.split('\n')[0], help: e instanceof WebGPUUnavailableError ? e.help : null });
      }
    },

    refreshStats() {
      const rt = get().runtime;
      if (rt && get().status === 'ready') set({ stats: rt.stats() });
    },

    async runSelfTest() {
      const rt = get().runtime;
      if (!rt || get().selfTest.running) return;
      set({ selfTest: { running: true, results: [], finishedAt: null } });
      await runSelfTest(rt, (r) => set((s) => ({ selfTest: { ...s.selfTest, results: [...s.selfTest.results, r] } })));
      set((s) => ({ selfTest: { ...s.selfTest, running: false, finishedAt: Date.now() }, stats: rt.stats() }));
    },

    simulateLoss() {
      get().runtime?.device.destroy();
    },
  };
});
