import { describe, expect, it } from 'vitest';
import { DEPTH_MESSAGE, LIMITS, RECORD_SIZE_MESSAGE, scanRecord, sizeText } from './limits.ts';
import { schemaErrors, validateTrajectory } from './schema/validate.ts';
import { importAll, importText } from './formats/import.ts';
import { readLines } from './formats/lines.ts';
import { emptySystemPrompt, type Trajectory } from './schema/types.ts';

/** `levels` arrays inside each other: `[[...[]...]]`. */
function nested(levels: number): unknown {
  let v: unknown = [];
  for (let i = 1; i < levels; i++) v = [v];
  return v;
}
const trajectory = (extra: Partial<Trajectory> = {}): Trajectory => ({
  id: 't',
  domain: 'os',
  system_prompt: emptySystemPrompt(),
  turns: [{ action: 'ls', observation: 'a' }],
  ...extra,
});

describe('scanRecord', () => {
  it('accepts exactly LIMITS.depth levels and names the first array past them', () => {
    // The record is level 1, metadata level 2, so x may hold depth - 2 levels.
    expect(scanRecord({ metadata: { x: nested(LIMITS.depth - 2) } }).limit).toBeUndefined();
    const r = scanRecord({ metadata: { x: nested(LIMITS.depth - 1) } });
    expect(r.limit).toEqual({ pointer: '/metadata/x' + '/0'.repeat(LIMITS.depth - 2), message: DEPTH_MESSAGE });
  });

  it('scans a million levels without recursion', () => {
    expect(scanRecord(nested(1_000_000)).limit?.message).toBe(DEPTH_MESSAGE);
  });

  it('counts the text of a record, keys included, and stops past LIMITS.recordChars', () => {
    const half = 'x'.repeat(LIMITS.recordChars / 2);
    expect(scanRecord({ a: half }).limit).toBeUndefined();
    expect(scanRecord({ a: half, b: [half] })).toEqual({ limit: { pointer: '/b/0', message: RECORD_SIZE_MESSAGE }, nonFinite: [] });
    expect(scanRecord({ [half]: 1, [half + 'y']: 2 }).limit).toEqual({ pointer: '', message: RECORD_SIZE_MESSAGE });
  });

  it("counts a trajectory's source records from themselves (one record, or AgentWorldBench's list)", () => {
    const deepest = { x: nested(LIMITS.depth - 1) }; // exactly LIMITS.depth levels
    expect(scanRecord(deepest).limit).toBeUndefined();
    expect(scanRecord(trajectory({ source: { format: 'openai', raw: deepest } }), { trajectory: true }).limit).toBeUndefined();
    expect(scanRecord(trajectory({ source: { format: 'agentworldbench', raw: [deepest, deepest] } }), { trajectory: true }).limit).toBeUndefined();
    // Without the trajectory option, or one level more, it is too deep.
    expect(scanRecord(trajectory({ source: { format: 'openai', raw: deepest } })).limit?.pointer).toMatch(/^\/source\/raw\/x/);
    expect(scanRecord(trajectory({ source: { format: 'openai', raw: { y: deepest } } }), { trajectory: true }).limit?.pointer).toMatch(/^\/source\/raw\/y\/x/);
    // Each record's size is its own.
    const half = 'x'.repeat(LIMITS.recordChars / 2 + 10);
    expect(scanRecord(trajectory({ source: { format: 'agentworldbench', raw: [{ a: half }, { a: half }] } }), { trajectory: true }).limit).toBeUndefined();
    expect(scanRecord(trajectory({ source: { format: 'agentworldbench', raw: [{ a: half, b: half }] } }), { trajectory: true }).limit?.pointer).toBe(
      '/source/raw/0/b',
    );
  });

  it('lists non-finite numbers in document order', () => {
    expect(scanRecord({ a: [1, Infinity, { b: -Infinity }], c: NaN }).nonFinite).toEqual(['/a/1', '/a/2/b', '/c']);
  });

  it('every schema checks the limits first', () => {
    for (const kind of ['trajectory', 'agentworldbench', 'openai', 'sharegpt', 'agentinstruct'] as const) {
      expect(schemaErrors(kind, { metadata: nested(LIMITS.depth) })).toEqual([
        { pointer: '/metadata' + '/0'.repeat(LIMITS.depth - 1), message: DEPTH_MESSAGE },
      ]);
    }
  });

  it('a trajectory holds at most LIMITS.turns turns', () => {
    const turns = Array.from({ length: LIMITS.turns }, () => ({ action: 'a', observation: 'b' }));
    expect(validateTrajectory(trajectory({ turns }))).toEqual([]);
    expect(validateTrajectory(trajectory({ turns: [...turns, turns[0]] }))).toEqual([
      { pointer: '/turns', message: `${LIMITS.turns + 1} turns; a trajectory holds at most ${LIMITS.turns} (split it)` },
    ]);
  });

  it('sizeText', () => {
    expect(sizeText(LIMITS.recordChars)).toBe('64 MiB');
    expect(sizeText(3.9e9, false)).toBe('3.9 GB');
    expect(sizeText(12)).toBe('12 bytes');
  });
});

describe('line length', () => {
  const good = JSON.stringify(trajectory());
  const long = JSON.stringify(trajectory({ id: 'long', metadata: { pad: 'x'.repeat(5000) } }));

  it('a line longer than the limit is an error at its line, is not held, and the next lines import', async () => {
    const text = `${good}\n${long}\n${good.replace('"t"', '"u"')}\n${long}`;
    for (const chunk of [7, 100, 1 << 16]) {
      const bytes = new TextEncoder().encode(text);
      const parts: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += chunk) parts.push(bytes.subarray(i, i + chunk));
      const strings: string[] = [];
      for (let i = 0; i < text.length; i += chunk) strings.push(text.slice(i, i + chunk));
      for (const source of [parts, strings]) {
        const r = await importAll(source, { maxLineBytes: 1000, file: 'f.jsonl' });
        expect(r.trajectories.map((t) => t.id)).toEqual(['t', 'u']);
        expect(r.errors).toEqual(
          [2, 4].map((line) => ({ file: 'f.jsonl', line, pointer: '', message: 'line longer than 1000 bytes, the most one line may hold; it is left out' })),
        );
      }
    }
  });

  it('readLines counts the bytes of a skipped line', async () => {
    const lines = [];
    for await (const l of readLines(['ab', 'cdef', 'g\nhi\n', 'x'.repeat(9), '\n'], 4)) lines.push(l);
    expect(lines).toEqual([
      { text: null, tooLong: true, line: 1, consumed: 8 },
      { text: 'hi', line: 2, consumed: 11 },
      { text: null, tooLong: true, line: 3, consumed: 21 },
    ]);
  });

  it('the default limits are LIMITS.lineBytes and LIMITS.documentChars', async () => {
    const r = await importText(`[\n${good},\n${long}\n]`, { maxDocumentChars: 100 });
    expect(r.errors[0].message).toBe('JSON document larger than 100 characters; write it as JSONL (one record per line) to stream it');
    expect(LIMITS.documentChars).toBeLessThan(2 ** 29 - 24); // V8's longest string: a document must fit in one
  });
});
