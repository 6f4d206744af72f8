// Repository tasks: write a Mini function to a specification, or fix the seeded bug. Checks run
// the repository's own interpreter on the files as the agent left them.
import { formatCall } from '../action.ts';
import { MiniError, parseProgram, runTest, type TestCase } from '../swe/mini.ts';
import { SweEnv } from '../swe/index.ts';
import { fail, pass, plan, replaceGoal, str, WORDS } from './common.ts';
import type { DomainTasks, TaskFamily, Verdict } from './types.ts';

type F = TaskFamily<SweEnv>;
const TESTS_FILE = 'tests/all_test.mini';

/** Runs tests against functions parsed from sources; a compile error, a failing test or a runaway program is a failed check. */
function runAll(sources: [string, string][], tests: TestCase[]): Verdict {
  const fns = new Map();
  try {
    for (const [path, text] of sources) for (const [k, v] of parseProgram(text, path).fns) fns.set(k, v);
  } catch (e) {
    return fail(e instanceof MiniError ? `${e.file}:${e.line}: ${e.message}` : 'the sources do not compile');
  }
  for (const t of tests) {
    let f: string | null;
    try {
      f = runTest(fns, t);
    } catch {
      f = 'the program ran away (too deep)';
    }
    if (f) return fail(`test ${t.name} fails: ${f}`);
  }
  return pass(`${tests.length} test(s) pass`);
}

const OPS = [
  { word: 'times', op: '*', f: (x: number, k: number) => x * k },
  { word: 'plus', op: '+', f: (x: number, k: number) => x + k },
  { word: 'minus', op: '-', f: (x: number, k: number) => x - k },
] as const;
const INPUTS = [0, 1, 5, -3, 12];

const writeFunction: F = {
  name: 'write_function',
  level: 1,
  draw: (rng) => {
    const name = `${rng.pick(WORDS)}_${rng.pick(['value', 'score', 'step', 'level'])}`;
    const o = rng.pick(OPS);
    const k = rng.int(2, 19);
    const path = `src/${name}.mini`;
    return { goal: `create the file ${path} with a function ${name}(x) that returns x ${o.word} ${k}`, params: { name, path, op: o.op, k } };
  },
  check: (env, p) => {
    const text = env.files?.get(str(p, 'path'));
    if (text === undefined) return fail(`${str(p, 'path')} does not exist`);
    const o = OPS.find((x) => x.op === str(p, 'op'));
    if (!o || !str(p, 'name')) return fail('the task names no function');
    const asserts = INPUTS.map((x) => `  assert_eq(${str(p, 'name')}(${x}), ${o.f(x, Number(p.k))});`).join('\n');
    return runAll([[str(p, 'path'), text]], parseProgram(`test "spec" {\n${asserts}\n}\n`, 'spec').tests);
  },
  solver: (_env, p) => plan(formatCall('create', str(p, 'path'), `fn ${str(p, 'name')}(x) {\n  return x ${str(p, 'op')} ${str(p, 'k')};\n}\n`)),
  // view of the file the goal names: its numbered lines as the episode wrote them, or that it does not exist.
  probe: (p) => formatCall('view', str(p, 'path')),
  nearMisses: (p) => [
    () => plan(formatCall('create', str(p, 'path'), `fn ${str(p, 'name')}(x) {\n  return x ${str(p, 'op') === '*' ? '+' : '*'} ${str(p, 'k')};\n}\n`)),
    () => plan(formatCall('create', str(p, 'path'), `fn ${str(p, 'name')}(y) {\n  return x ${str(p, 'op')} ${str(p, 'k')};\n}\n`)),
    () => plan(formatCall('create', `src/other.mini`, `fn ${str(p, 'name')}(x) {\n  return x ${str(p, 'op')} ${str(p, 'k')};\n}\n`)),
  ],
};

// No probe: run_tests, the read that would show the fix, reports its own run time, which moves
// with the number of actions taken before it.
const fixBug: F = {
  name: 'fix_bug',
  level: 3,
  draw: (_rng, env) => ({ goal: `fix the bug behind this issue: ${env.bug.hint}; the test suite must pass with its tests unchanged`, params: {} }),
  check: (env, _p, start) => {
    const tests = start().files.get(TESTS_FILE) ?? '';
    const files = env.files ?? new Map<string, string>();
    if (files.get(TESTS_FILE) !== tests) return fail(`${TESTS_FILE} was changed`);
    const sources = [...files.entries()].filter(([path]) => path.endsWith('.mini') && !path.startsWith('tests/')).sort(([a], [b]) => (a < b ? -1 : 1));
    return runAll(sources, parseProgram(tests, TESTS_FILE).tests);
  },
  solver: (env) =>
    plan(
      formatCall('run_tests'),
      formatCall('view', env.bug.file),
      () => formatCall('str_replace', env.bug.file, env.bug.wrong, env.bug.right),
      formatCall('run_tests'),
    ),
  nearMisses: () => [
    () => plan(formatCall('run_tests')),
    (env) => plan(formatCall('view', env.bug.file), formatCall('str_replace', env.bug.file, env.bug.wrong, `${env.bug.wrong}\n  // fixed`)),
  ],
};

export const SWE_TASK_FAMILIES: F[] = [writeFunction, fixBug];

export const sweTasks: DomainTasks<SweEnv> = {
  create: () => new SweEnv(),
  families: SWE_TASK_FAMILIES,
  describe: (d, goal) =>
    replaceGoal(
      d,
      /fixes a bug in the ([^ ]+) repository \(written in the Mini language\)\. [\s\S]*$/,
      `works in the $1 repository (written in the Mini language). Its goal: ${goal}.`,
    ),
};
