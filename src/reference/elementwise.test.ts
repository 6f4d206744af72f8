import { describe, expect, it } from 'vitest';
import { addRef, biasAddRef, biasGradRef, gelu, geluBackwardRef, geluForwardRef, geluGrad } from './elementwise.ts';

// Central finite differences in f64 of the twins' forwards, against their backwards.
const H = 1e-6;

function rand(n: number, seed: number): Float64Array {
  const out = new Float64Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32) * 4 - 2;
  }
  return out;
}

describe('elementwise reference', () => {
  it('gelu matches known values and is ~x for large x, ~0 for very negative x', () => {
    expect(gelu(0)).toBe(0);
    expect(gelu(1)).toBeCloseTo(0.8411919906082768, 12);
    expect(gelu(-1)).toBeCloseTo(-0.15880800939172324, 12);
    expect(gelu(20)).toBeCloseTo(20, 10);
    expect(Math.abs(gelu(-20))).toBeLessThan(1e-12);
  });

  it("gelu' matches central finite differences", () => {
    for (const x of [-6, -3, -1.3, -0.2, 0, 0.4, 1, 2.5, 7]) {
      const fd = (gelu(x + H) - gelu(x - H)) / (2 * H);
      expect(Math.abs(geluGrad(x) - fd)).toBeLessThan(1e-8);
    }
  });

  it('bias + GELU backward: dh and dbias match finite differences of Σ R·gelu(x + b)', () => {
    const rows = 5;
    const C = 3;
    const x = rand(rows * C, 1);
    const b = rand(C, 2);
    const R = rand(rows * C, 3);
    const loss = (bb: ArrayLike<number>) => {
      const h = biasAddRef(x, bb, rows, C);
      let s = 0;
      for (let i = 0; i < h.length; i++) s += R[i] * gelu(h[i]);
      return s;
    };
    // Use f64 h for the analytic side (biasAddRef rounds to f32; recompute in f64 here).
    const h = new Float64Array(rows * C);
    for (let r = 0; r < rows; r++) for (let c = 0; c < C; c++) h[r * C + c] = x[r * C + c] + b[c];
    const dh = new Float64Array(rows * C);
    for (let i = 0; i < dh.length; i++) dh[i] = R[i] * geluGrad(h[i]);
    const db = biasGradRef(dh, rows, C);
    for (let c = 0; c < C; c++) {
      const bp = Float64Array.from(b);
      const bm = Float64Array.from(b);
      bp[c] += 1e-3;
      bm[c] -= 1e-3;
      // f32 rounding inside biasAddRef limits the FD accuracy; a wider step keeps it meaningful.
      const fd = (loss(bp) - loss(bm)) / 2e-3;
      expect(Math.abs(db[c] - fd)).toBeLessThan(1e-4 * Math.max(1, Math.abs(fd)));
    }
    const viaRef = geluBackwardRef(h, R);
    for (let i = 0; i < dh.length; i++) expect(viaRef[i]).toBeCloseTo(dh[i], 5);
  });

  it('forward helpers', () => {
    expect(Array.from(addRef([1, 2], [3, -4]))).toEqual([4, -2]);
    expect(Array.from(biasAddRef([1, 2, 3, 4], [9, 10, 20], 2, 2, 1))).toEqual([11, 22, 13, 24]);
    expect(Array.from(geluForwardRef([0]))).toEqual([0]);
    expect(Array.from(biasGradRef([1, 2, 3, 4, 5, 6], 3, 2))).toEqual([9, 12]);
  });
});
