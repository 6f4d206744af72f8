import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../../envs/generate.ts';
import { expandTurns } from '../turns/index.ts';
import { createLlmPairJudge, localPairJudge, parseChoice, simulatorTells, type PairJudge } from './pairwise.ts';
import { DEFAULT_REWARD_MIX, groupRewards, reward } from './reward.ts';
import { localJudge, rubricJudge } from './rubric.ts';
import { judgeInputFor } from './sample.ts';
import type { Judge } from './types.ts';
import { verify } from './verifier.ts';

// A turn with a long, structured observation, so the rubric has something to compare.
const sample = expandTurns(generateTrajectories('mcp', 4, 21)).find((s) => s.targetObservation.length > 80)!;
const { prediction: _, ...turn } = judgeInputFor(sample, 'a tool server', '');
void _;
const ref = sample.targetObservation;
const garbage = 'lorem ipsum dolor sit amet';
const degenerate = Array.from({ length: 30 }, () => 'ERROR ERROR ERROR').join('\n');
const local = { judge: localJudge, pair: localPairJudge };

describe('rubric reward (default)', () => {
  it('is 0.9 × judge + 0.1 × verifier with the five scores; a failed judgement is null', async () => {
    const r = await groupRewards('rubric', local, turn, [ref, garbage], { key: 'k', seed: 0 });
    const v = rubricJudge({ ...turn, prediction: garbage });
    expect(r[0]).toMatchObject({ reward: 25, judge: 25, verifier: 25, pass: true });
    expect(r[1]).toEqual({
      ...reward(v.scores, verify({ ...turn, prediction: garbage }).pass, DEFAULT_REWARD_MIX),
      pass: verify({ ...turn, prediction: garbage }).pass,
      scores: v.scores,
    });
    const down: Judge = { name: 'down', judge: async () => ({ failed: true, error: 'x' }) };
    expect(await groupRewards('rubric', { judge: down, pair: localPairJudge }, turn, [ref, garbage], { key: 'k', seed: 0 })).toEqual([null, null]);
  });
});

describe('binary reference comparison (local: rubric scores against the real observation)', () => {
  it('rewards 1 when the sample is closer to the real observation than its group neighbour', async () => {
    for (const key of ['a', 'b', 'c', 'd']) {
      // 0 (exact) vs 1 (garbage): wins. 1 (garbage) vs 2 (degenerate)… 2 vs 0 (exact): loses.
      const r = await groupRewards('reference-ab', local, turn, [ref, garbage, degenerate], { key, seed: 3 });
      expect(r[0]).toMatchObject({ reward: 1, win: 1, pass: true });
      expect(r[2]).toMatchObject({ reward: 0, win: 0 });
    }
  });
});

describe('binary Turing test (local: each output scored with the other as reference)', () => {
  it('the real observation is called real against degenerate or self-talking output', async () => {
    const selfTalk = `As an AI language model, I simulate this output. ${ref}`;
    for (const key of ['a', 'b', 'c', 'd']) {
      const r = await groupRewards('turing', local, turn, [degenerate, selfTalk], { key, seed: 1 });
      expect(r.map((x) => x!.reward)).toEqual([0, 0]);
    }
  });

  it('counts simulator tells: self-talk, placeholders, heavy repetition; none in a real observation', () => {
    expect(simulatorTells(ref)).toBe(0);
    expect(simulatorTells(degenerate)).toBe(1);
    expect(simulatorTells(`As an AI language model, [insert output here]\n${degenerate}`)).toBe(3);
  });

  it('an exact copy of the real observation cannot be told apart: it wins on the seeded coin, about half the time', async () => {
    let wins = 0;
    for (let k = 0; k < 40; k++) wins += (await groupRewards('turing', local, turn, [ref, ref], { key: `g${k}`, seed: 0 })).reduce((n, x) => n + x!.reward, 0);
    expect(wins).toBeGreaterThan(20);
    expect(wins).toBeLessThan(60);
  });
});

describe('pairwise LLM judges', () => {
  it('ask with the right prompt, and a judge that always says A wins only where the coin put the sample at A', async () => {
    const asked: { system: string; user: string }[] = [];
    const alwaysA = createLlmPairJudge({
      name: 'a-sayer',
      complete: async (messages) => {
        asked.push({ system: messages[0].content, user: messages[1].content });
        return 'Thinking… <choice>A</choice>';
      },
    });
    let wins = 0;
    for (let k = 0; k < 40; k++)
      wins += (await groupRewards('turing', { judge: localJudge, pair: alwaysA }, turn, [garbage, degenerate], { key: `t${k}`, seed: 0 })).reduce(
        (n, x) => n + x!.reward,
        0,
      );
    // 80 comparisons; a position-biased judge would give 80 wins without the coin.
    expect(wins).toBeGreaterThan(20);
    expect(wins).toBeLessThan(60);
    expect(asked[0].system).toMatch(/came from the real environment/);
    // The Turing judge is not told which output is real: no ground-truth section, the reference is A or B.
    expect(asked[0].user).not.toContain('ground truth');
    expect(asked[0].user).toContain(ref.slice(0, 40));
    asked.length = 0;
    await groupRewards('reference-ab', { judge: localJudge, pair: alwaysA }, turn, [garbage, degenerate], { key: 'r', seed: 0 });
    expect(asked[0].system).toMatch(/closer to the real observation/);
    expect(asked[0].user).toContain('## Real observation (ground truth)');
    expect(asked[0].user).toContain(garbage);
    expect(asked[0].user).toContain('ERROR ERROR');
  });

  it('retry an unparseable reply, then fail the sample (null reward)', async () => {
    let calls = 0;
    const mute: PairJudge = createLlmPairJudge({ name: 'mute', retries: 1, complete: async () => (calls++, 'I would rather not say.') });
    expect(await groupRewards('reference-ab', { judge: localJudge, pair: mute }, turn, [ref, garbage], { key: 'm', seed: 0 })).toEqual([null, null]);
    expect(calls).toBe(4);
  });

  it('read the last <choice> outside <think>, or a JSON "choice"', () => {
    expect(parseChoice('<think><choice>B</choice></think> so <choice>A</choice>')).toBe('A');
    expect(parseChoice('first <choice>A</choice> then <choice> b </choice>')).toBe('B');
    expect(parseChoice('{"choice": "B", "why": "closer"}')).toBe('B');
    expect(parseChoice('A or B, hard to say')).toBeNull();
  });
});
