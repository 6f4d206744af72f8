import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../chat.ts';
import { createLlmJudge } from './llm.ts';
import { judgeSystemPrompt, judgeUserPrompt, clip } from './prompt.ts';
import type { JudgeInput } from './types.ts';

const INPUT: JudgeInput = {
  domain: 'terminal',
  context: 'You simulate a Linux shell.',
  history: [{ action: 'pwd', observation: '/home/user' }],
  action: 'ls',
  prediction: 'notes.txt',
  reference: 'notes.txt\nsrc',
  spans: [{ start: 0, end: 9, kind: 'pre_existing' }],
};
const GOOD =
  '<verdict>{"scores": {"format": 5, "factuality": 3, "consistency": 5, "realism": 5, "quality": 4}, "strengths": ["format"], "weaknesses": ["missing src"]}</verdict>';

describe('judge prompt', () => {
  it('covers the dimensions, the content classes, the anchors and the domain', () => {
    const sys = judgeSystemPrompt('terminal');
    for (const word of [
      'format',
      'factuality',
      'consistency',
      'realism',
      'quality',
      'deterministic',
      'pre-existing',
      'runtime metadata',
      '5 = ',
      '1 = ',
      '<verdict>',
      'Linux shell',
    ])
      expect(sys).toContain(word);
    expect(judgeSystemPrompt('unknown-domain')).not.toContain('Domain:');
  });
  it('shows history, action, both observations and the span classes', () => {
    const user = judgeUserPrompt(INPUT);
    expect(user).toContain('### Turn 1\n**Action:**\npwd');
    expect(user).toContain('<simulated>\nnotes.txt\n</simulated>');
    expect(user).toContain('<real>\nnotes.txt\nsrc\n</real>');
    expect(user).toContain('- pre_existing: "notes.txt"');
  });
  it('clips long text in the middle', () => {
    const c = clip('a'.repeat(500) + 'b'.repeat(500), 200);
    expect(c.length).toBeLessThan(260);
    expect(c.startsWith('aaa')).toBe(true);
    expect(c.endsWith('bbb')).toBe(true);
  });
});

describe('LLM judge', () => {
  it('parses the reply into a verdict', async () => {
    const seen: ChatMessage[][] = [];
    const judge = createLlmJudge({ name: 'j', complete: async (m) => (seen.push(m), GOOD) });
    const v = await judge.judge(INPUT);
    expect(v).toMatchObject({ failed: false, scores: { factuality: 3 }, total: 4.4, weaknesses: ['missing src'] });
    expect(seen[0][0].role).toBe('system');
    expect(seen[0][1].content).toContain('Current action');
  });
  it('retries an unparseable reply, then succeeds; at the public temperature by default, 0.7 on retries from 0', async () => {
    const temps: number[] = [];
    const tokens: number[] = [];
    let replies = ['I think it is fine.', GOOD];
    const judge = createLlmJudge({ name: 'j', complete: async (_m, o) => (temps.push(o.temperature), tokens.push(o.maxTokens), replies.shift()!) });
    expect((await judge.judge(INPUT)).failed).toBe(false);
    expect(temps).toEqual([0.6, 0.6]);
    expect(tokens).toEqual([32768, 32768]);
    temps.length = 0;
    replies = ['I think it is fine.', GOOD];
    const cold = createLlmJudge({ name: 'j', temperature: 0, maxTokens: 100, complete: async (_m, o) => (temps.push(o.temperature), replies.shift()!) });
    expect((await cold.judge(INPUT)).failed).toBe(false);
    expect(temps).toEqual([0, 0.7]);
  });
  it('uses a given system prompt for its domain and ours for the others', async () => {
    const seen: ChatMessage[][] = [];
    const judge = createLlmJudge({ name: 'j', systemPrompts: { terminal: 'PUBLIC PROMPT' }, complete: async (m) => (seen.push(m), GOOD) });
    await judge.judge(INPUT);
    await judge.judge({ ...INPUT, domain: 'os' });
    expect(seen[0][0].content).toBe('PUBLIC PROMPT');
    expect(seen[1][0].content).toBe(judgeSystemPrompt('os'));
  });
  it('scores a verdict missing a dimension on the other four', async () => {
    const judge = createLlmJudge({
      name: 'j',
      complete: async () => '<final_evaluation>{"scores": {"format": 4, "factuality": 0, "consistency": 3, "realism": 4, "quality": 4}}</final_evaluation>',
    });
    expect(await judge.judge(INPUT)).toMatchObject({ failed: false, scores: { factuality: 0 }, total: 3.75 });
  });
  it('counts a sample as failed after the retries, never as a score', async () => {
    let calls = 0;
    const judge = createLlmJudge({ name: 'j', retries: 1, complete: async () => (calls++, 'no idea') });
    const v = await judge.judge(INPUT);
    expect(calls).toBe(2);
    expect(v.failed).toBe(true);
    expect(v.failed && v.error).toContain('no usable verdict after 2 attempts');
  });
  it('retries transient transport errors with one policy (Retry-After up to a cap), stops on refused requests, rethrows fatal ones', async () => {
    let n = 0;
    const pauses: number[] = [];
    const sleep = async (ms: number) => void pauses.push(ms);
    const flaky = createLlmJudge({
      name: 'j',
      sleep,
      complete: async () => {
        if (n++ === 0) throw new Error('timeout');
        return GOOD;
      },
    });
    expect((await flaky.judge(INPUT)).failed).toBe(false);
    expect(pauses).toEqual([1000]);
    pauses.length = 0;
    let calls = 0;
    const limited = createLlmJudge({
      name: 'j',
      retries: 3,
      sleep,
      maxRetryAfterMs: 20_000,
      complete: async () => {
        calls++;
        throw Object.assign(new Error('429'), { retryable: true, retryAfterMs: 45_000 });
      },
    });
    const v = await limited.judge(INPUT);
    expect(v.failed && v.error).toContain('no usable verdict after 4 attempts (429)');
    expect([calls, pauses]).toEqual([4, [20_000, 20_000, 20_000]]);
    calls = 0;
    const refusedRequest = createLlmJudge({
      name: 'j',
      sleep,
      complete: async () => {
        calls++;
        throw Object.assign(new Error('HTTP 400'), { retryable: false });
      },
    });
    expect(await refusedRequest.judge(INPUT)).toMatchObject({ failed: true, error: 'j: no usable verdict after 1 attempt (HTTP 400)' });
    expect(calls).toBe(1);
    const refused = createLlmJudge({
      name: 'j',
      complete: async () => {
        throw Object.assign(new Error('401'), { fatal: true });
      },
    });
    await expect(refused.judge(INPUT)).rejects.toThrow('401');
  });
});
