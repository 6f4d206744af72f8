import { describe, expect, it } from 'vitest';
import { GSPO_EPS_HIGH, GSPO_EPS_LOW, groupAdvantages, gspoRef, type GspoInput } from './gspo.ts';

function input(deltas: number[][], advantages: number[], eps = [GSPO_EPS_LOW, GSPO_EPS_HIGH], Lmax = 4): GspoInput {
  const n = deltas.length;
  const logpNew = new Float64Array(n * Lmax).fill(123); // padding holds junk on purpose
  const logpOld = new Float64Array(n * Lmax).fill(-7);
  deltas.forEach((row, i) =>
    row.forEach((d, t) => {
      logpOld[i * Lmax + t] = -1 - 0.1 * t;
      logpNew[i * Lmax + t] = logpOld[i * Lmax + t] + d;
    }),
  );
  return { logpNew, logpOld, lengths: deltas.map((r) => r.length), advantages, numSeqs: n, Lmax, epsLow: eps[0], epsHigh: eps[1] };
}

describe('group advantages', () => {
  it('standardises within each group with the population std', () => {
    const a = groupAdvantages([1, 3, 10, 10, 10, 10], 2);
    // group [1, 3]: mean 2, population std 1.
    expect(a[0]).toBeCloseTo(-1 / (1 + 1e-6), 12);
    expect(a[1]).toBeCloseTo(1 / (1 + 1e-6), 12);
    expect(Array.from(a.slice(2))).toEqual([0, 0, 0, 0]);
    expect(Array.from(groupAdvantages([0.1, 0.1, 0.1], 3))).toEqual([0, 0, 0]);
    expect(() => groupAdvantages([1, 2, 3], 2)).toThrow(/groups of 2/);
  });
});

describe('gspo reference', () => {
  it('a fully clipped group passes no gradient', () => {
    const a = 1 / (0.5 + 1e-6);
    const r = gspoRef(
      input(
        [
          [0.01, 0.01],
          [-0.01, -0.01, -0.01],
        ],
        [a, -a],
      ),
    );
    expect(r.clipFraction).toBe(1);
    expect(r.clipped).toEqual([true, true]);
    expect(r.grad.every((g) => g === 0)).toBe(true);
    expect(r.objective).toBeCloseTo((a * (1 + GSPO_EPS_HIGH) - a * (1 - GSPO_EPS_LOW)) / 2, 12);
    expect(r.meanRatio).toBeCloseTo((Math.exp(0.01) + Math.exp(-0.01)) / 2, 12);
  });

  it('a zero-advantage group: J = 0, no gradient, nothing clipped', () => {
    const adv = groupAdvantages([5, 5, 5], 3);
    const r = gspoRef(input([[0.3, -0.2], [0.5], [-1, 2, 0.1]], Array.from(adv)));
    expect(r.objective).toBe(0);
    expect(r.clipFraction).toBe(0);
    expect(r.grad.every((g) => g === 0)).toBe(true);
  });

  it('length-1 and mixed-length sequences, by hand', () => {
    // Wide clip range so nothing clips: every token of sequence i gets −A_i s_i / (len_i · n).
    const d = [[0.2], [0.1, -0.3, 0.05], [0, 0.4]];
    const A = [1.5, -0.5, -1];
    const r = gspoRef(input(d, A, [0.9, 9]));
    const s = [Math.exp(0.2), Math.exp((0.1 - 0.3 + 0.05) / 3), Math.exp(0.2)];
    expect(Array.from(r.ratios)).toEqual(s.map((x) => expect.closeTo(x, 12)));
    expect(r.objective).toBeCloseTo((1.5 * s[0] - 0.5 * s[1] - 1 * s[2]) / 3, 12);
    expect(r.loss).toBe(-r.objective);
    expect(r.clipFraction).toBe(0);
    const want = [
      [(-1.5 * s[0]) / 3, 0, 0, 0],
      [(0.5 * s[1]) / 9, (0.5 * s[1]) / 9, (0.5 * s[1]) / 9, 0],
      [s[2] / 6, s[2] / 6, 0, 0],
    ].flat();
    want.forEach((w, i) => expect(r.grad[i]).toBeCloseTo(w, 12));
  });

  it('counts as clipped only where the clipped branch differs: low ratio with A > 0 keeps its gradient', () => {
    const r = gspoRef(input([[-0.5], [0.5], [-0.5], [0.5]], [1, -1, -1, 1], [0.1, 0.1]));
    expect(r.clipped).toEqual([false, false, true, true]);
    expect(r.clipFraction).toBe(0.5);
    expect(r.grad[0]).toBeCloseTo(-Math.exp(-0.5) / 4, 12);
    expect(r.grad[4]).toBeCloseTo(Math.exp(0.5) / 4, 12);
  });

  it('a length-0 sequence has ratio 1 and no gradient', () => {
    const r = gspoRef(input([[], [0.1]], [1, -1], [0.5, 0.5]));
    expect(r.ratios[0]).toBe(1);
    expect(r.grad.slice(0, 4).every((g) => g === 0)).toBe(true);
  });

  it('gradient of L = −J matches central finite differences', () => {
    const x = input([[0.02, -0.01, 0.03], [0.2], [-0.15, 0.05], [-0.3, 0.1, 0.2, 0.01], [0.4, 0.4]], [0.7, -1.2, 0.3, 1.1, 2], [0.1, 0.15]);
    const r = gspoRef(x);
    expect(r.clipped.some((c) => c) && r.clipped.some((c) => !c)).toBe(true);
    const h = 1e-6;
    for (let i = 0; i < x.logpNew.length; i++) {
      const p = Float64Array.from(x.logpNew);
      p[i] += h;
      const m = Float64Array.from(x.logpNew);
      m[i] -= h;
      const fd = (gspoRef({ ...x, logpNew: p }).loss - gspoRef({ ...x, logpNew: m }).loss) / (2 * h);
      expect(r.grad[i]).toBeCloseTo(fd, 8);
    }
  });
});
