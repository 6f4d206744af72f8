import { describe, expect, it } from 'vitest';
import { logprobBackwardRef, logprobRef } from './logprob.ts';
import { rand } from './testing.ts';

describe('logprob reference', () => {
  it('uniform logits give −log V; probabilities of a row sum to 1', () => {
    expect(logprobRef(new Float64Array(10).fill(2), [3], 1, 10).logp[0]).toBeCloseTo(-Math.log(10), 12);
    const x = rand(7, 1);
    let sum = 0;
    for (let y = 0; y < 7; y++) sum += Math.exp(logprobRef(x, [y], 1, 7, 0.7).logp[0]);
    expect(sum).toBeCloseTo(1, 12);
  });

  it('rejects a target outside the vocabulary', () => {
    expect(() => logprobRef(new Float64Array(4), [4], 1, 4)).toThrow(/outside the vocabulary/);
  });

  for (const tau of [1, 0.6]) {
    it(`backward matches central finite differences (temperature ${tau})`, () => {
      const N = 3,
        V = 6;
      const x = rand(N * V, 2);
      const tg = [0, 5, 2];
      const g = [0.5, -1.5, 2];
      const f = (z: Float64Array) => logprobRef(z, tg, N, V, tau).logp.reduce((a, l, r) => a + g[r] * l, 0);
      const grad = logprobBackwardRef(x, tg, g, N, V, tau);
      const h = 1e-6;
      for (let i = 0; i < x.length; i++) {
        const xp = x.slice();
        xp[i] += h;
        const xm = x.slice();
        xm[i] -= h;
        expect(grad[i]).toBeCloseTo((f(xp) - f(xm)) / (2 * h), 7);
      }
    });
  }
});
