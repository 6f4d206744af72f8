// Property-based fuzzing of the built-in environments' step(): any action, hostile or shaped like
// the domain's own, yields an observation whose spans tile it, and never throws (the interface's
// promise), nor writes onto Object.prototype.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ENV_DOMAINS } from './registry.ts';
import { checkSpanTiling } from './spans.ts';
import type { KnownDomain } from '../core/schema/types.ts';

const PREFIXES = [
  '',
  'ls ',
  'cat ',
  'grep -E ',
  'grep ',
  'cd ',
  'echo ',
  'find . -name ',
  'mkdir -p ',
  'rm -rf ',
  'sort ',
  'click(',
  'type(',
  'goto(',
  'search(',
  'open(',
  'tap(',
  '{"method":"tools/call","params":',
  'edit ',
  'python ',
  '| ',
  '> ',
  '$(',
];
const PIECES = [
  '*',
  '**',
  '(a*)*b',
  '[',
  '\\',
  '"',
  "'",
  '`',
  '$HOME',
  '${X}',
  '&&',
  '||',
  ';',
  '|',
  '>',
  '>>',
  '<',
  '..',
  '/',
  '__proto__',
  'constructor',
  '\u0000',
  '\u001b[2J',
  '\u202e',
  '<script>',
  '{',
  '}',
  '\n',
  ' ',
  'a'.repeat(300),
];
const action = fc
  .tuple(fc.constantFrom(...PREFIXES), fc.array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ maxLength: 8 })), { maxLength: 8 }))
  .map(([p, xs]) => p + xs.join(''));

describe('environment step, property fuzzing', () => {
  it('a command line ending in a backslash runs (the tokenizer used to loop on it forever)', () => {
    const env = ENV_DOMAINS.terminal.create();
    env.reset(1);
    expect(env.step('echo a\\').observation).toMatch(/^a\\\n/);
    expect(env.step('type(\\').observation).toMatch(/^bash: type\(\\: command not found\n/);
  });

  it('commands named like Object.prototype keys are not found (constructor used to throw)', () => {
    const env = ENV_DOMAINS.terminal.create();
    env.reset(0);
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      expect(env.step(name).observation).toMatch(new RegExp(`^bash: ${name}: command not found\\n`));
    }
    expect(env.step("echo x | grep '[[:constructor:]]'; echo $?").observation).toMatch(/^grep: Invalid character class name\n2\n/);
  });

  it('any action in any domain: an observation with tiling spans, no throw, no prototype write', () => {
    const before = Object.getOwnPropertyNames(Object.prototype).join();
    const domains = Object.keys(ENV_DOMAINS) as KnownDomain[];
    let inputs = 0;
    fc.assert(
      fc.property(fc.constantFrom(...domains), fc.integer({ min: 0, max: 1000 }), fc.array(action, { minLength: 1, maxLength: 4 }), (domain, seed, actions) => {
        const env = ENV_DOMAINS[domain].create();
        env.reset(seed);
        for (const a of actions) {
          const r = env.step(a);
          expect(typeof r.observation).toBe('string');
          expect(checkSpanTiling(r.observation, r.spans)).toBeNull();
          inputs++;
        }
      }),
      { numRuns: 1000, seed: 21 },
    );
    expect(Object.getOwnPropertyNames(Object.prototype).join()).toBe(before);
    console.log(`environment fuzzing: ${inputs} actions`);
  });
});
