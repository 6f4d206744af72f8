// One interface for the seven built-in environments (docs/method.md §2, §8).
import type { KnownDomain, SpanLabel, SystemPrompt } from '../core/schema/types.ts';

export interface EnvReset {
  /** The five system-prompt fields for this episode. */
  system_prompt: SystemPrompt;
  /** A plain-data summary of the initial state (what `initial_state` was rendered from). */
  state: unknown;
}

export interface StepResult {
  observation: string;
  /** [start, end) UTF-16 spans that tile `observation` exactly. */
  spans: SpanLabel[];
  /** ISO-8601 time of the observation on the environment's fake clock. */
  timestamp: string;
  /** False when the action was rejected (bad syntax, unknown element, failing command). */
  ok: boolean;
}

export interface Environment {
  readonly domain: KnownDomain;
  reset(seed: number): EnvReset;
  /** Never throws: a bad action yields the error text the real system would print. */
  step(action: string): StepResult;
}
