// Helpers the kernel tests share.
import type { GpuRuntime } from '../runtime.ts';

/** Encodes one compute pass, submits it and waits for the GPU. */
export async function submit(rt: GpuRuntime, encode: (pass: GPUComputePassEncoder) => void): Promise<void> {
  const enc = rt.device.createCommandEncoder();
  const pass = enc.beginComputePass();
  encode(pass);
  pass.end();
  rt.device.queue.submit([enc.finish()]);
  await rt.sync();
}

/**
 * The same device, claiming at most `max` workgroups per grid dimension, so launchers must
 * spill their grids into y (real limits need far bigger shapes than SwiftShader can test).
 */
export function withGridLimit(rt: GpuRuntime, max: number): GpuRuntime {
  const limits = { ...rt.report.limits, maxComputeWorkgroupsPerDimension: max };
  return Object.create(rt, { report: { value: { ...rt.report, limits } } }) as GpuRuntime;
}
