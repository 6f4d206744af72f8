// Launcher for shaders/headnorm.wgsl: Qwen3's per-head RMSNorm of q and k, in place on the fused
// QKV buffer (forward) and on its gradient (backward, 3 dispatches: gain partials, dx, gain sums).
import code from '../../../shaders/headnorm.wgsl?raw';
import { checkHeadNormShape, type HeadNormShape } from '../../reference/headnorm.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, checkGridFits, grid, GRID_INCLUDE, needWords, ParamWords } from './common.ts';

const HEADNORM_SHADER = wgsl('headnorm.wgsl', code, GRID_INCLUDE);

/**
 * encodeForward(pass, qkv, weights, raw, stats): normalises the q and k heads of qkv in place,
 * keeping raw [rows, (H+KVH)·D] and stats [rows, H+KVH] for the backward.
 * encodeBackward(pass, dqkv, weights, raw, stats, grads): dqkv's q and k heads become the
 * gradient before the norm (in place); the gains' gradients are added into grads.
 */
export class HeadNormKernel {
  private readonly binds: BindGroupCache;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: HeadNormShape,
    readonly numBlocks: number,
    private readonly pipes: Record<'forward' | 'partial' | 'backward' | 'grad', GPUComputePipeline>,
    private readonly params: GPUBuffer,
    private readonly partial: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'headnorm');
  }

  static async create(rt: GpuRuntime, shape: HeadNormShape): Promise<HeadNormKernel> {
    checkHeadNormShape(shape);
    const rowsPerBlock = Math.max(16, Math.ceil(shape.rows / 32));
    const numBlocks = Math.ceil(shape.rows / rowsPerBlock);
    checkGridFits(rt, 'headnorm partial', [Math.ceil((2 * shape.D) / 64), numBlocks]);
    const [forward, partial, backward, grad] = await Promise.all(
      ['headnorm_forward', 'headnorm_partial', 'headnorm_backward', 'headnorm_grad'].map((e) => rt.pipeline(HEADNORM_SHADER, e)),
    );
    const w = new ParamWords(12);
    w.u32.set([shape.rows, shape.H, shape.kvH, shape.D, 0, shape.qOffset, shape.kOffset, rowsPerBlock, numBlocks]);
    w.f32[4] = shape.eps;
    return new HeadNormKernel(
      rt,
      shape,
      numBlocks,
      { forward, partial, backward, grad },
      rt.uniform('headnorm.params', w.u32),
      rt.storage('headnorm.partial', numBlocks * 2 * shape.D * 4),
    );
  }

  /** Elements of raw and of stats. */
  get rawSize(): number {
    return this.shape.rows * (this.shape.H + this.shape.kvH) * this.shape.D;
  }
  get statsSize(): number {
    return this.shape.rows * (this.shape.H + this.shape.kvH);
  }

  private check(what: string, x: BufferBinding, weights: BufferBinding, raw: BufferBinding, stats: BufferBinding) {
    const { rows, H, kvH, D, qOffset, kOffset } = this.shape;
    needWords(what, 'qkv', x, rows * (H + 2 * kvH) * D);
    needWords(what, 'weights', weights, Math.max(qOffset, kOffset) + D);
    needWords(what, 'raw', raw, this.rawSize);
    needWords(what, 'stats', stats, this.statsSize);
  }

  private get headGrid(): [number, number] {
    return grid(this.rt, Math.ceil(this.statsSize / 64));
  }

  encodeForward(pass: GPUComputePassEncoder, qkv: BufferBinding, weights: BufferBinding, raw: BufferBinding, stats: BufferBinding): void {
    this.check('headnorm', qkv, weights, raw, stats);
    this.binds.dispatch(pass, this.pipes.forward, { 0: this.params, 1: qkv, 2: weights, 3: raw, 4: stats }, this.headGrid);
  }

  /** grads null: no gain gradients (frozen weights), only dqkv. */
  encodeBackward(
    pass: GPUComputePassEncoder,
    dqkv: BufferBinding,
    weights: BufferBinding,
    raw: BufferBinding,
    stats: BufferBinding,
    grads: BufferBinding | null,
  ): void {
    this.check('headnorm backward', dqkv, weights, raw, stats);
    if (grads) needWords('headnorm backward', 'grads', grads, Math.max(this.shape.qOffset, this.shape.kOffset) + this.shape.D);
    const cols = Math.ceil((2 * this.shape.D) / 64);
    if (grads) this.binds.dispatch(pass, this.pipes.partial, { 0: this.params, 1: dqkv, 3: raw, 4: stats, 5: this.partial }, [cols, this.numBlocks]);
    this.binds.dispatch(pass, this.pipes.backward, { 0: this.params, 1: dqkv, 2: weights, 3: raw, 4: stats }, this.headGrid);
    if (grads) this.binds.dispatch(pass, this.pipes.grad, { 0: this.params, 5: this.partial, 6: grads }, [cols]);
  }

  dispose(): void {
    this.rt.release(this.params, this.partial);
    this.binds.clear();
  }
}
