// App state for the GPU, as the jobs worker reports it: the adapter and limits of the worker's
// device, the GPU memory it holds, device-loss recovery, and the kernel self-test, which runs as
// a 'selftest' job on that same device. The page opens no GPU device of its own.
import { create } from 'zustand';
import { missingWebGpu } from '../../jobs/client.ts';
import type { SelfTestSpec } from '../../jobs/jobs.ts';
import type { AdapterReport, BufferStats, FromWorker, SelfTestResult } from '../../jobs/protocol.ts';
import { jobClient } from './jobClient.ts';

export type GpuStatus = 'idle' | 'acquiring' | 'ready' | 'unavailable' | 'lost';

export interface SelfTestState {
  running: boolean;
  results: SelfTestResult[];
  finishedAt: number | null;
  /** Why the self-test job itself failed (the device was lost mid-run), for the user. */
  error: string | null;
}

interface GpuState {
  status: GpuStatus;
  report: AdapterReport | null;
  /** Why WebGPU is unavailable or the device was lost, in words for the user. */
  error: string | null;
  help: string | null;
  stats: BufferStats | null;
  selfTest: SelfTestState;
  acquire(): Promise<void>;
  recreate(): Promise<void>;
  refreshStats(): void;
  runSelfTest(): Promise<void>;
  /** Destroys the worker's device on purpose, to exercise recovery. */
  simulateLoss(): void;
}

const NO_SELFTEST: SelfTestState = { running: false, results: [], finishedAt: null, error: null };

const INITIAL: Pick<GpuState, 'status' | 'report' | 'error' | 'help' | 'stats' | 'selfTest'> = {
  status: 'idle',
  report: null,
  error: null,
  help: null,
  stats: null,
  selfTest: NO_SELFTEST,
};

/** What an event about the worker's device changes in the store; null for the events that are not about it. */
function deviceUpdate(m: FromWorker, status: GpuStatus): Partial<GpuState> | null {
  switch (m.type) {
    case 'ready':
      return { status: 'ready', report: m.report, stats: m.stats, error: null, help: null };
    case 'unavailable': {
      const [first, ...rest] = m.message.split('\n');
      return { status: 'unavailable', report: null, stats: null, error: first, help: m.help ?? (rest.join('\n') || null) };
    }
    case 'lost':
      return { status: 'lost', error: m.message, help: null, stats: null };
    case 'stats':
      // Figures that arrive after a loss describe a device that is gone.
      return status === 'ready' ? { stats: m.stats } : null;
    default:
      return null;
  }
}

export const useGpuStore = create<GpuState>()((set, get) => {
  let listening = false;
  /** The self-test job this page started and follows (a recreated device forgets it). */
  let selfTestJob: string | null = null;

  function onEvent(m: FromWorker) {
    const update = deviceUpdate(m, get().status);
    if (update) set(update);
  }

  /** Asks the worker to report its device (acquiring one when it holds none); false without WebGPU. */
  function askWorker(): boolean {
    const missing = missingWebGpu();
    if (missing) {
      set({ status: 'unavailable', error: missing.message, help: missing.help, report: null, stats: null });
      return false;
    }
    const client = jobClient();
    if (!listening) {
      client.on(onEvent);
      listening = true;
    }
    set({ status: 'acquiring', error: null });
    client.device('report');
    return true;
  }

  return {
    ...INITIAL,

    async acquire() {
      if (get().status === 'acquiring' || get().status === 'ready') return;
      askWorker();
    },

    async recreate() {
      // After a loss the worker holds no device, so its report acquires a fresh one.
      set({ report: null, selfTest: NO_SELFTEST });
      selfTestJob = null;
      askWorker();
    },

    refreshStats() {
      if (get().status === 'ready') jobClient().device('stats');
    },

    async runSelfTest() {
      if (get().status !== 'ready' || get().selfTest.running) return;
      set({ selfTest: { ...NO_SELFTEST, running: true } });
      const spec: SelfTestSpec = { kind: 'selftest' };
      let mine = '';
      const { jobId, outcome } = jobClient().run(spec, {
        onProgress: (result) => (selfTestJob === mine ? set((s) => ({ selfTest: { ...s.selfTest, results: [...s.selfTest.results, result] } })) : undefined),
      });
      mine = selfTestJob = jobId;
      void outcome.then((end) => {
        if (selfTestJob !== jobId) return;
        selfTestJob = null;
        set((s) => ({ selfTest: { ...s.selfTest, running: false, finishedAt: Date.now(), error: end.state === 'failed' ? end.error.message : null } }));
        get().refreshStats();
      });
    },

    simulateLoss() {
      if (get().status === 'ready') jobClient().device('destroy');
    },
  };
});
