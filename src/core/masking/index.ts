// Turn-level information-theoretic loss masking (SPEC §4): four metrics per (action,
// observation) pair (metrics.ts), seven categories by a rule table (rules.ts, documented with a
// worked example per category in docs/masking.md), one loss ratio per category applied to every
// token of the observation ("soft filtering": tokens are weighted, never deleted). This file is
// the front door: the dataset-level pass (boilerplate recurrence), statistics, and re-exports.
import type { Trajectory } from '../schema/types.ts';
import { normalizeForRecurrence, turnFeatures, type TurnFeatures, type TurnMetrics } from './metrics.ts';
import { categorizeTurn, DEFAULT_MASK_CONFIG, MASK_CATEGORIES, type MaskCategory, type MaskConfig } from './rules.ts';

export { extractWords, wordSet, codePointLength } from './words.ts';
export { normalizeForRecurrence, turnFeatures, turnMetrics, type TurnFeatures, type TurnMetrics } from './metrics.ts';
export { categorizeTurn, checkMaskConfig, DEFAULT_MASK_CONFIG, MASK_CATEGORIES, maskConfig, NUMERIC_SETTINGS, type MaskCategory, type MaskConfig, type NumericSetting } from './rules.ts';
export { MASK_CONFIG_FORMAT, MaskConfigError, maskConfigChanges, maskConfigFromJson, maskConfigToJson, parseMaskConfig } from './config.ts';

export interface TurnMask {
  category: MaskCategory;
  metrics: TurnMetrics;
  /** Loss weight for every token of the observation, in [0, 1]. */
  weight: number;
  /** True when the weight came from the turn's loss_weight_override rather than the category. */
  overridden: boolean;
  recurrence: number;
}

export interface TrajectoryMask {
  id: string;
  domain: string;
  turns: TurnMask[];
}

/**
 * Counts, per normalised short observation, the distinct actions that produced it. Sets stop
 * growing at the threshold, so memory stays bounded by the number of distinct short observations.
 */
export function recurrenceTable(trajectories: Iterable<Trajectory>, config: MaskConfig = DEFAULT_MASK_CONFIG): Map<string, Set<string>> {
  const table = new Map<string, Set<string>>();
  const cap = Math.max(1, config.boilerplateMinRecurrence);
  for (const t of trajectories) {
    for (const turn of t.turns) {
      if (turn.observation.length > config.boilerplateMaxChars) continue;
      const key = normalizeForRecurrence(turn.observation);
      let actions = table.get(key);
      if (!actions) table.set(key, (actions = new Set()));
      if (actions.size < cap) actions.add(normalizeForRecurrence(turn.action));
    }
  }
  return table;
}

/** How often an observation recurs in a recurrenceTable (distinct actions); a long one counts once. */
export function observationRecurrence(observation: string, table: Map<string, Set<string>>, config: MaskConfig): number {
  return observation.length > config.boilerplateMaxChars ? 1 : table.get(normalizeForRecurrence(observation))?.size ?? 1;
}

/** A turn's mask from its features: its category's ratio as the weight, or its loss_weight_override when overrides are on. */
export function turnMask(f: TurnFeatures, override: unknown, config: MaskConfig): TurnMask {
  const category = categorizeTurn(f, config);
  const overridden = config.useOverrides && typeof override === 'number';
  return {
    category,
    metrics: { ol: f.ol, nov: f.nov, jac: f.jac, r: f.r },
    weight: overridden ? (override as number) : config.ratios[category],
    overridden,
    recurrence: f.recurrence,
  };
}

/** Per trajectory, per turn: category, metrics and loss weight. Boilerplate looks at the whole dataset. */
export function categorizeDataset(trajectories: Trajectory[], config: MaskConfig = DEFAULT_MASK_CONFIG): TrajectoryMask[] {
  const table = recurrenceTable(trajectories, config);
  return trajectories.map((t) => ({
    id: t.id,
    domain: t.domain,
    turns: t.turns.map((turn) =>
      turnMask(turnFeatures(turn.action, turn.observation, observationRecurrence(turn.observation, table, config)), turn.metadata?.loss_weight_override, config),
    ),
  }));
}

export interface Histogram {
  /** Bin edges; bin i counts values in [edges[i], edges[i+1]), the last bin includes its upper edge. */
  edges: number[];
  counts: number[];
}

export interface CategoryCounts {
  total: number;
  counts: Record<MaskCategory, number>;
  shares: Record<MaskCategory, number>;
  /** Mean loss weight over the turns. */
  meanWeight: number;
}

export interface MaskStats {
  overall: CategoryCounts;
  perDomain: Record<string, CategoryCounts>;
  histograms: Record<keyof TurnMetrics, Histogram>;
  config: MaskConfig;
}

const UNIT_EDGES = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];
// R spans orders of magnitude, so its bins grow geometrically; the last one is open-ended.
const RATIO_EDGES = [0, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, Infinity];

function histogram(values: number[], edges: number[]): Histogram {
  const counts = new Array(edges.length - 1).fill(0);
  for (const v of values) {
    let i = 0;
    while (i < counts.length - 1 && v >= edges[i + 1]) i++;
    counts[i]++;
  }
  return { edges, counts };
}

function emptyCounts(): CategoryCounts {
  const zero = () => Object.fromEntries(MASK_CATEGORIES.map((c) => [c, 0])) as Record<MaskCategory, number>;
  return { total: 0, counts: zero(), shares: zero(), meanWeight: 0 };
}

function finish(c: CategoryCounts, weightSum: number) {
  for (const k of MASK_CATEGORIES) c.shares[k] = c.total ? c.counts[k] / c.total : 0;
  c.meanWeight = c.total ? weightSum / c.total : 0;
}

/** Count and share per category, overall and per domain, and histograms of the four metrics. */
export function maskStats(trajectories: Trajectory[], config: MaskConfig = DEFAULT_MASK_CONFIG, masks = categorizeDataset(trajectories, config)): MaskStats {
  const overall = emptyCounts();
  // Null prototype: domains come from data and may be named `constructor` or `__proto__`.
  const perDomain: Record<string, CategoryCounts> = Object.create(null);
  const weightSums = new Map<CategoryCounts, number>([[overall, 0]]);
  const values: Record<keyof TurnMetrics, number[]> = { ol: [], nov: [], jac: [], r: [] };
  for (const m of masks) {
    const d = (perDomain[m.domain] ??= emptyCounts());
    if (!weightSums.has(d)) weightSums.set(d, 0);
    for (const turn of m.turns) {
      for (const c of [overall, d]) {
        c.total++;
        c.counts[turn.category]++;
        weightSums.set(c, weightSums.get(c)! + turn.weight);
      }
      values.ol.push(turn.metrics.ol);
      values.nov.push(turn.metrics.nov);
      values.jac.push(turn.metrics.jac);
      values.r.push(turn.metrics.r);
    }
  }
  for (const [c, w] of weightSums) finish(c, w);
  return {
    overall,
    perDomain,
    histograms: {
      ol: histogram(values.ol, UNIT_EDGES),
      nov: histogram(values.nov, UNIT_EDGES),
      jac: histogram(values.jac, UNIT_EDGES),
      r: histogram(values.r, RATIO_EDGES),
    },
    config,
  };
}

export { tokenLossWeights, type WeightedTokens } from './weights.ts';
