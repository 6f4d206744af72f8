// The page's side of the job protocol: starts the worker, sends commands, fans out events.
import { WEBGPU_HELP } from '../gpu/errors.ts';
import type { JobKind, JobProgress, JobResult, JobSpec } from './jobs.ts';
import type { DeviceRequest, FromWorker, JobErrorKind, JobState, ToWorker } from './protocol.ts';

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

/** A job that failed: the worker's message for the user, what kind of failure it was, and whether the device was lost while it ran. */
export class JobError extends Error {
  override name = 'JobError';
  constructor(
    message: string,
    readonly kind: JobErrorKind,
    readonly lost = false,
  ) {
    super(message);
  }
}

/** What a job's events are handed to, each typed by the job's kind (see JobKinds in jobs.ts). */
export interface JobHandlers<K extends JobKind> {
  onProgress?(p: JobProgress<K>): void;
  /** Streamed text (a generate job's observation, piece by piece). */
  onText?(text: string): void;
  onLog?(message: string): void;
  onStatus?(state: JobState, detail?: string): void;
  onMetric?(step: number, values: Record<string, number>): void;
  onCheckpoint?(c: { step: number; key: string; bytes: number; tag?: 'last' | 'best' }): void;
  /** Aborting it asks the worker to stop the job. */
  signal?: AbortSignal;
}

/** How a job ended. */
export type JobOutcome<K extends JobKind> = { state: 'done'; result: JobResult<K> } | { state: 'stopped' } | { state: 'failed'; error: JobError };

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
      this.emit({ type: 'error', jobId, message, kind: 'device-lost' });
    }
  }

  private emit(m: FromWorker) {
    for (const l of this.listeners) l(m);
  }

  on(listener: WorkerEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(spec: JobSpec, jobId = `job-${Date.now().toString(36)}-${++this.counter}`): string {
    this.active.add(jobId);
    this.send({ type: 'start', jobId, spec: { ...spec } });
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

  /**
   * Starts a job of a kind and follows it: its events go to `handlers`, typed by the kind, and
   * `outcome` settles when it ends (done with its result, stopped, or failed with a JobError).
   * Every store starts its jobs here.
   */
  run<S extends JobSpec>(spec: S, handlers: JobHandlers<S['kind']> = {}): { jobId: string; outcome: Promise<JobOutcome<S['kind']>> } {
    type K = S['kind'];
    let jobId = '';
    let lost = false;
    const { signal } = handlers;
    const onAbort = () => this.stop(jobId);
    const outcome = new Promise<JobOutcome<K>>((resolve) => {
      const off = this.on((m) => {
        if (m.type === 'lost') lost = true;
        if (!('jobId' in m) || m.jobId !== jobId) return;
        const end = (o: JobOutcome<K>) => {
          off();
          signal?.removeEventListener('abort', onAbort);
          resolve(o);
        };
        switch (m.type) {
          case 'progress':
            // The worker's runner of this kind sent it (JOB_RUNNERS types each runner by its kind).
            handlers.onProgress?.(m.data as JobProgress<K>);
            break;
          case 'text':
            handlers.onText?.(m.text);
            break;
          case 'log':
            handlers.onLog?.(m.message);
            break;
          case 'metric':
            handlers.onMetric?.(m.step, m.values);
            break;
          case 'checkpoint':
            handlers.onCheckpoint?.({ step: m.step, key: m.key, bytes: m.bytes, ...(m.tag && { tag: m.tag }) });
            break;
          case 'status':
            handlers.onStatus?.(m.state, m.detail);
            if (m.state === 'stopped') end({ state: 'stopped' });
            break;
          case 'done':
            end({ state: 'done', result: m.result as JobResult<K> });
            break;
          case 'error':
            end({ state: 'failed', error: new JobError(m.message, m.kind ?? 'bug', lost || m.kind === 'device-lost') });
            break;
        }
      });
    });
    jobId = this.start(spec);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    return { jobId, outcome };
  }

  /** Runs a job to its result; a failure rejects with its JobError, a stop with a JobError of kind 'user' saying it was stopped. */
  async result<S extends JobSpec>(spec: S, handlers: JobHandlers<S['kind']> = {}): Promise<JobResult<S['kind']>> {
    const o = await this.run(spec, handlers).outcome;
    if (o.state === 'done') return o.result;
    throw o.state === 'failed' ? o.error : new JobError('The job was stopped.', 'user');
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
