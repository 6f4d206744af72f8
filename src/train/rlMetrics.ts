// Pieces of the GSPO stage that need no GPU: advantages when some judgements failed, the spread
// of the sequence importance ratios, reward judges from settings, and the choice of the best
// checkpoint by held-out evaluation.
import { createLlmPairJudge, localPairJudge } from '../core/judge/pairwise.ts';
import type { RewardJudges } from '../core/judge/reward.ts';
import { localJudge } from '../core/judge/rubric.ts';
import { EndpointClient, endpointJudge, type EndpointConfig } from '../backends/endpoint.ts';
import { groupAdvantages } from '../reference/gspo.ts';
import { UserFacingError } from './context.ts';
import type { EndpointRef, JudgeKind } from './teacher.ts';

/**
 * GSPO advantages of a group whose judgements may have failed (null): the valid rewards are
 * normalised among themselves exactly as a whole group would be; a failed sample gets 0, so it
 * pushes the policy neither way. Fewer than two valid rewards: nothing to compare, all 0.
 */
export function advantagesWithFailures(rewards: readonly (number | null)[]): Float64Array {
  const out = new Float64Array(rewards.length);
  const valid = rewards.flatMap((r, i) => (r === null ? [] : [i]));
  if (valid.length < 2) return out;
  const adv = groupAdvantages(
    valid.map((i) => rewards[i]!),
    valid.length,
  );
  valid.forEach((i, k) => (out[i] = adv[k]));
  return out;
}

/**
 * The sequence importance ratios s_i = exp(mean_t(logp_new − logp_old)) of a batch, from the
 * packed [B, Lmax] log-probs the model returns and each response's length (docs/method.md §6).
 */
export function sequenceRatios(logpNew: ArrayLike<number>, logpOld: ArrayLike<number>, lengths: readonly number[], Lmax: number): number[] {
  return lengths.map((len, i) => {
    if (len === 0) return 1;
    let d = 0;
    for (let t = 0; t < len; t++) d += logpNew[i * Lmax + t] - logpOld[i * Lmax + t];
    return Math.exp(d / len);
  });
}

/** Spread of the ratios: standard deviation, min and max (metrics ratio_std / ratio_min / ratio_max). */
export function ratioSpread(ratios: readonly number[]): { std: number; min: number; max: number } {
  if (!ratios.length) return { std: 0, min: 1, max: 1 };
  const mean = ratios.reduce((a, b) => a + b, 0) / ratios.length;
  const std = Math.sqrt(ratios.reduce((a, b) => a + (b - mean) ** 2, 0) / ratios.length);
  return { std, min: Math.min(...ratios), max: Math.max(...ratios) };
}

/** Reward judges from settings: the local rubric, or an LLM judge behind an endpoint for both questions. */
export function rewardJudges(kind: JudgeKind, endpoint?: EndpointRef, extra: Partial<EndpointConfig> = {}): RewardJudges {
  if (kind === 'local') return { judge: localJudge, pair: localPairJudge };
  if (kind !== 'endpoint') throw new UserFacingError(`the reward judge must be local or endpoint; got '${kind}'`);
  if (!endpoint?.baseUrl || !endpoint.model) throw new UserFacingError('an endpoint reward judge needs a base URL and a model name');
  const config: EndpointConfig = { baseUrl: endpoint.baseUrl, model: endpoint.model, apiKey: endpoint.apiKey, ...extra };
  const name = `judge:${endpoint.model}`;
  return { judge: endpointJudge(config, { name }), pair: createLlmPairJudge({ name, complete: new EndpointClient(config).asChatComplete }) };
}

/**
 * The best checkpoint by held-out evaluation, higher is better (RL: the eval reward). Offered a
 * value at each evaluation; says whether it is a new best.
 */
export class BestTracker {
  best: { step: number; value: number } | null = null;
  offer(step: number, value: number): boolean {
    if (!Number.isFinite(value)) return false;
    if (this.best && value <= this.best.value) return false;
    this.best = { step, value };
    return true;
  }
}
