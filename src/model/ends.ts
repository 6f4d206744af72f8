// The two ends of the model on the GPU, over parameters in shards (shards.ts): the token
// embedding (tokens → x_0) and the LM head (x → logits = x·Wᵀ, W = wte when tied, lm_head when
// not), with their backward. Either table may be split along its vocabulary rows into pieces
// in buffers of their own; then
//   embedding: one gather per piece, each writing the rows whose token the piece holds
//              (and, backward, adding into those tokens' gradient rows; dwpe once);
//   head:      logits[:, lo:hi] = x · W[lo:hi]ᵀ per piece (the matmul's ldc = V),
//              dx = Σ_pieces dlogits[:, lo:hi] · W[lo:hi] (lda = V, accumulated piece after piece),
//              dW[lo:hi] += dlogits[:, lo:hi]ᵀ · x.
// An unsplit table is one piece [0, V): the same kernels as the single flat buffer of before.
// With f16 weights (halfWeights.ts) both tables are read from packed f16 rows, forward only.
// (The head's products are pieceMatmul.ts's, the blocks' weights split the same way.)
import { EmbeddingKernel } from '../gpu/kernels/embedding.ts';
import { PieceMatmul } from './pieceMatmul.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import type { ModelConfig } from '../core/model/config.ts';
import type { ParamLayout } from '../core/model/params.ts';
import { isHalf, piecesOf, placeOf, type ParamBuffers, type ShardPlan, type TensorPiece } from './shards.ts';

/** Token (+ learned position) embedding over the pieces of wte. */
export class GpuEmbedding {
  private constructor(
    private readonly kernels: { k: EmbeddingKernel; piece: TensorPiece }[],
    /** The wpe tensor's place (learned positions only). */
    private readonly wpe: TensorPiece | null,
  ) {}

  static async create(rt: GpuRuntime, c: ModelConfig, layout: ParamLayout, plan: ShardPlan, shape: { rows: number; T: number }): Promise<GpuEmbedding> {
    const wpe = layout.wpe ? placeOf(plan, layout.wpe) : null;
    const base = { rows: shape.rows, C: c.dModel, T: shape.T, vocab: c.vocabSize, learnedPositions: c.positions === 'learned', wpeOffset: wpe?.offset ?? 0 };
    const pieces = piecesOf(plan, layout.wte.name);
    const kernels = await Promise.all(
      pieces.map(async (piece) => ({
        k: await EmbeddingKernel.create(
          rt,
          { ...base, wteOffset: piece.offset, tokenStart: piece.rowStart, tokenEnd: piece.rowEnd },
          { f16: isHalf(plan, layout.wte) },
        ),
        piece,
      })),
    );
    return new GpuEmbedding(kernels, wpe);
  }

  /** Bytes of the batch's CSR buffer (the backward's token → rows index). */
  get csrBytes(): number {
    return this.kernels[0].k.csrBytes;
  }

  /** Uploads a batch's tokens and, when given a csr buffer, its CSR. */
  writeBatch(tokens: GPUBuffer, ids: ArrayLike<number>, csr?: GPUBuffer): void {
    this.kernels[0].k.writeBatch(tokens, ids, csr);
  }

  /** Rows read wpe from position (r mod T) + offset (see EmbeddingKernel.setPositionOffset). */
  setPositionOffset(offset: number): void {
    for (const { k } of this.kernels) k.setPositionOffset(offset);
  }

  encodeForward(pass: GPUComputePassEncoder, tokens: GPUBuffer, P: ParamBuffers, out: GPUBuffer): void {
    const positions = this.wpe ? P.buffers[this.wpe.shard] : undefined;
    for (const { k, piece } of this.kernels) k.encodeForward(pass, tokens, P.buffers[piece.shard], out, positions ?? P.buffers[piece.shard]);
  }

  /** Adds dwte (and dwpe) into G. */
  encodeBackward(pass: GPUComputePassEncoder, csr: GPUBuffer, dout: GPUBuffer, G: ParamBuffers): void {
    this.kernels.forEach(({ k, piece }, i) =>
      k.encodeBackward(pass, csr, dout, G.buffers[piece.shard], i === 0 && this.wpe ? G.buffers[this.wpe.shard] : false),
    );
  }

  dispose(): void {
    for (const { k } of this.kernels) k.dispose();
  }
}

/** The LM head logits = x·Wᵀ over the pieces of W (wte when tied, lm_head when not). */
export class GpuHead {
  private constructor(
    private readonly forward: PieceMatmul,
    private readonly dx: PieceMatmul | null,
    private readonly dW: PieceMatmul | null,
  ) {}

  /**
   * backward: build dx (and, unless frozen, dW) too. lastOf (inference): the rows are sequences of
   * lastOf rows and only the last row of each gets logits ([rows / lastOf, V]: what sampling reads).
   */
  static async create(
    rt: GpuRuntime,
    _c: ModelConfig,
    layout: ParamLayout,
    plan: ShardPlan,
    shape: { rows: number; backward: boolean; frozen?: boolean; lastOf?: number },
  ): Promise<GpuHead> {
    const W = layout.lmHead ?? layout.wte;
    if (shape.lastOf !== undefined && shape.backward) throw new RangeError('GpuHead: logits of the last rows only are for inference (no backward)');
    const [forward, dx, dW] = await Promise.all([
      PieceMatmul.create(rt, plan, W, 'mulT', shape.rows, 0, shape.lastOf),
      shape.backward ? PieceMatmul.create(rt, plan, W, 'mul', shape.rows) : null,
      shape.backward && !shape.frozen ? PieceMatmul.create(rt, plan, W, 'gradT', shape.rows) : null,
    ]);
    return new GpuHead(forward, dx, dW);
  }

  /** Dispatches of the forward (one per piece). */
  get count(): number {
    return this.forward.count;
  }

  encodeForward(pass: GPUComputePassEncoder, x: GPUBuffer, P: ParamBuffers, logits: GPUBuffer): void {
    this.forward.encode(pass, x, P, logits);
  }

  /** dx = dlogits·W; dW += dlogitsᵀ·x into G (none when G is null: frozen weights). */
  encodeBackward(pass: GPUComputePassEncoder, dlogits: GPUBuffer, x: GPUBuffer, P: ParamBuffers, G: ParamBuffers | null, dx: GPUBuffer): void {
    if (!this.dx) throw new Error('GpuHead: built without the backward');
    this.dx.encode(pass, dlogits, P, dx);
    if (!G) return;
    if (!this.dW) throw new Error('GpuHead: built frozen (no weight gradient)');
    this.dW.encodeGrad(pass, dlogits, x, G);
  }

  dispose(): void {
    for (const k of [this.forward, this.dx, this.dW]) k?.dispose();
  }
}
