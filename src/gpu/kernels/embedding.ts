// Launcher for shaders/embedding.wgsl: token (+ learned position) embedding forward, and the
// deterministic backward driven by a CSR of token → rows that the host builds when it uploads a
// batch (it knows the tokens, so no GPU sort or float atomics are needed).
import code from '../../../shaders/embedding.wgsl?raw';
import { resolveEmbeddingShape, type EmbeddingShape, type ResolvedEmbeddingShape } from '../../reference/embedding.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, checkOffset, grid, GRID_INCLUDE, needWords, ParamWords } from './common.ts';

const EMBEDDING_SHADER = wgsl('embedding.wgsl', code, GRID_INCLUDE);

/** Distinct tokens a batch of `rows` tokens over `vocab` can hold: fixes the CSR size and the backward grid. */
function maxDistinctTokens(rows: number, vocab: number): number {
  return Math.min(rows, vocab);
}

/** u32 words of the CSR buffer for a batch shape (see the layout in shaders/embedding.wgsl). */
export function tokenCsrLength(rows: number, vocab: number): number {
  return 2 + 2 * maxDistinctTokens(rows, vocab) + rows;
}

/**
 * The batch's token → rows index, laid out for embed_backward: [n, distinct ids (ascending),
 * starts, rows grouped by token (ascending within a token)]. A counting sort, O(rows + vocab).
 */
export function buildTokenCsr(tokens: ArrayLike<number>, vocab: number, out?: Uint32Array): Uint32Array {
  const rows = tokens.length;
  const maxDistinct = maxDistinctTokens(rows, vocab);
  const csr = out ?? new Uint32Array(tokenCsrLength(rows, vocab));
  if (csr.length < tokenCsrLength(rows, vocab)) throw new RangeError(`token CSR needs ${tokenCsrLength(rows, vocab)} words, got ${csr.length}`);
  const counts = new Uint32Array(vocab);
  for (let r = 0; r < rows; r++) {
    const t = tokens[r];
    if (!(Number.isInteger(t) && t >= 0 && t < vocab)) throw new RangeError(`token ${t} at row ${r} is outside the vocabulary (0..${vocab - 1})`);
    counts[t]++;
  }
  const startsAt = 1 + maxDistinct;
  const listAt = startsAt + maxDistinct + 1;
  // slot[t] = where token t's next row goes in the list.
  const slot = new Uint32Array(vocab);
  let n = 0;
  let pos = 0;
  for (let t = 0; t < vocab; t++) {
    if (counts[t] === 0) continue;
    csr[1 + n] = t;
    csr[startsAt + n] = pos;
    slot[t] = pos;
    pos += counts[t];
    n++;
  }
  csr[0] = n;
  for (let i = n; i < maxDistinct; i++) csr[1 + i] = 0;
  for (let i = n; i <= maxDistinct; i++) csr[startsAt + i] = pos;
  for (let r = 0; r < rows; r++) csr[listAt + slot[tokens[r]]++] = r;
  return csr;
}

/**
 * Forward: encodeForward(pass, tokens, weights, out, positions?) writes out = wte[tok] (+ wpe[pos])
 * for the rows whose token is in the kernel's piece [tokenStart, tokenEnd) of the table.
 * Backward: encodeBackward(pass, csr, dout, grads, posGrads?) ADDS into dwte inside `grads` at
 * dwteOffset (one dispatch) and, with learned positions and unless told otherwise, into dwpe
 * inside `posGrads` (default `grads`) at dwpeOffset (a second one). Always accumulates (see the shader).
 */
