// Judge text handling is linear on hostile text: each input below took tens of seconds (or
// minutes) with the old quadratic regexes (`\{\{[^}]*\}\}`, `\s+$`, `[.:\-/]+$`,
// `<choice>\s*\**\s*`, `["'*_]*format`); here they finish inside the default test timeout.
import { describe, expect, it } from 'vitest';
import { extractPrediction } from './extract.ts';
import { parseChoice } from './pairwise.ts';
import { parseVerdict } from './parse.ts';
import { rubricJudge } from './rubric.ts';
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
    const w = parseVerdict(`**format**:${" ".repeat(N)}4 factuality: 3 consistency: 4 realism: 5 quality: 2`);
    expect(w.ok && w.scores).toEqual({ format: 4, factuality: 3, consistency: 4, realism: 5, quality: 2 });
  });

  it('a prediction of JSON nested 100,000 deep is judged as text: low scores, not a failure', () => {
    const depth = 100_000;
    const deep = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const input = { domain: 'mcp', history: [], action: '{"name": "get_user", "arguments": {"user": "a"}}', prediction: deep, reference: '{"user": "a", "plan": "pro"}' };
    const v = rubricJudge(input);
    expect(v.failed).toBe(false);
    expect(v.scores.format).toBeLessThanOrEqual(2);
    expect(v.weaknesses).toContain('the real observation is JSON but the prediction does not parse as JSON (it nests deeper than 100 levels)');
    expect(v.total).toBeLessThan(3);
    expect(verify(input).pass).toBe(false);
    // Nested in a reference or an action's arguments, and as deep arrays, the same.
    const arrays = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    expect(rubricJudge({ ...input, reference: deep, prediction: '{"a": 1}' }).failed).toBe(false);
    expect(rubricJudge({ ...input, reference: `{"x": ${JSON.stringify(deep)}}`, prediction: arrays }).failed).toBe(false);
    expect(typeof verify({ ...input, action: `{"name": "f", "arguments": ${deep}}`, reference: deep }).pass).toBe('boolean');
  });
});
