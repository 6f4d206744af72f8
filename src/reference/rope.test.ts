import { describe, expect, it } from 'vitest';
import { ropeRef, ropeTable, type RopeShape } from './rope.ts';
import { rand } from './testing.ts';

describe('rope reference', () => {
  const s: RopeShape = { rows: 6, T: 3, H: 2, D: 8 };
  const C = s.H * s.D;

  it('position 0 is the identity, v is untouched, norms of each pair are kept', () => {
    const x = rand(s.rows * 3 * C, 1);
    const y = ropeRef(x.slice(), s, 0);
    for (let r = 0; r < s.rows; r += s.T) for (let c = 0; c < 3 * C; c++) expect(y[r * 3 * C + c]).toBe(x[r * 3 * C + c]);
    for (let r = 0; r < s.rows; r++) for (let c = 2 * C; c < 3 * C; c++) expect(y[r * 3 * C + c]).toBe(x[r * 3 * C + c]);
    for (let r = 0; r < s.rows; r++) {
      for (let h = 0; h < 2 * s.H; h++) {
        for (let i = 0; i < s.D / 2; i++) {
          const o = r * 3 * C + h * s.D;
          expect(Math.hypot(y[o + i], y[o + i + 4])).toBeCloseTo(Math.hypot(x[o + i], x[o + i + 4]), 12);
        }
      }
    }
  });

  it('q·k depends only on the distance between positions (the point of RoPE)', () => {
    const one: RopeShape = { rows: 1, T: 1, H: 1, D: 8 };
    const x = rand(24, 3);
    const dot = (a: number, b: number) => {
      const q = ropeRef(x.slice(), one, a);
      const k = ropeRef(x.slice(), one, b);
      let d = 0;
      for (let i = 0; i < 8; i++) d += q[i] * k[8 + i];
      return d;
    };
    expect(dot(7, 3)).toBeCloseTo(dot(104, 100), 10);
  });

  it('the offset shifts positions, and the table matches', () => {
    const x = rand(s.rows * 3 * C, 5);
    const a = ropeRef(x.slice(), { ...s, rows: 3 }, 5);
    const tbl = ropeTable(s.D, 10);
    const i = 1,
      pos = 5 + 2;
    const o = 2 * 3 * C;
    const c = tbl[(pos * 4 + i) * 2],
      sn = tbl[(pos * 4 + i) * 2 + 1];
    expect(a[o + i]).toBeCloseTo(x[o + i] * c - x[o + i + 4] * sn, 12);
  });

  it('backward (rotation by −θ) matches central finite differences', () => {
    const x = rand(s.rows * 3 * C, 7);
    const dy = rand(s.rows * 3 * C, 8);
    const f = (z: Float64Array) => ropeRef(z.slice(), s, 3).reduce((acc, v, i) => acc + v * dy[i], 0);
    const grad = ropeRef(dy.slice(), s, 3, -1);
    const h = 1e-6;
    for (let i = 0; i < x.length; i++) {
      const xp = x.slice();
      xp[i] += h;
      const xm = x.slice();
      xm[i] -= h;
      expect(grad[i]).toBeCloseTo((f(xp) - f(xm)) / (2 * h), 7);
    }
  });

  it('grouped-query rows: rotates the H q heads and KVH k heads, leaves v alone; own frequencies replace the base', () => {
    const g: RopeShape = { rows: 4, T: 2, H: 4, kvH: 2, D: 8 };
    const W = (4 + 2 * 2) * 8;
    const x = rand(g.rows * W, 9);
    const y = ropeRef(x.slice(), g, 3);
    // Each of the 6 rotated heads of a row equals a one-head rotation of it; v is unchanged.
    for (let r = 0; r < g.rows; r++) {
      for (let h = 0; h < 6; h++) {
        const head = new Float64Array(24);
        head.set(x.subarray(r * W + h * 8, r * W + h * 8 + 8));
        const one = ropeRef(head, { rows: 1, T: 1, H: 1, D: 8 }, 3 + (r % 2));
        for (let d = 0; d < 8; d++) expect(y[r * W + h * 8 + d]).toBeCloseTo(one[d], 14);
      }
      for (let c = 48; c < W; c++) expect(y[r * W + c]).toBe(x[r * W + c]);
    }
    const freqs = [0.5, 0.25, 0.125, 0.0625];
    const z = ropeRef(x.slice(), { ...g, freqs }, 0);
    const theta = 1 * freqs[2]; // row 1 is position 1
    expect(z[W + 2]).toBeCloseTo(x[W + 2] * Math.cos(theta) - x[W + 6] * Math.sin(theta), 14);
    expect(() => ropeRef(x.slice(), { ...g, freqs: [1, 2] })).toThrow(/2 frequencies for 4 pairs/);
  });
});
