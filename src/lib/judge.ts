// Judging a simulated observation against the real one, as the product judges it: the local
// rubric judge's five AgentWorldBench scores, the rule verifier on the observation's deterministic
// parts, and the RL reward that mixes them (docs/method.md §7).
import type { SystemPrompt, SpanLabel } from '../core/schema/types.ts';
import { extractPrediction } from '../core/judge/extract.ts';
import { reward } from '../core/judge/reward.ts';
import { rubricJudge } from '../core/judge/rubric.ts';
import type { Scores } from '../core/judge/types.ts';
import { verify } from '../core/judge/verifier.ts';
import { systemPromptToText } from '../core/formats/systemPromptText.ts';

export interface TurnJudgement {
  /** format, factuality, consistency, realism, quality: 1–5 each. */
  scores: Scores;
  /** Mean of the scores (AgentWorldBench's total_score). */
  total: number;
  /** Whether the deterministic parts of the real observation (prompts, paths, ids) were reproduced. */
  verified: boolean;
  /** The RL reward on 0–25. */
  reward: number;
}

/**
 * Judges `prediction` (a model's whole reply, or the observation alone) for the turn whose real
 * observation is `reference`; `spans` (the reference's span labels, when known) let the verifier
 * check its deterministic parts.
 */
export function judgeTurn(
  turn: { domain: string; systemPrompt?: SystemPrompt | string; history?: { action: string; observation: string }[]; action: string },
  reference: string,
  prediction: string,
  spans?: SpanLabel[],
): TurnJudgement {
  const context =
    turn.systemPrompt === undefined ? undefined : typeof turn.systemPrompt === 'string' ? turn.systemPrompt : systemPromptToText(turn.systemPrompt);
  const input = {
    domain: turn.domain,
    ...(context !== undefined && { context }),
    history: turn.history ?? [],
    action: turn.action,
    prediction: extractPrediction(prediction),
    reference,
    ...(spans && { spans }),
  };
  const verdict = rubricJudge(input);
  const verified = verify(input).pass;
  return { scores: verdict.scores, total: verdict.total, verified, reward: reward(verdict.scores, verified).reward };
}
