import { describe, expect, it } from 'vitest';
import { normBackwardRef, normForwardRef, type NormKind } from './norm.ts';

function rand(n: number, seed: number, scale = 1, shift = 0): Float64Array {
  const out = new Float64Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = ((s / 2 ** 32) * 2 - 1) * scale + shift;
  }
  return out;
}

// A pure-f64 forward for the finite differences (normForwardRef rounds its output to f32).
function forward64(x: ArrayLike<number>, w: ArrayLike<number>, rows: number, C: number, kind: NormKind, eps: number): Float64Array {
  const y = new Float64Array(rows * C);
  for (let r = 0; r < rows; r++) {
    let mean = 0;
    if (kind === 'layer') {
      for (let c = 0; c < C; c++) mean += x[r * C + c];
      mean /= C;
    }
    let v = 0;
    for (let c = 0; c < C; c++) v += (x[r * C + c] - mean) ** 2;
    const rstd = 1 / Math.sqrt(v / C + eps);
    for (let c = 0; c < C; c++) y[r * C + c] = (x[r * C + c] - mean) * rstd * w[c] + (kind === 'layer' ? w[C + c] : 0);
  }
  return y;
}

describe('norm reference', () => {
  for (const kind of ['layer', 'rms'] as NormKind[]) {
    it(`${kind}: dx, dgamma, dbeta match central finite differences`, () => {
      const rows = 3;
      const C = 5;
      const eps = 1e-5;
      const x = rand(rows * C, 1, 1.5, 0.3);
      const w = rand(2 * C, 2, 0.5, 1);
      const R = rand(rows * C, 3);
      const loss = (xx: ArrayLike<number>, ww: ArrayLike<number>) => {
        const y = forward64(xx, ww, rows, C, kind, eps);
        let s = 0;
        for (let i = 0; i < y.length; i++) s += R[i] * y[i];
        return s;
      };
      // Stats in f64 (the reference stores f32 stats; recompute them exactly here).
      const stats = new Float64Array(2 * rows);
      for (let r = 0; r < rows; r++) {
        let mean = 0;
        if (kind === 'layer') {
          for (let c = 0; c < C; c++) mean += x[r * C + c];
          mean /= C;
        }
        let v = 0;
        for (let c = 0; c < C; c++) v += (x[r * C + c] - mean) ** 2;
        stats[2 * r] = mean;
        stats[2 * r + 1] = 1 / Math.sqrt(v / C + eps);
      }
      const { dx, dgamma, dbeta } = normBackwardRef(R, x, w, stats, { rows, C, kind, eps });
      const h = 1e-6;
      const fd = (arr: Float64Array, i: number, f: () => number) => {
        const keep = arr[i];
        arr[i] = keep + h;
        const lp = f();
        arr[i] = keep - h;
        const lm = f();
        arr[i] = keep;
        return (lp - lm) / (2 * h);
      };
      for (let i = 0; i < rows * C; i++) {
        // dx is stored in f32.
        expect(Math.abs(dx[i] - fd(x, i, () => loss(x, w))), `dx[${i}]`).toBeLessThan(1e-5 * Math.max(1, Math.abs(dx[i])));
      }
      for (let c = 0; c < C; c++) {
        expect(Math.abs(dgamma[c] - fd(w, c, () => loss(x, w))), `dgamma[${c}]`).toBeLessThan(1e-7);
        const want = kind === 'layer' ? fd(w, C + c, () => loss(x, w)) : 0;
        expect(Math.abs(dbeta[c] - want), `dbeta[${c}]`).toBeLessThan(1e-7);
      }
    });
  }

  it('forward normalises each row: LayerNorm to mean 0 / variance 1, RMSNorm to mean square 1', () => {
    const C = 8;
    const x = rand(2 * C, 9, 3, 5);
    const ones = new Float64Array(2 * C).fill(1);
    ones.fill(0, C);
    const ln = normForwardRef(x, ones, { rows: 2, C, kind: 'layer', eps: 0 }).y;
    const rms = normForwardRef(x, ones, { rows: 2, C, kind: 'rms', eps: 0 }).y;
    for (let r = 0; r < 2; r++) {
      const row = ln.subarray(r * C, (r + 1) * C);
      const m = row.reduce((a, b) => a + b, 0) / C;
      expect(Math.abs(m)).toBeLessThan(1e-6);
      expect(row.reduce((a, b) => a + b * b, 0) / C).toBeCloseTo(1, 5);
      expect(rms.subarray(r * C, (r + 1) * C).reduce((a, b) => a + b * b, 0) / C).toBeCloseTo(1, 5);
    }
  });
});
