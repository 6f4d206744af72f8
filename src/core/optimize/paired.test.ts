import { describe, expect, it } from 'vitest';
import fixture from './fixtures/paired-t.json' with { type: 'json' };
import { decide, formatComparison, pairedComparison, studentTCdf, studentTQuantile } from './paired.ts';

describe('Student t against SciPy (scripts/fixtures/paired_t.py)', () => {
  it('CDF values', () => {
    for (const c of fixture.cdf) expect(studentTCdf(c.t, c.df)).toBeCloseTo(c.p, 9);
  });
  it('quantiles', () => {
    for (const q of fixture.quantiles) expect(Math.abs(studentTQuantile(q.p, q.df) - q.t)).toBeLessThan(1e-7 * Math.max(1, Math.abs(q.t)));
  });
  it('refuses levels outside (0, 1) and df ≤ 0', () => {
    expect(() => studentTQuantile(1, 3)).toThrow(/not in \(0, 1\)/);
    expect(() => studentTQuantile(0.9, 0)).toThrow(/degrees of freedom/);
  });
});

describe('pairedComparison', () => {
  it('gives SciPy ttest_rel confidence intervals', () => {
    for (const p of fixture.pairs) {
      const c = pairedComparison(p.parent, p.candidate, p.level);
      expect(c.n).toBe(p.parent.length);
      expect(c.meanDiff!).toBeCloseTo(p.mean_diff, 9);
      expect(c.sdDiff!).toBeCloseTo(p.sd_diff, 9);
      expect(c.ci![0]).toBeCloseTo(p.ci[0], 7);
      expect(c.ci![1]).toBeCloseTo(p.ci[1], 7);
    }
  });

  it('drops pairs with a missing score on either side', () => {
    const c = pairedComparison([10, null, 30, 40], [12, 50, null, 45]);
    expect(c.n).toBe(2);
    expect(c.meanDiff).toBe(3.5);
    expect(c.parentMean).toBe(25);
  });

  it('refuses lists of different samples', () => {
    expect(() => pairedComparison([1, 2], [1])).toThrow(/same samples/);
  });
});

describe('decide: the acceptance rule', () => {
  it('rejects a candidate whose mean is higher but whose gain is noise', () => {
    // Mean +2.5 over 8 samples, but the differences swing by ±20: the interval straddles zero.
    const parent = [50, 40, 60, 55, 45, 50, 65, 35];
    const candidate = [70, 22, 78, 37, 66, 31, 86, 30];
    const c = pairedComparison(parent, candidate);
    expect(c.candidateMean!).toBeGreaterThan(c.parentMean!);
    const d = decide(c);
    expect(d.accept).toBe(false);
    expect(d.reason).toMatch(/mean is higher but the interval reaches .*noise/);
  });

  it('accepts a consistent gain and reports the interval', () => {
    const parent = [50, 40, 60, 55, 45, 50, 65, 35];
    const candidate = parent.map((p, i) => p + 5 + (i % 2 ? 1 : -1));
    const d = decide(pairedComparison(parent, candidate));
    expect(d.accept).toBe(true);
    expect(d.reason).toMatch(/^accepted: Δ \+5\.00 \[\+\d\.\d\d, \+\d\.\d\d\] \(95%, n = 8\)/);
  });

  it('a margin raises the bar', () => {
    const parent = [50, 40, 60, 55, 45, 50, 65, 35];
    const candidate = parent.map((p, i) => p + 5 + (i % 2 ? 1 : -1));
    expect(decide(pairedComparison(parent, candidate), 6).accept).toBe(false);
  });

  it('rejects with fewer than two pairs', () => {
    expect(decide(pairedComparison([1], [5])).reason).toMatch(/too few/);
    expect(formatComparison(pairedComparison([], []))).toBe('no paired samples');
  });
});
