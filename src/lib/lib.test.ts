// The package API (src/index.ts, node.ts, browser.ts) on what needs no GPU: it answers what the
// product's own pieces answer (the environment, the baseline, the judge), and refuses bad input
// with what and where.
import { describe, expect, it } from 'vitest';
import { browserSource, openModel as openInPage } from '../browser.ts';
import { judgeTurn, openEnvironment, openModel } from '../node.ts';
import { systemPromptToText } from '../core/formats/systemPromptText.ts';
import { rubricJudge } from '../core/judge/rubric.ts';
import { reward } from '../core/judge/reward.ts';
import { verify } from '../core/judge/verifier.ts';
import { ENV_DOMAINS } from '../envs/registry.ts';

describe('openEnvironment', () => {
  it('is the built-in environment at its seed', () => {
    const ep = openEnvironment('search', 4);
    const env = ENV_DOMAINS.search.create();
    const reset = env.reset(4);
    expect(ep.systemPrompt).toBe(systemPromptToText(reset.system_prompt));
    expect(ep.systemPromptFields).toEqual(reset.system_prompt);
    for (const a of ['search("x")', 'open(1)', '???']) {
      const want = env.step(a);
      expect(ep.step(a)).toEqual({ observation: want.observation, ok: want.ok, spans: want.spans });
    }
  });

  it('refuses an unknown domain or a bad seed', () => {
    expect(() => openEnvironment('chess')).toThrow("no built-in environment 'chess': the domains are mcp, search, terminal, swe, android, web, os");
    expect(() => openEnvironment('os', -2)).toThrow('seed must be a whole number ≥ 0, got -2');
  });
});

describe('openModel and judgeTurn', () => {
  it('the copy-last baseline, streamed and whole; judged as the product judges', async () => {
    const ep = openEnvironment('terminal', 3);
    const first = ep.step('ls');
    const model = await openModel('copy-last');
    const turn = { domain: 'terminal', systemPrompt: ep.systemPrompt, history: [{ action: 'ls', observation: first.observation }], action: 'pwd' };
    let streamed = '';
    for await (const piece of model.simulate(turn)) streamed += piece;
    const { text, observation } = await model.observe(turn);
    expect(text).toBe(streamed);
    expect(observation).toBe(first.observation);
    const real = ep.step('pwd');
    const j = judgeTurn(turn, real.observation, text, real.spans);
    const input = {
      domain: 'terminal',
      context: ep.systemPrompt,
      history: turn.history,
      action: 'pwd',
      prediction: observation,
      reference: real.observation,
      spans: real.spans,
    };
    const verdict = rubricJudge(input);
    expect(j).toEqual({
      scores: verdict.scores,
      total: verdict.total,
      verified: verify(input).pass,
      reward: reward(verdict.scores, verify(input).pass).reward,
    });
    model.close();
  });

  it('a missing path is a BackendError naming it', async () => {
    await expect(openModel('/no/such/model.safetensors')).rejects.toThrow('/no/such/model.safetensors: no such file or folder');
  });
});

describe('the browser entry', () => {
  it('opens what the page holds, and names what it was not given', async () => {
    const source = browserSource({ checkpoints: { a: new Uint8Array([1, 2]) } });
    expect(await source.checkpoint({ key: 'a' })).toEqual(new Uint8Array([1, 2]));
    await expect(source.checkpoint({ key: 'b' })).rejects.toThrow("no checkpoint 'b' was given to browserSource");
    await expect(source.folder({ folderId: 'f', name: 'f' }, 'hf')).rejects.toThrow("no folder 'f' was given to browserSource");
    const model = await openInPage({ kind: 'copy-last' });
    expect((await model.observe({ domain: 'os', systemPrompt: '', history: [{ action: 'a', observation: 'b' }], action: 'c' })).observation).toBe('b');
    model.close();
  });
});
