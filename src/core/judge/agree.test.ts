import { describe, expect, it } from 'vitest';
import { averageRanks, judgeAgreement, kendallTauB, pearson, spearman } from './agree.ts';
import { DEFAULT_REWARD_MIX, reward, rewardOf } from './reward.ts';

describe('correlations against hand-computed values', () => {
  it('pearson', () => {
    // x = 1..5, y = 2,4,5,4,5: mean x 3, mean y 4; Sxy = 6, Sxx = 10, Syy = 6 → r = 6/sqrt(60).
    expect(pearson([1, 2, 3, 4, 5], [2, 4, 5, 4, 5])).toBeCloseTo(6 / Math.sqrt(60), 12);
    expect(pearson([1, 2, 3], [3, 2, 1])).toBeCloseTo(-1, 12);
    expect(pearson([1, 1, 1], [1, 2, 3])).toBeNaN();
  });
  it('average ranks share tied positions', () => {
    expect(averageRanks([10, 20, 20, 30])).toEqual([1, 2.5, 2.5, 4]);
    expect(averageRanks([3, 1, 3, 3])).toEqual([3, 1, 3, 3]);
  });
  it('spearman without ties matches 1 − 6Σd²/(n(n²−1))', () => {
    // ranks x 1..5, y 2,1,4,3,5: Σd² = 1+1+1+1+0 = 4 → ρ = 1 − 24/120 = 0.8.
    expect(spearman([1, 2, 3, 4, 5], [20, 10, 40, 30, 50])).toBeCloseTo(0.8, 12);
  });
  it('spearman with ties is Pearson of average ranks', () => {
    // x ranks 1,2.5,2.5,4; y ranks 1,2,3,4. Means 2.5; dx = -1.5,0,0,1.5; dy = -1.5,-.5,.5,1.5.
    // Sxy = 2.25+2.25 = 4.5; Sxx = 4.5; Syy = 5 → ρ = 4.5/sqrt(22.5).
    expect(spearman([1, 2, 2, 3], [1, 2, 3, 4])).toBeCloseTo(4.5 / Math.sqrt(22.5), 12);
  });
  it('kendall tau-b without and with ties', () => {
    // y order 2,1,4,3,5: 10 pairs, 2 discordant → (8−2)/10 = 0.6.
    expect(kendallTauB([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])).toBeCloseTo(0.6, 12);
    // x = 1,2,2,3 y = 1,2,3,4: 6 pairs, one tied in x, none in y; concordant 5 → 5/sqrt(5·6).
    expect(kendallTauB([1, 2, 2, 3], [1, 2, 3, 4])).toBeCloseTo(5 / Math.sqrt(30), 12);
    // ties on both sides in different places: x = 1,1,2,3 y = 1,2,2,3.
    // pairs: (0,1) tx; (0,2) c; (0,3) c; (1,2) ty; (1,3) c; (2,3) c → (4−0)/sqrt(5·5) = 0.8.
    expect(kendallTauB([1, 1, 2, 3], [1, 2, 2, 3])).toBeCloseTo(0.8, 12);
    expect(kendallTauB([2, 2, 2], [1, 2, 3])).toBeNaN();
  });
});

describe('judgeAgreement', () => {
  it('ranks models by each judge and correlates samples', () => {
    const rows = [];
    // Judge B scores one point lower everywhere (different absolute level, same ranking).
    const models = { small: [2, 3, 2], mid: [3, 4, 3], big: [5, 4, 5] };
    for (const [model, s] of Object.entries(models)) {
      s.forEach((score, i) => {
        rows.push({ judge: 'A', model, key: `t${i}`, score });
        rows.push({ judge: 'B', model, key: `t${i}`, score: score - 1 });
      });
    }
    rows.push({ judge: 'A', model: 'big', key: 'only-in-A', score: 1 });
    const [pair] = judgeAgreement(rows);
    expect(pair.judges).toEqual(['A', 'B']);
    expect(pair.models).toEqual(['big', 'mid', 'small']);
    expect(pair.samples).toBe(9);
    expect(pair.spearman).toBeCloseTo(1, 12);
    expect(pair.kendallTauB).toBeCloseTo(1, 12);
    expect(pair.pearson).toBeCloseTo(1, 12);
    expect(pair.means[0][0]).toBeCloseTo(14 / 3, 12);
  });
});

describe('reward', () => {
  it('is 0.9 × judge mean × 5 + 0.1 × 25 × verifier', () => {
    const s = { format: 5, factuality: 3, consistency: 4, realism: 4, quality: 4 };
    // mean 4 → judge 20; verifier pass → 25; 0.9·20 + 0.1·25 = 20.5.
    expect(reward(s, true)).toEqual({ judge: 20, verifier: 25, reward: 20.5 });
    expect(reward(s, false).reward).toBeCloseTo(18, 12);
    expect(reward(s, true, { judge: 0.5, verifier: 0.5 }).reward).toBeCloseTo(22.5, 12);
    expect(DEFAULT_REWARD_MIX).toEqual({ judge: 0.9, verifier: 0.1 });
  });
  it('spans [4.5, 25] under the default mix', () => {
    const ones = { format: 1, factuality: 1, consistency: 1, realism: 1, quality: 1 };
    const fives = { format: 5, factuality: 5, consistency: 5, realism: 5, quality: 5 };
    expect(reward(ones, false).reward).toBeCloseTo(4.5, 12);
    expect(reward(fives, true).reward).toBeCloseTo(25, 12);
  });
  it('is null for a failed judgement', () => {
    expect(rewardOf({ failed: true, error: 'x' }, true)).toBeNull();
  });
});
