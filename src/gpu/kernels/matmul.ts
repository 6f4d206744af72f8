// Launcher for shaders/matmul.wgsl. A MatmulKernel is built once per shape (its uniform
// buffer and pipeline are reused), then encoded into any compute pass as often as needed, so a
// training step can put all its matmuls into one submission.
import code from '../../../shaders/matmul.wgsl?raw';
import { matmulExtents, resolveMatmulShape, type MatmulShape, type ResolvedMatmulShape } from '../../reference/matmul.ts';
import type { GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';

export const MATMUL_SHADER = wgsl('matmul.wgsl', code);
const TILE = 64;

/** vec4 loads are legal when every contiguous dimension, stride and offset is a multiple of 4. */
export function canUseVec4(s: ResolvedMatmulShape): boolean {
  const aContig = s.transA ? s.M : s.K;
  const bContig = s.transB ? s.K : s.N;
  return [aContig, bContig, s.strideA, s.strideB, s.offsetA, s.offsetB].every((v) => v % 4 === 0);
}

export class MatmulKernel {
  private bindCache: { a: GPUBuffer; b: GPUBuffer; c: GPUBuffer; group: GPUBindGroup } | null = null;

  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: ResolvedMatmulShape,
    readonly pipeline: GPUComputePipeline,
    private readonly params: GPUBuffer,
    readonly variant: 'scalar' | 'vec4',
  ) {}

  static async create(rt: GpuRuntime, shape: MatmulShape, options: { forceScalar?: boolean } = {}): Promise<MatmulKernel> {
    const s = resolveMatmulShape(shape);
    const wgLimit = rt.report.limits.maxComputeWorkgroupsPerDimension;
    if (s.batch > wgLimit || Math.ceil(s.M / TILE) > wgLimit || Math.ceil(s.N / TILE) > wgLimit) {
      throw new RangeError(`matmul ${s.M}×${s.N}×${s.K} batch ${s.batch} exceeds ${wgLimit} workgroups per dimension`);
    }
    const variant = !options.forceScalar && canUseVec4(s) ? 'vec4' : 'scalar';
    const pipeline = await rt.pipeline(MATMUL_SHADER, variant === 'vec4' ? 'matmul_vec4' : 'matmul', {
      TRANS_A: s.transA ? 1 : 0,
      TRANS_B: s.transB ? 1 : 0,
    });
    const u = new ArrayBuffer(48);
    new Uint32Array(u, 0, 9).set([s.M, s.N, s.K, s.strideA, s.strideB, s.strideC, s.offsetA, s.offsetB, s.offsetC]);
    new Float32Array(u, 36, 2).set([s.alpha, s.beta]);
    const params = rt.uniform('matmul.params', new Uint8Array(u));
    return new MatmulKernel(rt, s, pipeline, params, variant);
  }

  /** Records the product into `pass`; a, b, c must hold matmulExtents(shape) elements. */
  encode(pass: GPUComputePassEncoder, a: GPUBuffer, b: GPUBuffer, c: GPUBuffer): void {
    if (!this.bindCache || this.bindCache.a !== a || this.bindCache.b !== b || this.bindCache.c !== c) {
      this.bindCache = { a, b, c, group: this.rt.bindGroup(this.pipeline, [a, b, c, this.params], 'matmul') };
    }
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, this.bindCache.group);
    pass.dispatchWorkgroups(Math.ceil(this.shape.N / TILE), Math.ceil(this.shape.M / TILE), this.shape.batch);
  }

  flops(): number {
    return 2 * this.shape.M * this.shape.N * this.shape.K * this.shape.batch;
  }

  dispose(): void {
    this.rt.release(this.params);
    this.bindCache = null;
  }
}

/** Upload, multiply, read back: for tests, the self-test and one-off use. */
export async function matmul(
  rt: GpuRuntime,
  a: Float32Array,
  b: Float32Array,
  shape: MatmulShape,
  options: { c?: Float32Array; forceScalar?: boolean } = {},
): Promise<Float32Array> {
  const ext = matmulExtents(shape);
  if (a.length < ext.a || b.length < ext.b) {
    throw new RangeError(`matmul: A needs ${ext.a} elements (has ${a.length}), B needs ${ext.b} (has ${b.length})`);
  }
  const kernel = await MatmulKernel.create(rt, shape, options);
  const bufA = rt.storage('matmul.a', a);
  const bufB = rt.storage('matmul.b', b);
  const bufC = rt.storage('matmul.c', options.c ?? ext.c * 4);
  try {
    const enc = rt.device.createCommandEncoder({ label: 'matmul' });
    const pass = enc.beginComputePass({ label: 'matmul' });
    kernel.encode(pass, bufA, bufB, bufC);
    pass.end();
    rt.device.queue.submit([enc.finish()]);
    return await rt.readF32(bufC, ext.c);
  } finally {
    rt.release(bufA, bufB, bufC);
    kernel.dispose();
  }
}
