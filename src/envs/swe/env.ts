// The swe environment: a small repository in the Mini language with one seeded bug, and
// view / search / str_replace / create / run_tests actions. run_tests parses and runs the
// current files, so its outcome depends on exactly what the agent edited.
import { formatCall, parseCall } from '../action.ts';
import { PlanAgent, RandomAgent, type Agent, type AgentKind, type PlanStep } from '../agent.ts';
import { FakeClock } from '../clock.ts';
import { Rng } from '../../core/random.ts';
import { SpanText } from '../spans.ts';
import type { Environment, EnvReset, StepResult } from '../types.ts';
import { MiniError, parseProgram, runTest, type TestCase } from './mini.ts';

const MATH = `// Small numeric helpers.

fn abs(x) {
  if (x < 0) {
    return -x;
  }
  return x;
}

fn max(a, b) {
  if (a > b) {
    return a;
  }
  return b;
}

fn clamp(x, lo, hi) {
  if (x < lo) {
    return lo;
  }
  if (x > hi) {
    return hi;
  }
  return x;
}

fn sum_to(n) {
  let total = 0;
  let i = 1;
  while (i <= n) {
    total = total + i;
    i = i + 1;
  }
  return total;
}

fn fact(n) {
  let r = 1;
  while (n > 1) {
    r = r * n;
    n = n - 1;
  }
  return r;
}
`;

const TEXT = `// String helpers.

fn repeat(s, n) {
  let out = "";
  let i = 0;
  while (i < n) {
    out = out + s;
    i = i + 1;
  }
  return out;
}

fn is_even(n) {
  return n % 2 == 0;
}

fn pad_left(s, width) {
  let out = s;
  while (len(out) < width) {
    out = " " + out;
  }
  return out;
}
`;

const TESTS = `test "abs of a negative number" {
  assert_eq(abs(-4), 4);
}

test "max picks the larger" {
  assert_eq(max(3, 9), 9);
  assert_eq(max(9, 3), 9);
}

test "clamp keeps values in range" {
  assert_eq(clamp(15, 0, 10), 10);
  assert_eq(clamp(-2, 0, 10), 0);
}

test "sum_to adds 1..n" {
  assert_eq(sum_to(10), 55);
}

test "fact of 5" {
  assert_eq(fact(5), 120);
}

test "repeat a string" {
  assert_eq(repeat("ab", 3), "ababab");
}

test "is_even" {
  assert(is_even(4));
  assert(!is_even(7));
}

test "pad_left" {
  assert_eq(pad_left("7", 3), "  7");
}
`;

/** Seeded bugs: the correct text and the broken one, in one file. */
const BUGS: { file: string; right: string; wrong: string; hint: string }[] = [
  { file: 'src/math.mini', right: '  while (i <= n) {', wrong: '  while (i < n) {', hint: 'sum_to(10) returns the wrong total' },
  { file: 'src/math.mini', right: '  if (a > b) {\n    return a;', wrong: '  if (a < b) {\n    return a;', hint: 'max() returns the smaller number' },
  { file: 'src/math.mini', right: '  if (x > hi) {\n    return hi;', wrong: '  if (x > hi) {\n    return lo;', hint: 'clamp() is wrong above the range' },
  { file: 'src/math.mini', right: '    r = r * n;', wrong: '    r = r + n;', hint: 'fact(5) is not 120' },
  { file: 'src/math.mini', right: '    return -x;', wrong: '    return x;', hint: 'abs() of a negative number stays negative' },
  { file: 'src/text.mini', right: '  return n % 2 == 0;', wrong: '  return n % 2 == 1;', hint: 'is_even() answers the opposite' },
  { file: 'src/text.mini', right: '    out = out + s;', wrong: '    out = s;', hint: 'repeat() returns the string only once' },
  { file: 'src/text.mini', right: '    out = " " + out;', wrong: '    out = out + " ";', hint: 'pad_left() pads on the wrong side' },
];

export class SweEnv implements Environment {
  readonly domain = 'swe' as const;
  private rng!: Rng;
  private clock!: FakeClock;
  files = new Map<string, string>();
  /** Files whose current content the agent has seen or written. */
  private known = new Set<string>();
  bug!: (typeof BUGS)[number];

