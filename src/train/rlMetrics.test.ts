import { describe, expect, it } from 'vitest';
import { groupAdvantages } from '../reference/gspo.ts';
import { advantagesWithFailures, BestTracker, ratioSpread, rewardJudges, sequenceRatios } from './rlMetrics.ts';

describe('GSPO helpers', () => {
  it('advantages leave failed judgements out of the group statistics and give them 0', () => {
    const a = advantagesWithFailures([3, null, 1, 2, null]);
    const ref = groupAdvantages([3, 1, 2], 3);
    expect([a[0], a[2], a[3]]).toEqual([ref[0], ref[1], ref[2]]);
    expect([a[1], a[4]]).toEqual([0, 0]);
    // No failure: exactly the plain group advantages.
    expect([...advantagesWithFailures([1, 5, 2, 2])]).toEqual([...groupAdvantages([1, 5, 2, 2], 4)]);
    expect([...advantagesWithFailures([7, null, null])]).toEqual([0, 0, 0]);
  });

  it('sequence ratios are exp of the mean log-prob change over each response, and their spread is reported', () => {
    const Lmax = 3;
    const oldLp = [-1, -1, -1, -2, -2, 0, 0, 0, 0];
    const newLp = [-0.7, -1.3, -0.4, -2, -1, 5, 9, 9, 9];
    const r = sequenceRatios(newLp, oldLp, [3, 2, 0], Lmax);
    expect(r[0]).toBeCloseTo(Math.exp((0.3 - 0.3 + 0.6) / 3), 12);
    expect(r[1]).toBeCloseTo(Math.exp(1 / 2), 12); // padding beyond the length is ignored
    expect(r[2]).toBe(1);
    const s = ratioSpread([1, 1.2, 0.8, 1]);
    expect(s.min).toBe(0.8);
    expect(s.max).toBe(1.2);
    expect(s.std).toBeCloseTo(Math.sqrt(0.02), 12);
  });

  it('the best checkpoint is the highest held-out reward so far', () => {
    const b = new BestTracker();
    const news = [
      [1, 10],
      [2, 12],
      [3, 11],
      [4, 12],
      [5, NaN],
      [6, 13],
    ].map(([step, v]) => b.offer(step, v));
    expect(news).toEqual([true, true, false, false, false, true]);
    expect(b.best).toEqual({ step: 6, value: 13 });
  });

  it('reward judges: local, or an endpoint that needs its address', () => {
    expect(rewardJudges('local').judge.name).toBe('local-rubric');
    expect(rewardJudges('endpoint', { baseUrl: 'http://127.0.0.1:1/v1', model: 'm' }).pair.name).toBe('judge:m');
    expect(() => rewardJudges('endpoint')).toThrow(/needs a base URL and a model/);
  });
});
