import { describe, expect, it } from 'vitest';
import { silu, swigluBackwardRef, swigluForwardRef } from './swiglu.ts';
import { rand } from './testing.ts';

describe('swiglu reference', () => {
  it('is silu(gate)·up row by row', () => {
    const h = Float64Array.from([1, -2, 3, 0.5, 2, -1]); // one row, F = 3: gate [1, -2, 3], up [0.5, 2, -1]
    const out = swigluForwardRef(h, { rows: 1, F: 3 }, new Float64Array(3));
    expect(out[0]).toBeCloseTo(0.5 * (1 / (1 + Math.exp(-1))), 14);
    expect(out[1]).toBeCloseTo(2 * silu(-2), 14);
    expect(out[2]).toBeCloseTo(-silu(3), 14);
  });

  it('backward matches central finite differences (rows 5, F 7)', () => {
    const s = { rows: 5, F: 7 };
    const h = rand(s.rows * 2 * s.F, 3);
    const dout = rand(s.rows * s.F, 4);
    const f = (x: Float64Array) => swigluForwardRef(x, s, new Float64Array(s.rows * s.F)).reduce((a, o, i) => a + o * dout[i], 0);
    const grad = swigluBackwardRef(h, dout, s, new Float64Array(h.length));
    const eps = 1e-6;
    for (let i = 0; i < h.length; i++) {
      const xp = h.slice();
      const xm = h.slice();
      xp[i] += eps;
      xm[i] -= eps;
      const fd = (f(xp) - f(xm)) / (2 * eps);
      expect(Math.abs(grad[i] - fd)).toBeLessThan(1e-7 + 1e-6 * Math.abs(fd));
    }
  });
});