  reset(seed: number): EnvReset {
    this.rng = new Rng(`swe:${seed}`);
    this.clock = new FakeClock(this.rng);
    this.bug = this.rng.pick(BUGS);
    const project = this.rng.pick(['numkit', 'minilib', 'toolbox', 'helpers']);
    this.files = new Map([
      ['README.md', `# ${project}\n\nHelpers written in Mini. Run the test suite with run_tests.\n`],
      ['src/math.mini', MATH],
      ['src/text.mini', TEXT],
      ['tests/all_test.mini', TESTS],
    ]);
    const f = this.bug.file;
    this.files.set(f, this.files.get(f)!.replace(this.bug.right, this.bug.wrong));
    this.known.clear();
    return {
      state: { project, files: [...this.files.keys()], bug: this.bug.hint },
      system_prompt: {
        task_description: `An agent fixes a bug in the ${project} repository (written in the Mini language). Issue: ${this.bug.hint}. The fix is done when run_tests passes.`,
        action_space:
          'view("path") shows a file with line numbers or lists a directory | search("text") lists matching lines in all files | str_replace("path", "old", "new") replaces one exact occurrence | create("path", "content") writes a new file | run_tests() runs every test block in tests/.',
        initial_state: `Repository files:\n${[...this.files.keys()].map((p) => '  ' + p).join('\n')}`,
        demonstrations:
          'Action: view("nope.mini")\nObservation:\nError: the path nope.mini does not exist.\n\nAction: str_replace("README.md", "Helpers", "Tools")\nObservation:\nThe file README.md has been edited.\n     3\tTools written in Mini. Run the test suite with run_tests.',
        simulation_instruction:
          'You are the repository and its tools. Print exactly what the tool prints: file listings with line numbers, search hits, edit confirmations, or the test runner report. No explanations.',
      },
    };
  }

  step(action: string): StepResult {
    this.clock.tick(this.rng, 2, 40);
    const st = new SpanText();
    const ok = this.run(action, st);
    return { observation: st.text, spans: st.spans, timestamp: this.clock.iso(), ok };
  }

  private content(path: string, text: string, st: SpanText) {
    st.add(text, this.known.has(path) ? 'deterministic' : 'pre_existing');
  }

