import { describe, expect, it } from 'vitest';
import { BUILTIN_TEMPLATES, renderSample, templateLiterals } from '../core/templates/index.ts';
import { fitPrompt } from '../core/templates/fit.ts';
import { trainBpe } from '../core/tokenizer/index.ts';
import { emptySystemPrompt, type Trajectory } from '../core/schema/types.ts';
import { expandTurns } from '../core/turns/index.ts';
import { generateTrajectory } from '../envs/index.ts';
import { BatchSampler, coverageMetrics, encodeSftSample, encodeSftSamples, encodeTrajectoryRows, makeBatch, packCorpus, type EncodedRow } from './data.ts';

const traj: Trajectory = {
  id: 't1',
  domain: 'terminal',
  system_prompt: { ...emptySystemPrompt(), task_description: 'Create a file and read it back.', action_space: 'bash commands' },
  turns: [
    { action: 'echo hi > a.txt', observation: 'user@host:~$' },
    { action: 'ls', observation: 'a.txt\nuser@host:~$' },
    { action: 'cat a.txt', observation: 'hi\nuser@host:~$' },
  ],
};
const corpus = [JSON.stringify(traj), 'user@host:~$ cat a.txt hi', ...Object.values(BUILTIN_TEMPLATES).map((t) => templateLiterals(t.text).join('\n'))];
const tok = trainBpe(corpus, { vocabSize: 400 });
const samples = expandTurns([traj]);

describe('SFT encoding', () => {
  it('puts loss on the target observation and its closing tag only, with the mask weight', () => {
    const t = BUILTIN_TEMPLATES.v0;
    const row = encodeSftSample(tok, samples[2], t, 0.6, { maxTokens: 10_000 });
    const r = renderSample(t, samples[2]);
    expect(tok.decode(row.ids)).toBe(r.text);
    const weighted = row.ids.filter((_, i) => row.weights[i] > 0);
    expect(tok.decode(weighted)).toBe(r.text.slice(r.targetStart));
    expect(new Set(row.weights.filter((w) => w > 0))).toEqual(new Set([0.6]));
    expect(tok.decode(row.ids.slice(0, row.promptLength))).toBe(r.text.slice(0, r.promptEnd));
    expect(row.truncated).toBe(false);
  });

  it('cuts by the shared policy: the newest turns stay, the system text goes first', () => {
    const t = BUILTIN_TEMPLATES.v0;
    const full = encodeSftSample(tok, samples[2], t, 1, { maxTokens: 10_000 });
    const row = encodeSftSample(tok, samples[2], t, 1, { maxTokens: full.ids.length - 12 });
    expect(row.ids.length).toBeLessThanOrEqual(full.ids.length - 12);
    const text = tok.decode(row.ids);
    // Both turns and the target stay; the action space, then the task description, are cut first.
    expect(text).toContain('echo hi > a.txt');
    expect(text).toContain('a.txt\nuser@host:~$');
    expect(text.endsWith(`hi\nuser@host:~$\n</predicted_observation>`)).toBe(true);
    expect(row.droppedTurns).toBe(0);
    expect(row.truncated).toBe(true);
    expect(row.coverage!.turns).toBe(1);
    expect(row.coverage!.system).toBeLessThan(1);
  });

  it('averages coverage over rows: turns over rows with history, the initial state over rows with one', () => {
    const cov = (system: number, turns: number | null, initialState: number | null, keptTurns: number, historyTurns: number) => ({
      coverage: { system, turns, initialState, target: 1, historyTurns, keptTurns },
    });
    const m = coverageMetrics([cov(0.5, null, 1, 0, 0), cov(0.25, 0.5, null, 2, 4), cov(0, 0, 0.5, 0, 3), {}]);
    expect(m).toEqual({ coverage_system: 0.25, coverage_turns: 0.25, coverage_initial_state: 0.75, coverage_last_turn: 0.5, coverage_target: 1 });
    expect(coverageMetrics([])).toEqual({});
  });

  it('never exceeds the budget, even when the target alone is too long', () => {
    for (const budget of [3, 8, 20, 50]) {
      const row = encodeSftSample(tok, samples[1], BUILTIN_TEMPLATES.v1, 1, { maxTokens: budget });
      expect(row.ids.length).toBeLessThanOrEqual(budget);
      expect(row.weights.length).toBe(row.ids.length);
      expect(row.weights.some((w) => w > 0)).toBe(true);
    }
  });
});

