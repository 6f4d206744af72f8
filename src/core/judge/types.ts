// Shared shapes of the judging layer: what a judge sees, what it returns.
import type { SpanLabel } from '../schema/types.ts';

/** The five rubric dimensions (SPEC §7), in the order every table prints them. */
export const DIMENSIONS = ['format', 'factuality', 'consistency', 'realism', 'quality'] as const;
export type Dimension = (typeof DIMENSIONS)[number];
export type Scores = Record<Dimension, number>;

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
  /** Mean of the five scores, 1–5: AgentWorldBench's `total_score`. */
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

export function meanScore(scores: Scores): number {
  let s = 0;
  for (const d of DIMENSIONS) s += scores[d];
  return s / DIMENSIONS.length;
}

export function scoredVerdict(scores: Scores, strengths: string[], weaknesses: string[], raw?: string): ScoredVerdict {
  const v: ScoredVerdict = { failed: false, scores, total: meanScore(scores), strengths, weaknesses };
  if (raw !== undefined) v.raw = raw;
  return v;
}
