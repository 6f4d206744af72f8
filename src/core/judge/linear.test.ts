// Judge text handling is linear on hostile text: each input below took tens of seconds (or
// minutes) with the old quadratic regexes (`\{\{[^}]*\}\}`, `\s+$`, `[.:\-/]+$`,
// `<choice>\s*\**\s*`, `["'*_]*format`); here they finish inside the default test timeout.
import { describe, expect, it } from 'vitest';
import { extractPrediction } from './extract.ts';
import { parseChoice } from './pairwise.ts';
import { parseVerdict } from './parse.ts';
import { PLACEHOLDER, valueTokens } from './rubricText.ts';

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
});
