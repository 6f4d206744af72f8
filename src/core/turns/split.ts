// The train/eval split by trajectory id, the RL pool of one turn per trajectory and a summary of
// both (SPEC §3).
import type { Trajectory } from '../schema/types.ts';
import { keyedUniform } from '../random.ts';
import { turnSample, type TurnSample } from './expand.ts';

/**
 * Folded into the seed of the RL pool's turn draw so it is not the split's draw: with one seed
 * for both, keyedUniform(id, seed) would rank a trajectory for the split and pick its RL turn
 * from the same number, and eval trajectories (low draws) would always give early turns.
 */
const RL_POOL_SEED_SALT = 0x5eed;

export interface SplitOptions {
  /** Share of trajectories (not turns) that go to eval, in [0, 1]. Default 0.1. */
  evalFraction?: number;
  seed?: number;
}

export interface Split<T> {
  train: T[];
  eval: T[];
}

/**
 * Splits by trajectory id, never by turn, so no shared prefix of a trajectory leaks from train into
 * eval. Distinct ids are ranked by a hash of (id, seed) and the lowest round(ids × evalFraction)
 * go to eval: the split depends on the ids and the seed, not on the order of the input. Every
 * trajectory with a given id goes to the same side, so even data with repeated ids (the importers
 * refuse them, but data built in memory may have them) cannot put one id in both splits.
 */
export function splitByTrajectory(trajectories: Trajectory[], options: SplitOptions = {}): Split<Trajectory> {
  const fraction = Math.min(1, Math.max(0, options.evalFraction ?? 0.1));
  const seed = options.seed ?? 0;
  const ids = [...new Set(trajectories.map((t) => t.id))];
  const nEval = Math.round(ids.length * fraction);
  // The nEval lowest draws go to eval; ties (equal draws) broken by the id itself.
  const order = ids.map((id) => ({ id, u: keyedUniform(id, seed) })).sort((a, b) => a.u - b.u || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const evalIds = new Set(order.slice(0, nEval).map((k) => k.id));
  const split: Split<Trajectory> = { train: [], eval: [] };
  for (const t of trajectories) (evalIds.has(t.id) ? split.eval : split.train).push(t);
  return split;
}

/**
 * The RL pool: exactly one turn per trajectory id with at least one turn, chosen by (id, seed);
 * of several trajectories with one id only the first non-empty one is drawn from. Several turns
 * of one trajectory share a prefix; in one RL batch they would collapse the group's reward
 * signal (SPEC §3).
 */
export function rlPool(trajectories: Trajectory[], seed = 0): TurnSample[] {
  const out: TurnSample[] = [];
  const taken = new Set<string>();
  for (const t of trajectories) {
    if (!t.turns.length || taken.has(t.id)) continue;
    taken.add(t.id);
    const i = Math.floor(keyedUniform(t.id, seed ^ RL_POOL_SEED_SALT) * t.turns.length);
    out.push(turnSample(t, i));
  }
  return out;
}

export interface ExpansionSummary {
  trajectories: number;
  turns: number;
  train: { trajectories: number; samples: number };
  eval: { trajectories: number; samples: number };
  rlPool: number;
  perDomain: Record<string, { trajectories: number; samples: number; train: number; eval: number }>;
}

export function summarizeExpansion(trajectories: Trajectory[], options: SplitOptions = {}): ExpansionSummary {
  const split = splitByTrajectory(trajectories, options);
  const count = (ts: Trajectory[]) => ts.reduce((n, t) => n + t.turns.length, 0);
  // Null prototype: domains come from data and may be named `constructor` or `__proto__`.
  const perDomain: ExpansionSummary['perDomain'] = Object.create(null);
  const bump = (t: Trajectory, side: 'train' | 'eval') => {
    const d = (perDomain[t.domain] ??= { trajectories: 0, samples: 0, train: 0, eval: 0 });
    d.trajectories++;
    d.samples += t.turns.length;
    d[side] += t.turns.length;
  };
  split.train.forEach((t) => bump(t, 'train'));
  split.eval.forEach((t) => bump(t, 'eval'));
  return {
    trajectories: trajectories.length,
    turns: count(trajectories),
    train: { trajectories: split.train.length, samples: count(split.train) },
    eval: { trajectories: split.eval.length, samples: count(split.eval) },
    rlPool: rlPool(split.train, options.seed ?? 0).length,
    perDomain,
  };
}
