import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compileGrep, MAX_STATES } from './regex.ts';
import { TerminalEnv } from './index.ts';

const grepE = (p: string, s: string, o = {}) => compileGrep(p, { extended: true, ...o }).test(s);
const grep = (p: string, s: string, o = {}) => compileGrep(p, o).test(s);

/** Extended regular expressions over {a, b} whose JavaScript reading is the same as POSIX's. */
const ere: fc.Arbitrary<string> = fc.letrec<{ re: string; atom: string }>((tie) => ({
  atom: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', 'b', '.', '[ab]', '[^a]', '^', '$'),
    tie('re').map((r) => `(${r})`),
  ),
  re: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tie('atom'),
    fc.tuple(tie('atom'), fc.constantFrom('*', '+', '?', '{2}', '{1,3}', '{0,}')).map(([a, q]) => (a === '^' || a === '$' ? a : a + q)),
    fc.tuple(tie('re'), tie('re')).map(([x, y]) => x + y),
    fc.tuple(tie('re'), tie('re')).map(([x, y]) => `${x}|${y}`),
  ),
})).re;

describe('grep regular expressions', () => {
  it('match what a backtracking engine matches, on generated patterns and lines (2,000 cases)', () => {
    fc.assert(
      fc.property(ere, fc.stringMatching(/^[abc]{0,12}$/), (pattern, line) => {
        expect(grepE(pattern, line)).toBe(new RegExp(pattern).test(line));
      }),
      { numRuns: 2000, seed: 15 },
    );
  });

  it('take linear steps where a RegExp backtracks exponentially', () => {
    const a = 'a'.repeat(10_000);
    for (const p of ['(a*)*b', '(a|a)*b', '(a|aa)+$x', '(.*a){20}b', '^(a+)+$b']) {
      const re = compileGrep(p, { extended: true });
      expect(re.test(a)).toBe(false);
      // At most every state at every position, twice (closure and step).
      expect(re.steps).toBeLessThan(2 * (p.length * 20 + 10) * (a.length + 1));
    }
  });

  it('read BRE and ERE as GNU grep does', () => {
    expect(grep('a+', 'aa')).toBe(false);
    expect(grep('a+', 'a+')).toBe(true);
    expect(grep('a\\+', 'aa')).toBe(true);
    expect(grep('x\\|y', 'y')).toBe(true);
    expect(grep('x|y', 'x|y')).toBe(true);
    expect(grep('\\(ab\\)\\{2\\}', 'abab')).toBe(true);
    expect(grep('\\(ab\\)\\{2\\}', 'ab')).toBe(false);
    expect(grep('a{2}', 'a{2}')).toBe(true);
    expect(grep('*a', 'x*a')).toBe(true);
    expect(grep('^*a', '*a')).toBe(true);
    expect(grep('a^b', 'a^b')).toBe(true);
    expect(grep('a$b', 'a$b')).toBe(true);
    expect(grepE('a{,2}c', 'c')).toBe(true);
    expect(grepE('[[:digit:]]+x', 'ab12x')).toBe(true);
    expect(grepE('[]a]', ']')).toBe(true);
    expect(grepE('[a-c]', 'b')).toBe(true);
    expect(grepE('\\bfoo\\b', 'a foo.')).toBe(true);
    expect(grepE('\\<foo\\>', 'afoo')).toBe(false);
    expect(grepE('\\w+\\s\\S', 'é x')).toBe(true);
    expect(grepE('ERROR', 'an error', { ignoreCase: true })).toBe(true);
    expect(grepE('foo', 'food', { word: true })).toBe(false);
    expect(grepE('foo', 'a foo b', { word: true })).toBe(true);
    expect(grepE('😀.b', '😀xb')).toBe(true);
  });

  it("refuse what they cannot match with grep's messages", () => {
    const err = (p: string, extended = true) => {
      try {
        compileGrep(p, { extended });
        return '';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(err('(a')).toBe('Unmatched ( or \\(');
    expect(err('\\(a', false)).toBe('Unmatched ( or \\(');
    expect(err('(a', false)).toBe('');
    expect(err('a)')).toBe('Unmatched ) or \\)');
    expect(err('[ab')).toBe('Unmatched [, [^, [:, [., or [=');
    expect(err('[[:nope:]]')).toBe('Invalid character class name');
    expect(err('a{3,1}')).toBe('Invalid content of \\{\\}');
    expect(err('a{99999}')).toBe('Invalid content of \\{\\}');
    expect(err('a\\')).toBe('Trailing backslash');
    expect(err('[z-a]')).toBe('Invalid range end');
    expect(err('(a)\\1')).toBe('back-references are not supported (patterns are matched in linear time)');
    expect(err('((a{100}){100}){100}')).toBe('Regular expression too big');
    expect(err('a'.repeat(MAX_STATES + 1))).toBe('Regular expression too big');
    expect(err('*'.repeat(50_000))).toBe('');
  });

  it('stop at the step budget', () => {
    const re = compileGrep('(a|b|c|d|e)*x', { extended: true, budget: 1000 });
    expect(() => re.test('abcde'.repeat(1000))).toThrow('memory exhausted');
  });
});

describe('grep in the terminal environment', () => {
  it('runs a catastrophic pattern on a long line in linear time, and refuses a huge one', () => {
    const env = new TerminalEnv();
    env.reset(1);
    env.step(`echo ${'a'.repeat(30_000)} > f`);
    const t0 = performance.now();
    const r = env.step("grep -E '(a*)*b' f; echo status $?");
    expect(r.observation).toMatch(/^status 1\n/);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(env.step("grep -E '((a{100}){100}){100}' f; echo status $?").observation).toMatch(/^grep: Regular expression too big\nstatus 2\n/);
    expect(env.step("grep '\\(' f; echo status $?").observation).toMatch(/^grep: Unmatched \( or \\\(\nstatus 2\n/);
    expect(env.step("grep -c 'a\\{3\\}' f").observation).toMatch(/^1\n/);
  });
});

describe('repetitions of repetitions', () => {
  it('fold into one without changing what matches', () => {
    for (const [p, yes, no] of [
      ['(a+){3,}', 'aaa', 'aa'],
      ['(a*)+x', 'x', 'y'],
      ['(a+)*x', 'x', 'y'],
      ['(a?)*x', 'aax', 'b'],
    ] as const) {
      expect([grepE(p, yes), grepE(p, no)]).toEqual([true, false]);
    }
  });
});
