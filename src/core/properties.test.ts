// Property-based fuzzing (fast-check) of everything that reads user data: the JSONL reader, every
// importer, the validator and its limits, the AgentWorldBench record reader, the masking and its
// configuration file, the judge's verdict parsers, prediction extraction, the verifier and the
// rubric judge. Each property holds for every generated input:
//   - nothing throws but our typed errors (MaskConfigError for a bad mask file);
//   - every error says where (a line, a pointer);
//   - Object.prototype gains nothing, whatever keys the data holds (`__proto__`, `constructor`…);
//   - what is accepted is valid, and exports re-import equal (native and AgentWorldBench);
//   - scores stay in range.
// Seeds are fixed, so a failure reproduces; the suite prints how many inputs it generated.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { importAll, importText } from './formats/import.ts';
import { readLines } from './formats/lines.ts';
import { exportAgentWorldBench, exportNative } from './formats/export.ts';
import { FORMAT_NAMES } from './formats/types.ts';
import { schemaErrors, validateTrajectory, type RecordSchemaName } from './schema/validate.ts';
import { scanRecord } from './limits.ts';
import { readRecords } from './bench/records.ts';
import { categorizeDataset, MASK_CATEGORIES, MaskConfigError, parseMaskConfig, turnMetrics } from './masking/index.ts';
import { braceObjects, coerceScore, parseVerdict, repairJson } from './judge/parse.ts';
import { extractPrediction, stripThink } from './judge/extract.ts';
import { verify } from './judge/verifier.ts';
import { rubricJudge } from './judge/rubric.ts';
import { DIMENSIONS } from './judge/types.ts';
import { emptySystemPrompt, SYSTEM_PROMPT_FIELDS, type Trajectory } from './schema/types.ts';

let inputs = 0;
let properties = 0;
const PROPERTIES = 10;
/** Runs a property with a fixed seed and counts its inputs. */
function check<T>(arb: fc.Arbitrary<T>, numRuns: number, seed: number, body: (v: T) => void | Promise<void>, async = false) {
  properties++;
  // Counted once the input has run (an input a precondition skips is not counted).
  if (async) {
    return fc.assert(
      fc.asyncProperty(arb, async (v) => {
        await body(v);
        inputs++;
      }),
      { numRuns, seed },
    );
  }
  return fc.assert(
    fc.property(arb, (v) => {
      void body(v);
      inputs++;
    }),
    { numRuns, seed },
  );
}

const protoKeys = () => Object.getOwnPropertyNames(Object.prototype).sort().join(',');
const PROTO = protoKeys();
afterEach(() => {
  // Nothing the data said landed on Object.prototype.
  expect(protoKeys()).toBe(PROTO);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});
afterAll(() => {
  console.log(`property fuzzing: ${inputs} generated inputs`);
  if (properties === PROPERTIES) expect(inputs).toBeGreaterThanOrEqual(10_000); // the whole suite ran (no -t filter)
});

// ---- generators -------------------------------------------------------------------------------

/** Strings a hostile or broken file holds: markup, escapes, bidi and zero-width characters, surrogates. */
const HOSTILE = [
  '<script>alert(1)</script>',
  '\u202e',
  '\u200b',
  '\u001b[2J',
  '\u0000',
  '\ud800',
  '\udc00',
  '{{',
  '}}',
  '### Turn 1\n',
  '**Action:**',
  '\r\n',
  '"',
  '\\',
  '__proto__',
  'constructor',
  '🎉',
];
const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.array(fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ maxLength: 6 })), { maxLength: 6 }).map((xs) => xs.join('')) },
);
const KEYS = [
  'id',
  'domain',
  'turns',
  'system_prompt',
  'action',
  'observation',
  'metadata',
  'spans',
  'start',
  'end',
  'kind',
  'source',
  'raw',
  'prompt',
  'response',
  'turn_idx',
  'total_turns',
  'task',
  'system_str',
  'current_prompt',
  'messages',
  'role',
  'content',
  'tool_calls',
  'function',
  'name',
  'arguments',
  'conversations',
  'from',
  'value',
  'loss',
  'tools',
  'system',
  'gen',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
];
const ROLES = ['human', 'gpt', 'system', 'user', 'assistant', 'tool', 'function_call', 'observation', 'developer'];

