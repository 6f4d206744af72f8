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

/** What JobClient needs of a Worker (a fake one in tests). */
export interface WorkerLike {
  postMessage(m: ToWorker): void;
  onmessage: ((ev: MessageEvent) => void) | null;
  onerror?: ((ev: Event) => void) | null;
  onmessageerror?: ((ev: MessageEvent) => void) | null;
  terminate?: () => void;
}

/** What the user is told when the worker dies (failed to load, crashed, sent an unreadable message). */
export function workerFailureMessage(why: string): string {
  return (
    `The GPU worker stopped: ${why}. Any job it was running has ended; ` +
    'a stored run can be resumed from its last checkpoint, and the next action starts a fresh worker.'
  );
}

export class JobClient {
  private readonly listeners = new Set<WorkerEventListener>();
  private counter = 0;
  private worker: WorkerLike | null = null;
  /** Jobs started on the current worker that have not finished (they fail with it). */
  private readonly active = new Set<string>();
  /** Whether the current worker has reported a device (then its failure is a loss, not 'unavailable'). */
  private wasReady = false;

  /**
   * `create` makes the worker; it is called on first use and again after the worker fails, so a
   * worker that could not load (or crashed) never leaves a request waiting forever.
   */
  constructor(private readonly create: () => WorkerLike) {}

  /** The worker bundled by Vite (module worker). */
  static spawn(): JobClient {
    return new JobClient(() => new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'lwm-jobs' }) as unknown as WorkerLike);
  }

  private send(m: ToWorker) {
    this.ensureWorker().postMessage(m);
  }

  private ensureWorker(): WorkerLike {
    if (this.worker) return this.worker;
    const w = this.create();
    this.worker = w;
    this.wasReady = false;
    w.onmessage = (ev: MessageEvent) => {
      if (this.worker !== w) return;
      const m = ev.data as FromWorker;
      if (m.type === 'ready') this.wasReady = true;
      if ('jobId' in m && m.jobId !== undefined && finishes(m)) this.active.delete(m.jobId);
      this.emit(m);
    };
    w.onerror = (ev: Event) => {
      // Handled here: the page shows the message, so the browser need not log it as uncaught.
      ev.preventDefault?.();
      const text = (ev as ErrorEvent).message;
      this.fail(w, text ? `it raised "${text}"` : 'its script could not be loaded or it crashed');
    };
    w.onmessageerror = () => this.fail(w, 'it sent a message the page could not read');
    return w;
  }

  /**
   * Drops a failed worker: a worker that never reported a device makes it 'unavailable'; one that
   * had is 'lost' like a lost device (the next request starts a fresh worker, a run cut off is
   * offered for resuming). Then its active jobs fail.
   */
  private fail(w: WorkerLike, why: string) {
    if (this.worker !== w) return;
    this.worker = null;
    w.terminate?.();
    const message = workerFailureMessage(why);
    const jobs = [...this.active];
    this.active.clear();
    this.emit(this.wasReady ? { type: 'lost', message } : { type: 'unavailable', message, retry: true });
    for (const jobId of jobs) {
      this.emit({ type: 'status', jobId, state: 'failed', detail: message });
      this.emit({ type: 'error', jobId, message });
    }
  }

  private emit(m: FromWorker) {
    for (const l of this.listeners) l(m);
  }

  on(listener: WorkerEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(spec: JobSpecBase, jobId = `job-${Date.now().toString(36)}-${++this.counter}`): string {
    this.active.add(jobId);
    this.send({ type: 'start', jobId, spec });
    return jobId;
  }

  pause(jobId: string) {
    this.send({ type: 'pause', jobId });
  }

  resume(jobId: string) {
    this.send({ type: 'resume', jobId });
  }

  stop(jobId: string) {
    this.send({ type: 'stop', jobId });
  }

  /** Asks about the worker's device (see DeviceRequest); the answer arrives as an event. */
  device(request: DeviceRequest) {
    this.send({ type: 'device', request });
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
    this.worker?.terminate?.();
    this.worker = null;
    this.active.clear();
  }
}

/** Whether a message ends its job (done, failed, stopped). */
function finishes(m: FromWorker): boolean {
  if (m.type === 'done') return true;
  if (m.type === 'error') return true;
  return m.type === 'status' && (m.state === 'done' || m.state === 'failed' || m.state === 'stopped');
}
