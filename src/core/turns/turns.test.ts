import { describe, expect, it } from 'vitest';
import { expandTurns, rlPool, splitByTrajectory, summarizeExpansion } from './index.ts';
import { seededRandom } from '../random.ts';
import { emptySystemPrompt, type Trajectory } from '../schema/types.ts';

function dataset(n: number, seed = 1): Trajectory[] {
  const rand = seededRandom(seed);
  return Array.from({ length: n }, (_, i) => ({
    id: `traj-${i}`,
    domain: ['terminal', 'web', 'mcp'][i % 3],
    system_prompt: { ...emptySystemPrompt(), task_description: `task ${i}` },
    turns: Array.from({ length: 1 + Math.floor(rand() * 6) }, (_, k) => ({ action: `a${i}.${k}`, observation: `o${i}.${k}` })),
  }));
}

describe('expandTurns', () => {
  it('gives sample t the system prompt, turns before t, action t and target o_t', () => {
    const ts = dataset(3);
    const samples = expandTurns(ts);
    expect(samples).toHaveLength(ts.reduce((n, t) => n + t.turns.length, 0));
    const s = samples.find((x) => x.trajectoryId === 'traj-0' && x.turnIndex === ts[0].turns.length - 1)!;
    expect(s.history).toEqual(ts[0].turns.slice(0, -1));
    expect(s.action).toBe(ts[0].turns.at(-1)!.action);
    expect(s.targetObservation).toBe(ts[0].turns.at(-1)!.observation);
    expect(s.systemPrompt.task_description).toBe('task 0');
    expect(samples[0].history).toEqual([]);
  });
  it('carries span labels of the target observation', () => {
    const t = dataset(1)[0];
    t.turns[0].metadata = { spans: [{ start: 0, end: 2, kind: 'deterministic' }] };
    expect(expandTurns([t])[0].targetSpans).toEqual([{ start: 0, end: 2, kind: 'deterministic' }]);
  });
});

describe('splitByTrajectory', () => {
  it('never puts a trajectory in both splits and never splits a trajectory', () => {
    const ts = dataset(200);
    for (const seed of [0, 1, 42]) {
      const { train, eval: ev } = splitByTrajectory(ts, { evalFraction: 0.2, seed });
      const trainIds = new Set(train.map((t) => t.id));
      expect(ev.some((t) => trainIds.has(t.id))).toBe(false);
      expect(train.length + ev.length).toBe(200);
      expect(ev).toHaveLength(40);
      // Turn samples of the eval split all come from eval trajectories.
      const evalIds = new Set(ev.map((t) => t.id));
      expect(expandTurns(train).some((s) => evalIds.has(s.trajectoryId))).toBe(false);
    }
  });
  it('depends on the seed and the ids, not on the input order', () => {
    const ts = dataset(100);
    const a = splitByTrajectory(ts, { evalFraction: 0.3, seed: 7 });
    const b = splitByTrajectory([...ts].reverse(), { evalFraction: 0.3, seed: 7 });
    expect(new Set(b.eval.map((t) => t.id))).toEqual(new Set(a.eval.map((t) => t.id)));
    const c = splitByTrajectory(ts, { evalFraction: 0.3, seed: 8 });
    expect(new Set(c.eval.map((t) => t.id))).not.toEqual(new Set(a.eval.map((t) => t.id)));
  });
  it('keeps every copy of a repeated id on one side, whatever the seed and fraction', () => {
    // 40 distinct ids, one of them repeated 10 times (as a careless merge of files produces).
    const ts = dataset(40);
    const dup = ts[3];
    for (let k = 0; k < 9; k++) ts.push({ ...dup, turns: dup.turns.map((t) => ({ ...t })) });
    for (const seed of [0, 1, 2, 3, 4, 5, 6, 7, 42]) {
      for (const evalFraction of [0.1, 0.25, 0.5]) {
        const { train, eval: ev } = splitByTrajectory(ts, { evalFraction, seed });
        const trainIds = new Set(train.map((t) => t.id));
        expect(ev.filter((t) => trainIds.has(t.id))).toEqual([]);
        expect(train.length + ev.length).toBe(ts.length);
        // The eval share is of distinct ids, not of rows.
        expect(new Set(ev.map((t) => t.id)).size).toBe(Math.round(40 * evalFraction));
        // The RL pool takes one turn per id, never nine from the repeated one.
        const pool = rlPool(train, seed);
        expect(pool.map((s) => s.trajectoryId).sort()).toEqual([...trainIds].sort());
      }
    }
  });
  it('handles the edge fractions', () => {
    const ts = dataset(10);
    expect(splitByTrajectory(ts, { evalFraction: 0 }).eval).toEqual([]);
    expect(splitByTrajectory(ts, { evalFraction: 1 }).train).toEqual([]);
    expect(splitByTrajectory([], { evalFraction: 0.5 })).toEqual({ train: [], eval: [] });
  });
});

describe('rlPool', () => {
  it('holds exactly one turn per trajectory, chosen reproducibly by seed', () => {
    const ts = dataset(300);
    ts.push({ id: 'empty', domain: 'os', system_prompt: emptySystemPrompt(), turns: [] });
    const pool = rlPool(ts, 5);
    expect(pool).toHaveLength(300);
    const ids = pool.map((s) => s.trajectoryId);
    expect(new Set(ids).size).toBe(300);
    for (const s of pool) expect(s.turnIndex).toBeLessThan(ts.find((t) => t.id === s.trajectoryId)!.turns.length);
    expect(rlPool(ts, 5)).toEqual(pool);
    // Different seeds choose different turns somewhere, and every index gets used.
    expect(rlPool(ts, 6).map((s) => s.turnIndex)).not.toEqual(pool.map((s) => s.turnIndex));
    const long = ts.filter((t) => t.turns.length === 6);
    const chosen = new Set(rlPool(long, 5).map((s) => s.turnIndex));
    expect(chosen.size).toBe(6);
  });
  it('summary counts splits per domain and the pool from train trajectories only', () => {
    const ts = dataset(30);
    const s = summarizeExpansion(ts, { evalFraction: 0.2, seed: 1 });
    expect(s.train.trajectories + s.eval.trajectories).toBe(30);
    expect(s.train.samples + s.eval.samples).toBe(s.turns);
    expect(s.rlPool).toBe(s.train.trajectories);
    expect(Object.values(s.perDomain).reduce((n, d) => n + d.samples, 0)).toBe(s.turns);
  });
});
