import { describe, expect, it } from 'vitest';
import { headNormBackwardRef, headNormForwardRef, type HeadNormShape } from './headnorm.ts';
import { rand } from './testing.ts';

// Gains at awkward offsets of a weights buffer: q gain at 3, k gain at 11.
const s: HeadNormShape = { rows: 3, H: 3, kvH: 1, D: 4, eps: 1e-6, qOffset: 3, kOffset: 11 };
const W = (s.H + 2 * s.kvH) * s.D;

describe('headnorm reference', () => {
  it('each q and k head has unit RMS before its gain; v is untouched', () => {
    const x = rand(s.rows * W, 1);
    const w = new Float64Array(20).fill(1);
    const y = x.slice();
    headNormForwardRef(y, w, s);
    for (let r = 0; r < s.rows; r++) {
      for (let h = 0; h < s.H + s.kvH; h++) {
        let ms = 0;
        for (let d = 0; d < s.D; d++) ms += y[r * W + h * s.D + d] ** 2;
        expect(ms / s.D).toBeCloseTo(1, 4); // eps = 1e-6 against mean squares of ~0.3
      }
      for (let c = (s.H + s.kvH) * s.D; c < W; c++) expect(y[r * W + c]).toBe(x[r * W + c]);
    }
  });

  it('backward matches central finite differences for the inputs and both gains', () => {
    const x = rand(s.rows * W, 2);
    const w = rand(20, 3).map((v) => 1 + 0.5 * v);
    const dy = rand(s.rows * W, 4);
    const f = (xx: Float64Array, ww: Float64Array) => {
      const y = xx.slice();
      headNormForwardRef(y, ww, s);
      return y.reduce((a, v, i) => a + v * dy[i], 0);
    };
    const y = x.slice();
    const { raw, stats } = headNormForwardRef(y, w, s);
    const dx = dy.slice();
    const dgain = headNormBackwardRef(dx, raw, stats, w, s);
    const eps = 1e-6;
    const check = (analytic: number, plus: number, minus: number) => {
      const fd = (plus - minus) / (2 * eps);
      expect(Math.abs(analytic - fd)).toBeLessThan(1e-7 + 1e-6 * Math.abs(fd));
    };
    for (let i = 0; i < x.length; i++) {
      const xp = x.slice();
      const xm = x.slice();
      xp[i] += eps;
      xm[i] -= eps;
      // v's gradient passes through unchanged (dx = dy there).
      check(dx[i], f(xp, w), f(xm, w));
    }
    for (let j = 0; j < 2 * s.D; j++) {
      const at = (j < s.D ? s.qOffset : s.kOffset) + (j % s.D);
      const wp = w.slice();
      const wm = w.slice();
      wp[at] += eps;
      wm[at] -= eps;
      check(dgain[j], f(x, wp), f(x, wm));
    }
  });
});
