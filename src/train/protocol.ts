// The typed message protocol between the page and the worker that owns the GPU device. The
// same JobHost serves a Web Worker in the browser and an in-process host in Node (`lwm train`),
// so a job's code never knows which one it runs in.

/** What a job is asked to do. Job kinds register their spec type in JobSpecs (jobs.ts). */
export interface JobSpecBase {
  kind: string;
  /** A kind's own fields (each runner checks its spec). */
  [field: string]: unknown;
}

export type JobState = 'queued' | 'running' | 'paused' | 'stopping' | 'stopped' | 'done' | 'failed';

export type ToWorker =
  | { type: 'start'; jobId: string; spec: JobSpecBase }
  | { type: 'pause'; jobId: string }
  | { type: 'resume'; jobId: string }
  | { type: 'stop'; jobId: string }
  | { type: 'status' };

export interface AdapterSummary {
  description: string;
  isFallbackAdapter: boolean;
}

export type FromWorker =
  | { type: 'ready'; adapter: AdapterSummary }
  | { type: 'unavailable'; message: string }
  | { type: 'status'; jobId: string; state: JobState; detail?: string }
  | { type: 'jobs'; jobs: { jobId: string; kind: string; state: JobState }[] }
  /** One logged step: values by metric name (loss, lr, tokens_per_s, reward, ...). */
  | { type: 'metric'; jobId: string; step: number; values: Record<string, number> }
  /** A checkpoint was stored (by the job, in IndexedDB under `key`); `bytes` is its size. */
  | { type: 'checkpoint'; jobId: string; step: number; key: string; bytes: number; tag?: 'last' | 'best' }
  /** Streamed generation text. */
  | { type: 'text'; jobId: string; text: string }
  | { type: 'log'; jobId: string; message: string }
  | { type: 'done'; jobId: string; result: unknown }
  /** `message` is for the user (what went wrong, what to do); `detail` for a bug report. */
  | { type: 'error'; jobId?: string; message: string; detail?: string };

/** The Web Lock a training job holds on its run, so two tabs never train the same run. */
export function runLockName(runId: string): string {
  return `lwm-run:${runId}`;
}

export function isToWorker(x: unknown): x is ToWorker {
  if (!x || typeof x !== 'object') return false;
  const t = (x as { type?: unknown }).type;
  return t === 'start' || t === 'pause' || t === 'resume' || t === 'stop' || t === 'status';
}
