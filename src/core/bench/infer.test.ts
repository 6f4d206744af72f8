// The order `lwm infer` generates a local model's records in: prompts that share a start run
// one after another, so the generator's kept KV cache covers them.
import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../../envs/generate.ts';
import { toAgentWorldBenchRecords } from '../formats/agentworldbench.ts';
import { sharedPrefixOrder } from './infer.ts';
import type { AwbSampleRecord } from './records.ts';

const recordsOf = (domain: 'terminal' | 'web', n: number, seed: number) =>
  generateTrajectories(domain, n, seed).map((t) => toAgentWorldBenchRecords({ ...t, source: undefined }) as AwbSampleRecord[]);

describe('sharedPrefixOrder', () => {
  it("runs each trajectory's turns together and in turn order, whatever order the file has them in", () => {
    const trajectories = [...recordsOf('terminal', 3, 4), ...recordsOf('web', 2, 4)];
    // Turn-major, as a file sorted by turn would be: every first turn, then every second turn, ...
    const byTurn: AwbSampleRecord[] = [];
    for (let k = 0; byTurn.length < trajectories.flat().length; k++) for (const t of trajectories) if (t[k]) byTurn.push(t[k]);
    const order = sharedPrefixOrder(byTurn);
    expect([...order].sort((a, b) => a - b)).toEqual(byTurn.map((_, i) => i));
    const runs = order.map((i) => byTurn[i]);
    // Contiguous trajectories (by their first action and system prompt), turns ascending.
    const key = (r: AwbSampleRecord) => `${r.system_str}\u0000${r.prompt[0]}`;
    const seen = new Set<string>();
    runs.forEach((r, i) => {
      if (i > 0 && key(runs[i - 1]) === key(r)) expect(r.turn_idx).toBe(runs[i - 1].turn_idx + 1);
      else {
        expect(seen.has(key(r)), `trajectory of ${r.id} split`).toBe(false);
        seen.add(key(r));
        expect(r.turn_idx).toBe(1);
      }
    });
    expect(seen.size).toBe(trajectories.length);
  });

  it('puts branches of one history side by side, keeps equal conversations in input order, and leaves a good order alone', () => {
    const base = { task: 'terminal', system_str: 'S', response: ['o1', 'o2', 'o3'] };
    const recs: AwbSampleRecord[] = [
      { ...base, id: 'b2', prompt: ['a1', 'x2'], turn_idx: 2 },
      { ...base, id: 'other', system_str: 'T', prompt: ['a1'], turn_idx: 1 },
      { ...base, id: 'a2', prompt: ['a1', 'a2'], turn_idx: 2 },
      { ...base, id: 'a1', prompt: ['a1', 'a2'], turn_idx: 1 },
      { ...base, id: 'a1-again', prompt: ['a1', 'zz'], turn_idx: 1 },
      { ...base, id: 'a3', prompt: ['a1', 'a2', 'a3'], turn_idx: 3 },
    ];
    const ids = sharedPrefixOrder(recs).map((i) => recs[i].id);
    expect(ids).toEqual(['a1', 'a1-again', 'a2', 'a3', 'b2', 'other']);
    const sorted = sharedPrefixOrder(recs).map((i) => recs[i]);
    expect(sharedPrefixOrder(sorted)).toEqual(sorted.map((_, i) => i));
  });
});
