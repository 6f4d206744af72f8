import { describe, expect, it } from 'vitest';
import { attentionBackwardRef, attentionForwardRef } from './attention.ts';
import { prefixAttentionBackwardRef, prefixAttentionForwardRef, prefixQkvWidth, type PrefixAttentionShape } from './prefixAttention.ts';
import { rand } from './testing.ts';

/** Completion g as one full sequence: the P live prefix rows, then its own Tc rows. */
function concat(pqkv: Float64Array, qkv: Float64Array, s: PrefixAttentionShape, P: number, g: number): Float64Array {
  const W = prefixQkvWidth(s);
  const x = new Float64Array((P + s.Tc) * W);
  x.set(pqkv.subarray(0, P * W), 0);
  x.set(qkv.subarray(g * s.Tc * W, (g + 1) * s.Tc * W), P * W);
  return x;
}

describe('prefix attention reference', () => {
  // Prefix lengths below the buffer (P < Tp: padding rows must be ignored), P = 0, G = 1 and 3;
  // grouped-query attention with 2 and 4 query heads per key/value head.
  const CASES: [PrefixAttentionShape, number][] = [
    [{ G: 3, Tc: 5, Tp: 7, H: 2, D: 4 }, 6],
    [{ G: 1, Tc: 3, Tp: 4, H: 3, D: 8 }, 4],
    [{ G: 2, Tc: 2, Tp: 3, H: 1, D: 4 }, 0],
    [{ G: 3, Tc: 4, Tp: 6, H: 4, D: 4, kvH: 2 }, 5],
    [{ G: 2, Tc: 3, Tp: 4, H: 4, D: 8, kvH: 1 }, 4],
    [{ G: 2, Tc: 3, Tp: 2, H: 6, D: 4, kvH: 3 }, 0],
  ];

  for (const [s, P] of CASES) {
    it(`equals causal attention over prefix + completion, forward and backward (${JSON.stringify(s)}, P = ${P})`, () => {
      const C = s.H * s.D;
      const W = prefixQkvWidth(s);
      const pqkv = rand(s.Tp * W, 3 + P);
      const qkv = rand(s.G * s.Tc * W, 5 + s.Tc);
      const dout = rand(s.G * s.Tc * C, 9);
      const { out, lse } = prefixAttentionForwardRef(pqkv, qkv, s, P);
      const { dqkv, dpkv } = prefixAttentionBackwardRef(pqkv, qkv, dout, s, P);
      const sumDpkv = new Float64Array(s.Tp * W);
      for (let g = 0; g < s.G; g++) {
        const full = concat(pqkv, qkv, s, P, g);
        const shape = { B: 1, T: P + s.Tc, H: s.H, D: s.D, kvH: s.kvH };
        const want = attentionForwardRef(full, shape);
        for (let t = 0; t < s.Tc; t++) {
          for (let c = 0; c < C; c++) expect(out[(g * s.Tc + t) * C + c]).toBeCloseTo(want.out[(P + t) * C + c], 12);
          for (let h = 0; h < s.H; h++) expect(lse[(g * s.H + h) * s.Tc + t]).toBeCloseTo(want.lse[h * (P + s.Tc) + P + t], 12);
        }
        // The prefix rows' own outputs carry no gradient here: only the completions' do.
        const dFull = new Float64Array((P + s.Tc) * C);
        dFull.set(dout.subarray(g * s.Tc * C, (g + 1) * s.Tc * C), P * C);
        const grad = attentionBackwardRef(full, dFull, shape);
        for (let i = 0; i < s.Tc * W; i++) expect(dqkv[g * s.Tc * W + i]).toBeCloseTo(grad[P * W + i], 12);
        for (let i = 0; i < P * W; i++) sumDpkv[i] += grad[i];
      }
      for (let i = 0; i < sumDpkv.length; i++) expect(dpkv[i]).toBeCloseTo(sumDpkv[i], 12);
      // The q part of the prefix gets nothing (the prefix's own queries are not part of this op).
      for (let j = 0; j < s.Tp; j++) for (let c = 0; c < C; c++) expect(dpkv[j * W + c]).toBe(0);
    });
  }

  for (const s of [
    { G: 3, Tc: 3, Tp: 4, H: 2, D: 4 },
    { G: 2, Tc: 3, Tp: 4, H: 4, D: 4, kvH: 2 },
    { G: 2, Tc: 2, Tp: 3, H: 4, D: 4, kvH: 1 },
  ] as PrefixAttentionShape[]) {
    it(`backward matches central finite differences (${JSON.stringify(s)})`, () => {
      const P = 3;
      const C = s.H * s.D;
      const W = prefixQkvWidth(s);
      const pqkv = rand(s.Tp * W, 17);
      const qkv = rand(s.G * s.Tc * W, 19);
      const dout = rand(s.G * s.Tc * C, 23);
      const f = (pq: Float64Array, q: Float64Array) => prefixAttentionForwardRef(pq, q, s, P).out.reduce((a, o, i) => a + o * dout[i], 0);
      const { dqkv, dpkv } = prefixAttentionBackwardRef(pqkv, qkv, dout, s, P);
      const h = 1e-6;
      const fd = (x: Float64Array, i: number, call: (y: Float64Array) => number) => {
        const xp = x.slice();
        const xm = x.slice();
        xp[i] += h;
        xm[i] -= h;
        return (call(xp) - call(xm)) / (2 * h);
      };
      for (let i = 0; i < qkv.length; i++) {
        const want = fd(qkv, i, (y) => f(pqkv, y));
        expect(Math.abs(dqkv[i] - want)).toBeLessThan(1e-7 + 1e-6 * Math.abs(want));
      }
      for (let i = 0; i < pqkv.length; i++) {
        const want = fd(pqkv, i, (y) => f(y, qkv));
        expect(Math.abs(dpkv[i] - want)).toBeLessThan(1e-7 + 1e-6 * Math.abs(want));
      }
    });
  }
});
