// A built-in environment, played: reset at a seed, stepped with actions. The observations are what
// the training data and the Playground's real side hold.
import { systemPromptToText } from '../core/formats/systemPromptText.ts';
import { DOMAINS, type KnownDomain, type SpanLabel, type SystemPrompt } from '../core/schema/types.ts';
import { ENV_DOMAINS } from '../envs/registry.ts';

export interface EnvironmentEpisode {
  readonly domain: KnownDomain;
  readonly seed: number;
  /** The episode's system prompt as one text, and as its five fields. */
  readonly systemPrompt: string;
  readonly systemPromptFields: SystemPrompt;
  /** Steps the environment; never throws (a bad action gets the error the real system prints, ok false). */
  step(action: string): { observation: string; ok: boolean; spans: SpanLabel[] };
}

/** An episode of a built-in environment (`domain`: one of DOMAINS) at `seed`. */
export function openEnvironment(domain: string, seed = 0): EnvironmentEpisode {
  if (!(DOMAINS as readonly string[]).includes(domain)) throw new RangeError(`no built-in environment '${domain}': the domains are ${DOMAINS.join(', ')}`);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new RangeError(`seed must be a whole number ≥ 0, got ${seed}`);
  const env = ENV_DOMAINS[domain as KnownDomain].create();
  const reset = env.reset(seed);
  return {
    domain: domain as KnownDomain,
    seed,
    systemPrompt: systemPromptToText(reset.system_prompt),
    systemPromptFields: { ...reset.system_prompt },
    step(action) {
      const r = env.step(action);
      return { observation: r.observation, ok: r.ok, spans: r.spans };
    },
  };
}
