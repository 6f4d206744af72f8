// Launcher for shaders/matmul.wgsl. A MatmulKernel is built once per shape (its uniform
// buffer and pipeline are reused), then encoded into any compute pass as often as needed, so a
// training step can put all its matmuls into one submission.
import code from '../../../shaders/matmul.wgsl?raw';
import { matmulExtents, resolveMatmulShape, type MatmulShape, type ResolvedMatmulShape } from '../../reference/matmul.ts';
import type { GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, checkGridFits, ParamWords, submit } from './common.ts';
import { MATMUL_ROWS_N, MATMUL_TILE_M, MATMUL_TILE_N } from './tiles.ts';

const MATMUL_SHADER = wgsl('matmul.wgsl', code);

/** vec4 loads are legal when every contiguous dimension, stride and offset is a multiple of 4. */
function canUseVec4(s: ResolvedMatmulShape): boolean {
  const aContig = s.transA ? s.M : s.K;
  const bContig = s.transB ? s.K : s.N;
  return [aContig, bContig, s.lda, s.strideA, s.strideB, s.offsetA, s.offsetB].every((v) => v % 4 === 0);
}

/** Rows up to which one thread per output element (matmul_rows) beats a 64-row tile: a decode step's matmuls. */
export const MATMUL_ROWS_MAX = 4;

export type MatmulVariant = 'scalar' | 'vec4' | 'rows';

export class MatmulKernel {
  private readonly binds: BindGroupCache;

  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: ResolvedMatmulShape,
    readonly pipeline: GPUComputePipeline,
    private readonly params: GPUBuffer,
    readonly variant: MatmulVariant,
  ) {
    this.binds = new BindGroupCache(rt, 'matmul');
  }

  /** `variant` forces an entry point (tests, benchmarks); by default few rows take matmul_rows, aligned shapes matmul_vec4. */
  static async create(rt: GpuRuntime, shape: MatmulShape, options: { forceScalar?: boolean; variant?: MatmulVariant } = {}): Promise<MatmulKernel> {
    const s = resolveMatmulShape(shape);
    const variant: MatmulVariant = options.variant ?? (options.forceScalar ? 'scalar' : s.M <= MATMUL_ROWS_MAX ? 'rows' : canUseVec4(s) ? 'vec4' : 'scalar');
    if (variant === 'vec4' && !canUseVec4(s)) throw new RangeError(`matmul: the vec4 path needs every contiguous dimension, stride and offset a multiple of 4 (${JSON.stringify(shape)})`);
    checkGridFits(rt, `matmul ${s.M}×${s.N}×${s.K} batch ${s.batch}`, variant === 'rows' ? [s.batch, s.M, Math.ceil(s.N / MATMUL_ROWS_N)] : [s.batch, Math.ceil(s.M / MATMUL_TILE_M), Math.ceil(s.N / MATMUL_TILE_N)]);
    const pipeline = await rt.pipeline(MATMUL_SHADER, { scalar: 'matmul', vec4: 'matmul_vec4', rows: 'matmul_rows' }[variant], {
      TRANS_A: s.transA ? 1 : 0,
      TRANS_B: s.transB ? 1 : 0,
    });
    const w = new ParamWords(16);
    w.u32.set([s.M, s.N, s.K, s.strideA, s.strideB, s.strideC, s.offsetA, s.offsetB, s.offsetC]);
    w.f32.set([s.alpha, s.beta], 9);
    w.u32.set([s.lda, s.ldc], 11);
    const params = rt.uniform('matmul.params', w.u32);
    return new MatmulKernel(rt, s, pipeline, params, variant);
  }

  /** Records the product into `pass`; a, b, c must hold matmulExtents(shape) elements. */
  encode(pass: GPUComputePassEncoder, a: GPUBuffer, b: GPUBuffer, c: GPUBuffer): void {
    const grid: [number, number, number] =
      this.variant === 'rows' ? [Math.ceil(this.shape.N / MATMUL_ROWS_N), this.shape.M, this.shape.batch] : [Math.ceil(this.shape.N / MATMUL_TILE_N), Math.ceil(this.shape.M / MATMUL_TILE_M), this.shape.batch];
    this.binds.dispatch(pass, this.pipeline, [a, b, c, this.params], grid);
  }

  flops(): number {
    return 2 * this.shape.M * this.shape.N * this.shape.K * this.shape.batch;
  }

  dispose(): void {
    this.rt.release(this.params);
    this.binds.clear();
  }
}

/** Upload, multiply, read back: for tests, the self-test and one-off use. */
export async function matmul(
  rt: GpuRuntime,
  a: Float32Array,
  b: Float32Array,
  shape: MatmulShape,
  options: { c?: Float32Array; forceScalar?: boolean; variant?: MatmulVariant } = {},
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
    submit(rt, 'matmul', (pass) => kernel.encode(pass, bufA, bufB, bufC));
    return await rt.readF32(bufC, ext.c);
  } finally {
    rt.release(bufA, bufB, bufC);
    kernel.dispose();
  }
}
