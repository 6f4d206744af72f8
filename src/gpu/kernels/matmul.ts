// Launcher for shaders/matmul.wgsl. A MatmulKernel is built once per shape (its uniform
// buffer and pipeline are reused), then encoded into any compute pass as often as needed, so a
// training step can put all its matmuls into one submission.
import code from '../../../shaders/matmul.wgsl?raw';
import rows from '../../../shaders/matmul_rows.wgsl?raw';
import tiled from '../../../shaders/matmul_tiled.wgsl?raw';
import { matmulExtents, packedBExtent, resolveMatmulShape, resolvePackedBShape, type MatmulShape, type ResolvedMatmulShape } from '../../reference/matmul.ts';
import type { GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, checkGridFits, ParamWords, submit } from './common.ts';
import { MATMUL_CONSTS, MATMUL_ROWS_N, MATMUL_TILE_M, MATMUL_TILE_N } from './tiles.ts';

/** shaders/matmul.wgsl as the launcher composes it (exported for the tests). */
export const MATMUL_SHADER = wgsl('matmul.wgsl', code, { ...MATMUL_CONSTS, 'matmul_tiled.wgsl': tiled, 'matmul_rows.wgsl': rows });

/** vec4 loads are legal when every contiguous dimension, stride and offset is a multiple of 4 (with f16 B: A's, B being read in pairs). */
function canUseVec4(s: ResolvedMatmulShape, f16B = false): boolean {
  const aContig = s.transA ? s.M : s.K;
  const bContig = s.transB ? s.K : s.N;
  return [aContig, s.lda, s.strideA, s.offsetA, ...(f16B ? [] : [bContig, s.strideB, s.offsetB])].every((v) => v % 4 === 0);
}

/** Entry points per variant, for f32 B and for f16 B (packed two per u32 word, shaders/matmul.wgsl "f16 weights"). */
const ENTRY: Record<'f32' | 'f16', Record<MatmulVariant, string>> = {
  f32: { scalar: 'matmul', vec4: 'matmul_vec4', rows: 'matmul_rows' },
  f16: { scalar: 'matmul_f16b', vec4: 'matmul_f16b_vec4', rows: 'matmul_f16b_rows' },
};

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
    /** B is f16, packed two per u32 word (its offset and stride in words). */
    readonly f16B: boolean,
  ) {
    this.binds = new BindGroupCache(rt, 'matmul');
  }

  /**
   * `variant` forces an entry point (tests, benchmarks); by default few rows take matmul_rows, aligned shapes matmul_vec4.
   * `f16B`: B is f16 packed two per u32 word, each stored row padded to an even length (src/reference/f16.ts); offsetB and strideB count words.
   */
  static async create(
    rt: GpuRuntime,
    shape: MatmulShape,
    options: { forceScalar?: boolean; variant?: MatmulVariant; f16B?: boolean } = {},
  ): Promise<MatmulKernel> {
    const f16B = options.f16B ?? false;
    const s = f16B ? resolvePackedBShape(shape) : resolveMatmulShape(shape);
    const variant: MatmulVariant =
      options.variant ?? (options.forceScalar ? 'scalar' : s.M <= MATMUL_ROWS_MAX ? 'rows' : canUseVec4(s, f16B) ? 'vec4' : 'scalar');
    if (variant === 'vec4' && !canUseVec4(s, f16B))
      throw new RangeError(`matmul: the vec4 path needs every contiguous dimension, stride and offset a multiple of 4 (${JSON.stringify(shape)})`);
    checkGridFits(
      rt,
      `matmul ${s.M}×${s.N}×${s.K} batch ${s.batch}`,
      variant === 'rows' ? [s.batch, s.M, Math.ceil(s.N / MATMUL_ROWS_N)] : [s.batch, Math.ceil(s.M / MATMUL_TILE_M), Math.ceil(s.N / MATMUL_TILE_N)],
    );
    const pipeline = await rt.pipeline(MATMUL_SHADER, ENTRY[f16B ? 'f16' : 'f32'][variant], {
      TRANS_A: s.transA ? 1 : 0,
      TRANS_B: s.transB ? 1 : 0,
    });
    const w = new ParamWords(16);
    w.u32.set([s.M, s.N, s.K, s.strideA, s.strideB, s.strideC, s.offsetA, s.offsetB, s.offsetC]);
    w.f32.set([s.alpha, s.beta], 9);
    w.u32.set([s.lda, s.ldc], 11);
    const params = rt.uniform('matmul.params', w.u32);
    return new MatmulKernel(rt, s, pipeline, params, variant, f16B);
  }

  /** Records the product into `pass`; a, b, c must hold matmulExtents(shape) elements. */
  encode(pass: GPUComputePassEncoder, a: GPUBuffer, b: GPUBuffer, c: GPUBuffer): void {
    const grid: [number, number, number] =
      this.variant === 'rows'
        ? [Math.ceil(this.shape.N / MATMUL_ROWS_N), this.shape.M, this.shape.batch]
        : [Math.ceil(this.shape.N / MATMUL_TILE_N), Math.ceil(this.shape.M / MATMUL_TILE_M), this.shape.batch];
    this.binds.dispatch(pass, this.pipeline, [a, b, c, this.params], grid);
  }

  flops(): number {
    return 2 * this.shape.M * this.shape.N * this.shape.K * this.shape.batch;
  }

  /** Words (f16 B) or elements (f32 B) the B buffer must hold. */
  get bExtent(): number {
    return this.f16B ? packedBExtent(this.shape) : matmulExtents(this.shape).b;
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
  b: Float32Array | Uint32Array,
  shape: MatmulShape,
  options: { c?: Float32Array; forceScalar?: boolean; variant?: MatmulVariant } = {},
): Promise<Float32Array> {
  // A Uint32Array B is f16, packed (src/reference/f16.ts's packF16Rows).
  const f16B = b instanceof Uint32Array;
  const ext = matmulExtents(shape);
  const bNeed = f16B ? packedBExtent(shape) : ext.b;
  if (a.length < ext.a || b.length < bNeed) {
    throw new RangeError(`matmul: A needs ${ext.a} elements (has ${a.length}), B needs ${bNeed} ${f16B ? 'packed words' : 'elements'} (has ${b.length})`);
  }
  const kernel = await MatmulKernel.create(rt, shape, { ...options, f16B });
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
