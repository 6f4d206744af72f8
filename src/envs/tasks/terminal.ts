// Terminal tasks: files, directories and text in the seeded project of the terminal environment.
// Goals name paths from the home directory (`~/...`), where the shell starts.
import type { Agent } from '../agent.ts';
import { splitLines, type FsNode } from '../terminal/fs.ts';
import { TerminalEnv } from '../terminal/index.ts';
import { fail, pass, plan, replaceGoal, str, WORDS } from './common.ts';
import type { DomainTasks, TaskFamily, TaskParams, Verdict } from './types.ts';

const FILES = ['note.txt', 'word.txt', 'answer.txt', 'result.txt', 'memo.txt', 'flag.txt', 'out.txt', 'label.txt', 'tag.txt', 'key.txt'];
const DIRS = ['backup', 'archive', 'export', 'staging', 'drafts', 'review', 'old', 'shared', 'tmpdir', 'vault'];
const VERBS = ['check', 'call', 'buy', 'fix', 'move', 'clean', 'paint', 'order', 'test', 'label'];
const LEVELS = ['ERROR', 'WARN', 'INFO'] as const;
const VARS = ['APP_ENV', 'APP_MODE', 'DEPLOY_TARGET', 'LOG_LEVEL', 'REGION'];

/** The node at an absolute path; none for the empty path of a missing parameter. */
const node = (env: TerminalEnv, abs: string): FsNode | undefined => (abs ? env.shell?.fs.get(abs) : undefined);
const fileText = (env: TerminalEnv, abs: string): string | undefined => {
  const n = node(env, abs);
  return n?.type === 'file' ? n.content : undefined;
};
/** The absolute path of a goal's `~/...` path. */
const abs = (p: TaskParams, rel: string) => (str(p, 'home') && rel ? `${str(p, 'home')}/${rel}` : '');
/** What a file held in the task's starting world. */
const original = (start: () => TerminalEnv, p: TaskParams, rel: string): string | undefined => fileText(start(), abs(p, rel));

/** The file holds exactly these lines (surrounding blanks of each line ignored). */
function holdsLines(env: TerminalEnv, p: TaskParams, rel: string, want: string[]): Verdict {
  const text = fileText(env, abs(p, rel));
  if (text === undefined) return fail(`~/${rel} is not a file`);
  const got = splitLines(text).map((l) => l.trim());
  while (got.length && got[got.length - 1] === '') got.pop();
  if (got.length === want.length && got.every((l, i) => l === want[i])) return pass(`~/${rel} holds the expected ${want.length} line(s)`);
  return fail(`~/${rel} holds ${JSON.stringify(got.slice(0, 4))}${got.length > 4 ? '…' : ''}, not ${JSON.stringify(want.slice(0, 4))}`);
}

/** The file's first word is this number (`wc -l` style output counts). */
function holdsNumber(env: TerminalEnv, p: TaskParams, rel: string, n: string): Verdict {
  const text = fileText(env, abs(p, rel));
  if (text === undefined) return fail(`~/${rel} is not a file`);
  const first = text.trim().split(/\s+/)[0] ?? '';
  return first === n ? pass(`~/${rel} starts with ${n}`) : fail(`~/${rel} starts with ${JSON.stringify(first)}, not ${n}`);
}

const actions =
  (...xs: string[]) =>
  (): Agent =>
    plan(...xs);

type F = TaskFamily<TerminalEnv>;

const writeWord: F = {
  name: 'write_word',
  level: 1,
  draw: (rng) => {
    const word = rng.pick(WORDS);
    const file = rng.pick(FILES);
    return { goal: `write the word ${word} into the file ~/${file}`, params: { word, file } };
  },
  check: (env, p) => holdsLines(env, p, str(p, 'file'), [str(p, 'word')]),
  solver: (_env, p) => plan(`echo ${str(p, 'word')} > ${str(p, 'file')}`),
  probe: (p) => `cat ${str(p, 'file')}`,
  nearMisses: (p) => {
    const other = WORDS[(WORDS.indexOf(str(p, 'word')) + 1) % WORDS.length];
    // Another of the files, which one varying with the word: every pairing of a goal's file with a
    // wrong one comes up across tasks (always the next file left the world model's reward for the
    // others unseen, and RL found them: docs/method.md §13).
    const otherFile = FILES[(FILES.indexOf(str(p, 'file')) + 1 + (WORDS.indexOf(str(p, 'word')) % (FILES.length - 1))) % FILES.length];
    return [
      actions(`echo ${other} > ${str(p, 'file')}`),
      actions(`echo ${str(p, 'word')} > ${otherFile}`),
      actions(`touch ${str(p, 'file')}`),
      // The word printed, not written: no redirect, or one cut short (a syntax error). A world
      // model that never saw them credited them as written (docs/method.md §13).
      actions(`echo ${str(p, 'word')}`),
      actions(`echo ${str(p, 'word')} >`),
    ];
  },
};

