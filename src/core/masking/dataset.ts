// The dataset-level masking pass: the boilerplate recurrence table over every trajectory, and
// per trajectory, per turn, the category, metrics and loss weight (docs/method.md §4).
import type { Trajectory } from '../schema/types.ts';
import { normalizeForRecurrence, turnFeatures, type TurnFeatures, type TurnMetrics } from './metrics.ts';
import { categorizeTurn, DEFAULT_MASK_CONFIG, type MaskCategory, type MaskConfig } from './rules.ts';

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
  return observation.length > config.boilerplateMaxChars ? 1 : (table.get(normalizeForRecurrence(observation))?.size ?? 1);
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
      turnMask(
        turnFeatures(turn.action, turn.observation, observationRecurrence(turn.observation, table, config)),
        turn.metadata?.loss_weight_override,
        config,
      ),
    ),
  }));
}
