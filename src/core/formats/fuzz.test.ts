// Throws thousands of random and mutated inputs at every importer and validator: nothing may
// throw, hang, or let an invalid trajectory through.
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importAll, importText } from './import.ts';
import { FORMAT_NAMES, type FormatName } from './types.ts';
import { exportAgentWorldBench } from './export.ts';
import { schemaErrors, validateTrajectory, type RecordSchemaName } from '../schema/validate.ts';
import { lineOfPointer } from '../schema/locate.ts';
import { seededRandom } from '../random.ts';
import { categorizeDataset, turnMetrics } from '../masking/index.ts';
import { emptySystemPrompt, type Trajectory } from '../schema/types.ts';

const root = fileURLToPath(new URL('./fixtures/', import.meta.url));
const walk = (d: string): string[] => readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : [join(d, f)]));
const seeds = walk(root).map((f) => readFileSync(f));

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const JUNK = [
  '{',
  '}',
  '[',
  ']',
  '"',
  ',',
  ':',
  '\\',
  '\n',
  '\r\n',
  '\u0000',
  'null',
  'true',
  '-1e999',
  '"\\ud800"',
  '{"turns":',
  '"turn_idx":0',
  '🎉',
  '\ufeff',
];

function mutateBytes(r: Rand, input: Uint8Array): Uint8Array {
  const b = Array.from(input);
  const n = 1 + Math.floor(r() * 8);
  for (let i = 0; i < n; i++) {
    const pos = Math.floor(r() * (b.length + 1));
    switch (Math.floor(r() * 5)) {
      case 0:
        b[pos] = Math.floor(r() * 256);
        break; // flip a byte (may break UTF-8)
      case 1:
        b.splice(pos, Math.floor(r() * 20));
        break; // delete a run
      case 2:
        b.splice(pos, 0, ...new TextEncoder().encode(pick(r, JUNK)));
        break;
      case 3: {
        // duplicate a slice
        const from = Math.floor(r() * b.length);
        b.splice(pos, 0, ...b.slice(from, from + Math.floor(r() * 200)));
        break;
      }
      default:
        b.length = Math.min(b.length, pos); // truncate
    }
  }
  return Uint8Array.from(b);
}

/** Random JSON values, biased towards the shapes the importers look for. */
function randomValue(r: Rand, depth = 0): unknown {
  const k = Math.floor(r() * (depth > 3 ? 5 : 9));
  switch (k) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return pick(r, [0, 1, -1, 2.5, 1e308, 3]);
    case 3:
      return pick(r, ['', 'ls', 'human', 'gpt', 'tool', 'assistant', 'observation', '### Turn 1\n**Action:**\nx', 'x_t1']);
    case 4:
      return String.fromCodePoint(...Array.from({ length: Math.floor(r() * 10) }, () => Math.floor(r() * 0x10ffff) % 0xd800));
    case 5:
    case 6:
      return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
    default: {
      const keys = [
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
      ];
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(r() * 6); i > 0; i--) o[pick(r, keys)] = randomValue(r, depth + 1);
      return o;
    }
  }
}

async function importSafely(bytes: Uint8Array, format: FormatName | 'auto', chunk: number) {
  const parts: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += chunk) parts.push(bytes.subarray(i, i + chunk));
  const r = await importAll(parts, { format, file: 'fuzz.jsonl' });
  for (const t of r.trajectories) expect(validateTrajectory(t)).toEqual([]);
  for (const e of r.errors) {
    expect(typeof e.message).toBe('string');
    expect(e.line === undefined || (Number.isInteger(e.line) && e.line >= 1)).toBe(true);
  }
  return r;
}

describe('fuzz: importers', () => {
  it('survives byte-level mutations of every fixture, in every format, at any chunking', async () => {
    const r = seededRandom(2024);
    const formats: (FormatName | 'auto')[] = ['auto', ...FORMAT_NAMES];
    let runs = 0;
    // A hang would show as the test timing out; tests do not assert on speed.
    for (let i = 0; i < 1000; i++) {
      const input = mutateBytes(r, pick(r, seeds));
      await importSafely(input, pick(r, formats), 1 + Math.floor(r() * 300));
      runs++;
    }
    expect(runs).toBe(1000);
  });

  it('survives random JSON records shaped like every format', async () => {
    const r = seededRandom(7);
    for (let i = 0; i < 1000; i++) {
      const lines = Array.from({ length: 1 + Math.floor(r() * 4) }, () => JSON.stringify(randomValue(r)));
      const text = r() < 0.2 ? `[\n${lines.join(',\n')}\n]` : lines.join('\n');
      await importSafely(new TextEncoder().encode(text), pick(r, ['auto', ...FORMAT_NAMES] as const), 64);
    }
  });

  it('imports random well-formed trajectories and round-trips them through AgentWorldBench', async () => {
    const r = seededRandom(11);
    const str = () =>
      String.fromCodePoint(...Array.from({ length: Math.floor(r() * 30) }, () => pick(r, [0x20 + Math.floor(r() * 95), 0x0a, 0xe9, 0x4e2d, 0x1f600])));
    for (let i = 0; i < 300; i++) {
      const t: Trajectory = {
        id: `t${i}${str().replace(/\s/g, '')}`,
        domain: pick(r, ['terminal', 'web', 'os']),
        system_prompt: { ...emptySystemPrompt(), task_description: str(), action_space: str() },
        turns: Array.from({ length: 1 + Math.floor(r() * 5) }, () => ({ action: str(), observation: str() })),
      };
      if (!t.id.trim() || /##|\*\*/.test(JSON.stringify(t))) continue;
      const back = await importText([...exportAgentWorldBench([t])].join('\n'), { keepRaw: false });
      expect(back.errors).toEqual([]);
      const { source: _s, ...rest } = back.trajectories[0];
      expect(rest).toEqual(t);
    }
  });
});

describe('fuzz: validators and metrics', () => {
  it('never throw on random values', () => {
    const r = seededRandom(5);
    const kinds: RecordSchemaName[] = ['trajectory', 'agentworldbench', 'openai', 'sharegpt', 'agentinstruct'];
    for (let i = 0; i < 3000; i++) {
      const v = randomValue(r);
      for (const k of kinds) expect(Array.isArray(schemaErrors(k, v))).toBe(true);
      expect(Array.isArray(validateTrajectory(v))).toBe(true);
      const text = JSON.stringify(v) ?? '';
      lineOfPointer(text.slice(0, Math.floor(r() * (text.length + 1))), '/0/turns/1');
      const m = turnMetrics(String(v), text);
      for (const x of Object.values(m)) expect(Number.isFinite(x)).toBe(true);
    }
    expect(categorizeDataset([])).toEqual([]);
  });
});
