// Property-based fuzzing of the CLI's argument handling, in process: generated argument vectors
// for the data commands end with exit 0, 1 or 2 and a message, never an exception (which `lwm`
// would print as an internal error), and leave Object.prototype as it was.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from './main.ts';
import { captureIO } from './testing.ts';

const fx = (name: string) => fileURLToPath(new URL(`../core/formats/fixtures/${name}`, import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'lwm-argv-'));
const judged = join(tmp, 'judged.jsonl');
writeFileSync(
  judged,
  JSON.stringify({
    task: 'terminal',
    id: 'a',
    turn_idx: 1,
    prompt: ['ls'],
    response: ['x'],
    gen: 'x',
    format: 4,
    factuality: 4,
    consistency: 4,
    realism: 4,
    quality: 4,
    total_score: 4,
    failed: false,
  }) + '\n',
);

const COMMANDS = ['validate', 'convert', 'expand', 'mask', 'score', 'agree', 'gen', 'judge', 'bogus', '', '--help'];
const FILES = [
  fx('native/trajectories.jsonl'),
  fx('openai/tool_calls.jsonl'),
  fx('agentworldbench/terminal_test.jsonl'),
  fx('native/malformed.jsonl'),
  judged,
  join(tmp, 'missing.jsonl'),
  tmp,
  '-',
  '',
];
const FLAGS = [
  '--format',
  '--to',
  '--kind',
  '--seed',
  '--domain',
  '--json',
  '--eval-fraction',
  '--config',
  '--set',
  '--n',
  '--judge',
  '--official',
  '-o',
  '--help',
  '--bogus',
  '-x',
  '--',
  '--format=auto',
  '--seed=',
  '--to=native',
];
const VALUES = [
  '',
  'native',
  'agentworldbench',
  'openai',
  'trl',
  'verl',
  'rl',
  'multiturn',
  'sft',
  'auto',
  'terminal',
  '__proto__',
  'constructor',
  '0',
  '-1',
  '1e9',
  '0.5',
  '2',
  'NaN',
  'abc',
  'local',
  'echo=2',
  'ratios.echo=0.5',
  '\u001b[2J',
  join(tmp, 'out.jsonl'),
  join(tmp, 'nodir', 'out.jsonl'),
];
const argv = fc
  .tuple(fc.constantFrom(...COMMANDS), fc.array(fc.oneof(fc.constantFrom(...FILES), fc.constantFrom(...FLAGS), fc.constantFrom(...VALUES)), { maxLength: 6 }))
  .map(([c, rest]) => (c ? [c, ...rest] : rest));

describe('CLI argument vectors, property fuzzing', () => {
  it('end with an exit status of 0, 1 or 2, never an exception', async () => {
    const before = Object.getOwnPropertyNames(Object.prototype).join();
    let inputs = 0;
    await fc.assert(
      fc.asyncProperty(argv, async (args) => {
        const io = captureIO();
        const code = await main(args, io);
        expect([0, 1, 2]).toContain(code);
        if (code !== 0) expect(io.stderr + io.stdout).not.toBe(''); // a failure says why
        inputs++;
      }),
      { numRuns: 300, seed: 31 },
    );
    expect(Object.getOwnPropertyNames(Object.prototype).join()).toBe(before);
    console.log(`CLI fuzzing: ${inputs} argument vectors`);
  });
});
