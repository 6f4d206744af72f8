// The held-out turns a benchmark runs on: the eval split of trajectories (by trajectory, as
// training splits them, src/core/turns), each turn as an AgentWorldBench record in the layout
// `lwm convert --to agentworldbench` writes, with the turn's span labels for the verifier.
// `lwm infer` on native trajectories and the Bench view both take their samples from here.
import { toAgentWorldBenchRecords } from '../formats/agentworldbench.ts';
import { keyedUniform } from '../random.ts';
import type { Trajectory } from '../schema/types.ts';
import { splitByTrajectory } from '../turns/index.ts';
import type { AwbSampleRecord } from './records.ts';

/** The eval-split turns of trajectories as AgentWorldBench records (with span labels when the turns have them). */
export function evalTurnRecords(trajectories: Trajectory[], evalFraction: number, seed: number): AwbSampleRecord[] {
  return turnRecords(splitByTrajectory(trajectories, { evalFraction, seed }).eval);
}

/** Every turn of the trajectories as an AgentWorldBench record, with its span labels. */
function turnRecords(trajectories: Iterable<Trajectory>): AwbSampleRecord[] {
  const out: AwbSampleRecord[] = [];
  for (const t of trajectories) {
    toAgentWorldBenchRecords({ ...t, source: undefined }).forEach((r, i) => {
      const spans = t.turns[i].metadata?.spans;
      out.push(spans ? { ...(r as AwbSampleRecord), spans } : (r as AwbSampleRecord));
    });
  }
  return out;
}

export interface BenchSampleOptions {
  /** Share of trajectories held out, as training's split (default 0.1). */
  evalFraction?: number;
  /** The split's seed (default 0, training's default); also draws the turns kept per domain. */
  seed?: number;
  /** Turns kept per domain (all when absent). */
  perDomain?: number;
  /** Only these domains (all when absent or empty). */
  domains?: readonly string[];
}

/** Folded into the seed of the per-domain draw so it is not the split's own draw. */
const DRAW_SALT = 0xbe7c;

/**
 * Up to `perDomain` held-out turns of each domain. Which turns is decided by a hash of
 * (trajectory id, turn, seed), so the same data and settings always give the same samples,
 * whatever the order of the input; the records keep the order the eval split gives them.
 */
export function benchSampleRecords(trajectories: Trajectory[], options: BenchSampleOptions = {}): AwbSampleRecord[] {
  const only = options.domains?.length ? new Set(options.domains) : null;
  const pool = only ? trajectories.filter((t) => only.has(t.domain)) : trajectories;
  // The split is over all the trajectories given, so a domain filter never moves a trajectory across it.
  const { eval: held } = splitByTrajectory(trajectories, { evalFraction: options.evalFraction ?? 0.1, seed: options.seed ?? 0 });
  const heldIds = new Set(held.map((t) => t.id));
  const records = turnRecords(pool.filter((t) => heldIds.has(t.id)));
  if (options.perDomain === undefined) return records;
  const seed = ((options.seed ?? 0) ^ DRAW_SALT) >>> 0;
  const byDomain = new Map<string, { i: number; u: number }[]>();
  records.forEach((r, i) => {
    let list = byDomain.get(r.task);
    if (!list) byDomain.set(r.task, (list = []));
    list.push({ i, u: keyedUniform(`${r.id}#${r.turn_idx}`, seed) });
  });
  const keep = new Set<number>();
  for (const list of byDomain.values()) {
    list.sort((a, b) => a.u - b.u || a.i - b.i);
    for (const k of list.slice(0, options.perDomain)) keep.add(k.i);
  }
  return records.filter((_, i) => keep.has(i));
}