/** A JSON text: an object tree built as entries, so `__proto__` stays an own key when parsed. */
type J = null | boolean | number | string | J[] | { entries: [string, J][] };
const jsonTree: fc.Arbitrary<J> = fc.letrec<{ v: J }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.constantFrom(0, 1, -1, 2, 3, 2.5, 1e308, 5, 6),
    fc.oneof(text, fc.constantFrom(...ROLES)),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.array(fc.tuple(fc.constantFrom(...KEYS), tie('v')), { maxLength: 6 }).map((entries) => ({ entries })),
  ),
})).v;
function toJson(v: J): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  // Generated trees hold entries; records from fc.record are plain objects.
  const entries = Array.isArray(v.entries) ? v.entries : (Object.entries(v) as [string, J][]);
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`).join(',')}}`;
}
/** Records shaped like each format, with hostile keys and values mixed in. */
const shapedRecord = fc.oneof(
  jsonTree,
  fc
    .record(
      {
        messages: fc.array(fc.record({ role: fc.constantFrom(...ROLES), content: fc.oneof(text, fc.constant(null)) }, { requiredKeys: ['role'] }), {
          maxLength: 6,
        }),
        tools: fc.option(jsonTree, { nil: undefined }),
      },
      { requiredKeys: ['messages'] },
    )
    .map((r) => ({ entries: Object.entries(r).filter(([, x]) => x !== undefined) as [string, J][] })),
  fc
    .record({
      conversations: fc.array(fc.record({ from: fc.constantFrom(...ROLES), value: text, loss: fc.option(fc.boolean()) }, { requiredKeys: ['from', 'value'] }), {
        maxLength: 6,
      }),
      id: fc.oneof(text, fc.constantFrom('__proto__', 'constructor')),
    })
    .map((r) => ({ entries: Object.entries(r) as [string, J][] })),
  fc
    .record({
      task: fc.constantFrom('terminal', 'agentworldbench/web', '__proto__'),
      id: fc.constantFrom('a_t1', 'a_t2', 'constructor_t1', 'toString'),
      turn_idx: fc.integer({ min: -1, max: 3 }),
      prompt: fc.array(text, { maxLength: 3 }),
      response: fc.array(text, { maxLength: 3 }),
      current_prompt: text,
      system_str: text,
    })
    .map((r) => ({ entries: Object.entries(r) as [string, J][] })),
  fc
    .record({
      id: fc.oneof(text, fc.constantFrom('__proto__', 'constructor', 'toString')),
      domain: fc.constantFrom('terminal', 'os', '__proto__', 'hasOwnProperty'),
      system_prompt: fc.constant({ entries: [] as [string, J][] }),
      turns: fc.array(
        fc.record({ action: text, observation: text }).map((t) => ({ entries: Object.entries(t) as [string, J][] })),
        { maxLength: 4 },
      ),
      metadata: jsonTree,
    })
    .map((r) => ({ entries: Object.entries(r) as [string, J][] })),
);

