// Which template each training stage uses: a weighted mix of versions per stage, its check, and the
// reproducible per-sample draw fixed by (trajectory, turn, seed).
import type { TurnSample } from '../turns/index.ts';
import { keyedUniform } from '../random.ts';
import { BUILTIN_TEMPLATES, type PromptTemplate } from './builtin.ts';

export type TrainingStage = 'cpt' | 'sft' | 'rl' | 'eval';
/** Template version → relative weight (need not sum to 1). */
export type TemplateDistribution = Record<string, number>;

/**
 * Default template mix per stage: CPT and eval on one fixed wording; SFT spreads over all four
 * so the model does not overfit one phrasing (docs/method.md §5), the compact one among them so small
 * contexts see more of the state; RL on the two more explicit ones.
 */
export const DEFAULT_STAGE_TEMPLATES: Readonly<Record<TrainingStage, TemplateDistribution>> = Object.freeze({
  cpt: { v0: 1 },
  sft: { v0: 0.3, v1: 0.2, v2: 0.2, compact: 0.3 },
  rl: { v1: 0.5, v2: 0.5 },
  eval: { v0: 1 },
});

/** Problems with a distribution (unknown versions, negative or all-zero weights). */
export function checkDistribution(dist: TemplateDistribution, templates: Readonly<Record<string, PromptTemplate>> = BUILTIN_TEMPLATES): string[] {
  const errors: string[] = [];
  let total = 0;
  for (const [v, w] of Object.entries(dist)) {
    if (!Object.hasOwn(templates, v)) errors.push(`${v}: no template with this version (known: ${Object.keys(templates).join(', ')})`);
    if (!(w >= 0) || !Number.isFinite(w)) errors.push(`${v}: weight must be a finite number ≥ 0, got ${w}`);
    else total += w;
  }
  if (total <= 0) errors.push('the weights sum to 0; give at least one template a positive weight');
  return errors;
}

/** The version a uniform draw u ∈ [0, 1) selects (versions in sorted order, so the result does not depend on key order). */
export function pickVersion(dist: TemplateDistribution, u: number): string {
  const entries = Object.entries(dist)
    .filter(([, w]) => w > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (!entries.length) throw new Error('template distribution has no positive weight');
  const total = entries.reduce((n, [, w]) => n + w, 0);
  let x = u * total;
  for (const [v, w] of entries) {
    if (x < w) return v;
    x -= w;
  }
  return entries[entries.length - 1][0];
}

/** The version one sample is rendered with: a draw fixed by (trajectory, turn, seed). */
export function versionForSample(dist: TemplateDistribution, sample: Pick<TurnSample, 'trajectoryId' | 'turnIndex'>, seed = 0): string {
  return pickVersion(dist, keyedUniform(`${sample.trajectoryId}#${sample.turnIndex}`, seed));
}

/** How many of `samples` each version of the mix renders (versionForSample's draws; versions in sorted order). */
export function versionCounts(
  dist: TemplateDistribution,
  samples: readonly Pick<TurnSample, 'trajectoryId' | 'turnIndex'>[],
  seed = 0,
): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(
    Object.keys(dist)
      .filter((v) => dist[v] > 0)
      .sort()
      .map((v) => [v, 0]),
  );
  for (const s of samples) counts[versionForSample(dist, s, seed)]++;
  return counts;
}

/** The template of one sample: a draw fixed by (trajectory, turn, seed), so re-rendering is reproducible. */
export function templateForSample(
  dist: TemplateDistribution,
  sample: Pick<TurnSample, 'trajectoryId' | 'turnIndex'>,
  seed = 0,
  templates: Readonly<Record<string, PromptTemplate>> = BUILTIN_TEMPLATES,
): PromptTemplate {
  const v = versionForSample(dist, sample, seed);
  const t = Object.hasOwn(templates, v) ? templates[v] : undefined;
  if (!t) throw new Error(`template distribution names "${v}", which is not a known template`);
  return t;
}
