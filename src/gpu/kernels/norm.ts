// Launcher for shaders/norm.wgsl: LayerNorm / RMSNorm forward (1 dispatch) and backward
// (2 dispatches: dx with per-block dgamma/dbeta partials, then the sum over blocks).
import code from '../../../shaders/norm.wgsl?raw';
import { resolveNormShape, type NormShape, type ResolvedNormShape } from '../../reference/norm.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, checkOffset, grid, ParamWords } from './elementwise.ts';

export const NORM_SHADER = wgsl('norm.wgsl', code);

export interface NormOptions {
  /** Add dx into the dx binding (e.g. the residual stream's gradient) instead of overwriting it. Default false. */
  accumulateDx?: boolean;
  /** Add dgamma/dbeta into the gradient buffer (default true: the model zeroes gradients once per step) or overwrite them. */
  accumulateParams?: boolean;
}

/** Threads per row: a power of two near C/2, between 32 and 256 (a thread owns ≤ 8 columns). */
export function normWorkgroupSize(C: number): number {
  let wg = 32;
  while (wg < 256 && wg * 2 < C) wg *= 2;
  return wg;
}

/** Rows per backward workgroup: keeps ~64 workgroups busy while each reduces a handful of rows. */
function rowsPerBlock(rows: number): number {
  return Math.max(4, Math.ceil(rows / 64));
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
    const WG = normWorkgroupSize(s.C);
    if (s.C > 8 * WG) throw new RangeError(`norm: C = ${s.C} exceeds the ${8 * WG} columns a workgroup handles`);
    const RMS = s.kind === 'rms' ? 1 : 0;
    const [forward, backward, paramGrad] = await Promise.all([
      rt.pipeline(NORM_SHADER, 'norm_forward', { RMS, WG }),
      rt.pipeline(NORM_SHADER, 'norm_backward', { RMS, WG, ACCUM_DX: options.accumulateDx ? 1 : 0 }),
      rt.pipeline(NORM_SHADER, 'norm_param_grad', { RMS, ACCUMULATE: options.accumulateParams === false ? 0 : 1 }),
    ]);
    const rpb = rowsPerBlock(s.rows);
    const numBlocks = Math.ceil(s.rows / rpb);
    const w = new ParamWords();
    w.u32.set([s.rows, s.C, 0, s.gammaOffset, s.betaOffset, s.dgammaOffset, s.dbetaOffset, rpb, numBlocks]);
    w.f32[2] = s.eps;
    const params = rt.uniform('norm.params', w.u32);
    const partial = rt.storage('norm.partial', numBlocks * 2 * s.C * 4);
    return new NormKernel(rt, s, numBlocks, forward, backward, paramGrad, params, partial);
  }

  /** Bytes of the stats buffer (mean, rstd per row). */
  get statsBytes(): number {
    return this.shape.rows * 2 * 4;
  }

  encodeForward(pass: GPUComputePassEncoder, x: BufferBinding, weights: BufferBinding, y: BufferBinding, stats: BufferBinding): void {
    pass.setPipeline(this.forward);
    pass.setBindGroup(0, this.binds.get(this.forward, 'fwd', [this.params, x, weights, y, stats]));
    pass.dispatchWorkgroups(...grid(this.rt, this.shape.rows));
  }

  encodeBackward(
    pass: GPUComputePassEncoder,
    dy: BufferBinding,
    x: BufferBinding,
    weights: BufferBinding,
    stats: BufferBinding,
    dx: BufferBinding,
    grads: BufferBinding,
  ): void {
    pass.setPipeline(this.backward);
    pass.setBindGroup(0, this.binds.get(this.backward, 'bwd', [this.params, dy, x, weights, stats, dx, this.partial]));
    pass.dispatchWorkgroups(...grid(this.rt, this.numBlocks));
    pass.setPipeline(this.paramGrad);
    pass.setBindGroup(0, this.binds.get(this.paramGrad, 'pgrad', [this.params, this.partial, grads]));
    pass.dispatchWorkgroups(Math.ceil(this.shape.C / 64));
  }

  dispose(): void {
    this.rt.release(this.params, this.partial);
    this.binds.clear();
  }
}
