import { describe, expect, it } from 'vitest';
import { BUILTIN_TEMPLATES, renderSample, templateLiterals } from '../core/templates/index.ts';
import { trainBpe } from '../core/tokenizer/index.ts';
import { emptySystemPrompt, type Trajectory } from '../core/schema/types.ts';
import { expandTurns } from '../core/turns/index.ts';
import { BatchSampler, coverageMetrics, encodeSftSample, makeBatch, packCorpus } from './data.ts';

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
