// What a job runs in, whichever host runs it (the jobs worker's JobHost, src/jobs/host.ts, or
// the CLI in-process): its context (GPU runtime, steps between which it may pause or stop,
// metrics and progress for the page) and the errors that carry a message for the user. Training
// code reads this file only; it never imports the host.
import type { GpuRuntime } from '../gpu/runtime.ts';

/** A job's state, as the host and the page see it. */
export type JobState = 'queued' | 'running' | 'paused' | 'stopping' | 'stopped' | 'done' | 'failed';

/** Thrown inside a job by `ctx.step()` when the user asked it to stop. */
export class StopRequested extends Error {
  constructor() {
    super('stopped by request');
    this.name = 'StopRequested';
  }
}

/** An error whose message is meant for the user as is. */
export class UserFacingError extends Error {}

/** What a job that was running when the GPU device was lost fails with. */
export class DeviceLostDuringJob extends UserFacingError {
  constructor(readonly lost: Error) {
    super(
      `${lost.message.replace(/\.*\s*Re-create the device to continue\.$/, '.')} The job stopped; ` +
        'a training run can be resumed from its last checkpoint, and the next job uses a fresh device.',
    );
    this.name = 'DeviceLostDuringJob';
  }
}

export interface JobContext {
  /** The job's GPU runtime: acquired before the job starts, or (a job that runs on demand) by `gpu()` first. */
  readonly rt: GpuRuntime;
  /** The GPU runtime, acquired now if the job has none yet (fails without WebGPU). */
  gpu(): Promise<GpuRuntime>;
  jobId: string;
  /** Call between steps: waits while paused, throws StopRequested when stopped. */
  step(): Promise<void>;
  metric(step: number, values: Record<string, number>): void;
  /** Tells the page a checkpoint was stored (the job persists it; only its key travels). */
  checkpoint(step: number, key: string, bytes: number, tag?: 'last' | 'best'): void;
  /** Calls `listener` on each later state change of this job (paused, running, stopping). */
  onState(listener: (state: JobState) => void): () => void;
  text(text: string): void;
  log(message: string): void;
  /** A structured progress record for the page (what it holds is the job kind's own). */
  progress(data: unknown): void;
  readonly stopRequested: boolean;
  /** The job's failure when its device was lost (then every later GPU error is a consequence). */
  readonly lost: Error | null;
  /**
   * What the job failed with, given what it threw: the device's loss when that is reported within
   * a moment of a GPU error (a readback on a destroyed device fails before the loss arrives), else
   * `thrown` itself. Errors with a message for the user and stops are never a loss.
   */
  failure(thrown: unknown): Promise<unknown>;
}

// These carry messages written for the user (storage full, a checkpoint that does not parse).
export const USER_ERRORS = ['BackendError', 'WebGPUUnavailableError', 'DeviceLostError', 'StorageFullError', 'CheckpointError', 'SafetensorsError'];

/** The message a user sees for an error a job threw. */
export function userMessage(e: Error): string {
  if (e instanceof UserFacingError) return e.message;
  if (USER_ERRORS.includes(e.name)) return e.message;
  if (/out of memory|OOM/i.test(e.message)) return `The GPU ran out of memory: ${e.message}. Try a smaller preset, batch or context.`;
  return `The job failed: ${e.message}`;
}
