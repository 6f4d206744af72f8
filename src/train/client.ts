// The page's side of the job protocol: starts the worker, sends commands, fans out events.
import { WEBGPU_HELP } from '../gpu/errors.ts';
import type { DeviceRequest, FromWorker, JobSpecBase, ToWorker } from './protocol.ts';

/**
 * What to tell the user when this page has no navigator.gpu, or null when it has one. Browsers
 * give a page's workers WebGPU exactly when they give it to the page, so a page without it does
 * not start a worker to find out.
 */
export function missingWebGpu(): { message: string; help: string } | null {
  if (typeof navigator !== 'undefined' && 'gpu' in navigator) return null;
  return { message: 'This browser does not expose WebGPU (navigator.gpu is missing).', help: WEBGPU_HELP };
}

export type WorkerEventListener = (m: FromWorker) => void;

export class JobClient {
  private readonly listeners = new Set<WorkerEventListener>();
  private counter = 0;

  constructor(private readonly worker: { postMessage(m: ToWorker): void; onmessage: ((ev: MessageEvent) => void) | null; terminate?: () => void }) {
    worker.onmessage = (ev: MessageEvent) => {
      for (const l of this.listeners) l(ev.data as FromWorker);
    };
  }

  /** The worker bundled by Vite (module worker). */
  static spawn(): JobClient {
    const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'lwm-jobs' });
    return new JobClient(worker as unknown as ConstructorParameters<typeof JobClient>[0]);
  }

  on(listener: WorkerEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(spec: JobSpecBase, jobId = `job-${Date.now().toString(36)}-${++this.counter}`): string {
    this.worker.postMessage({ type: 'start', jobId, spec });
    return jobId;
  }

  pause(jobId: string) {
    this.worker.postMessage({ type: 'pause', jobId });
  }

  resume(jobId: string) {
    this.worker.postMessage({ type: 'resume', jobId });
  }

  stop(jobId: string) {
    this.worker.postMessage({ type: 'stop', jobId });
  }

  /** Asks about the worker's device (see DeviceRequest); the answer arrives as an event. */
  device(request: DeviceRequest) {
    this.worker.postMessage({ type: 'device', request });
  }

  /** Resolves with the job's result, rejects with its user-facing error, or 'stopped'. */
  wait(jobId: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const off = this.on((m) => {
        if (!('jobId' in m) || m.jobId !== jobId) return;
        if (m.type === 'done') {
          off();
          resolve(m.result);
        } else if (m.type === 'error') {
          off();
          reject(new Error(m.message));
        } else if (m.type === 'status' && m.state === 'stopped') {
          off();
          resolve('stopped');
        }
      });
    });
  }

  terminate() {
    this.worker.terminate?.();
  }
}