const makeDir: F = {
  name: 'make_dir',
  level: 1,
  draw: (rng, env) => {
    const dir = `${env.state.project}/${rng.pick(DIRS)}`;
    return { goal: `create the directory ~/${dir}`, params: { dir } };
  },
  check: (env, p) =>
    node(env, abs(p, str(p, 'dir')))?.type === 'dir' ? pass(`~/${str(p, 'dir')} is a directory`) : fail(`~/${str(p, 'dir')} is not a directory`),
  solver: (_env, p) => plan(`mkdir ${str(p, 'dir')}`),
  // cd into it: its prompt line shows the directory, or an error that it is none.
  probe: (p) => `cd ${str(p, 'dir')}`,
  nearMisses: (p) => [actions(`touch ${str(p, 'dir')}`), actions(`mkdir ${str(p, 'dir').split('/').pop()}`)],
};

// append_line, count_lines, sort_unique and grep_to_dir have no probe: `cat` of their file shows
// lines of the world's own files (the kept lines, the log's, the count of them), which the system
// prompt does not show. In a simulated episode the agent reads them from the world model, which
// makes them up, so its answer to the probe follows its own invention and matches the real answer
// key only by chance (docs/method.md §13).
const appendLine: F = {
  name: 'append_line',
  level: 1,
  draw: (rng, env) => {
    const line = `${rng.pick(VERBS)} the ${rng.pick(WORDS)}`;
    const file = `${env.state.project}/notes.txt`;
    return { goal: `add the line "${line}" at the end of ~/${file}, keeping the lines it has`, params: { line, file } };
  },
  check: (env, p, start) => {
    const before = original(start, p, str(p, 'file'));
    if (before === undefined) return fail(`~/${str(p, 'file')} did not exist at the start`);
    return holdsLines(env, p, str(p, 'file'), [...splitLines(before), str(p, 'line')]);
  },
  solver: (_env, p) => plan(`echo "${str(p, 'line')}" >> ${str(p, 'file')}`),
  nearMisses: (p) => [actions(`echo "${str(p, 'line')}" > ${str(p, 'file')}`), actions(`echo "${str(p, 'line')}" >> notes.txt`)],
};

const countLevel: F = {
  name: 'count_lines',
  level: 2,
  draw: (rng, env) => {
    const level = rng.pick(LEVELS);
    const log = `${env.state.project}/logs/app.log`;
    const text = fileText(env, `${env.state.home}/${log}`) ?? '';
    const count = splitLines(text).filter((l) => l.includes(level)).length;
    const out = `${env.state.project}/${rng.pick(FILES)}`;
    return {
      goal: `count the lines of ~/${log} that contain ${level} and write the number to ~/${out}`,
      params: { level, log, out, count: String(count) },
    };
  },
  check: (env, p) => holdsNumber(env, p, str(p, 'out'), str(p, 'count')),
  solver: (_env, p) => plan(`grep -c ${str(p, 'level')} ${str(p, 'log')}`, `grep -c ${str(p, 'level')} ${str(p, 'log')} > ${str(p, 'out')}`),
  nearMisses: (p) => [actions(`wc -l ${str(p, 'log')} > ${str(p, 'out')}`), actions(`grep ${str(p, 'level')} ${str(p, 'log')} > ${str(p, 'out')}`)],
};

const SOURCES = ['README.md', 'notes.txt', 'data/sales.csv', 'logs/app.log', 'src/main.py', 'src/utils.py'];

const copyFile: F = {
  name: 'copy_file',
  level: 2,
  draw: (rng, env) => {
    const src = `${env.state.project}/${rng.pick(SOURCES)}`;
    const dir = `${env.state.project}/${rng.pick(DIRS)}`;
    return { goal: `create the directory ~/${dir} and copy ~/${src} into it, keeping the original`, params: { src, dir } };
  },
  check: (env, p, start) => {
    const src = str(p, 'src');
    const copy = `${str(p, 'dir')}/${src.split('/').pop()}`;
    const want = original(start, p, src);
    if (want === undefined) return fail(`~/${src} did not exist at the start`);
    if (fileText(env, abs(p, src)) !== want) return fail(`~/${src} is gone or changed`);
    return fileText(env, abs(p, copy)) === want ? pass(`~/${copy} is a copy of ~/${src}`) : fail(`~/${copy} is not a copy of ~/${src}`);
  },
  solver: (_env, p) => plan(`mkdir ${str(p, 'dir')}`, `cp ${str(p, 'src')} ${str(p, 'dir')}/`),
  nearMisses: (p) => [actions(`cp ${str(p, 'src')} ${str(p, 'dir')}`), actions(`mkdir ${str(p, 'dir')}`, `mv ${str(p, 'src')} ${str(p, 'dir')}/`)],
};

