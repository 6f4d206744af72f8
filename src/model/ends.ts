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
import { EmbeddingKernel } from '../gpu/kernels/embedding.ts';
import { MatmulKernel } from '../gpu/kernels/matmul.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import type { ModelConfig } from './config.ts';
import type { ParamLayout } from './params.ts';
import { piecesOf, placeOf, type ParamBuffers, type ShardPlan, type TensorPiece } from './shards.ts';

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
      pieces.map(async (piece) => ({ k: await EmbeddingKernel.create(rt, { ...base, wteOffset: piece.offset, tokenStart: piece.rowStart, tokenEnd: piece.rowEnd }), piece })),
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
    this.kernels.forEach(({ k, piece }, i) => k.encodeBackward(pass, csr, dout, G.buffers[piece.shard], i === 0 && this.wpe ? G.buffers[this.wpe.shard] : false));
  }

  dispose(): void {
    for (const { k } of this.kernels) k.dispose();
  }
}

interface HeadPiece {
  piece: TensorPiece;
  forward: MatmulKernel;
  dx?: MatmulKernel;
  dW?: MatmulKernel;
}

/** The LM head logits = x·Wᵀ over the pieces of W (wte when tied, lm_head when not). */
export class GpuHead {
  private constructor(private readonly pieces: HeadPiece[]) {}

  /** backward: build dx (and, unless frozen, dW) too. */
  static async create(rt: GpuRuntime, c: ModelConfig, layout: ParamLayout, plan: ShardPlan, shape: { rows: number; backward: boolean; frozen?: boolean }): Promise<GpuHead> {
    const V = c.vocabSize;
    const C = c.dModel;
    const M = shape.rows;
    const headT = layout.lmHead ?? layout.wte;
    const made = piecesOf(plan, headT.name).map(async (piece, i): Promise<HeadPiece> => {
      const n = piece.rowEnd - piece.rowStart;
      const [forward, dx, dW] = await Promise.all([
        MatmulKernel.create(rt, { M, N: n, K: C, transB: true, offsetB: piece.offset, offsetC: piece.rowStart, ldc: V }),
        // dx (+)= dlogits[:, lo:hi] · W[lo:hi]   ([M, n]·[n, C]); the first piece overwrites.
        shape.backward ? MatmulKernel.create(rt, { M, N: C, K: n, offsetA: piece.rowStart, lda: V, offsetB: piece.offset, beta: i === 0 ? 0 : 1 }) : undefined,
        // dW[lo:hi] += dlogits[:, lo:hi]ᵀ · x   ([n, M]·[M, C])
        shape.backward && !shape.frozen ? MatmulKernel.create(rt, { M: n, N: C, K: M, transA: true, offsetA: piece.rowStart, lda: V, offsetC: piece.offset, beta: 1 }) : undefined,
      ]);
      return { piece, forward, dx, dW };
    });
    return new GpuHead(await Promise.all(made));
  }

  /** Dispatches of the forward (one per piece). */
  get count(): number {
    return this.pieces.length;
  }

  encodeForward(pass: GPUComputePassEncoder, x: GPUBuffer, P: ParamBuffers, logits: GPUBuffer): void {
    for (const h of this.pieces) h.forward.encode(pass, x, P.buffers[h.piece.shard], logits);
  }

  /** dx = dlogits·W; dW += dlogitsᵀ·x into G (none when G is null: frozen weights). */
  encodeBackward(pass: GPUComputePassEncoder, dlogits: GPUBuffer, x: GPUBuffer, P: ParamBuffers, G: ParamBuffers | null, dx: GPUBuffer): void {
    for (const h of this.pieces) {
      if (!h.dx) throw new Error('GpuHead: built without the backward');
      h.dx.encode(pass, dlogits, P.buffers[h.piece.shard], dx);
      if (G) {
        if (!h.dW) throw new Error('GpuHead: built frozen (no weight gradient)');
        h.dW.encode(pass, dlogits, x, G.buffers[h.piece.shard]);
      }
    }
  }

  dispose(): void {
    for (const h of this.pieces) for (const k of [h.forward, h.dx, h.dW]) k?.dispose();
  }
}
