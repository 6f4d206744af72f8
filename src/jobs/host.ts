// JobHost: runs jobs one at a time on one GPU runtime, with pause, resume and stop between
// steps. Used by the Web Worker (worker.ts) and, in-process, by the Node CLI.
import type { GpuRuntime } from '../gpu/runtime.ts';
import { DeviceLostDuringJob, StopRequested, USER_ERRORS, UserFacingError, userMessage, type JobContext, type JobState } from '../train/context.ts';
import type { FromWorker, JobCommand, JobErrorKind, JobSpecBase } from './protocol.ts';

/**
 * A runner of some job kind, as the host holds it: the registry (JOB_RUNNERS, jobs.ts) types each
 * one by its kind; the host hands it the spec whose kind named it.
 */
export type JobRunner = ((spec: never, ctx: JobContext) => Promise<unknown>) & {
  /**
   * The job acquires the GPU itself, only when it needs it (`ctx.gpu()`): a bench of baselines
   * and endpoints runs in a browser without WebGPU. Otherwise the runtime is acquired first.
   */
  gpuOnDemand?: boolean;
};

interface JobEntry {
  jobId: string;
  spec: JobSpecBase;
  state: JobState;
  resume: (() => void) | null;
  pausedGate: Promise<void> | null;
  listeners: Set<(state: JobState) => void>;
}

/**
 * How long the next job waits for the runner of a job the lost device ended to finish unwinding
 * (it records the run's failure and releases the run's lock as it does). A runner stuck on the
 * dead device for longer is left behind.
 */
export const UNWIND_WAIT_MS = 10_000;

/**
 * How long a job's GPU error waits for the device's loss (see JobContext.failure). The loss comes
 * from the GPU process, so a moment after the rejections it causes; an error that is not one is
 * reported this much later.
 */
export const LOSS_SETTLE_MS = 3_000;

export interface JobHostTiming {
  unwindWaitMs?: number;
  lossSettleMs?: number;
}

/**
 * A job's hold on the GPU runtime: acquired once (before the job, or when it first asks), and a
 * lost device ends the job at once, even one waiting on the GPU or paused (the runner's own later
 * failure, at its next step, is ignored).
 */
class JobGpu {
  rt: GpuRuntime | null = null;
  lost: Error | null = null;
  /** Rejects with the loss when the device is lost during the job. */
  readonly lostDuring: Promise<never>;
  off: () => void = () => {};
  /** Resolves when the device is lost during the job (JobContext.failure waits on it). */
  readonly lostSignal: Promise<void>;
  private lostNow: () => void = () => {};
  private acquiring: Promise<GpuRuntime> | null = null;
  private rejectLost: (e: Error) => void = () => {};

  constructor(
    private readonly runtime: () => Promise<GpuRuntime>,
    private readonly job: JobEntry,
  ) {
    this.lostDuring = new Promise<never>((_, reject) => (this.rejectLost = reject));
    this.lostDuring.catch(() => {});
    this.lostSignal = new Promise<void>((r) => (this.lostNow = r));
  }

  acquire(): Promise<GpuRuntime> {
    this.acquiring ??= this.runtime().then((rt) => {
      this.rt = rt;
      this.off = rt.on((e) => {
        if (e.type === 'lost') this.onLost(e.error);
      });
      if (rt.lost) throw (this.lost ??= new DeviceLostDuringJob(rt.lost));
      return rt;
    });
    return this.acquiring;
  }

  private onLost(e: Error) {
    this.lost ??= new DeviceLostDuringJob(e);
    this.lostNow();
    this.rejectLost(this.lost);
    // A paused job wakes to throw the loss at its step.
    const r = this.job.resume;
    this.job.pausedGate = null;
    this.job.resume = null;
    r?.();
  }
}

