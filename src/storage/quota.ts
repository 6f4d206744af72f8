// The quota rule: before a long job starts (training, a bench, a prompt optimization), is the
// origin's storage near its quota? The page asks and, when it is, warns with this message and lets
// the user continue or free space first (the System view's Storage card).
//
// The rule, given navigator.storage.estimate()'s usage and quota:
//   free = quota − usage;
//   warn when the job's expected write is more than free ('job'), or else when free is under
//   MIN_FREE_FRACTION (10%) of the quota ('low');
//   no warning when the browser gives no estimate or a quota of 0 (nothing to judge by).
// A write that does not fit is refused by the browser and the job stops with the storage-full
// message (runs.ts); nothing stored before is lost either way. The warning only says so early.
import { paramCount, presetConfig, type PresetName } from '../core/model/config.ts';
import type { OriginEstimate } from './usage.ts';

export const MIN_FREE_FRACTION = 0.1;

export interface QuotaWarning {
  reason: 'job' | 'low';
  usage: number;
  quota: number;
  free: number;
  expectedBytes: number;
  message: string;
}

/** What a job is expected to write, for the warning's message. */
export interface JobWrite {
  /** 'a training run', 'this bench', … */
  what: string;
  /** Bytes the job is expected to store (0: unknown or small; only the 10% rule applies). */
  bytes: number;
}

const KIB = 1024;

/** A byte count for people: B, KiB, MiB, GiB, TiB (three significant digits). */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < KIB) return `${Math.max(0, Math.round(n || 0))} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / KIB;
  let i = 0;
  while (v >= KIB && i < units.length - 1) {
    v /= KIB;
    i++;
  }
  return `${v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0)} ${units[i]}`;
}

/** The warning to show before `job` starts, or null when there is room (see the header). */
export function quotaWarning(estimate: OriginEstimate | null, job: JobWrite): QuotaWarning | null {
  if (!estimate || !(estimate.quota > 0)) return null;
  const { usage, quota } = estimate;
  const free = Math.max(0, quota - usage);
  const expectedBytes = Math.max(0, job.bytes);
  const reason = expectedBytes > free ? 'job' : free < quota * MIN_FREE_FRACTION ? 'low' : null;
  if (!reason) return null;
  const room = `${formatBytes(free)} free of ${formatBytes(quota)} (${((100 * free) / quota).toFixed(free < quota * 0.01 ? 1 : 0)}%)`;
  const message =
    reason === 'job'
      ? `Browser storage is nearly full: ${room}, and ${job.what} is expected to write about ${formatBytes(expectedBytes)}. When storage fills, the job stops with what it saved so far; nothing stored before is lost.`
      : `Browser storage is nearly full: ${room}. ${job.what[0].toUpperCase()}${job.what.slice(1)} may stop when it fills, keeping what it saved so far; nothing stored before is lost.`;
  return { reason, usage, quota, free, expectedBytes, message };
}

/**
 * Bytes a training run of `preset` stores at its peak: a checkpoint holds the weights and the two
 * Adam moments in float32 (12 bytes a parameter), and while a new 'last' replaces the old one
 * beside a 'best', three such records exist at once (runs.ts).
 */
export function trainWriteBytes(preset: PresetName, vocabSize?: number): number {
  const config = presetConfig(preset, vocabSize ? { vocabSize } : {});
  return 3 * 12 * paramCount(config);
}