const trajectory: fc.Arbitrary<Trajectory> = fc
  .record({
    id: fc.oneof(fc.stringMatching(/^[\w.-]{1,12}$/), fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty')),
    domain: fc.constantFrom('terminal', 'web', 'os', 'mcp', 'constructor', '__proto__'),
    task: text,
    space: text,
    turns: fc.array(fc.record({ action: text, observation: text }), { minLength: 1, maxLength: 5 }),
  })
  .map(({ id, domain, task, space, turns }) => ({ id, domain, system_prompt: { ...emptySystemPrompt(), task_description: task, action_space: space }, turns }));

const chunked = (s: string, size: number) => {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
};

// ---- properties --------------------------------------------------------------------------------

describe('property fuzzing', () => {
  it('the JSONL reader: any bytes, any chunking, every line counted once', async () => {
    await check(
      fc.tuple(fc.uint8Array({ maxLength: 300 }), fc.integer({ min: 1, max: 64 }), fc.integer({ min: 4, max: 400 })),
      1500,
      1,
      async ([bytes, size, maxLine]) => {
        const parts: Uint8Array[] = [];
        for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
        let last = 0;
        let line = 0;
        for await (const l of readLines(parts, maxLine)) {
          expect(l.line).toBe(++line);
          expect(l.consumed).toBeGreaterThan(last - (l.utf16 ? 1 : 0));
          last = l.consumed;
          if (l.text !== null) expect(l.text.length).toBeLessThanOrEqual(maxLine);
        }
        expect(last).toBeLessThanOrEqual(bytes.length);
      },
      true,
    );
  });

  it('every importer: any record, hostile keys and values, any format, located errors and valid trajectories only', async () => {
    const formats = ['auto', ...FORMAT_NAMES] as const;
    await check(
      fc.tuple(fc.array(shapedRecord, { minLength: 1, maxLength: 4 }), fc.constantFrom(...formats), fc.boolean(), fc.integer({ min: 1, max: 200 })),
      2500,
      2,
      async ([records, format, asArray, size]) => {
        const lines = records.map(toJson);
        const body = asArray ? `[\n${lines.join(',\n')}\n]` : lines.join('\n');
        const r = await importAll(chunked(body, size), { format, file: 'fuzz.jsonl' });
        for (const t of r.trajectories) expect(validateTrajectory(t)).toEqual([]);
        for (const e of r.errors) {
          expect(e.file).toBe('fuzz.jsonl');
          expect(Number.isInteger(e.line) && e.line! >= 1 && e.line! <= body.split('\n').length).toBe(true);
          expect(e.pointer === '' || e.pointer.startsWith('/')).toBe(true);
        }
      },
      true,
    );
  });

  it('every importer: a value nested past the limit anywhere is one located error, at any depth up to 100,000', async () => {
    const formats = ['auto', ...FORMAT_NAMES] as const;
    await check(
      fc.tuple(shapedRecord, fc.constantFrom(101, 102, 1000, 100_000), fc.constantFrom(...KEYS), fc.constantFrom(...formats)),
      120,
      10,
      async ([record, depth, key, format]) => {
        const deep = '['.repeat(depth - 1) + ']'.repeat(depth - 1);
        const json = toJson(record);
        // Add the deep value as one more field of the record (or wrap a non-object in one).
        // Last, so that a key the record already has is this one (JSON.parse keeps the last).
        const line = json.startsWith('{') && json !== '{}' ? `${json.slice(0, -1)},${JSON.stringify(key)}:${deep}}` : `{${JSON.stringify(key)}:${deep}}`;
        const r = await importText(line, { format, file: 'deep.jsonl' });
        expect(r.trajectories).toEqual([]);
        expect(r.errors.length).toBeGreaterThan(0);
        if (r.format)
          expect(r.errors[0]).toMatchObject({ line: 1, message: expect.stringMatching(/^nested more than 100 levels deep|^cannot tell the format/) });
      },
      true,
    );
  });

  it('the validator and the limits: any JSON value, errors with pointers, never a throw', () => {
    const kinds: RecordSchemaName[] = ['trajectory', 'agentworldbench', 'openai', 'sharegpt', 'agentinstruct'];
    check(
      jsonTree.map((t) => JSON.parse(toJson(t)) as unknown),
      2500,
      3,
      (v) => {
        for (const k of kinds) for (const e of schemaErrors(k, v)) expect(e.pointer === '' || e.pointer.startsWith('/')).toBe(true);
        expect(Array.isArray(validateTrajectory(v))).toBe(true);
        expect(scanRecord(v, { trajectory: true }).limit).toBeUndefined();
      },
    );
  });

  it('the AgentWorldBench record reader (judge, score, agree): any text', () => {
    check(fc.array(fc.oneof(shapedRecord.map(toJson), text), { maxLength: 4 }), 1500, 4, (lines) => {
      for (const kind of ['sample', 'prediction', 'judged'] as const) {
        const r = readRecords(lines.join('\n'), 'f.jsonl', kind);
        expect(r.records.length + r.errors.length).toBeGreaterThanOrEqual(0);
        for (const e of r.errors) expect(e).toMatch(/^f\.jsonl:\d+: /);
      }
    });
  });

  it('native export re-imports equal', async () => {
    await check(
      fc.array(trajectory, { minLength: 1, maxLength: 3 }),
      700,
      5,
      async (ts) => {
        const unique = [...new Map(ts.map((t) => [t.id, t])).values()];
        const back = await importText([...exportNative(unique)].join('\n'), { keepRaw: false });
        expect(back.errors).toEqual([]);
        expect(back.trajectories.map(({ source: _s, ...t }) => t)).toEqual(unique);
      },
      true,
    );
  });

  it('AgentWorldBench export re-imports equal (text that does not itself look like its turn headers)', async () => {
    await check(
      trajectory,
      700,
      6,
      async (t) => {
        fc.pre(
          !/#|\*\*|^\s|\s$/.test(
            [t.system_prompt.task_description, t.system_prompt.action_space, ...t.turns.flatMap((x) => [x.action, x.observation])]
              .join('\u0001')
              .replace(/\u0001/g, 'x'),
          ),
        );
        const back = await importText([...exportAgentWorldBench([t])].join('\n'), { keepRaw: false });
        expect(back.errors).toEqual([]);
        const { source: _s, ...got } = back.trajectories[0];
        expect(got.turns).toEqual(t.turns);
        expect({ id: got.id, domain: got.domain }).toEqual({ id: t.id, domain: t.domain });
        for (const f of SYSTEM_PROMPT_FIELDS) expect(got.system_prompt[f]).toBe(t.system_prompt[f]);
      },
      true,
    );
  });

  it('masking: any trajectories get a category and a weight in [0, 1]; any mask file is a config or a MaskConfigError', () => {
    check(fc.tuple(fc.array(trajectory, { minLength: 1, maxLength: 3 }), jsonTree, text), 800, 7, ([ts, cfg, raw]) => {
      for (const m of categorizeDataset(ts)) {
        for (const turn of m.turns) {
          expect(MASK_CATEGORIES).toContain(turn.category);
          expect(turn.weight >= 0 && turn.weight <= 1).toBe(true);
        }
      }
      for (const x of Object.values(turnMetrics(ts[0].turns[0].action, ts[0].turns[0].observation))) expect(Number.isFinite(x)).toBe(true);
      for (const source of [toJson(cfg), raw, `{"format":"lwm-mask-config/1",${toJson(cfg).slice(1)}`]) {
        try {
          parseMaskConfig(source, 'mask.json');
        } catch (e) {
          expect(e).toBeInstanceOf(MaskConfigError);
          expect((e as Error).message).toMatch(/^mask\.json/);
        }
      }
    });
  });

  it('judge parsers: any reply gives a verdict or a failure, scores 1–5', () => {
    const verdictish = fc
      .array(
        fc.oneof(
          text,
          fc.constantFrom(
            '<verdict>',
            '</verdict>',
            '{',
            '}',
            '"format": 4',
            '"factuality": "5"',
            'scores',
            ':',
            ',',
            '```json',
            '```',
            '/10',
            '<think>',
            '</think>',
            "'",
            '//',
            'NaN',
            '1e400',
          ),
        ),
        { maxLength: 12 },
      )
      .map((xs) => xs.join(''));
    check(verdictish, 2500, 8, (reply) => {
      const v = parseVerdict(reply);
      if (v.ok) for (const d of DIMENSIONS) expect(v.scores[d] === 0 || (v.scores[d] >= 1 && v.scores[d] <= 5)).toBe(true);
      else expect(typeof v.error).toBe('string');
      for (const o of braceObjects(reply)) expect(typeof o).toBe('string');
      expect(typeof repairJson(reply)).toBe('string');
      const s = coerceScore(reply);
      expect(s === null || Number.isFinite(s)).toBe(true);
      expect(typeof extractPrediction(reply)).toBe('string');
      expect(typeof stripThink(reply, ['</s>'])).toBe('string');
    });
  });

  it('the verifier and the rubric judge: any turn, scores in range', () => {
    const turn = fc.record({
      domain: fc.constantFrom('terminal', 'web', 'os', 'mcp', 'search', 'swe', 'android', '__proto__'),
      history: fc.array(fc.record({ action: text, observation: text }), { maxLength: 2 }),
      action: text,
      prediction: text,
      reference: text,
    });
    check(turn, 600, 9, (input) => {
      const v = verify(input);
      expect(v).toBeTruthy();
      const r = rubricJudge(input);
      for (const d of DIMENSIONS) expect(r.scores[d] >= 1 && r.scores[d] <= 5).toBe(true);
      expect(r.total >= 1 && r.total <= 5).toBe(true);
    });
  });
});
