// Depth and size limits through the CLI: a record nested 100,000 levels deep in any field any
// importer keeps (OpenAI tools and tool-call arguments, ShareGPT tools, metadata, the extra keys
// of AgentInstruct and AgentWorldBench records, a prediction's own fields) is one located error
// in every data command, and the file's other records still go through.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../main.ts';
import { captureIO } from '../testing.ts';
import { LIMITS } from '../../core/limits.ts';

const fx = (name: string) => fileURLToPath(new URL(`../../core/formats/fixtures/${name}`, import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'lwm-limits-'));
async function run(...argv: string[]) {
  const io = captureIO();
  const code = await main(argv, io);
  return { code, out: io.stdout, err: io.stderr };
}

const DEEP = 100_000;
const deepArray = '['.repeat(DEEP) + ']'.repeat(DEEP);
const deepObject = '{"a":'.repeat(DEEP) + '{}' + '}'.repeat(DEEP);
/** Puts the deep JSON text where the string `"DEEP"` stands in `record`. */
const withDeep = (record: object, deep = deepArray) => JSON.stringify(record).replace('"DEEP"', deep);

const firstLine = (name: string) => readFileSync(fx(name), 'utf8').split('\n')[0];
const OPENAI_TURN = [
  { role: 'user', content: 'list files' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: 'DEEP' } }] },
  { role: 'tool', tool_call_id: 'c1', content: 'a.txt' },
];
const SHAREGPT_TURN = [
  { from: 'human', value: 'hi' },
  { from: 'gpt', value: 'ls' },
  { from: 'human', value: 'a.txt' },
];

/** One file per importer: a deep record on line 1, a good record of the same format on line 2. */
const CASES: { name: string; format: string; deep: string; good: string; pointer: RegExp }[] = [
  {
    name: 'openai tools',
    format: 'openai',
    deep: withDeep({ tools: 'DEEP', messages: OPENAI_TURN.map((m) => ({ ...m, tool_calls: undefined })) }),
    good: firstLine('openai/chat.jsonl'),
    pointer: /^\/tools(\/0)+$/,
  },
  {
    name: 'openai tool_calls arguments',
    format: 'openai',
    deep: withDeep({ messages: OPENAI_TURN }, deepObject),
    good: firstLine('openai/chat.jsonl'),
    pointer: /^\/messages\/1\/tool_calls\/0\/function\/arguments(\/a)+$/,
  },
  {
    name: 'sharegpt tools',
    format: 'sharegpt',
    deep: withDeep({ tools: 'DEEP', conversations: SHAREGPT_TURN }),
    good: firstLine('sharegpt/tools.jsonl'),
    pointer: /^\/tools(\/0)+$/,
  },
  {
    name: 'native metadata',
    format: 'native',
    deep: withDeep({ ...JSON.parse(firstLine('native/trajectories.jsonl')), id: 'deep', metadata: { x: 'DEEP' } }),
    good: firstLine('native/trajectories.jsonl'),
    pointer: /^\/metadata\/x(\/0)+$/,
  },
  {
    name: 'native turn metadata',
    format: 'native',
    deep: withDeep(
      {
        id: 'deep',
        domain: 'os',
        system_prompt: JSON.parse(firstLine('native/trajectories.jsonl')).system_prompt,
        turns: [{ action: 'a', observation: 'b', metadata: { x: 'DEEP' } }],
      },
      deepObject,
    ),
    good: firstLine('native/trajectories.jsonl'),
    pointer: /^\/turns\/0\/metadata\/x(\/a)+$/,
  },
  {
    name: 'agentinstruct extra key',
    format: 'agentinstruct',
    deep: withDeep({ id: 'deep', extra: 'DEEP', conversations: SHAREGPT_TURN }),
    good: firstLine('agentinstruct/agentinstruct.jsonl'),
    pointer: /^\/extra(\/0)+$/,
  },
  {
    name: 'agentworldbench extra key',
    format: 'agentworldbench',
    deep: withDeep({ ...JSON.parse(firstLine('agentworldbench/terminal_test.jsonl')), id: 'deep_t1', extra: 'DEEP' }),
    good: firstLine('agentworldbench/terminal_test.jsonl'),
    pointer: /^\/extra(\/0)+$/,
  },
];

/** The one error line the deep record gives: `file:1: /pointer: nested more than 100 levels deep…`. */
function expectDeepError(err: string, file: string, pointer: RegExp) {
  expect(err).not.toMatch(/internal error|RangeError|Maximum call stack/);
  const line = err.split('\n').find((l) => l.startsWith(`${file}:1: `));
  expect(line, err.slice(0, 500)).toBeDefined();
  const m = /^[^:]+:1: (\S+): nested more than 100 levels deep/.exec(line!);
  expect(m, line!.slice(0, 300)).not.toBeNull();
  expect(m![1]).toMatch(pointer);
  // The first array or object past the limit: the record is level 1, so its pointer has 100 tokens.
  expect(m![1].split('/').length - 1).toBe(LIMITS.depth);
}

