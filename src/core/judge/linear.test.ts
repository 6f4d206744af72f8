// Judge text handling is linear on hostile text: each input below took tens of seconds (or
// minutes) with the old quadratic regexes (`\{\{[^}]*\}\}`, `\s+$`, `[.:\-/]+$`,
// `<choice>\s*\**\s*`, `["'*_]*format`); here they finish inside the default test timeout.
import { describe, expect, it } from 'vitest';
import { extractPrediction } from './extract.ts';
import { parseChoice } from './pairwise.ts';
import { parseVerdict } from './parse.ts';
import { JUDGE_TEXT_CHARS, rubricJudge, rubricJudgeDetailed } from './rubric.ts';
import { PLACEHOLDER, valueTokens } from './rubricText.ts';
import { verify } from './verifier.ts';

const N = 200_000;

describe('judge text handling on hostile input', () => {
  it('placeholder detection', () => {
    expect(PLACEHOLDER.test('{{'.repeat(N))).toBe(false);
    expect(PLACEHOLDER.test('[insert'.repeat(N))).toBe(false);
    expect(PLACEHOLDER.test('<output'.repeat(N))).toBe(false);
    expect(PLACEHOLDER.test(`${'{{'.repeat(N)}name}}`)).toBe(true);
    expect(PLACEHOLDER.test('Hello {{user_name}}!')).toBe(true);
    expect(PLACEHOLDER.test('see [insert table here]')).toBe(true);
  });

  it('value tokens with long punctuation runs', () => {
    const tok = `a${'.'.repeat(N)}b`;
    expect([...valueTokens(`${tok} ${'.'.repeat(N)}`)]).toEqual([[tok, 1]]);
    expect([...valueTokens('v1.2.3... x')]).toEqual([['v1.2.3', 1]]);
  });

  it('pairwise choice and trailing whitespace', () => {
    expect(parseChoice(`<choice>${' '.repeat(N)}`)).toBeNull();
    expect(parseChoice(`<choice>${' '.repeat(N)}** B</choice>`)).toBe('B');
    expect(extractPrediction(`x${' '.repeat(N)}y`)).toBe(`x${' '.repeat(N)}y`);
  });

  it('score patterns with long runs of stars and spaces', () => {
    const v = parseVerdict(`${'*'.repeat(N)}format:${' '.repeat(N)}x`);
    expect(v.ok).toBe(false);
    expect(parseVerdict(`\`\`\`json${' '.repeat(N)}${'a'.repeat(N)}`).ok).toBe(false);
    const fenced = parseVerdict('```json\n{"format": 4, "factuality": 3, "consistency": 4, "realism": 5, "quality": 2}\n```');
    expect(fenced.ok && fenced.via).toBe('fence');
    const w = parseVerdict(`**format**:${' '.repeat(N)}4 factuality: 3 consistency: 4 realism: 5 quality: 2`);
    expect(w.ok && w.scores).toEqual({ format: 4, factuality: 3, consistency: 4, realism: 5, quality: 2 });
  });

  it('a prediction of JSON nested 40,000 or 100,000 deep is judged as text: low scores, not a failure', () => {
    const nest = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const deep = nest(40_000);
    const depth = 100_000;
    const input = {
      domain: 'mcp',
      history: [],
      action: '{"name": "get_user", "arguments": {"user": "a"}}',
      prediction: deep,
      reference: '{"user": "a", "plan": "pro"}',
    };
    const v = rubricJudge(input);
    expect(v.failed).toBe(false);
    expect(v.scores.format).toBeLessThanOrEqual(2);
    expect(v.weaknesses).toContain('the real observation is JSON but the prediction does not parse as JSON (it nests deeper than 100 levels)');
    expect(v.total).toBeLessThan(3);
    expect(verify(input).pass).toBe(false);
    // Nested in a reference or an action's arguments, and as deep arrays, the same.
    const arrays = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    expect(rubricJudge({ ...input, prediction: nest(depth) }).failed).toBe(false);
    expect(rubricJudge({ ...input, reference: deep, prediction: '{"a": 1}' }).failed).toBe(false);
    expect(rubricJudge({ ...input, reference: `{"x": ${JSON.stringify(deep)}}`, prediction: arrays }).failed).toBe(false);
    expect(typeof verify({ ...input, action: `{"name": "f", "arguments": ${deep}}`, reference: deep }).pass).toBe('boolean');
  });

  it('texts past 256 KiB are compared by their first 256 Ki characters, and the verdict says so', () => {
    const cap = 256 * 1024;
    expect(JUDGE_TEXT_CHARS).toBe(cap);
    const words = ['alpha', 'beta', 'x1', 'y_2', '/usr/bin', 'v1.2', 'the', 'value', '42', 'error:'];
    const text = (n: number, seed: number) => {
      const out: string[] = [];
      for (let i = seed, len = 0; len < n; len += out[out.length - 1].length) {
        i = (i * 1103515245 + 12345) & 0x7fffffff;
        out.push(words[i % words.length] + (i % 7 === 0 ? '\n' : ' '));
      }
      return out.join('');
    };
    const ref = text(cap + 5000, 1);
    const pred = text(cap + 5000, 2);
    const input = { domain: 'terminal', history: [{ action: 'ls', observation: ref }], action: 'cat log', prediction: pred, reference: ref };
    const d = rubricJudgeDetailed(input);
    expect(d.verdict.failed).toBe(false);
    expect(d.features.truncated).toBe(1);
    expect(d.verdict.weaknesses).toContain(
      `compared on the first ${cap} characters of each text only (the prediction has ${pred.length}, the reference ${ref.length})`,
    );
    // Past the cap nothing counts: another tail gives the same scores.
    const other = rubricJudgeDetailed({ ...input, prediction: pred.slice(0, cap) + 'a different tail '.repeat(500) });
    expect(other.verdict.scores).toEqual(d.verdict.scores);
    expect(rubricJudgeDetailed({ ...input, prediction: pred.slice(0, 1000), reference: ref.slice(0, 1000), history: [] }).features.truncated).toBeUndefined();
  });
});
