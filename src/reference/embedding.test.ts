import { describe, expect, it } from 'vitest';
import { buildTokenCsr, tokenCsrLength } from '../gpu/kernels/embedding.ts';
import { embeddingBackwardRef, embeddingForwardRef, type EmbeddingShape } from './embedding.ts';
import { rand } from './testing.ts';

describe('embedding reference', () => {
  it('backward matches central finite differences of Σ R·forward (repeated tokens, learned positions, offsets)', () => {
    const shape: EmbeddingShape = { rows: 6, C: 3, T: 3, vocab: 5, learnedPositions: true, wteOffset: 4, wpeOffset: 64 };
    const tokens = [2, 0, 2, 2, 4, 0];
    const weights = Float64Array.from(rand(64 + 9, 1));
    const R = rand(6 * 3, 2);
    const loss = (w: ArrayLike<number>) => {
      const x = embeddingForwardRef(tokens, w, shape);
      let s = 0;
      for (let i = 0; i < x.length; i++) s += R[i] * x[i];
      return s;
    };
    const grads = embeddingBackwardRef(tokens, R, new Float32Array(weights.length), shape);
    const h = 1e-3; // the forward is linear; f32 rounding in it sets the step
    for (let i = 0; i < weights.length; i++) {
      const wp = Float64Array.from(weights);
      const wm = Float64Array.from(weights);
      wp[i] += h;
      wm[i] -= h;
      const fd = (loss(wp) - loss(wm)) / (2 * h);
      expect(Math.abs(grads[i] - fd), `element ${i}`).toBeLessThan(1e-4);
    }
    // token 1 and 3 never occur; offsets 0..3 lie before wte.
    expect(grads[4 + 1 * 3]).toBe(0);
    expect(grads[0]).toBe(0);
  });

  it('forward without learned positions is a plain lookup', () => {
    const x = embeddingForwardRef([1, 0], [10, 11, 20, 21], { rows: 2, C: 2, T: 2, vocab: 2, learnedPositions: false });
    expect(Array.from(x)).toEqual([20, 21, 10, 11]);
    expect(() => embeddingForwardRef([2], [0, 0], { rows: 1, C: 1, T: 1, vocab: 2, learnedPositions: false })).toThrow(/row 0/);
  });

  it('token CSR groups rows by token in ascending order', () => {
    const csr = buildTokenCsr([3, 1, 3, 3, 0, 1], 4);
    // maxDistinct = 4: [n, ids×4, starts×5, list×6]
    expect(csr.length).toBe(tokenCsrLength(6, 4));
    expect(Array.from(csr)).toEqual([3, 0, 1, 3, 0, 0, 1, 3, 6, 6, 4, 1, 5, 0, 2, 3]);
    expect(() => buildTokenCsr([5], 4)).toThrow(/row 0/);
  });
});
