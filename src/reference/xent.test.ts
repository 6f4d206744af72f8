import { describe, expect, it } from 'vitest';
import { weightSum, xentRef } from './xent.ts';

function rand(n: number, seed: number, scale = 1): Float64Array {
  const out = new Float64Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = ((s / 2 ** 32) * 2 - 1) * scale;
  }
  return out;
}

describe('cross-entropy reference', () => {
  it('dlogits match central finite differences of the weighted-mean loss (weight-0 and padding rows add nothing)', () => {
    const N = 5;
    const V = 7;
    const logits = rand(N * V, 1, 3);
    const targets = [3, 0, 6, 9 /* padding */, 2];
    const weights = [1, 0.4, 0, 0.7, 0.05];
    const W = weightSum(targets, weights, V);
    expect(W).toBeCloseTo(1.45, 12);
    const { dlogits, loss } = xentRef(logits, targets, weights, N, V, W);
    const h = 1e-6;
    for (let i = 0; i < N * V; i++) {
      const keep = logits[i];
      logits[i] = keep + h;
      const lp = xentRef(logits, targets, weights, N, V, W, false).loss;
      logits[i] = keep - h;
      const lm = xentRef(logits, targets, weights, N, V, W, false).loss;
      logits[i] = keep;
      expect(Math.abs(dlogits![i] - (lp - lm) / (2 * h)), `dlogits[${i}]`).toBeLessThan(1e-7);
    }
    // rows 2 (weight 0) and 3 (padding) have zero gradient
    for (let c = 0; c < V; c++) {
      expect(dlogits![2 * V + c] === 0).toBe(true);
      expect(dlogits![3 * V + c] === 0).toBe(true);
    }
    expect(loss).toBeGreaterThan(0);
  });

  it('uniform logits give log V; W = 0 gives loss 0 and zero gradients', () => {
    const V = 8;
    const r = xentRef(new Float64Array(2 * V), [1, 5], [1, 1], 2, V, 2);
    expect(r.loss).toBeCloseTo(Math.log(V), 12);
    expect(r.nll[0]).toBeCloseTo(Math.log(V), 6);
    const z = xentRef(rand(2 * V, 3), [1, 5], [0, 0], 2, V, 0);
    expect(z.loss).toBe(0);
    expect(z.dlogits!.every((v) => v === 0)).toBe(true);
    expect(z.nll[1]).toBeGreaterThan(0); // per-token nll is still reported
  });
});
