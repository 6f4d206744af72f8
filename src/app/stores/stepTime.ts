// The measured training step the Train view's time estimates start from: a 'steptime' job on the
// jobs worker's device (src/jobs/steptime.ts), kept for the page's life (one device, one
// measurement), taken again on request. The estimates themselves are views/train/estimate.ts.
import { create } from 'zustand';
import { missingWebGpu } from '../../jobs/client.ts';
import type { StepTimeResult, StepTimeSpec } from '../../jobs/steptime.ts';
import { jobClient } from './jobClient.ts';

export type StepTimeStatus = 'idle' | 'measuring' | 'ready' | 'error';

interface StepTimeState {
  status: StepTimeStatus;
  result: StepTimeResult | null;
  /** Why the measurement failed, for the user. */
  error: string | null;
  /** Whether a measurement was started in this page (the form measures once by itself, then on request). */
  tried: boolean;
  /** Measures a step of this shape on the worker's device (nothing while one is being measured). */
  measure(spec: StepTimeSpec): void;
  /** Stops a measurement in progress (a run is about to start: it would wait behind it). */
  cancel(): void;
}

let running: { jobId: string } | null = null;

export const useStepTimeStore = create<StepTimeState>()((set, get) => ({
  status: 'idle',
  result: null,
  error: null,
  tried: false,

  measure(spec) {
    if (get().status === 'measuring') return;
    set({ tried: true });
    const missing = missingWebGpu();
    if (missing) {
      set({ status: 'error', error: `Measuring a step needs WebGPU: ${missing.message}` });
      return;
    }
    set({ status: 'measuring', error: null });
    const { jobId, outcome } = jobClient().run(spec);
    running = { jobId };
    void outcome.then((end) => {
      running = null;
      if (end.state === 'done') set({ status: 'ready', result: end.result, error: null });
      else if (end.state === 'failed') set({ status: 'error', error: `Could not measure a step: ${end.error.message}` });
      else set({ status: get().result ? 'ready' : 'idle' });
    });
  },

  cancel() {
    if (running) jobClient().stop(running.jobId);
  },
}));