  private run(action: string, st: SpanText): boolean {
    const p = parseCall(action);
    if ('error' in p) {
      st.det(`Error: ${p.error}`);
      return false;
    }
    const [a0, a1, a2] = p.args.map((x) => (typeof x === 'number' ? String(x) : x));
    const need = (n: number, sig: string) => {
      if (p.args.length < n) {
        st.det(`Error: usage: ${sig}`);
        return false;
      }
      return true;
    };
    switch (p.name) {
      case 'view': {
        const path = (a0 ?? '.').replace(/^\.\//, '').replace(/\/$/, '');
        const text = this.files.get(path);
        if (text !== undefined) {
          const lines = text.replace(/\n$/, '').split('\n');
          st.det(`Here is the result of running \`cat -n\` on ${path}:\n`);
          // Line numbers go with the content: how many lines an unseen file has is not known either.
          lines.forEach((l, i) => this.content(path, `${String(i + 1).padStart(6)}\t${l}${i < lines.length - 1 ? '\n' : ''}`, st));
          this.known.add(path);
          return true;
        }
        const under = [...this.files.keys()].filter((f) => path === '.' || path === '' || f.startsWith(path + '/')).sort();
        if (!under.length) {
          st.det(`Error: the path ${path} does not exist.`);
          return false;
        }
        st.det(`Files under ${path === '' ? '.' : path}:\n${under.join('\n')}`);
        return true;
      }
      case 'search': {
        if (!need(1, 'search("text")')) return false;
        const hits: [string, number, string][] = [];
        for (const [f, text] of [...this.files.entries()].sort())
          text.split('\n').forEach((l, i) => {
            if (l.includes(a0)) hits.push([f, i + 1, l]);
          });
        st.det(`${hits.length} match${hits.length === 1 ? '' : 'es'} for "${a0}"${hits.length ? ':' : '.'}`);
        for (const [f, n, l] of hits) {
          st.det(`\n${f}:${n}: `);
          this.content(f, l, st);
        }
        return true;
      }
      case 'str_replace': {
        if (!need(3, 'str_replace("path", "old", "new")')) return false;
        const text = this.files.get(a0);
        if (text === undefined) {
          st.det(`Error: the path ${a0} does not exist.`);
          return false;
        }
        const count = a1 === '' ? 0 : text.split(a1).length - 1;
        if (count === 0) {
          st.det(`No replacement was performed, old_str \`${a1}\` did not appear verbatim in ${a0}.`);
          return false;
        }
        if (count > 1) {
          st.det(`No replacement was performed. Multiple occurrences of old_str \`${a1}\` in ${a0}. Please ensure it is unique.`);
          return false;
        }
        const at = text.indexOf(a1);
        const next = text.slice(0, at) + a2 + text.slice(at + a1.length);
        this.files.set(a0, next);
        const first = text.slice(0, at).split('\n').length;
        const lines = next.split('\n');
        const from = Math.max(1, first - 1),
          to = Math.min(lines.length, first + a2.split('\n').length);
        st.det(`The file ${a0} has been edited.\n`);
        for (let n = from; n <= to; n++) this.content(a0, `${String(n).padStart(6)}\t${lines[n - 1]}${n < to ? '\n' : ''}`, st);
        return true;
      }
      case 'create': {
        if (!need(2, 'create("path", "content")')) return false;
        if (this.files.has(a0)) {
          st.det(`Error: file already exists at: ${a0}. Cannot overwrite files using command \`create\`.`);
          return false;
        }
        this.files.set(a0, a1.endsWith('\n') ? a1 : a1 + '\n');
        this.known.add(a0);
        st.det(`File created successfully at: ${a0}`);
        return true;
      }
      case 'run_tests':
        return this.runTests(st);
      default:
        st.det(`Error: unknown action '${p.name}'; use view, search, str_replace, create or run_tests`);
        return false;
    }
  }

  /** Parses every file and runs the tests; the report mirrors a typical test runner. */
  private runTests(st: SpanText): boolean {
    const fns = new Map();
    const tests: TestCase[] = [];
    for (const [path, text] of [...this.files.entries()].sort()) {
      if (!path.endsWith('.mini')) continue;
      try {
        const prog = parseProgram(text, path);
        for (const [k, v] of prog.fns) fns.set(k, v);
        tests.push(...prog.tests);
      } catch (e) {
        if (!(e instanceof MiniError)) throw e;
        st.det(`error: could not compile ${e.file}:${e.line}: ${e.message}\n\ntest result: FAILED. 0 passed; 0 failed; `);
        st.meta(`finished in ${this.rng.int(1, 9)}ms`);
        return false;
      }
    }
    st.det(`running ${tests.length} tests\n`);
    const failures: [string, string][] = [];
    for (const t of tests) {
      const f = runTest(fns, t);
      st.det(`test ${t.name} ... ${f ? 'FAILED' : 'ok'}\n`);
      if (f) failures.push([t.name, f]);
    }
    if (failures.length) st.det(`\nfailures:\n${failures.map(([n, m]) => `    ${n}: ${m}`).join('\n')}\n`);
    st.det(`\ntest result: ${failures.length ? 'FAILED' : 'ok'}. ${tests.length - failures.length} passed; ${failures.length} failed; `);
    st.meta(`finished in ${this.rng.int(2, 40)}ms`);
    return failures.length === 0;
  }
}

export function sweAgent(env: SweEnv, rng: Rng, kind: AgentKind): Agent {
  const b = env.bug;
  if (kind === 'random') {
    return new RandomAgent(rng.int(3, 9), () => {
      switch (rng.int(0, 6)) {
        case 0:
          return formatCall('view', rng.pick(['src/math.mini', 'src/text.mini', 'tests/all_test.mini', 'README.md', 'src', 'lib/util.mini']));
        case 1:
          return formatCall('search', rng.pick(['fn ', 'return', 'while', 'assert_eq', 'TODO']));
        case 2:
          return formatCall('run_tests');
        case 3:
          return formatCall('str_replace', 'src/math.mini', rng.pick(['return x;', 'let i = 0;', '  return b;']), '  return 0;');
        case 4:
          return formatCall('create', rng.pick(['notes.txt', 'README.md']), 'scratch');
        case 5:
          return formatCall('str_replace', 'src/text.mini', 'let', 'var');
        default:
          return rng.pick(['run_tests(', 'edit("src/math.mini")', 'view()']);
      }
    });
  }
  const steps: PlanStep[] = [formatCall('run_tests')];
  if (rng.chance(0.4)) steps.push(formatCall('view', 'src'));
  if (rng.chance(0.5)) steps.push(formatCall('search', b.wrong.trim().split('\n')[0]));
  steps.push(formatCall('view', b.file));
  if (rng.chance(0.25)) steps.push(formatCall('str_replace', b.file, b.right.replace(/^ +/, '  '), b.wrong));
  steps.push(formatCall('str_replace', b.file, b.wrong, b.right));
  steps.push(formatCall('run_tests'));
  return new PlanAgent(steps);
}

export function sweKnowledge(): string {
  return `MINI LANGUAGE REFERENCE

A Mini file holds functions and tests. Comments start with //.
  fn name(a, b) { ... }      declares a function
  test "name" { ... }        declares a test, run by run_tests
Statements end with ';': let x = expr; (new variable), x = expr; (assignment to a declared variable), return expr;, if (cond) { ... } else { ... }, while (cond) { ... }.
Values: integers (/ truncates toward zero), strings in double quotes, true, false. Operators by precedence: || ; && ; == != ; < <= > >= ; + - (+ joins strings) ; * / %. Unary - and !.
Built-ins: assert_eq(left, right) fails with "assert_eq failed: left L, right R (file:line)"; assert(cond) fails with "assert failed"; len(s); str(x).
Errors: "undefined function 'f'", "undefined variable 'x'", "f() takes N arguments, got M", "division by zero", "step budget exceeded (infinite loop?)"; a syntax error stops the run with "error: could not compile FILE:LINE: MESSAGE".

TEST RUNNER
run_tests() compiles every .mini file, then prints "running N tests", one line "test NAME ... ok" or "test NAME ... FAILED" per test in file order, a "failures:" section with one "    NAME: MESSAGE" line per failure, and "test result: ok. P passed; F failed; finished in Tms" (FAILED when any test failed).

TOOLS
view(path) prints "Here is the result of running \`cat -n\` on PATH:" and the numbered lines (number right-aligned in six columns, then a tab); for a directory, the files under it. search(text) prints "N matches for "TEXT":" and FILE:LINE: text lines. str_replace(path, old, new) needs exactly one occurrence of old and prints the edited lines with numbers; otherwise "No replacement was performed, ...". create(path, content) refuses existing files.

THE REPOSITORY
src/math.mini:
${MATH}
src/text.mini:
${TEXT}
tests/all_test.mini:
${TESTS}`;
}
