// Helpers the kernel tests share (submissions: submit() in src/gpu/kernels/common.ts).
import type { GpuRuntime } from '../runtime.ts';

/**
 * The same device, claiming at most `max` workgroups per grid dimension, so launchers must
 * spill their grids into y (real limits need far bigger shapes than SwiftShader can test).
 */
export function withGridLimit(rt: GpuRuntime, max: number): GpuRuntime {
  const limits = { ...rt.report.limits, maxComputeWorkgroupsPerDimension: max };
  return Object.create(rt, { report: { value: { ...rt.report, limits } } }) as GpuRuntime;
}
