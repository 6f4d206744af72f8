import { describe, expect, it } from 'vitest';
import { expandTurns, interleaveDomains, interleaveSamples, rlPool, splitByTrajectory, summarizeExpansion } from './index.ts';
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
      // 67, 67 and 66 trajectories per domain: round(n × 0.2) of each.
      expect(ev).toHaveLength(13 + 13 + 13);
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
        // The eval share is of distinct ids (14, 13 and 13 per domain), not of rows.
        const perDomain = [14, 13, 13].map((n) => Math.min(n - 1, Math.max(1, Math.round(n * evalFraction))));
        expect(new Set(ev.map((t) => t.id)).size).toBe(perDomain.reduce((a, b) => a + b, 0));
        // The RL pool takes one turn per id, never nine from the repeated one.
        const pool = rlPool(train, seed);
        expect(pool.map((s) => s.trajectoryId).sort()).toEqual([...trainIds].sort());
      }
    }
  });
  it('gives every domain its share of eval trajectories, one at least each side from two up', () => {
    // Sorted by domain, as the default dataset is: a global cut would take one domain only.
    const ts = [...dataset(60), ...dataset(2).map((t) => ({ ...t, id: `pair-${t.id}`, domain: 'os' })), { ...dataset(1)[0], id: 'alone', domain: 'db' }].sort(
      (a, b) => a.domain.localeCompare(b.domain),
    );
    for (const seed of [0, 1, 2, 3, 42]) {
      const { train, eval: ev } = splitByTrajectory(ts, { evalFraction: 0.1, seed });
      const count = (side: Trajectory[], d: string) => side.filter((t) => t.domain === d).length;
      for (const d of ['terminal', 'web', 'mcp']) {
        expect(count(ev, d)).toBe(2); // round(20 × 0.1)
        expect(count(train, d)).toBe(18);
      }
      expect([count(ev, 'os'), count(train, 'os')]).toEqual([1, 1]); // round(0.2) = 0, raised to 1
      expect([count(ev, 'db'), count(train, 'db')]).toEqual([0, 1]); // one trajectory: round(0.1) = 0
      const trainIds = new Set(train.map((t) => t.id));
      expect(ev.filter((t) => trainIds.has(t.id))).toEqual([]);
      expect(train.length + ev.length).toBe(ts.length);
      // Deterministic by seed, whatever the input order.
      const again = splitByTrajectory([...ts].reverse(), { evalFraction: 0.1, seed });
      expect(again.eval.map((t) => t.id).sort()).toEqual(ev.map((t) => t.id).sort());
    }
    // A high share still leaves a domain of two one train trajectory; a lone one goes to eval at round(f) = 1.
    const high = splitByTrajectory(ts, { evalFraction: 0.9, seed: 0 });
    expect(high.train.filter((t) => t.domain === 'os')).toHaveLength(1);
    expect(high.train.filter((t) => t.domain === 'terminal')).toHaveLength(2);
    expect(high.eval.filter((t) => t.domain === 'db')).toHaveLength(1);
  });
  it('handles the edge fractions', () => {
    const ts = dataset(10);
    expect(splitByTrajectory(ts, { evalFraction: 0 }).eval).toEqual([]);
    expect(splitByTrajectory(ts, { evalFraction: 1 }).train).toEqual([]);
    expect(splitByTrajectory([], { evalFraction: 0.5 })).toEqual({ train: [], eval: [] });
  });
});

describe('interleaveDomains', () => {
  it('takes one item of each domain in turn, domains by name, each domain in a seeded order', () => {
    const samples = expandTurns(
      [...dataset(30), ...dataset(3).map((t) => ({ ...t, id: `os-${t.id}`, domain: 'os' }))].sort((a, b) => a.domain.localeCompare(b.domain)),
    );
    const order = interleaveSamples(samples, 5);
    expect(order).toHaveLength(samples.length);
    expect(new Set(order)).toEqual(new Set(samples));
    expect(order.slice(0, 4).map((s) => s.domain)).toEqual(['mcp', 'os', 'terminal', 'web']);
    expect(order.slice(4, 8).map((s) => s.domain)).toEqual(['mcp', 'os', 'terminal', 'web']);
    // Every domain in the first N ≥ D items, whatever N.
    for (let n = 4; n <= 12; n++) expect(new Set(order.slice(0, n).map((s) => s.domain)).size).toBe(4);
    // Once the small domain is spent the rest keep their turns.
    const osCount = samples.filter((s) => s.domain === 'os').length;
    expect(order.slice(4 * osCount).some((s) => s.domain === 'os')).toBe(false);
    // Deterministic by seed, not by input order; another seed reorders within domains.
    expect(interleaveSamples([...samples].reverse(), 5)).toEqual(order);
    expect(interleaveSamples(samples, 6).map((s) => `${s.trajectoryId}#${s.turnIndex}`)).not.toEqual(order.map((s) => `${s.trajectoryId}#${s.turnIndex}`));
  });
  it('keeps the input order within a domain without a key', () => {
    const items = ['b1', 'a1', 'b2', 'a2', 'a3'];
    expect(interleaveDomains(items, (x) => x[0])).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
    expect(interleaveDomains([], (x: string) => x)).toEqual([]);
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