describe('trajectory rows', () => {
  const trajs = [0, 1, 2, 3].map((i) => generateTrajectory('terminal', 4242, i));
  const ttok = trainBpe([...trajs.map((t) => JSON.stringify(t)), ...Object.values(BUILTIN_TEMPLATES).map((t) => templateLiterals(t.text).join('\n'))], {
    vocabSize: 600,
  });
  const all = expandTurns(trajs);
  // A distinct weight per turn, so a weighted token says which turn's sample it was trained for.
  const weightOf = (s: { turnIndex: number; trajectoryId: string }) => 0.1 + 0.01 * s.turnIndex + 0.2 * trajs.findIndex((t) => t.id === s.trajectoryId);
  /** The weighted runs of a row: [weight, text] for each maximal run of one weight. */
  const runs = (row: EncodedRow) => {
    const out: [number, number[]][] = [];
    row.weights.forEach((w, i) => {
      if (w <= 0) return;
      const last = out[out.length - 1];
      if (last && last[0] === w && row.weights[i - 1] === w) last[1].push(row.ids[i]);
      else out.push([w, [row.ids[i]]]);
    });
    return out.map(([w, ids]) => [w, ttok.decode(ids)] as const);
  };

  for (const budget of [120, 200, 400, 4000]) {
    it(`trains every observation exactly once, at its own turn's weight (budget ${budget})`, () => {
      for (const version of ['compact', 'v0', 'v2']) {
        const dist = { [version]: 1 };
        const rows = encodeTrajectoryRows(ttok, all, weightOf, dist, { maxTokens: budget });
        const trained = new Map<string, number>();
        for (const row of rows) {
          expect(row.ids.length).toBeLessThanOrEqual(budget);
          for (const [w, text] of runs(row)) {
            // Which turn: the weight names it; the text is that turn's observation and its close.
            const s = all.find((x) => Math.abs(weightOf(x) - w) < 1e-9)!;
            expect(s, `weight ${w}`).toBeDefined();
            const key = `${s.trajectoryId}:${s.turnIndex}`;
            trained.set(key, (trained.get(key) ?? 0) + 1);
            const t = BUILTIN_TEMPLATES[version];
            if (key === `${row.trajectoryId}:${row.turnIndex}`) {
              // The row's own target: opening tag excluded, the target (or its kept opening) and the closing tag.
              expect(s.targetObservation + t.targetClose).toContain(text.replace(/\u2026/g, '').slice(0, 5));
            } else {
              expect(text.startsWith(s.targetObservation), `${key}: ${JSON.stringify(text)}`).toBe(true);
            }
          }
        }
        // Every turn once, none twice (a target cut by a tiny budget still has its opening).
        expect(trained.size).toBe(all.length);
        expect([...trained.values()].every((n) => n === 1)).toBe(true);
        // A budget that fits a whole trajectory gives one row per trajectory.
        if (budget === 4000) expect(rows.length).toBe(trajs.length);
        // Rows end at their target, from each trajectory's last turn back.
        for (const t of trajs) {
          const mine = rows.filter((r) => r.trajectoryId === t.id).map((r) => r.turnIndex!);
          expect(mine[mine.length - 1]).toBe(t.turns.length - 1);
          expect([...mine].sort((a, b) => a - b)).toEqual(mine);
        }
      }
    });
  }

  it('lays a row out as the turn sample of its target, with loss on more tokens', () => {
    const rows = encodeTrajectoryRows(ttok, all, weightOf, { compact: 1 }, { maxTokens: 300 });
    const turnRows = encodeSftSamples(ttok, all, weightOf, { compact: 1 }, { maxTokens: 300 });
    for (const row of rows) {
      const same = turnRows.find((r) => r.trajectoryId === row.trajectoryId && r.turnIndex === row.turnIndex)!;
      expect(row.ids).toEqual(same.ids);
      // The target's weights are the turn row's; history observations add weight where the turn row had none.
      row.weights.forEach((w, i) => {
        if (same.weights[i] > 0) expect(w).toBe(same.weights[i]);
      });
      expect(row.weights.filter((w) => w > 0).length).toBeGreaterThanOrEqual(same.weights.filter((w) => w > 0).length);
    }
    expect(rows.length).toBeLessThan(all.length);
  });

  it('with answerRoom, gives every row the prompt a generator leaving that room is given, and still trains each observation once', () => {
    const budget = 400;
    const answerRoom = 60;
    for (const encode of [encodeTrajectoryRows, encodeSftSamples]) {
      const rows = encode(ttok, all, weightOf, { compact: 1 }, { maxTokens: budget, answerRoom });
      const plain = encode(ttok, all, weightOf, { compact: 1 }, { maxTokens: budget });
      for (const row of rows) {
        const s = all.find((x) => x.trajectoryId === row.trajectoryId && x.turnIndex === row.turnIndex)!;
        const prompt = fitPrompt(ttok, BUILTIN_TEMPLATES.compact, s, budget - 1 - answerRoom).ids;
        expect(row.ids.slice(0, prompt.length)).toEqual(prompt);
        expect(row.ids.length).toBeLessThanOrEqual(budget);
      }
      if (encode === encodeSftSamples) {
        // One row a turn either way: a short target's prompt is shorter than without it (the context
        // no longer takes the room the target left), a long one's longer (no longer half the row).
        expect(rows.some((r, i) => r.promptLength < plain[i].promptLength)).toBe(true);
        expect(rows.some((r, i) => r.promptLength > plain[i].promptLength)).toBe(true);
      } else {
        // Shorter contexts show fewer history turns whole: more rows, each observation still trained once.
        expect(rows.length).toBeGreaterThanOrEqual(plain.length);
        const trained = new Set<number>();
        for (const row of rows) for (const [w] of runs(row)) trained.add(w);
        expect(trained.size).toBe(new Set(all.map(weightOf)).size);
      }
    }
  });

  it('leaves a history turn without a sample of its own untrained', () => {
    const some = all.filter((s) => s.turnIndex !== 1);
    const rows = encodeTrajectoryRows(ttok, some, weightOf, { compact: 1 }, { maxTokens: 4000 });
    for (const row of rows)
      for (const [w] of runs(row)) expect(Math.abs(w - weightOf({ turnIndex: 1, trajectoryId: row.trajectoryId! }))).toBeGreaterThan(1e-9);
  });
});