describe('records nested 100,000 deep', () => {
  for (const c of CASES) {
    it(`${c.name}: one located error in validate, convert, expand and mask; the good record still goes through`, async () => {
      const f = join(tmp, `${c.name.replace(/\W+/g, '-')}.jsonl`);
      writeFileSync(f, `${c.deep}\n${c.good}\n`);
      const v = await run('validate', f, '--format', c.format, '--json');
      expect(v.code).toBe(1);
      expectDeepError(v.err, f, c.pointer);
      expect(JSON.parse(v.out)).toMatchObject({ trajectories: 1, errors: 1 });
      for (const to of ['native', 'agentworldbench', 'trl', 'verl']) {
        const r = await run('convert', f, '--format', c.format, '--to', to);
        expect(r.code).toBe(1);
        expectDeepError(r.err, f, c.pointer);
        expect(r.out.trim().split('\n').length).toBeGreaterThanOrEqual(1);
      }
      for (const cmd of ['expand', 'mask']) {
        const r = await run(cmd, f, '--format', c.format, '--json');
        expect(r.code).toBe(1);
        expectDeepError(r.err, f, c.pointer);
        expect(JSON.parse(r.out)).toBeTruthy();
      }
    });
  }
});

describe('prediction and judged records nested 100,000 deep', () => {
  const pred = { task: 'terminal', id: 'a', turn_idx: 1, prompt: ['ls'], response: ['a.txt'], gen: '<predicted_observation>a.txt</predicted_observation>' };
  it('lwm judge and lwm score report the record at its line', async () => {
    const f = join(tmp, 'pred.jsonl');
    writeFileSync(f, `${withDeep({ ...pred, extra: 'DEEP' })}\n${JSON.stringify({ ...pred, id: 'b' })}\n`);
    const out = join(tmp, 'judged.jsonl');
    const j = await run('judge', f, '--judge', 'local', '-o', out);
    expect(j.code).toBe(1);
    expect(j.err).toMatch(new RegExp(`^${f}:1: /extra(/0)+: nested more than 100 levels deep[^\n]*\n$`));
    writeFileSync(f, `${JSON.stringify({ ...pred, id: 'b' })}\n`);
    expect((await run('judge', f, '--judge', 'local', '-o', out)).code).toBe(0);
    const judged = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const g = join(tmp, 'judged-deep.jsonl');
    writeFileSync(g, `${withDeep({ ...judged[0], id: 'c', extra: 'DEEP' }, deepObject)}\n${JSON.stringify(judged[0])}\n`);
    const s = await run('score', g);
    expect(s.code).toBe(1);
    expect(s.err).toMatch(new RegExp(`${g}:1: /extra(/a)+: nested more than 100 levels deep`));
    expect(s.err).not.toMatch(/internal error|RangeError/);
  });
});

describe('turns per trajectory', () => {
  it(`a trajectory of more than ${LIMITS.turns} turns is an error at /turns, in every importer`, async () => {
    const base = JSON.parse(firstLine('native/trajectories.jsonl'));
    const turns = Array.from({ length: LIMITS.turns + 1 }, (_, i) => ({ action: `a${i}`, observation: `o${i}` }));
    const f = join(tmp, 'long.jsonl');
    writeFileSync(f, `${JSON.stringify({ ...base, id: 'long', turns })}\n${JSON.stringify({ ...base, id: 'ok', turns: turns.slice(0, LIMITS.turns) })}\n`);
    const v = await run('validate', f);
    expect(v.code).toBe(1);
    expect(v.err).toBe(`${f}:1: /turns: ${LIMITS.turns + 1} turns; a trajectory holds at most ${LIMITS.turns} (split it)\n`);
    const messages = turns.flatMap((t) => [
      { role: 'assistant', content: t.action },
      { role: 'user', content: t.observation },
    ]);
    const g = join(tmp, 'long-openai.jsonl');
    writeFileSync(g, `${JSON.stringify({ messages })}\n`);
    const o = await run('validate', g);
    expect(o.code).toBe(1);
    expect(o.err).toMatch(
      new RegExp(`^${g}:1: /turns: converted trajectory .* is invalid: ${LIMITS.turns + 1} turns; a trajectory holds at most ${LIMITS.turns}`),
    );
  });
});
