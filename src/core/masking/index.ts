// Turn-level information-theoretic loss masking (SPEC §4): four metrics per (action,
// observation) pair, seven categories, one loss ratio per category applied to every token of
// the observation ("soft filtering": tokens are weighted, never deleted).
import type { Trajectory } from '../schema/types.ts';
import { codePointLength, wordSet } from './words.ts';

export { extractWords, wordSet, codePointLength } from './words.ts';

export type MaskCategory = 'retrieval' | 'expansion' | 'action' | 'transform' | 'other' | 'boilerplate' | 'echo';

/** In the order the viewer lists them. */
export const MASK_CATEGORIES: readonly MaskCategory[] = ['retrieval', 'expansion', 'action', 'transform', 'other', 'boilerplate', 'echo'];

export interface TurnMetrics {
  /** |A∩O| / |A|: how much of the action the observation echoes. 0 when the action has no words. */
  ol: number;
  /** |O\A| / |O|: share of new words in the observation. 0 when the observation has no words. */
  nov: number;
  /** |A∩O| / |A∪O|. 0 when both have no words. */
  jac: number;
  /** Observation length / action length in code points; an empty action counts as length 1. */
  r: number;
}

/**
 * Every threshold and ratio of the categorisation. Rules are tried in this order and the first
 * that holds decides (see categorizeTurn):
 *  1. boilerplate: the observation has no words, or the same normalised observation (lower-case,
 *     whitespace collapsed, digit runs → 0) of at most `boilerplateMaxChars` follows at least
 *     `boilerplateMinRecurrence` different actions in the dataset: text that does not depend on
 *     what the agent did ("OK", "Command executed.", an empty output);
 *  2. echo:        OL ≥ echoMinOverlap and Nov ≤ echoMaxNovelty (the observation repeats the action);
 *  3. retrieval:   Nov ≥ retrievalMinNovelty and R ≥ retrievalMinRatio (long, mostly new: file
 *                  contents, listings, search results, a new page);
 *  4. expansion:   Nov ≥ expansionMinNovelty, R ≥ expansionMinRatio and OL ≥ expansionMinOverlap
 *                  (restates part of the action and adds much to it);
 *  5. transform:   Nov ≤ transformMaxNovelty and OL ≥ transformMinOverlap (built from the action's
 *                  own words, reshaped: sorted, reformatted, computed);
 *  6. action:      at most actionMaxWords distinct words and R ≤ actionMaxRatio (a short, visible
 *                  effect of a state-changing action: "removed 'a.txt'", `{"id": 17}`);
 *  7. other.
 */
export interface MaskConfig {
  boilerplateMinRecurrence: number;
  boilerplateMaxChars: number;
  echoMinOverlap: number;
  echoMaxNovelty: number;
  retrievalMinNovelty: number;
  retrievalMinRatio: number;
  expansionMinNovelty: number;
  expansionMinRatio: number;
  expansionMinOverlap: number;
  transformMaxNovelty: number;
  transformMinOverlap: number;
  actionMaxWords: number;
  actionMaxRatio: number;
  /** Loss ratio per category, each in [0, 1]. */
  ratios: Record<MaskCategory, number>;
  /** Use a turn's `metadata.loss_weight_override` (e.g. AgentInstruct loss flags) instead of its ratio. */
  useOverrides: boolean;
}

export const DEFAULT_MASK_CONFIG: Readonly<MaskConfig> = Object.freeze({
  // Three different actions answered by the same short text is already a pattern, not a fact.
  boilerplateMinRecurrence: 3,
  // Longer texts that recur are usually the same file or page read again: information, not noise.
  boilerplateMaxChars: 200,
  // `echo hello world` → "hello world" has OL 2/3; Think(x) → {"thought": x} is close to 1.
  echoMinOverlap: 0.6,
  echoMaxNovelty: 0.2,
  retrievalMinNovelty: 0.6,
  // Four times the action's length: a command line against a file or listing it returns.
  retrievalMinRatio: 4,
  expansionMinNovelty: 0.4,
  expansionMinRatio: 1.5,
  expansionMinOverlap: 0.3,
  transformMaxNovelty: 0.25,
  transformMinOverlap: 0.2,
  actionMaxWords: 24,
  actionMaxRatio: 3,
  ratios: Object.freeze({
    retrieval: 1.0, // fact of the method
    expansion: 0.8,
    action: 0.6,
    transform: 0.4,
    other: 0.5,
    boilerplate: 0.1, // fact of the method
    echo: 0.05, // fact of the method
  }) as Record<MaskCategory, number>,
  useOverrides: true,
});