export class EmbeddingKernel {
  private readonly binds: BindGroupCache;
  readonly maxDistinct: number;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: ResolvedEmbeddingShape,
    private readonly forward: GPUComputePipeline,
    private readonly backward: GPUComputePipeline,
    private readonly backwardPos: GPUComputePipeline,
    private readonly params: GPUBuffer,
    /** The forward reads and writes vec4s (C and the weight offsets are multiples of 4). */
    readonly vec4: boolean,
    /** The wte piece is f16, packed two per u32 word (forward only). */
    readonly f16: boolean,
  ) {
    this.binds = new BindGroupCache(rt, 'embedding');
    this.maxDistinct = maxDistinctTokens(shape.rows, shape.vocab);
  }

  /**
   * `f16`: the wte piece is f16 packed two per u32 word, rows padded to an even length (src/reference/f16.ts;
   * wteOffset in words; wpe stays f32). Inference: such a table has no gradient, encodeBackward refuses.
   */
  static async create(rt: GpuRuntime, shape: EmbeddingShape, options: { forceScalar?: boolean; f16?: boolean } = {}): Promise<EmbeddingKernel> {
    const s = resolveEmbeddingShape(shape);
    for (const k of ['wteOffset', 'wpeOffset', 'dwteOffset', 'dwpeOffset'] as const) checkOffset(k, s[k]);
    const constants = { LEARNED_POS: s.learnedPositions ? 1 : 0 };
    const f16 = options.f16 ?? false;
    const vec4 = !f16 && !options.forceScalar && [s.C, s.wteOffset, s.wpeOffset].every((v) => v % 4 === 0);
    const [forward, backward, backwardPos] = await Promise.all([
      rt.pipeline(EMBEDDING_SHADER, f16 ? 'embed_forward_f16' : vec4 ? 'embed_forward_vec4' : 'embed_forward', constants),
      rt.pipeline(EMBEDDING_SHADER, 'embed_backward'),
      rt.pipeline(EMBEDDING_SHADER, 'embed_backward_pos'),
    ]);
    return new EmbeddingKernel(rt, s, forward, backward, backwardPos, rt.uniform('embedding.params', EmbeddingKernel.words(s, 0).u32), vec4, f16);
  }

  private static words(s: ResolvedEmbeddingShape, positionOffset: number): ParamWords {
    const w = new ParamWords();
    const at = positionOffset * s.C;
    w.u32.set([s.rows, s.C, s.T, maxDistinctTokens(s.rows, s.vocab), s.wteOffset, s.wpeOffset + at, s.dwteOffset, s.dwpeOffset + at, s.tokenStart, s.tokenEnd]);
    return w;
  }

  /**
   * Generation: row r reads wpe at position (r mod T) + offset instead of r mod T (the position
   * of a decode step's token, or of a prefill after a shared prefix); the backward adds into
   * dwpe at that position too (a group's completions after its shared prompt, sharedPrefix.ts).
   * A uniform write: it takes effect at the next submit, so encode one step per submission.
   */
  setPositionOffset(offset: number): void {
    checkOffset('position offset', offset);
    this.rt.write(this.params, EmbeddingKernel.words(this.shape, offset).u32);
  }

  /** Bytes of the CSR buffer encodeBackward reads. */
  get csrBytes(): number {
    return tokenCsrLength(this.shape.rows, this.shape.vocab) * 4;
  }

  /** Uploads a batch's tokens (u32 [rows]) and, when given a csr buffer, its CSR. */
  writeBatch(tokensBuffer: GPUBuffer, tokens: ArrayLike<number>, csrBuffer?: GPUBuffer): void {
    if (tokens.length !== this.shape.rows) throw new RangeError(`embedding: batch has ${tokens.length} tokens, kernel expects ${this.shape.rows}`);
    const csr = buildTokenCsr(tokens, this.shape.vocab);
    this.rt.write(tokensBuffer, Uint32Array.from(tokens));
    if (csrBuffer) this.rt.write(csrBuffer, csr);
  }

  /** Rows of the table this kernel's piece holds. */
  private get pieceRows(): number {
    return this.shape.tokenEnd - this.shape.tokenStart;
  }

  encodeForward(pass: GPUComputePassEncoder, tokens: BufferBinding, weights: BufferBinding, out: BufferBinding, positions: BufferBinding = weights): void {
    const s = this.shape;
    needWords('embedding', 'tokens', tokens, s.rows);
    needWords(
      'embedding',
      this.f16 ? 'weights (wte, f16 words)' : 'weights (wte)',
      weights,
      s.wteOffset + this.pieceRows * (this.f16 ? Math.ceil(s.C / 2) : s.C),
    );
    if (s.learnedPositions) needWords('embedding', 'positions (wpe)', positions, s.wpeOffset + s.T * s.C);
    needWords('embedding', 'out', out, s.rows * s.C);
    this.binds.dispatch(
      pass,
      this.forward,
      [this.params, tokens, weights, out, positions],
      grid(this.rt, Math.ceil((this.shape.rows * this.shape.C) / (this.vec4 ? 1024 : 256))),
    );
  }

  /** positions false: the dwpe dispatch is left out (another piece's kernel does it). */
  encodeBackward(pass: GPUComputePassEncoder, csr: BufferBinding, dout: BufferBinding, grads: BufferBinding, posGrads: BufferBinding | false = grads): void {
    const s = this.shape;
    if (this.f16) throw new Error('embedding: a table of f16 weights is for inference; it has no backward');
    needWords('embedding backward', 'csr', csr, tokenCsrLength(s.rows, s.vocab));
    needWords('embedding backward', 'dout', dout, s.rows * s.C);
    needWords('embedding backward', 'grads (dwte)', grads, s.dwteOffset + this.pieceRows * s.C);
    this.binds.dispatch(pass, this.backward, { 0: this.params, 1: csr, 2: dout, 3: grads }, grid(this.rt, this.maxDistinct));
    if (!s.learnedPositions || posGrads === false) return;
    needWords('embedding backward', 'grads (dwpe)', posGrads, s.dwpeOffset + s.T * s.C);
    this.binds.dispatch(pass, this.backwardPos, { 0: this.params, 2: dout, 3: posGrads }, grid(this.rt, s.T));
  }

  dispose(): void {
    this.rt.release(this.params);
    this.binds.clear();
  }
}
