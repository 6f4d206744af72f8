import { describe, expect, it } from 'vitest';
import { sampleRef, sampleUniform } from './sampling.ts';

describe('sampling reference', () => {
  it('greedy takes the lowest id among tied maxima; top-k = 1 is greedy', () => {
    const x = [0, 3, 1, 3, -2];
    expect(sampleRef(x, 1, 5, { temperature: 0, seed: 1, step: 0 }).tokens[0]).toBe(1);
    expect(sampleRef(x, 1, 5, { temperature: 1.5, topK: 1, seed: 1, step: 0 }).tokens[0]).toBe(1);
  });

  it('top-k and top-p keep the expected sets', () => {
    const x = [Math.log(0.5), Math.log(0.3), Math.log(0.15), Math.log(0.05)];
    expect(sampleRef(x, 1, 4, { temperature: 1, topK: 2, seed: 0, step: 0 }).kept[0]).toBe(2);
    expect(sampleRef(x, 1, 4, { temperature: 1, topP: 0.5, seed: 0, step: 0 }).kept[0]).toBe(1);
    expect(sampleRef(x, 1, 4, { temperature: 1, topP: 0.7, seed: 0, step: 0 }).kept[0]).toBe(2);
    expect(sampleRef(x, 1, 4, { temperature: 1, topP: 0.9, seed: 0, step: 0 }).kept[0]).toBe(3);
    expect(sampleRef(x, 1, 4, { temperature: 1, topK: 2, topP: 0.9, seed: 0, step: 0 }).kept[0]).toBe(2);
  });

  it('draws follow the probabilities and depend only on (seed, step, row)', () => {
    const p = [0.1, 0.2, 0.3, 0.4];
    const N = 20000;
    const x = new Float64Array(N * 4);
    for (let r = 0; r < N; r++) p.forEach((q, v) => (x[r * 4 + v] = Math.log(q)));
    const t = sampleRef(x, N, 4, { temperature: 1, seed: 42, step: 3 }).tokens;
    const counts = [0, 0, 0, 0];
    t.forEach((v) => counts[v]++);
    p.forEach((q, v) => expect(Math.abs(counts[v] / N - q)).toBeLessThan(4 * Math.sqrt((q * (1 - q)) / N)));
    expect(sampleRef(x.slice(0, 40), 10, 4, { temperature: 1, seed: 42, step: 3 }).tokens).toEqual(t.slice(0, 10));
    expect(sampleUniform(1, 2, 3)).not.toBe(sampleUniform(1, 2, 4));
    expect(sampleUniform(0, 0, 0)).toBeGreaterThanOrEqual(0);
  });
});
