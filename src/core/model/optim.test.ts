import { describe, expect, it } from 'vitest';
import { lrAt } from './optim.ts';

describe('learning-rate schedule', () => {
  it('warms up linearly, then decays by cosine to minLr at totalSteps, then stays there', () => {
    const s = { maxLr: 1e-3, minLr: 1e-4, warmupSteps: 10, totalSteps: 110 };
    expect(lrAt(0, s)).toBeCloseTo(1e-4, 15);
    expect(lrAt(4, s)).toBeCloseTo(5e-4, 15);
    expect(lrAt(9, s)).toBeCloseTo(1e-3, 15);
    expect(lrAt(10, s)).toBeCloseTo(1e-3, 15);
    expect(lrAt(60, s)).toBeCloseTo(5.5e-4, 15); // halfway down the cosine
    expect(lrAt(110, s)).toBeCloseTo(1e-4, 15);
    expect(lrAt(500, s)).toBe(1e-4);
    for (let i = 10; i < 110; i++) expect(lrAt(i + 1, s)).toBeLessThanOrEqual(lrAt(i, s));
    expect(lrAt(0, { maxLr: 2, minLr: 1, warmupSteps: 0, totalSteps: 0 })).toBe(1);
  });
});
