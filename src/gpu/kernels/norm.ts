// Launcher for shaders/norm.wgsl: LayerNorm / RMSNorm forward (1 dispatch) and backward
// (2 dispatches: dx rows and per-block dgamma/dbeta partials side by side, then the sum over
// blocks). All barrier-free: see the shader's header for why.
import code from '../../../shaders/norm.wgsl?raw';
import { resolveNormShape, type NormShape, type ResolvedNormShape } from '../../reference/norm.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, checkOffset, grid, GRID_INCLUDE, needWords, ParamWords } from './common.ts';

const NORM_SHADER = wgsl('norm.wgsl', code, GRID_INCLUDE);

export interface NormOptions {
  /** Add dx into the dx binding (e.g. the residual stream's gradient) instead of overwriting it. Default false. */
  accumulateDx?: boolean;
  /** Add dgamma/dbeta into the gradient buffer (default true: the model zeroes gradients once per step) or overwrite them. */
  accumulateParams?: boolean;
  /** Use the scalar kernels even where the vec4 ones apply (tests). */
  forceScalar?: boolean;
}

/** Rows per dgamma/dbeta stage-1 block: ~32 blocks, so stage 2 sums few partials. */
function rowsPerBlock(rows: number): number {
  return Math.max(16, Math.ceil(rows / 32));
}

/**
 * encodeForward(pass, x, weights, y, stats): y = norm(x)·gamma (+ beta); stats [rows, 2] = (mean, rstd).
 * encodeBackward(pass, dy, x, weights, stats, dx, grads): dx written (or added, accumulateDx);
 * dgamma/dbeta added (or overwritten) at dgammaOffset/dbetaOffset of grads.
 */
export class NormKernel {
  private readonly binds: BindGroupCache;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: ResolvedNormShape,
    readonly numBlocks: number,
    readonly vec4: boolean,
    private readonly forward: GPUComputePipeline,
    private readonly backward: GPUComputePipeline,
    private readonly paramGrad: GPUComputePipeline,
    private readonly params: GPUBuffer,
    private readonly partial: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'norm');
  }

  static async create(rt: GpuRuntime, shape: NormShape, options: NormOptions = {}): Promise<NormKernel> {
    const s = resolveNormShape(shape);
    for (const k of ['gammaOffset', 'betaOffset', 'dgammaOffset', 'dbetaOffset'] as const) checkOffset(k, s[k]);
    const RMS = s.kind === 'rms' ? 1 : 0;
    // vec4 loads need every row and parameter to start on a 4-float boundary.
    const vec4 = !options.forceScalar && [s.C, s.gammaOffset, s.betaOffset].every((v) => v % 4 === 0);
    const suffix = vec4 ? '_vec4' : '';
    const [forward, backward, paramGrad] = await Promise.all([
      rt.pipeline(NORM_SHADER, 'norm_forward' + suffix, { RMS }),
      rt.pipeline(NORM_SHADER, 'norm_backward' + suffix, { RMS, ACCUM_DX: options.accumulateDx ? 1 : 0 }),
      rt.pipeline(NORM_SHADER, 'norm_param_grad', { RMS, ACCUMULATE: options.accumulateParams === false ? 0 : 1 }),
    ]);
    const rpb = rowsPerBlock(s.rows);
    const numBlocks = Math.ceil(s.rows / rpb);
    const w = new ParamWords();
    w.u32.set([s.rows, s.C, 0, s.gammaOffset, s.betaOffset, s.dgammaOffset, s.dbetaOffset, rpb, numBlocks]);
    w.f32[2] = s.eps;
    const params = rt.uniform('norm.params', w.u32);
    const partial = rt.storage('norm.partial', numBlocks * 2 * s.C * 4);
    return new NormKernel(rt, s, numBlocks, vec4, forward, backward, paramGrad, params, partial);
  }

  /** Bytes of the stats buffer (mean, rstd per row). */
  get statsBytes(): number {
    return this.shape.rows * 2 * 4;
  }

  private checkWeights(what: string, b: BufferBinding, gammaOffset: number, betaOffset: number): void {
    needWords('norm', `${what} (gamma)`, b, gammaOffset + this.shape.C);
    if (this.shape.kind === 'layer') needWords('norm', `${what} (beta)`, b, betaOffset + this.shape.C);
  }

  encodeForward(pass: GPUComputePassEncoder, x: BufferBinding, weights: BufferBinding, y: BufferBinding, stats: BufferBinding): void {
    const { rows, C, gammaOffset, betaOffset } = this.shape;
    needWords('norm', 'x', x, rows * C);
    needWords('norm', 'y', y, rows * C);
    needWords('norm', 'stats', stats, 2 * rows);
    this.checkWeights('weights', weights, gammaOffset, betaOffset);
    this.binds.dispatch(pass, this.forward, [this.params, x, weights, y, stats], grid(this.rt, Math.ceil(this.shape.rows / 64)));
  }

  encodeBackward(
    pass: GPUComputePassEncoder,
    dy: BufferBinding,
    x: BufferBinding,
    weights: BufferBinding,
    stats: BufferBinding,
    dx: BufferBinding,
    /** null: no dgamma/dbeta (frozen weights). */
    grads: BufferBinding | null,
  ): void {
    const { rows, C, gammaOffset, betaOffset, dgammaOffset, dbetaOffset } = this.shape;
    for (const [what, b] of [
      ['dy', dy],
      ['x', x],
      ['dx', dx],
    ] as const)
      needWords('norm backward', what, b, rows * C);
    needWords('norm backward', 'stats', stats, 2 * rows);
    this.checkWeights('weights', weights, gammaOffset, betaOffset);
    if (grads) this.checkWeights('grads', grads, dgammaOffset, dbetaOffset);
    const rowGroups = Math.ceil(this.shape.rows / 64);
    // Column role: one thread per column (scalar) or per 4 columns (vec4), per row block.
    const colGroups = Math.ceil(this.shape.C / (this.vec4 ? 256 : 64));
    this.binds.dispatch(pass, this.backward, [this.params, dy, x, weights, stats, dx, this.partial], grid(this.rt, rowGroups + colGroups * this.numBlocks));
    if (grads) this.binds.dispatch(pass, this.paramGrad, [this.params, this.partial, grads], [Math.ceil(this.shape.C / 64)]);
  }

  dispose(): void {
    this.rt.release(this.params, this.partial);
    this.binds.clear();
  }
}
