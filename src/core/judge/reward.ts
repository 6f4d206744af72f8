// The RL reward (SPEC §7): rubric judge and rule verifier mixed 9:1, both on a 0–25 scale so
// the mix weights read as shares of the reward.
import { meanScore, type Scores, type Verdict } from './types.ts';

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
