import { describe, expect, it } from 'vitest';
import { jsonSyntaxError, positionAt } from './jsonLocate.ts';

describe('jsonSyntaxError', () => {
  it('is null for valid JSON', () => expect(jsonSyntaxError('{"a": [1, true, null, "x"]}')).toBeNull());
  it('finds a stray closing brace', () => expect(jsonSyntaxError('{"a":1}}')?.offset).toBe(7));
  it('finds a misspelt literal that JSON.parse does not place', () => {
    const text = '{\n  "a": tru\n}';
    const e = jsonSyntaxError(text)!;
    expect(positionAt(text, e.offset)).toEqual({ line: 2, column: 11 });
  });
  it('points at the end of truncated input', () => expect(jsonSyntaxError('[1, 2')?.offset).toBeGreaterThanOrEqual(5));
});
