// Launcher for shaders/xent.wgsl: fused softmax cross-entropy + gradient with per-token loss
// weights (1 dispatch), and the deterministic weighted-mean loss (1 more, optional).
import code from '../../../shaders/xent.wgsl?raw';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, grid, ParamWords } from './elementwise.ts';

export const XENT_SHADER = wgsl('xent.wgsl', code);

export interface XentShape {
  /** Rows (tokens). */
  N: number;
  /** Vocabulary size (logits per row). */
  V: number;
  /** Write dlogits over the logits (training, default) or leave them (evaluation: nll and loss only). */
  grad?: boolean;
}

/** Threads per row: a power of two near V/8, between 32 and 256. */
export function xentWorkgroupSize(V: number): number {
  let wg = 32;
  while (wg < 256 && wg * 8 < V) wg *= 2;
  return wg;
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
    private readonly rows: GPUComputePipeline,
    private readonly reduce: GPUComputePipeline,
    private readonly params: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'xent');
    this.words.u32.set([shape.N, shape.V]);
  }

  static async create(rt: GpuRuntime, shape: XentShape): Promise<XentKernel> {
    for (const [k, v] of Object.entries({ N: shape.N, V: shape.V })) {
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`xent: ${k} must be a positive integer, got ${v}`);
    }
    const s: Required<XentShape> = { grad: true, ...shape };
    const [rows, reduce] = await Promise.all([
      rt.pipeline(XENT_SHADER, 'xent_rows', { WG: xentWorkgroupSize(s.V), GRAD: s.grad ? 1 : 0 }),
      rt.pipeline(XENT_SHADER, 'xent_reduce'),
    ]);
    const params = rt.uniform('xent.params', new Uint32Array(16));
    const k = new XentKernel(rt, s, rows, reduce, params);
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
    pass.setPipeline(this.rows);
    pass.setBindGroup(0, this.binds.get(this.rows, 'rows', [this.params, logits, targets, weights, nll]));
    pass.dispatchWorkgroups(...grid(this.rt, this.shape.N));
    if (lossOut) {
      pass.setPipeline(this.reduce);
      pass.setBindGroup(0, this.binds.get(this.reduce, 'reduce', [this.params, nll, weights, lossOut]));
      pass.dispatchWorkgroups(1);
    }
  }

  dispose(): void {
    this.rt.release(this.params);
    this.binds.clear();
  }
}
