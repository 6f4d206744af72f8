// Shared shapes of the judging layer: what a judge sees, what it returns.
import type { SpanLabel } from '../schema/types.ts';

/** The five rubric dimensions (docs/method.md §7), in the order every table prints them. */
export const DIMENSIONS = ['format', 'factuality', 'consistency', 'realism', 'quality'] as const;
export type Dimension = (typeof DIMENSIONS)[number];
/**
 * A verdict's scores, 1–5 each. A dimension the judge gave no usable score for is
 * `INVALID_SCORE` (0), as in AgentWorldBench's judged records: it is left out of the mean.
 */
export type Scores = Record<Dimension, number>;

/** The public scorer's mark for a missing or unusable dimension score. */
export const INVALID_SCORE = 0;

export interface HistoryTurn {
  action: string;
  observation: string;
}

/** Everything a reference-grounded judge may look at for one turn sample. */
export interface JudgeInput {
  domain: string;
  /** The rendered task context (system prompt), when known. */
  context?: string;
  /** Earlier turns of the same trajectory, oldest first. */
  history: HistoryTurn[];
  action: string;
  /** The simulated observation, already extracted with `extractPrediction`. */
  prediction: string;
  /** The real observation. */
  reference: string;
  /** Content classes of the reference (UTF-16 offsets into `reference`). */
  spans?: SpanLabel[];
}

export interface ScoredVerdict {
  failed: false;
  scores: Scores;
  /** Mean of the valid scores, 1–5: AgentWorldBench's `total_score` (0 when none is valid). */
  total: number;
  strengths: string[];
  weaknesses: string[];
  /** The judge's raw reply (LLM judges), kept for inspection. */
  raw?: string;
}

/** A judgement that could not be obtained: excluded from every mean, counted as failed. */
export interface FailedVerdict {
  failed: true;
  error: string;
  raw?: string;
}

export type Verdict = ScoredVerdict | FailedVerdict;

export interface Judge {
  name: string;
  judge(input: JudgeInput, signal?: AbortSignal): Promise<Verdict>;
}

/** The mean of the valid (non-zero) scores, as the public judge computes `total_score`; 0 when none is valid. */
export function meanScore(scores: Scores): number {
  let s = 0;
  let n = 0;
  for (const d of DIMENSIONS) {
    if (scores[d] === INVALID_SCORE) continue;
    s += scores[d];
    n++;
  }
  return n ? s / n : 0;
}

export function scoredVerdict(scores: Scores, strengths: string[], weaknesses: string[], raw?: string): ScoredVerdict {
  const v: ScoredVerdict = { failed: false, scores, total: meanScore(scores), strengths, weaknesses };
  if (raw !== undefined) v.raw = raw;
  return v;
}
