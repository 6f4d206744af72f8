import { describe, expect, it } from 'vitest';
import { checkSpanTiling } from '../spans.ts';
import { globMatcher, LIMITS } from './fs.ts';
import { TerminalEnv } from './index.ts';

function fresh(seed = 1) {
  const env = new TerminalEnv();
  const r = env.reset(seed);
  return { env, r, prompt: env.shell.prompt() };
}
/** The command output without the trailing prompt line. */
function out(env: TerminalEnv, cmd: string): string {
  const r = env.step(cmd);
  expect(checkSpanTiling(r.observation, r.spans)).toBeNull();
  const p = env.shell.prompt();
  expect(r.observation.endsWith(p)).toBe(true);
  return r.observation.slice(0, r.observation.length - p.length);
}

describe('terminal environment', () => {
  it('echo into a file, then cat prints it back, all deterministic', () => {
    const { env } = fresh();
    expect(out(env, 'echo hi > a.txt')).toBe('');
    const r = env.step('cat a.txt');
    expect(r.observation).toBe(`hi\n${env.shell.prompt()}`);
    expect(r.spans).toEqual([{ start: 0, end: r.observation.length, kind: 'deterministic' }]);
    expect(out(env, 'echo there >> a.txt')).toBe('');
    expect(out(env, 'cat a.txt')).toBe('hi\nthere\n');
  });

  it('gives the real errors and exit codes', () => {
    const { env } = fresh();
    const r = env.step('cat missing');
    expect(r.observation.split('\n')[0]).toBe('cat: missing: No such file or directory');
    expect(r.ok).toBe(false);
    expect(out(env, 'echo $?')).toBe('1\n');
    expect(out(env, 'frobnicate --now')).toBe('bash: frobnicate: command not found\n');
    expect(out(env, 'echo $?')).toBe('127\n');
    expect(out(env, 'ls nowhere')).toBe("ls: cannot access 'nowhere': No such file or directory\n");
    expect(out(env, 'echo $?')).toBe('2\n');
    expect(out(env, 'cd nowhere')).toBe('bash: cd: nowhere: No such file or directory\n');
    expect(out(env, 'mkdir a/b')).toBe('mkdir: cannot create directory ‘a/b’: No such file or directory\n');
    expect(out(env, 'rm nothing')).toBe("rm: cannot remove 'nothing': No such file or directory\n");
    expect(out(env, 'ls -z')).toBe("ls: invalid option -- 'z'\nTry 'ls --help' for more information.\n");
    expect(out(env, 'echo "open')).toBe('bash: unexpected EOF while looking for matching `"\'\n');
  });

  it('cd changes the prompt and pwd', () => {
    const { env, prompt } = fresh(2);
    const { user, host, project, home } = env.state;
    expect(prompt).toBe(`${user}@${host}:~$`);
    const r = env.step(`cd ${project}/logs`);
    expect(r.observation).toBe(`${user}@${host}:~/${project}/logs$`);
    expect(out(env, 'pwd')).toBe(`${home}/${project}/logs\n`);
    expect(out(env, 'cd /tmp && pwd')).toBe('/tmp\n');
    expect(env.shell.prompt()).toBe(`${user}@${host}:/tmp$`);
    expect(out(env, 'cd')).toBe('');
    expect(env.shell.prompt()).toBe(`${user}@${host}:~$`);
  });

  it('pipes, sort, uniq, wc, grep -n, head/tail', () => {
    const { env } = fresh(3);
    out(env, 'mkdir -p w/x && cd w/x');
    out(env, 'echo pear > f; echo apple >> f; echo pear >> f; echo fig >> f');
    expect(out(env, 'sort f | uniq')).toBe('apple\nfig\npear\n');
    expect(out(env, 'sort f | uniq -c')).toBe('      1 apple\n      1 fig\n      2 pear\n');
    expect(out(env, 'cat f | wc -l')).toBe('4\n');
    expect(out(env, 'wc -l f')).toBe('4 f\n');
    expect(out(env, 'grep -n pear f')).toBe('1:pear\n3:pear\n');
    expect(out(env, 'head -n 2 f | tail -n 1')).toBe('apple\n');
    expect(out(env, 'grep -c pear f')).toBe('2\n');
    expect(out(env, 'grep zzz f || echo none')).toBe('none\n');
    expect(out(env, 'ls')).toBe('f\n');
    expect(out(env, 'cp f g && mv g h && ls')).toBe('f  h\n');
    expect(out(env, 'rm f h && ls -a')).toBe('.  ..\n');
    expect(out(env, 'export GREETING=hello && echo "$GREETING world"')).toBe('hello world\n');
    expect(out(env, 'history | tail -n 1')).toBe('   15  history | tail -n 1\n');
  });

  it('labels unseen file contents pre_existing, then deterministic once shown', () => {
    const { env } = fresh(4);
    const p = env.state.project;
    const first = env.step(`cat ${p}/notes.txt`);
    expect(first.spans[0].kind).toBe('pre_existing');
    const again = env.step(`cat ${p}/notes.txt`);
    expect(again.spans).toEqual([{ start: 0, end: again.observation.length, kind: 'deterministic' }]);
  });

  it('ls -l sizes and dates are runtime metadata, names are not', () => {
    const { env } = fresh(5);
    env.step(`cd ${env.state.project}`);
    const r = env.step('ls -l');
    expect(checkSpanTiling(r.observation, r.spans)).toBeNull();
    const kinds = new Set(r.spans.map((s) => s.kind));
    expect(kinds.has('runtime_metadata')).toBe(true);
    expect(kinds.has('deterministic')).toBe(true);
    const readme = r.observation.split('\n').find((l) => l.endsWith(' README.md'))!;
    const u = env.state.user;
    expect(readme).toMatch(new RegExp(`^-rw-r--r-- 1 ${u} ${u} +\\d+ [A-Z][a-z]{2} [ \\d]\\d \\d\\d:\\d\\d README\\.md$`));
  });

  it('find, glob and errors in redirections', () => {
    const { env } = fresh(6);
    const p = env.state.project;
    expect(out(env, `find ${p} -name "*.py"`)).toBe(`${p}/src/main.py\n${p}/src/utils.py\n`);
    expect(out(env, `ls ${p}/src/*.py`)).toBe(`${p}/src/main.py  ${p}/src/utils.py\n`);
    expect(out(env, 'echo x > nodir/y')).toBe('bash: nodir/y: No such file or directory\n');
  });

  it('is byte-identical for the same seed and actions', () => {
    const run = () => {
      const { env } = fresh(9);
      return ['ls -l', 'date', 'ps', `cat ${env.state.project}/logs/app.log`].map((a) => JSON.stringify(env.step(a)));
    };
    expect(run()).toEqual(run());
  });

  it('globs in O(pattern × name) steps: 50,000 stars match, 30 stars do not blow up', () => {
    const { env } = fresh(6);
    const p = env.state.project;
    expect(out(env, `ls ${p}/src/${'*'.repeat(50_000)}.py`)).toBe(`${p}/src/main.py  ${p}/src/utils.py\n`);
    expect(out(env, `find ${p} -name "${'*'.repeat(50_000)}.PY"`)).toBe('');
    expect(out(env, `find ${p} -iname "${'*'.repeat(50_000)}.PY"`)).toBe(`${p}/src/main.py\n${p}/src/utils.py\n`);
    const name = 'a'.repeat(40);
    const m = globMatcher(`${'*a'.repeat(30)}b`);
    expect(m.test(name)).toBe(false);
    expect(m.steps).toBeLessThanOrEqual((name.length + 1) * 62);
    expect(globMatcher('[!a-c]?x*').test('dyx')).toBe(true);
    expect(globMatcher('[!a-c]?x*').test('byx')).toBe(false);
    expect(globMatcher('[abc]*').test('c.txt')).toBe(true);
    expect(globMatcher('a[').test('a[')).toBe(true);
    expect(globMatcher('*').test('a/b')).toBe(false);
  });

  it('files stop growing at the size limit with "File too large"', () => {
    const { env } = fresh();
    out(env, 'echo 0123456789 > a');
    let last = '';
    let rounds = 0;
    while (!last.includes('File too large') && rounds < 40) {
      last = out(env, 'cat a a > b') + out(env, 'cat b b > a');
      rounds++;
    }
    expect(last).toMatch(/^cat: write error: File too large\n/);
    expect(rounds).toBeLessThanOrEqual(10);
    const n = env.shell.fs.get(env.shell.abs('a'));
    expect(n?.type === 'file' && n.content.length).toBeLessThanOrEqual(LIMITS.fileBytes);
    expect(out(env, 'cat a a a a | wc -l').split('\n')[0]).toBe('cat: write error: File too large');
  });

  it('doubling a file past the size limit reads no more than each step writes (work O(output))', () => {
    const { env } = fresh();
    const shell = env.shell;
    let read = 0;
    const readOperand = shell.readOperand.bind(shell);
    shell.readOperand = (p, maxBytes) => {
      const r = readOperand(p, maxBytes);
      if (typeof r !== 'string') read += r.length;
      return r;
    };
    const lines = (f: string) => {
      const n = shell.fs.get(shell.abs(f));
      return n?.type === 'file' ? n.known.length : 0;
    };
    out(env, `echo ${'x'.repeat(999)} > a`);
    let full = 0;
    for (let step = 0; step < 30; step++) {
      const [src, dst] = step % 2 ? ['b', 'a'] : ['a', 'b'];
      read = 0;
      const said = out(env, `cat ${src} ${src} > ${dst}`);
      // The output is cut at the limit; what is read past it is one line, never the whole operand.
      expect(read).toBeLessThanOrEqual(lines(dst) + 1);
      if (said.includes('File too large')) full++;
    }
    expect(full).toBeGreaterThan(15);
    expect(lines('a') * 1000).toBeLessThanOrEqual(LIMITS.fileBytes);
  });

  it('paths past PATH_MAX give "File name too long"; mkdir -p is linear', () => {
    const { env } = fresh();
    const deep = 'a/'.repeat(20_000);
    expect(out(env, `mkdir -p ${deep}`)).toBe(`mkdir: cannot create directory ‘${deep}’: File name too long\n`);
    expect(out(env, `echo x > ${deep}f`)).toBe(`bash: ${deep}f: File name too long\n`);
    expect(out(env, `mkdir -p ${'b/'.repeat(1000)}`)).toBe('');
    expect(env.shell.fs.get(env.shell.abs('b/'.repeat(1000)))?.type).toBe('dir');
    expect(out(env, `mkdir ${'n'.repeat(256)}`)).toBe(`mkdir: cannot create directory ‘${'n'.repeat(256)}’: File name too long\n`);
  });

  it('an argument list past ARG_MAX gives "Argument list too long" (exit 126)', () => {
    const { env } = fresh();
    const arg = 'y'.repeat(1000);
    expect(out(env, `echo ${`${arg} `.repeat(2200)}`)).toBe('bash: echo: Argument list too long\n');
    expect(out(env, 'echo $?')).toBe('126\n');
    expect(out(env, `echo ${`${arg} `.repeat(3)}`)).toBe(`${arg} ${arg} ${arg}\n`);
  });
});
