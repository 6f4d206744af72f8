import { describe, expect, it } from 'vitest';
import { duplicateIdErrors, formatDataError, schemaErrors, validateTrajectory } from './validate.ts';
import { arrayElementLines, joinPointer, lineOfPointer } from './locate.ts';
import { emptySystemPrompt, type Trajectory } from './types.ts';

const good = (): Trajectory => ({
  id: 't1',
  domain: 'terminal',
  system_prompt: emptySystemPrompt(),
  turns: [
    { action: 'ls', observation: 'a.txt', metadata: { timestamp: '2025-03-03T10:12:41Z', spans: [{ start: 0, end: 5, kind: 'pre_existing' }], extra: 1 } },
  ],
});

describe('validateTrajectory', () => {
  it('accepts a well-formed trajectory, with free-form metadata', () => {
    expect(validateTrajectory(good())).toEqual([]);
  });

  it('names the pointer and what was expected for each problem', () => {
    const t = good() as unknown as Record<string, unknown>;
    delete t.domain;
    (t.turns as unknown[]).push({ action: 3, observation: 'x' });
    (t.system_prompt as Record<string, unknown>).text = 5;
    t.bogus = true;
    const errors = validateTrajectory(t);
    expect(errors).toContainEqual({ pointer: '/domain', message: 'missing required field' });
    expect(errors).toContainEqual({ pointer: '/turns/1/action', message: 'expected string, got number 3' });
    expect(errors).toContainEqual({ pointer: '/system_prompt/text', message: 'expected string, got number 5' });
    expect(errors.find((e) => e.pointer === '/bogus')?.message).toMatch(/unknown field/);
  });

  it('rejects bad span kinds, bad timestamps and overlong or overlapping spans', () => {
    const t = good();
    t.turns[0].metadata = {
      timestamp: 'yesterday',
      spans: [
        { start: 0, end: 3, kind: 'deterministic' },
        { start: 2, end: 9, kind: 'runtime_metadata' },
      ],
    };
    const errors = validateTrajectory(t);
    expect(errors.map((e) => e.pointer)).toEqual(['/turns/0/metadata/timestamp']);
    delete t.turns[0].metadata!.timestamp;
    const spanErrors = validateTrajectory(t);
    expect(spanErrors.map((e) => e.pointer)).toEqual(['/turns/0/metadata/spans/1/end']);
    t.turns[0].metadata!.spans = [
      { start: 0, end: 3, kind: 'deterministic' },
      { start: 2, end: 4, kind: 'deterministic' },
    ];
    expect(validateTrajectory(t)[0].message).toMatch(/sorted and not overlap/);
    t.turns[0].metadata!.spans = [{ start: 0, end: 3, kind: 'nonsense' as never }];
    expect(validateTrajectory(t)[0].message).toMatch(/expected one of "deterministic"/);
  });

  it('validates source records of each format', () => {
    expect(schemaErrors('agentworldbench', { id: 1, prompt: [], response: [], turn_idx: 1 })).toEqual([]);
    expect(schemaErrors('agentworldbench', { id: 1, prompt: [], response: [], turn_idx: 'one' })[0].pointer).toBe('/turn_idx');
    expect(schemaErrors('openai', { messages: [{ role: 'user', content: 7 }] })[0]).toEqual({
      pointer: '/messages/0/content',
      message: 'expected a string, null or an array of content parts, got number 7',
    });
  });

  it('formats errors as file:line: pointer: message', () => {
    expect(formatDataError({ file: 'a.jsonl', line: 3, pointer: '/turns/0', message: 'bad' })).toBe('a.jsonl:3: /turns/0: bad');
    expect(formatDataError({ pointer: '', message: 'bad' })).toBe('<input>: bad');
  });

  it('reports duplicate ids with where the first one was', () => {
    const errs = duplicateIdErrors([{ id: 'a', source: { file: 'f', line: 1 } }, { id: 'b' }, { id: 'a', source: { file: 'f', line: 9 } }]);
    expect(errs).toEqual([{ file: 'f', line: 9, pointer: '/id', message: 'duplicate trajectory id "a" (first seen at f:1)' }]);
  });
});

describe('locating pointers in JSON text', () => {
  const text = '[\n  {"a": 1},\n  {\n    "b": [\n      "x",\n      {"c~/d": 2}\n    ]\n  }\n]';
  it('finds the line of nested values, escaped keys and missing members', () => {
    expect(lineOfPointer(text, '/0/a')).toBe(2);
    expect(lineOfPointer(text, '/1/b/0')).toBe(5);
    expect(lineOfPointer(text, joinPointer('/1/b/1', 'c~/d'))).toBe(6);
    // A missing member resolves to its closest existing ancestor.
    expect(lineOfPointer(text, '/1/b/1/zzz')).toBe(6);
    expect(lineOfPointer('{"a": ', '/a/b')).toBe(1);
  });
  it('finds where each top-level array element starts, ignoring brackets inside strings', () => {
    expect(arrayElementLines(text)).toEqual([2, 3]);
    expect(arrayElementLines('[\n"[,]",\n\n{"x": "]"}\n]')).toEqual([2, 4]);
    expect(arrayElementLines('[]')).toEqual([]);
  });
});

describe('numbers that JSON cannot hold', () => {
  it('rejects a non-finite number in a typed field and in free-form metadata, at its pointer', () => {
    // What JSON.parse makes of 1e400 and -1e400: the output would carry null instead.
    const t = JSON.parse(JSON.stringify(good()).replace('"extra":1', '"extra":[1,{"deep":1e400}]').replace('"start":0', '"start":-1e400')) as Trajectory;
    const errors = validateTrajectory(t);
    expect(errors).toContainEqual({ pointer: '/turns/0/metadata/extra/1/deep', message: expect.stringMatching(/out of range/) });
    expect(errors).toContainEqual({ pointer: '/turns/0/metadata/spans/0/start', message: expect.stringMatching(/out of range/) });
    expect(schemaErrors('openai', JSON.parse('{"messages":[{"role":"user","content":"x"}],"weight":1e999}'))).toContainEqual({
      pointer: '/weight',
      message: expect.stringMatching(/out of range/),
    });
  });
});