describe('batches', () => {
  it('shifts targets by one and pads with weight 0', () => {
    const b = makeBatch([{ ids: [5, 6, 7], weights: [0, 1, 0.5], promptLength: 1, droppedTurns: 0, truncated: false }], 4, 9);
    expect(Array.from(b.inputs)).toEqual([5, 6, 9, 9]);
    expect(Array.from(b.targets)).toEqual([6, 7, 9, 9]);
    expect(Array.from(b.weights)).toEqual([1, 0.5, 0, 0]);
    expect(b.weightSum).toBe(1.5);
  });

  it('packs a corpus into overlapping windows that cover the stream', () => {
    const rows = packCorpus(tok, ['hello world', 'cat a.txt'], 4);
    const stream = [tok.special.bos, ...tok.encode('hello world'), tok.special.eos, tok.special.bos, ...tok.encode('cat a.txt'), tok.special.eos];
    expect(rows[0].ids).toEqual(stream.slice(0, 5));
    expect(rows[1].ids[0]).toBe(stream[4]);
    expect(rows.every((r) => r.ids.length <= 5)).toBe(true);
  });

  it('samples reproducibly by batch index, covering every row each epoch', () => {
    const rows = Array.from({ length: 10 }, (_, i) => ({ ids: [i, i + 1], weights: [0, 1], promptLength: 0, droppedTurns: 0, truncated: false }));
    const s1 = new BatchSampler(rows, 5, 1, 0, 7);
    const s2 = new BatchSampler(rows, 5, 1, 0, 7);
    expect(Array.from(s1.batch(3).inputs)).toEqual(Array.from(s2.batch(3).inputs));
    const epoch0 = [...s1.batch(0).inputs, ...s1.batch(1).inputs].sort((a, b) => a - b);
    expect(epoch0).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(() => new BatchSampler([], 2, 4, 0)).toThrow(/no training rows/);
  });
});
