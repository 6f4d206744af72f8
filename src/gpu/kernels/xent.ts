// Launcher for shaders/xent.wgsl: fused softmax cross-entropy + gradient with per-token loss
// weights (1 dispatch for V ≤ 512, 2 for longer rows), and the deterministic weighted-mean loss
// (1 more, optional).
import code from '../../../shaders/xent.wgsl?raw';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, checkDims, grid, GRID_INCLUDE, needWords, ParamWords } from './common.ts';
import { XENT_CONSTS, XENT_SEGMENT } from './tiles.ts';

/** shaders/xent.wgsl as the launcher composes it (exported for the tests). */
export const XENT_SHADER = wgsl('xent.wgsl', code, { ...GRID_INCLUDE, ...XENT_CONSTS });

export interface XentShape {
  /** Rows (tokens). */
  N: number;
  /** Vocabulary size (logits per row). */
  V: number;
  /** Write dlogits over the logits (training, default) or leave them (evaluation: nll and loss only). */
  grad?: boolean;
  /** Use the scalar row kernel even when V is a multiple of 4 (tests). */
  forceScalar?: boolean;
}

/**
 * encode(pass, logits, targets, weights, nll, lossOut?):
 *  - nll[r] = −log softmax(logits[r])[target[r]] (unweighted; 0 for padding targets ≥ V);
 *  - grad mode: logits[r] ← (w_r/W)·(softmax − onehot), OVERWRITING the logits in place;
 *  - lossOut (2 floats, optional): [Σ w·nll / W, Σ w·nll]; skip it to save a dispatch.
 * W comes from setWeightSum (a uniform written before the submission; one value per submission).
 */
export class XentKernel {
  private readonly binds: BindGroupCache;
  private readonly words = new ParamWords();
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: Required<XentShape>,
    /** xent_rows (one segment) or [xent_partial, xent_finish]. */
    private readonly rowPipelines: GPUComputePipeline[],
    private readonly reduce: GPUComputePipeline,
    private readonly params: GPUBuffer,
    private readonly scratch: GPUBuffer | null,
    readonly segments: number,
  ) {
    this.binds = new BindGroupCache(rt, 'xent');
    this.words.u32.set([shape.N, shape.V, 0, segments]);
  }

  static async create(rt: GpuRuntime, shape: XentShape): Promise<XentKernel> {
    checkDims('xent', { N: shape.N, V: shape.V });
    const s: Required<XentShape> = { grad: true, forceScalar: false, ...shape };
    const segments = Math.ceil(s.V / XENT_SEGMENT);
    const GRAD = s.grad ? 1 : 0;
    const [reduce, ...rowPipelines] = await Promise.all([
      rt.pipeline(XENT_SHADER, 'xent_reduce'),
      ...(segments === 1
        ? [rt.pipeline(XENT_SHADER, s.V % 4 === 0 && !s.forceScalar ? 'xent_rows_vec4' : 'xent_rows', { GRAD })]
        : [rt.pipeline(XENT_SHADER, 'xent_partial'), rt.pipeline(XENT_SHADER, 'xent_finish', { GRAD })]),
    ]);
    const params = rt.uniform('xent.params', new Uint32Array(16));
    // Per (row, segment): (max, Σ exp); then each row's target logit.
    const scratch = segments === 1 ? null : rt.storage('xent.scratch', (2 * s.N * segments + s.N) * 4);
    const k = new XentKernel(rt, s, rowPipelines, reduce, params, scratch, segments);
    k.setWeightSum(0);
    return k;
  }

  /** W = Σ weights of the batch's real (non-padding) targets; 0 gives loss 0 and zero gradients. */
  setWeightSum(W: number): void {
    if (!(W >= 0) || !Number.isFinite(W)) throw new RangeError(`xent: the weight sum must be a finite number ≥ 0, got ${W}`);
    this.words.f32[2] = W;
    this.rt.write(this.params, this.words.u32);
  }

  encode(
    pass: GPUComputePassEncoder,
    logits: BufferBinding,
    targets: BufferBinding,
    weights: BufferBinding,
    nll: BufferBinding,
    lossOut?: BufferBinding,
  ): void {
    const { N, V } = this.shape;
    needWords('xent', 'logits', logits, N * V);
    for (const [what, b] of [
      ['targets', targets],
      ['weights', weights],
      ['nll', nll],
    ] as const)
      needWords('xent', what, b, N);
    if (lossOut) needWords('xent', 'lossOut', lossOut, 2);
    const threads = grid(this.rt, Math.ceil((this.shape.N * this.segments) / 64));
    if (!this.scratch) {
      const rows = this.rowPipelines[0];
      this.binds.dispatch(pass, rows, [this.params, logits, targets, weights, nll], threads);
    } else {
      const [partial, finish] = this.rowPipelines;
      this.binds.dispatch(pass, partial, [this.params, logits, targets, this.scratch], threads);
      this.binds.dispatch(pass, finish, [this.params, logits, targets, weights, nll, this.scratch], threads);
    }
    if (lossOut) this.binds.dispatch(pass, this.reduce, [this.params, nll, weights, lossOut], [1]);
  }

  dispose(): void {
    this.rt.release(this.params, this.scratch);
    this.binds.clear();
  }
}
