// What every browser suite shares: the record format scripts/bench.mjs prints and stores, the
// suite signature, and the timing helpers (medians, because SwiftShader shares the CPU with
// whatever else the machine is doing and single timings swing by tens of percent).
import type { GpuRuntime } from '../src/gpu/runtime.ts';

export interface BenchRecord {
  suite: string;
  case: string;
  engine: string;
  metric: string;
  value: number;
  unit: string;
}

/** `options`: the suite's command-line options as given (`npm run bench -- --suite llm --layers 2` → { layers: '2' }). */
export type Suite = (rt: GpuRuntime, log: (s: string) => void, options?: Record<string, string>) => Promise<BenchRecord[]>;

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Median of `reps` timings of `fn`, after `warmup` untimed calls. */
export async function timeIt(fn: () => Promise<void>, reps: number, warmup = 1): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** Spread of a set of timings for the log, so a noisy run shows itself: "min–max". */
export function spread(xs: number[]): string {
  return `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`;
}

/**
 * Counts GPUComputePassEncoder.dispatchWorkgroups calls made while `fn` runs, on every device in
 * the page: our engine and tfjs-webgpu alike, so "launches per step" is counted the same way
 * for both rather than trusting each engine's own bookkeeping.
 */
export async function countDispatches(fn: () => Promise<void>): Promise<number> {
  const proto = GPUComputePassEncoder.prototype;
  const original = proto.dispatchWorkgroups;
  let n = 0;
  proto.dispatchWorkgroups = function (this: GPUComputePassEncoder, ...args: Parameters<typeof original>) {
    n++;
    return original.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.dispatchWorkgroups = original;
  }
  return n;
}
