// A matmul with one operand a weight tensor of the shards (shards.ts), which may be split along
// its rows into pieces in buffers of their own: one MatmulKernel per piece, each reading or
// writing its column block of the activations through the matmul's lda / ldc. For a weight W
// of [R, Q] split into rows [lo, hi):
//   'mul'    out = A · W              A [rows, R]:  Σ_pieces A[:, lo:hi] · W[lo:hi]  (accumulated piece after piece)
//   'mulT'   out = A · Wᵀ             A [rows, Q]:  out[:, lo:hi] = A · W[lo:hi]ᵀ     (each piece its own columns)
//   'gradT'  dW += Aᵀ · B             A [rows, R], B [rows, Q]: dW[lo:hi] += A[:, lo:hi]ᵀ · B
// The blocks' y = x·W is 'mul', dx = dy·Wᵀ 'mulT' and dW 'gradT'; the LM head (W = wte or
// lm_head [V, C]) runs logits = x·Wᵀ as 'mulT', dx = dlogits·W as 'mul', dW as 'gradT'. An
// unsplit weight is one piece: exactly the single matmul of before. A weight the plan holds in f16
// (halfWeights.ts) takes the matmul's f16-B entry points, its offsets in words; it is frozen, so
// 'gradT' refuses it.
import { MatmulKernel } from '../gpu/kernels/matmul.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import type { ParamTensor } from '../core/model/params.ts';
import { isHalf, piecesOf, type ParamBuffers, type ShardPlan, type TensorPiece } from './shards.ts';

export type PieceOp = 'mul' | 'mulT' | 'gradT';

export class PieceMatmul {
  private constructor(
    readonly op: PieceOp,
    private readonly kernels: { k: MatmulKernel; piece: TensorPiece }[],
  ) {}

  /**
   * `rows`: rows of A (the activations). beta applies to 'mul' (its first piece) and 'mulT'; 'gradT'
   * always adds. lastOf (for 'mulT' only): A holds sequences of `lastOf` rows and only the last row
   * of each is multiplied, out getting one row per sequence (generation's logits).
   */
  static async create(rt: GpuRuntime, plan: ShardPlan, w: ParamTensor, op: PieceOp, rows: number, beta = 0, lastOf?: number): Promise<PieceMatmul> {
    const [R, Q] = w.shape;
    if (w.shape.length !== 2) throw new RangeError(`matmul: weight '${w.name}' is not a matrix ([${w.shape.join(', ')}])`);
    if (lastOf !== undefined && (op !== 'mulT' || !Number.isInteger(rows / lastOf)))
      throw new RangeError(`matmul: the last of every ${lastOf} rows of ${rows} is for a 'mulT' product over whole sequences`);
    const f16B = isHalf(plan, w);
    if (f16B && op === 'gradT') throw new RangeError(`matmul: weight '${w.name}' is stored in f16 (frozen: inference or a LoRA base), it has no gradient`);
    // One row per sequence: a batch of 1-row products, A's rows lastOf·Q apart, the weight shared.
    const last = lastOf === undefined ? {} : { M: 1, batch: rows / lastOf, offsetA: (lastOf - 1) * Q, strideA: lastOf * Q, strideB: 0, strideC: R };
    const kernels = await Promise.all(
      piecesOf(plan, w.name).map(async (piece, i) => {
        const n = piece.rowEnd - piece.rowStart;
        const lo = piece.rowStart;
        const shape =
          op === 'mul'
            ? { M: rows, N: Q, K: n, offsetA: lo, lda: R, offsetB: piece.offset, beta: i === 0 ? beta : 1 }
            : op === 'mulT'
              ? { M: rows, N: n, K: Q, transB: true, offsetB: piece.offset, offsetC: lo, ldc: R, beta, ...last }
              : { M: n, N: Q, K: rows, transA: true, offsetA: lo, lda: R, offsetC: piece.offset, beta: 1 };
        return { k: await MatmulKernel.create(rt, shape, { f16B }), piece };
      }),
    );
    return new PieceMatmul(op, kernels);
  }

  /** Pieces (dispatches). */
  get count(): number {
    return this.kernels.length;
  }

  /** 'mul' / 'mulT': out from A and the weight in W. */
  encode(pass: GPUComputePassEncoder, a: GPUBuffer, W: ParamBuffers, out: GPUBuffer): void {
    if (this.op === 'gradT') throw new Error('PieceMatmul: a gradient product is encoded with encodeGrad');
    for (const { k, piece } of this.kernels) k.encode(pass, a, W.buffers[piece.shard], out);
  }

  /** 'gradT': the weight's gradient in G += Aᵀ·B. */
  encodeGrad(pass: GPUComputePassEncoder, a: GPUBuffer, b: GPUBuffer, G: ParamBuffers): void {
    if (this.op !== 'gradT') throw new Error('PieceMatmul: only a gradient product is encoded with encodeGrad');
    for (const { k, piece } of this.kernels) k.encode(pass, a, b, G.buffers[piece.shard]);
  }

  dispose(): void {
    for (const { k } of this.kernels) k.dispose();
  }
}
