// Masking statistics: count and share per category, overall and per domain, the mean loss weight,
// and histograms of the four turn metrics.
import type { Trajectory } from '../schema/types.ts';
import type { TurnMetrics } from './metrics.ts';
import { DEFAULT_MASK_CONFIG, MASK_CATEGORIES, type MaskCategory, type MaskConfig } from './rules.ts';
import { categorizeDataset } from './dataset.ts';

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
