// Plain-TypeScript twin of shaders/embedding.wgsl: token (+ learned position) embedding and its
// backward. Sums in f64; results f32 (as on the GPU) unless the caller passes f64 arrays.

import { unpackF16Rows } from './f16.ts';

type Floats = Float32Array | Float64Array;

export interface EmbeddingShape {
  /** Rows of activations, B·T. Row r holds token r, at position r mod T. */
  rows: number;
  /** Model width. */
  C: number;
  /** Context length (positions per sequence). */
  T: number;
  vocab: number;
  /** Add wpe[r mod T] (learned positions); false for RoPE models. */
  learnedPositions: boolean;
  /** Element offsets of wte [vocab, C] and wpe [T, C] in the parameter buffer. */
  wteOffset?: number;
  wpeOffset?: number;
  /** Element offsets of their gradients in the gradient buffer (default: the same as the weights, one shared layout). */
  dwteOffset?: number;
  dwpeOffset?: number;
  /**
   * The piece of a token table split by rows (src/model/shards.ts): the weights at wteOffset (and
   * the gradient at dwteOffset) hold tokens tokenStart ≤ tok < tokenEnd only, and rows whose token
   * lies outside are left alone. Default: the whole table [0, vocab).
   */
  tokenStart?: number;
  tokenEnd?: number;
}

export type ResolvedEmbeddingShape = Required<EmbeddingShape>;

export function resolveEmbeddingShape(s: EmbeddingShape): ResolvedEmbeddingShape {
  for (const [k, v] of Object.entries({ rows: s.rows, C: s.C, T: s.T, vocab: s.vocab })) {
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`embedding: ${k} must be a positive integer, got ${v}`);
  }
  const wteOffset = s.wteOffset ?? 0;
  const wpeOffset = s.wpeOffset ?? 0;
  const tokenStart = s.tokenStart ?? 0;
  const tokenEnd = s.tokenEnd ?? s.vocab;
  if (!(Number.isInteger(tokenStart) && Number.isInteger(tokenEnd) && tokenStart >= 0 && tokenStart < tokenEnd && tokenEnd <= s.vocab)) {
    throw new RangeError(`embedding: the token range [${tokenStart}, ${tokenEnd}) is not a non-empty part of the vocabulary (0..${s.vocab})`);
  }
  return {
    ...s,
    tokenStart,
    tokenEnd,
    wteOffset,
    wpeOffset,
    dwteOffset: s.dwteOffset ?? wteOffset,
    dwpeOffset: s.dwpeOffset ?? wpeOffset,
  };
}

/** x[r] = wte[token[r]] (+ wpe[r mod T]), for the rows whose token is in the piece; wpe is read from `positions` (default: `weights`). */
export function embeddingForwardRef<A extends Floats = Float32Array>(
  tokens: ArrayLike<number>,
  weights: ArrayLike<number>,
  shape: EmbeddingShape,
  out?: A,
  positions: ArrayLike<number> = weights,
): A {
  const s = resolveEmbeddingShape(shape);
  out ??= new Float32Array(s.rows * s.C) as A;
  for (let r = 0; r < s.rows; r++) {
    const tok = tokens[r];
    if (!(tok >= 0 && tok < s.vocab)) throw new RangeError(`embedding: token ${tok} at row ${r} is outside the vocabulary (${s.vocab})`);
    if (tok < s.tokenStart || tok >= s.tokenEnd) continue;
    for (let c = 0; c < s.C; c++) {
      let v = weights[s.wteOffset + (tok - s.tokenStart) * s.C + c];
      if (s.learnedPositions) v += positions[s.wpeOffset + (r % s.T) * s.C + c];
      out[r * s.C + c] = v;
    }
  }
  return out;
}

/**
 * Accumulates dwte[token[r]] += dout[r] (tokens of the piece) into `grads` and (learned positions)
 * dwpe[r mod T] += dout[r] into `posGrads` (default: `grads`).
 */
export function embeddingBackwardRef<A extends Floats>(
  tokens: ArrayLike<number>,
  dout: ArrayLike<number>,
  grads: A,
  shape: EmbeddingShape,
  posGrads: Floats = grads,
): A {
  const s = resolveEmbeddingShape(shape);
  const dwte = new Float64Array(s.vocab * s.C);
  const dwpe = new Float64Array(s.T * s.C);
  for (let r = 0; r < s.rows; r++) {
    for (let c = 0; c < s.C; c++) {
      const g = dout[r * s.C + c];
      dwte[tokens[r] * s.C + c] += g;
      dwpe[(r % s.T) * s.C + c] += g;
    }
  }
  const lo = s.tokenStart * s.C;
  for (let i = lo; i < s.tokenEnd * s.C; i++) if (dwte[i] !== 0) grads[s.dwteOffset + i - lo] += dwte[i];
  if (s.learnedPositions) for (let i = 0; i < dwpe.length; i++) posGrads[s.dwpeOffset + i] += dwpe[i];
  return grads;
}

/**
 * The twin of embed_forward_f16: the piece of wte at word wteOffset of `words` is f16 packed two
 * per u32 word, rows padded to an even length (src/reference/f16.ts); wpe is f32 in `positions`.
 */
export function embeddingForwardF16Ref(tokens: ArrayLike<number>, words: Uint32Array, shape: EmbeddingShape, positions: ArrayLike<number>): Float32Array {
  const s = resolveEmbeddingShape(shape);
  const table = unpackF16Rows(words, s.tokenEnd - s.tokenStart, s.C, s.wteOffset);
  return embeddingForwardRef<Float32Array>(tokens, table, { ...shape, wteOffset: 0 }, undefined, positions);
}