/** DEFAULT_MASK_CONFIG with some values replaced; ratios merge key by key. */
export function maskConfig(partial: Partial<Omit<MaskConfig, 'ratios'>> & { ratios?: Partial<Record<MaskCategory, number>> } = {}): MaskConfig {
  return { ...DEFAULT_MASK_CONFIG, ...partial, ratios: { ...DEFAULT_MASK_CONFIG.ratios, ...partial.ratios } };
}

/** Problems with a configuration, as messages naming the field; empty when usable. */
export function checkMaskConfig(config: MaskConfig): string[] {
  const errors: string[] = [];
  const unit = ['echoMinOverlap', 'echoMaxNovelty', 'retrievalMinNovelty', 'expansionMinNovelty', 'expansionMinOverlap', 'transformMaxNovelty', 'transformMinOverlap'] as const;
  for (const k of unit) if (!(config[k] >= 0 && config[k] <= 1)) errors.push(`${k} must be in [0, 1], got ${config[k]}`);
  const positive = ['boilerplateMinRecurrence', 'boilerplateMaxChars', 'retrievalMinRatio', 'expansionMinRatio', 'actionMaxWords', 'actionMaxRatio'] as const;
  for (const k of positive) if (!(config[k] >= 0) || !Number.isFinite(config[k])) errors.push(`${k} must be a finite number ≥ 0, got ${config[k]}`);
  for (const c of MASK_CATEGORIES) {
    const v = config.ratios[c];
    if (!(v >= 0 && v <= 1)) errors.push(`ratios.${c} must be in [0, 1], got ${v}`);
  }
  return errors;
}

function metricsOfSets(a: Set<string>, o: Set<string>, actLen: number, obsLen: number): TurnMetrics {
  let inter = 0;
  for (const w of a) if (o.has(w)) inter++;
  const union = a.size + o.size - inter;
  return {
    ol: a.size ? inter / a.size : 0,
    nov: o.size ? (o.size - inter) / o.size : 0,
    jac: union ? inter / union : 0,
    r: obsLen / Math.max(actLen, 1),
  };
}

export function turnMetrics(action: string, observation: string): TurnMetrics {
  return metricsOfSets(wordSet(action), wordSet(observation), codePointLength(action), codePointLength(observation));
}

/** The key under which recurring observations are counted. */
export function normalizeForRecurrence(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').replace(/\d+/g, '0').trim();
}

export interface TurnFeatures extends TurnMetrics {
  obsWords: number;
  /** How many different actions in the dataset were answered by this (normalised) observation. */
  recurrence: number;
  /** The observation has no words at all (empty, whitespace, or only punctuation). */
  empty: boolean;
}

/** The rule table of MaskConfig, on precomputed features. */
export function categorizeTurn(f: TurnFeatures, config: MaskConfig = DEFAULT_MASK_CONFIG): MaskCategory {
  if (f.empty || f.recurrence >= config.boilerplateMinRecurrence) return 'boilerplate';
  if (f.ol >= config.echoMinOverlap && f.nov <= config.echoMaxNovelty) return 'echo';
  if (f.nov >= config.retrievalMinNovelty && f.r >= config.retrievalMinRatio) return 'retrieval';
  if (f.nov >= config.expansionMinNovelty && f.r >= config.expansionMinRatio && f.ol >= config.expansionMinOverlap) return 'expansion';
  if (f.nov <= config.transformMaxNovelty && f.ol >= config.transformMinOverlap) return 'transform';
  if (f.obsWords <= config.actionMaxWords && f.r <= config.actionMaxRatio) return 'action';
  return 'other';
}

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

export function turnFeatures(action: string, observation: string, recurrence: number): TurnFeatures {
  const a = wordSet(action);
  const o = wordSet(observation);
  return { ...metricsOfSets(a, o, codePointLength(action), codePointLength(observation)), obsWords: o.size, recurrence, empty: o.size === 0 };
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
  const perDomain: Record<string, CategoryCounts> = {};
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
