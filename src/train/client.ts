// The page's side of the job protocol: starts the worker, sends commands, fans out events.
import type { FromWorker, JobSpecBase, ToWorker } from './protocol.ts';

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