export class JobHost {
  private readonly jobs = new Map<string, JobEntry>();
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly runtime: () => Promise<GpuRuntime>,
    private readonly runners: Record<string, JobRunner>,
    private readonly post: (m: FromWorker) => void,
    private readonly timing: JobHostTiming = {},
  ) {}

  handle(msg: JobCommand): void {
    switch (msg.type) {
      case 'start':
        return this.start(msg.jobId, msg.spec);
      case 'pause':
        return this.pause(msg.jobId);
      case 'resume':
        return this.resume(msg.jobId);
      case 'stop':
        return this.stop(msg.jobId);
      case 'status':
        this.post({ type: 'jobs', jobs: [...this.jobs.values()].map((j) => ({ jobId: j.jobId, kind: j.spec.kind, state: j.state })) });
        return;
    }
  }

  private setState(job: JobEntry, state: JobState, detail?: string) {
    job.state = state;
    this.post({ type: 'status', jobId: job.jobId, state, detail });
    for (const l of job.listeners) {
      try {
        l(state);
      } catch {
        /* a listener's failure must not change the job's state machine */
      }
    }
  }

  private start(jobId: string, spec: JobSpecBase) {
    if (this.jobs.has(jobId)) {
      this.post({ type: 'error', jobId, message: `A job with id ${jobId} already exists.` });
      return;
    }
    const runner = this.runners[spec.kind];
    if (!runner) {
      this.post({ type: 'error', jobId, message: `Unknown job kind '${spec.kind}'. Known: ${Object.keys(this.runners).join(', ')}.` });
      return;
    }
    const job: JobEntry = { jobId, spec, state: 'queued', resume: null, pausedGate: null, listeners: new Set() };
    this.jobs.set(jobId, job);
    this.setState(job, 'queued');
    // One job at a time: they share the device, and a second training run would halve both.
    this.queue = this.queue.then(() => this.run(job, runner));
  }

  private context(job: JobEntry, gpu: JobGpu): JobContext {
    const settleMs = this.timing.lossSettleMs ?? LOSS_SETTLE_MS;
    return {
      get rt() {
        if (!gpu.rt) throw new Error('This job has no GPU runtime yet (a job that runs on demand calls ctx.gpu() first).');
        return gpu.rt;
      },
      gpu: () => gpu.acquire(),
      jobId: job.jobId,
      step: async () => {
        if (gpu.lost) throw gpu.lost;
        if (job.state === 'stopping') throw new StopRequested();
        while (job.pausedGate) {
          await job.pausedGate;
          if (gpu.lost) throw gpu.lost;
          if ((job.state as JobState) === 'stopping') throw new StopRequested();
        }
      },
      metric: (step, values) => this.post({ type: 'metric', jobId: job.jobId, step, values }),
      checkpoint: (step, key, bytes, tag) => this.post({ type: 'checkpoint', jobId: job.jobId, step, key, bytes, tag }),
      onState: (listener) => {
        job.listeners.add(listener);
        return () => job.listeners.delete(listener);
      },
      text: (text) => this.post({ type: 'text', jobId: job.jobId, text }),
      log: (message) => this.post({ type: 'log', jobId: job.jobId, message }),
      progress: (data) => this.post({ type: 'progress', jobId: job.jobId, data }),
      get stopRequested() {
        return job.state === 'stopping';
      },
      get lost() {
        return gpu.lost;
      },
      failure: async (thrown) => {
        if (!gpu.lost && mayBeLoss(thrown)) await settledWithin(gpu.lostSignal, settleMs);
        return gpu.lost ?? thrown;
      },
    };
  }

  private async run(job: JobEntry, runner: JobRunner) {
    if (job.state === 'stopped') return;
    this.setState(job, 'running');
    const gpu = new JobGpu(this.runtime, job);
    const ctx = this.context(job, gpu);
    let running: Promise<unknown> | null = null;
    try {
      if (!runner.gpuOnDemand) await gpu.acquire();
      // The spec's kind chose this runner (start): it is that kind's spec.
      running = (runner as (spec: JobSpecBase, ctx: JobContext) => Promise<unknown>)(job.spec, ctx);
      running.catch(() => {});
      const result = await Promise.race([gpu.lostDuring, running]);
      job.listeners.clear();
      this.setState(job, 'done');
      this.post({ type: 'done', jobId: job.jobId, result });
    } catch (thrown) {
      job.listeners.clear();
      const e = await ctx.failure(thrown);
      if (e instanceof StopRequested) {
        this.setState(job, 'stopped');
      } else {
        const err = e as Error;
        this.setState(job, 'failed', err.message);
        this.post({ type: 'error', jobId: job.jobId, message: userMessage(err), kind: errorKind(err), detail: err.stack });
      }
    } finally {
      gpu.off();
    }
    // The job was reported ended at once; the next one starts when its runner has unwound (it
    // still writes the run's end and holds the run's lock until then), or after unwindWaitMs.
    if (running && gpu.lost) await settledWithin(running, this.timing.unwindWaitMs ?? UNWIND_WAIT_MS);
  }

  private pause(jobId: string) {
    const job = this.jobs.get(jobId);
    if (!job || (job.state !== 'running' && job.state !== 'queued')) return;
    job.pausedGate = new Promise((r) => (job.resume = r));
    this.setState(job, 'paused');
  }

  private resume(jobId: string) {
    const job = this.jobs.get(jobId);
    if (job?.state !== 'paused') return;
    const r = job.resume;
    job.pausedGate = null;
    job.resume = null;
    this.setState(job, 'running');
    r?.();
  }

  private stop(jobId: string) {
    const job = this.jobs.get(jobId);
    if (!job) return;
    if (job.state === 'queued') {
      this.setState(job, 'stopped');
      return;
    }
    if (job.state !== 'running' && job.state !== 'paused') return;
    const r = job.resume;
    job.pausedGate = null;
    job.resume = null;
    this.setState(job, 'stopping');
    r?.();
  }
}

function settledWithin(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((r) => (timer = setTimeout(r, ms)));
  return Promise.race([
    p.then(
      () => {},
      () => {},
    ),
    timeout,
  ]).finally(() => clearTimeout(timer));
}

/** Whether a job's error may be the first sign of a device loss (any error not written for the user). */
function mayBeLoss(e: unknown): boolean {
  return !(e instanceof StopRequested) && !(e instanceof UserFacingError) && !(e instanceof Error && USER_ERRORS.includes(e.name));
}

/** What kind of failure an error a job threw is (sent with its message: the page reads the kind, not the words). */
export function errorKind(e: Error): JobErrorKind {
  if (e instanceof DeviceLostDuringJob || e.name === 'DeviceLostError') return 'device-lost';
  if (e.name === 'WebGPUUnavailableError') return 'no-webgpu';
  if (e.name === 'StorageFullError') return 'storage';
  if (e.name === 'CheckpointError' || e.name === 'SafetensorsError') return 'checkpoint';
  if (e.name === 'BackendError') {
    const about = (e as Error & { about?: string }).about;
    return about === 'checkpoint' || about === 'folder' || about === 'settings' ? about : 'user';
  }
  return e instanceof UserFacingError ? 'user' : 'bug';
}
