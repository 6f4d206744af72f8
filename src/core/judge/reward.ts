// The RL reward (docs/method.md §7): rubric judge and rule verifier mixed 9:1, both on a 0–25 scale so
// the mix weights read as shares of the reward.
import { keyedUniform } from '../random.ts';
import type { PairJudge } from './pairwise.ts';
import { meanScore, type Judge, type JudgeInput, type Scores, type Verdict } from './types.ts';
import { verify } from './verifier.ts';

export interface RewardMix {
  judge: number;
  verifier: number;
}

/** The method's mix: 0.9 × judge + 0.1 × verifier. */
export const DEFAULT_REWARD_MIX: RewardMix = { judge: 0.9, verifier: 0.1 };

export interface RewardParts {
  /** judge mean × 5, in [5, 25]. */
  judge: number;
  /** 25 × verifier (0 or 1), in {0, 25}. */
  verifier: number;
  reward: number;
}

export function reward(scores: Scores, verifierPass: boolean, mix: RewardMix = DEFAULT_REWARD_MIX): RewardParts {
  const judge = meanScore(scores) * 5;
  const verifier = verifierPass ? 25 : 0;
  return { judge, verifier, reward: mix.judge * judge + mix.verifier * verifier };
}

/**
 * The reward of a sample whose judgement may have failed: null then, so the caller drops the
 * sample from its group rather than training towards an invented score.
 */
export function rewardOf(verdict: Verdict, verifierPass: boolean, mix: RewardMix = DEFAULT_REWARD_MIX): RewardParts | null {
  return verdict.failed ? null : reward(verdict.scores, verifierPass, mix);
}

// ---- The reward ablation (docs/method.md §7) -------------------------------------------------------
//
// The method compared three RL rewards and found only the first converged stably:
//   rubric        0.9 × judge + 0.1 × verifier, on [0, 25] (the default);
//   reference-ab  1 when the judge finds the policy's sample closer to the real observation
//                 than its opponent, else 0. The opponent is another sample of the same group
//                 (the next one, cyclically), so the reward says "closer than a sibling";
//   turing        1 when the judge, shown the policy's sample and the real observation without
//                 being told which is which, calls the policy's sample the real one, else 0.
// In the binary rewards the policy's sample is put at A or B by a seeded coin, so a judge's
// preference for a position cannot become a reward.

export type RewardKind = 'rubric' | 'reference-ab' | 'turing';
export const REWARD_KINDS: readonly RewardKind[] = ['rubric', 'reference-ab', 'turing'];

export interface SampleReward {
  reward: number;
  /** rubric: the judge part, mean × 5. */
  judge?: number;
  /** rubric: the verifier part, 0 or 25. */
  verifier?: number;
  /** The rule verifier's verdict (reported for every kind). */
  pass: boolean;
  /** rubric: the five dimensions. */
  scores?: Scores;
  /** Binary kinds: 1 when the policy's sample won its comparison. */
  win?: number;
}

export interface RewardJudges {
  /** Scores the five dimensions (rubric reward). */
  judge: Judge;
  /** Answers the binary questions. */
  pair: PairJudge;
}

/**
 * Rewards of one group: G predictions for one turn. A sample whose judgement failed gets null:
 * the caller leaves it out of the group's statistics instead of training towards a made-up score.
 */
export async function groupRewards(
  kind: RewardKind,
  judges: RewardJudges,
  turn: Omit<JudgeInput, 'prediction'>,
  predictions: readonly string[],
  options: { mix?: RewardMix; key: string; seed: number; signal?: AbortSignal },
): Promise<(SampleReward | null)[]> {
  const passOf = (prediction: string) => verify({ ...turn, prediction }).pass;
  if (kind === 'rubric') {
    return Promise.all(
      predictions.map(async (prediction) => {
        const v = await judges.judge.judge({ ...turn, prediction }, options.signal);
        const pass = passOf(prediction);
        const parts = rewardOf(v, pass, options.mix);
        return parts && !v.failed ? { ...parts, pass, scores: v.scores } : null;
      }),
    );
  }
  if (kind !== 'reference-ab' && kind !== 'turing') throw new RangeError(`reward kind must be one of ${REWARD_KINDS.join(', ')}; got '${kind}'`);
  const G = predictions.length;
  return Promise.all(
    predictions.map(async (policy, i) => {
      const opponent = kind === 'turing' ? turn.reference : predictions[(i + 1) % G];
      const policyIsA = keyedUniform(`${options.key}:${kind}:${i}`, options.seed) < 0.5;
      const v = await judges.pair.compare({ kind, input: turn, a: policyIsA ? policy : opponent, b: policyIsA ? opponent : policy }, options.signal);
      if (v.failed) return null;
      const win = (v.choice === 'A') === policyIsA ? 1 : 0;
      return { reward: win, win, pass: passOf(policy) };
    }),
  );
}