const sortUnique: F = {
  name: 'sort_unique',
  level: 2,
  draw: (rng, env) => {
    const src = `${env.state.project}/notes.txt`;
    const out = `${env.state.project}/${rng.pick(FILES)}`;
    return { goal: `write the lines of ~/${src} sorted alphabetically, without duplicates, into ~/${out}`, params: { src, out } };
  },
  check: (env, p, start) => {
    const before = original(start, p, str(p, 'src'));
    if (before === undefined) return fail(`~/${str(p, 'src')} did not exist at the start`);
    const want = [...new Set(splitLines(before).map((l) => l.trim()))].sort();
    return holdsLines(env, p, str(p, 'out'), want);
  },
  solver: (_env, p) => plan(`cat ${str(p, 'src')}`, `sort -u ${str(p, 'src')} > ${str(p, 'out')}`),
  nearMisses: (p) => [actions(`sort -r -u ${str(p, 'src')} > ${str(p, 'out')}`), actions(`sort -u ${str(p, 'src')}`)],
};

const grepToFile: F = {
  name: 'grep_to_dir',
  level: 3,
  draw: (rng, env) => {
    const log = `${env.state.project}/logs/app.log`;
    const lines = splitLines(fileText(env, `${env.state.home}/${log}`) ?? '');
    const present = LEVELS.filter((l) => lines.some((x) => x.includes(` ${l} `)));
    const level = rng.pick(present);
    const dir = `${env.state.project}/${rng.pick(DIRS)}`;
    const out = `${dir}/${level.toLowerCase()}.log`;
    return {
      goal: `create the directory ~/${dir} and save in ~/${out} the lines of ~/${log} that contain ${level}`,
      params: { level, log, dir, out },
    };
  },
  check: (env, p, start) => {
    const before = original(start, p, str(p, 'log'));
    if (before === undefined) return fail(`~/${str(p, 'log')} did not exist at the start`);
    return holdsLines(
      env,
      p,
      str(p, 'out'),
      splitLines(before)
        .filter((l) => l.includes(str(p, 'level')))
        .map((l) => l.trim()),
    );
  },
  solver: (_env, p) => plan(`mkdir ${str(p, 'dir')}`, `grep ${str(p, 'level')} ${str(p, 'log')} > ${str(p, 'out')}`, `cat ${str(p, 'out')}`),
  nearMisses: (p) => [
    actions(`grep ${str(p, 'level')} ${str(p, 'log')} > ${str(p, 'out')}`),
    actions(`mkdir ${str(p, 'dir')}`, `grep -v ${str(p, 'level')} ${str(p, 'log')} > ${str(p, 'out')}`),
  ],
};

const recordEnv: F = {
  name: 'record_env',
  level: 2,
  draw: (rng, env) => {
    const name = rng.pick(VARS);
    const value = rng.pick(WORDS);
    const out = `${env.state.project}/env.txt`;
    return { goal: `set the environment variable ${name} to ${value} and record it as ${name}=${value} in ~/${out}`, params: { name, value, out } };
  },
  check: (env, p) => {
    const v = env.shell?.cfg.env.get(str(p, 'name'))?.value;
    if (v !== str(p, 'value')) return fail(`${str(p, 'name')} is ${v === undefined ? 'not set' : JSON.stringify(v)}`);
    return holdsLines(env, p, str(p, 'out'), [`${str(p, 'name')}=${str(p, 'value')}`]);
  },
  solver: (_env, p) => plan(`export ${str(p, 'name')}=${str(p, 'value')}`, `echo "${str(p, 'name')}=$${str(p, 'name')}" > ${str(p, 'out')}`),
  nearMisses: (p) => [
    actions(`echo "${str(p, 'name')}=${str(p, 'value')}" > ${str(p, 'out')}`),
    actions(`export ${str(p, 'name')}=${str(p, 'value')}`, `echo "${str(p, 'name')}=$${str(p, 'name')}" > env.txt`),
  ],
};

/** Every draw also records the home directory the goal's `~` stands for. */
const withHome = (f: F): F => ({
  ...f,
  draw: (rng, env) => {
    const d = f.draw(rng, env);
    return d && { goal: d.goal, params: { ...d.params, home: env.state.home } };
  },
});

export const TERMINAL_TASK_FAMILIES: F[] = [writeWord, makeDir, appendLine, countLevel, copyFile, sortUnique, grepToFile, recordEnv].map(withHome);

export const terminalTasks: DomainTasks<TerminalEnv> = {
  create: () => new TerminalEnv(),
  families: TERMINAL_TASK_FAMILIES,
  describe: (d, goal) => replaceGoal(d, /Its goal: [\s\S]*$/, `Its goal: ${goal}.`),
};
