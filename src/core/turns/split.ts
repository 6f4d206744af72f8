// The train/eval split by trajectory id within each domain, the RL pool of one turn per
// trajectory, the order evaluation draws items across domains in, and a summary (docs/method.md §3).
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
 * The train/eval split, by trajectory within each domain. Every split of the project (training's
 * eval loss and judged samples, RL's held-out turns, `lwm expand`, the Bench's and `lwm infer`'s
 * held-out turns, the labels' train side) comes from here. The rule:
 *
 *  - by trajectory id, never by turn, so no shared prefix of a trajectory leaks from train into
 *    eval; every trajectory with one id goes to the same side (an id's domain is that of its
 *    first trajectory), so even data with repeated ids cannot put an id in both splits;
 *  - within each domain: of its n distinct ids, round(n × evalFraction) go to eval, so every
 *    domain contributes its share; with 0 < evalFraction < 1 a domain of n ≥ 2 ids keeps at least
 *    one in eval and one in train (a domain of one id goes to eval only when round(evalFraction)
 *    is 1); evalFraction 0 puts nothing in eval and 1 everything;
 *  - which ids: those of the domain with the lowest hash of (id, seed), ties broken by the id,
 *    so the split depends on the ids and the seed, not on the order of the input.
 */
export function splitByTrajectory(trajectories: Trajectory[], options: SplitOptions = {}): Split<Trajectory> {
  const fraction = Math.min(1, Math.max(0, options.evalFraction ?? 0.1));
  const seed = options.seed ?? 0;
  const idsByDomain = new Map<string, string[]>();
  const seen = new Set<string>();
  for (const t of trajectories) {
    if (seen.has(t.id)) continue;
    seen.add(t.id);
    let ids = idsByDomain.get(t.domain);
    if (!ids) idsByDomain.set(t.domain, (ids = []));
    ids.push(t.id);
  }
  const evalIds = new Set<string>();
  for (const ids of idsByDomain.values()) {
    const n = ids.length;
    let nEval = Math.round(n * fraction);
    if (fraction > 0 && fraction < 1 && n >= 2) nEval = Math.min(n - 1, Math.max(1, nEval));
    // The nEval lowest draws go to eval; ties (equal draws) broken by the id itself.
    const order = ids.map((id) => ({ id, u: keyedUniform(id, seed) })).sort((a, b) => a.u - b.u || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const k of order.slice(0, nEval)) evalIds.add(k.id);
  }
  const split: Split<Trajectory> = { train: [], eval: [] };
  for (const t of trajectories) (evalIds.has(t.id) ? split.eval : split.train).push(t);
  return split;
}

/** Folded into the seed of the within-domain order of interleaveDomains, so it is not the split's draw. */
const INTERLEAVE_SEED_SALT = 0x1ea5e;

/**
 * Evaluation items (turn samples, rows, trajectories) across domains: domains in name order, one
 * item of each in turn (round-robin) until every domain is spent, so the first N items hold one of
 * every domain once N ≥ the number of domains. Within a domain the items come in the order of a
 * hash of (key, seed) when `keyOf` is given (ties by key), else in their input order. The same
 * items, keys and seed always give the same order, whatever the order of the input when keyed.
 */
export function interleaveDomains<T>(items: readonly T[], domainOf: (x: T) => string, keyOf?: (x: T) => string, seed = 0): T[] {
  const byDomain = new Map<string, T[]>();
  for (const x of items) {
    const d = domainOf(x);
    let list = byDomain.get(d);
    if (!list) byDomain.set(d, (list = []));
    list.push(x);
  }
  const salted = (seed ^ INTERLEAVE_SEED_SALT) >>> 0;
  const lists = [...byDomain.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, list]) => {
      if (!keyOf) return list;
      const keyed = list.map((x) => {
        const k = keyOf(x);
        return { x, k, u: keyedUniform(k, salted) };
      });
      return keyed.sort((a, b) => a.u - b.u || (a.k < b.k ? -1 : a.k > b.k ? 1 : 0)).map((e) => e.x);
    });
  const out: T[] = [];
  for (let i = 0; out.length < items.length; i++) for (const list of lists) if (i < list.length) out.push(list[i]);
  return out;
}

/** Turn samples across domains (interleaveDomains), each domain's in a seeded order of (trajectory, turn). */
export function interleaveSamples<T extends Pick<TurnSample, 'domain' | 'trajectoryId' | 'turnIndex'>>(samples: readonly T[], seed = 0): T[] {
  return interleaveDomains(
    samples,
    (s) => s.domain,
    (s) => `${s.trajectoryId}#${s.turnIndex}`,
    seed,
  );
}

/**
 * The RL pool: exactly one turn per trajectory id with at least one turn, chosen by (id, seed);
 * of several trajectories with one id only the first non-empty one is drawn from. Several turns
 * of one trajectory share a prefix; in one RL batch they would collapse the group's reward
 * signal (docs/method.md §3).
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
