// The typed message protocol between the page and the worker that owns the GPU device. The
// same JobHost serves a Web Worker in the browser and an in-process host in Node (`lwm train`),
// so a job's code never knows which one it runs in. The worker's GPU device is the page's only
// one: the System view asks the worker for its adapter report and memory, and runs the kernel
// self-test as a job there ('device' commands, the 'selftest' job kind).
import type { AdapterReport, BufferStats } from '../gpu/runtime.ts';

// What the page may show of the worker's GPU (the app imports no src/gpu module itself).
export type { AdapterReport, BufferStats } from '../gpu/runtime.ts';
export type { SelfTestResult } from '../gpu/selftest.ts';
export type { JobState } from '../train/context.ts';
import type { JobState } from '../train/context.ts';

/**
 * What a job is asked to do, as it travels: a kind and that kind's own fields. The kinds, each with
 * its spec, progress and result types, are JobKinds (jobs.ts); the page starts jobs through
 * JobClient (client.ts), which takes only a spec of a known kind.
 */
export interface JobSpecBase {
  kind: string;
  /** The kind's own fields (its runner takes them as its spec type). */
  [field: string]: unknown;
}

/** Commands about jobs (JobHost handles them). */
export type JobCommand =
  | { type: 'start'; jobId: string; spec: JobSpecBase }
  | { type: 'pause'; jobId: string }
  | { type: 'resume'; jobId: string }
  | { type: 'stop'; jobId: string }
  | { type: 'status' };

/**
 * Commands about the worker's device (WorkerDevice handles them): 'report' acquires it when none
 * is held (first use, or after a loss) and answers 'ready' or 'unavailable'; 'stats' answers
 * 'stats'; 'destroy' destroys it on purpose, to exercise recovery (answered by 'lost').
 */
export type DeviceRequest = 'report' | 'stats' | 'destroy';
export type DeviceCommand = { type: 'device'; request: DeviceRequest };

export type ToWorker = JobCommand | DeviceCommand;

export interface AdapterSummary {
  description: string;
  isFallbackAdapter: boolean;
}

export type FromWorker =
  | { type: 'ready'; adapter: AdapterSummary; report: AdapterReport; stats: BufferStats }
  /**
   * `message` says what failed and how to get WebGPU; `help` is that second part alone, when known.
   * `retry`: the worker itself failed (did not load, crashed) before it had a device, so the next
   * request starts a fresh one: not a lasting lack of WebGPU.
   */
  | { type: 'unavailable'; message: string; help?: string; retry?: boolean }
  /** The device was lost; the next job or 'report' acquires a fresh one. */
  | { type: 'lost'; message: string }
  /** GPU memory the worker holds. */
  | { type: 'stats'; stats: BufferStats }
  | { type: 'status'; jobId: string; state: JobState; detail?: string }
  | { type: 'jobs'; jobs: { jobId: string; kind: string; state: JobState }[] }
  /** One logged step: values by metric name (loss, lr, tokens_per_s, reward, ...). */
  | { type: 'metric'; jobId: string; step: number; values: Record<string, number> }
  /** A checkpoint was stored (by the job, in IndexedDB under `key`); `bytes` is its size. */
  | { type: 'checkpoint'; jobId: string; step: number; key: string; bytes: number; tag?: 'last' | 'best' }
  /** Streamed generation text (the 'generate' job: one piece of the observation as it is decoded). */
  | { type: 'text'; jobId: string; text: string }
  | { type: 'log'; jobId: string; message: string }
  /** A job kind's own progress record ('selftest': one SelfTestResult per check, as it finishes). */
  | { type: 'progress'; jobId: string; data: unknown }
  | { type: 'done'; jobId: string; result: unknown }
  /** `message` is for the user (what went wrong, what to do); `kind` what went wrong (JobErrorKind); `detail` for a bug report. */
  | { type: 'error'; jobId?: string; message: string; kind?: JobErrorKind; detail?: string };

/**
 * What made a job fail, so the page need not guess from the message: the GPU device was lost (or
 * the worker died), there is no WebGPU, a checkpoint or a model folder is at fault, the settings
 * asked for cannot be (an output budget with no room for a prompt), browser storage refused, the
 * user's input was refused for another reason ('user'), or a fault of ours ('bug').
 */
export type JobErrorKind = 'device-lost' | 'no-webgpu' | 'checkpoint' | 'folder' | 'settings' | 'storage' | 'user' | 'bug';

/** The Web Lock a training job holds on its run, so two tabs never train the same run. */
export function runLockName(runId: string): string {
  return `lwm-run:${runId}`;
}

/** The Web Lock a bench job holds on its benchmark (src/jobs/bench.ts), so two tabs never run the same one. */
export function benchLockName(benchId: string): string {
  return `lwm-bench:${benchId}`;
}

/** The Web Lock an optimize job holds on its optimization (src/jobs/optimize.ts), so two tabs never run the same one. */
export function optimizeLockName(optId: string): string {
  return `lwm-optimize:${optId}`;
}

/** The Web Lock a Sim RL job holds on its experiment (src/jobs/simrl.ts), so two tabs never run the same one. */
export function experimentLockName(expId: string): string {
  return `lwm-simrl:${expId}`;
}

export function isToWorker(x: unknown): x is ToWorker {
  if (!x || typeof x !== 'object') return false;
  const t = (x as { type?: unknown }).type;
  if (t === 'device') return isDeviceRequest((x as { request?: unknown }).request);
  return t === 'start' || t === 'pause' || t === 'resume' || t === 'stop' || t === 'status';
}

function isDeviceRequest(r: unknown): r is DeviceRequest {
  return r === 'report' || r === 'stats' || r === 'destroy';
}

/** The error a Playground job for a dropped file gets when the worker does not hold that file (a fresh worker): the page sends its bytes again. */
export const MODEL_NOT_LOADED = 'playground: the model file is not loaded in this worker; send its bytes';
