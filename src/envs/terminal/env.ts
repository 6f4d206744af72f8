// The terminal environment: a seeded project tree in a home directory, a bash-like shell, and
// a prompt line after every command (the prompt is deterministic; it carries the cwd).
import type { SystemPrompt } from '../../core/schema/types.ts';
import { FakeClock } from '../clock.ts';
import { Rng } from '../../core/random.ts';
import { SpanText } from '../spans.ts';
import type { Environment, EnvReset, StepResult } from '../types.ts';
import { MemFs, type FsNode } from './fs.ts';
import { Shell } from './shell.ts';

export const TERMINAL_TASKS = ['count_errors', 'backup_csv', 'todo', 'python_lines', 'archive_logs', 'set_env'] as const;
export type TerminalTaskKind = (typeof TERMINAL_TASKS)[number];

const TASK_TEXT: Record<TerminalTaskKind, (p: string) => string> = {
  count_errors: (p) => `count the ERROR lines in ~/${p}/logs/app.log and write the count to ~/${p}/errors.txt`,
  backup_csv: (p) => `create ~/${p}/backup and copy every .csv file from ~/${p}/data into it, then confirm the copies`,
  todo: (p) => `append a new item to ~/${p}/notes.txt and print the notes sorted without duplicates`,
  python_lines: (p) => `find every Python file under ~/${p} and report how many lines each has`,
  archive_logs: (p) => `move the log files of ~/${p}/logs into a new ~/${p}/archive directory and delete the temporary files`,
  set_env: (p) => `set the environment variable APP_ENV to staging and record it in ~/${p}/env.txt`,
};

const PROJECTS = ['inventory', 'webshop', 'pipeline', 'reports', 'analytics', 'billing', 'scheduler', 'crawler'];
const USERS = ['alice', 'bob', 'dev', 'maria', 'sam', 'ops'];
const HOSTS = ['devbox', 'build-01', 'lab', 'workstation', 'ci-runner'];
const REGIONS = ['north', 'south', 'east', 'west'];
const PRODUCTS = ['widget', 'gadget', 'bolt', 'sprocket', 'gear', 'valve', 'flange'];
const LOG_MSGS = {
  INFO: ['service started', 'request handled in 42ms', 'cache warmed', 'user login ok', 'job queued', 'config reloaded'],
  WARN: ['slow response from db', 'retrying upstream call', 'disk usage at 81%', 'deprecated flag used'],
  ERROR: ['database connection refused', 'timeout waiting for worker', 'failed to parse payload', 'permission denied on /var/run/app.sock'],
};
export const TODO_ITEMS = ['fix login bug', 'update docs', 'write tests', 'review PR', 'rotate keys', 'clean cache', 'bump version'];

export interface TerminalState {
  user: string;
  host: string;
  home: string;
  project: string;
  task: TerminalTaskKind;
  files: string[];
}

export class TerminalEnv implements Environment {
  readonly domain = 'terminal' as const;
  shell!: Shell;
  state!: TerminalState;
  private clock!: FakeClock;
  private rng!: Rng;
  private pid = 0;

  reset(seed: number): EnvReset {
    const rng = new Rng(`terminal:${seed}`);
    this.rng = rng.fork('clock');
    this.clock = new FakeClock(rng);
    this.pid = rng.int(1200, 30000);
    const user = rng.pick(USERS);
    const host = rng.pick(HOSTS);
    const project = rng.pick(PROJECTS);
    const task = rng.pick(TERMINAL_TASKS);
    const home = `/home/${user}`;
    const old = this.clock.ms - rng.int(2, 90) * 86400_000;
    const fs = new MemFs(old);
    const files = seedProject(fs, rng, home, project, old);
    fs.put(`${home}/.bashrc`, "# ~/.bashrc\nexport PATH=$HOME/bin:$PATH\nalias ll='ls -l'\n", old, false, false);
    fs.put('/etc/hostname', `${host}\n`, old, true, true);
    fs.mkdirp('/tmp', old, true);
    const env = new Map<string, { value: string; known: boolean }>([
      ['HOME', { value: home, known: true }],
      ['USER', { value: user, known: true }],
      ['SHELL', { value: '/bin/bash', known: true }],
      ['PATH', { value: '/usr/local/bin:/usr/bin:/bin', known: false }],
      ['PWD', { value: home, known: true }],
      ['LANG', { value: 'C.UTF-8', known: false }],
      ['TERM', { value: 'xterm-256color', known: false }],
    ]);
    this.shell = new Shell({ user, host, home, fs, env, now: () => this.clock.ms, nextPid: () => (this.pid += rng.int(1, 40)) });
    this.state = { user, host, home, project, task, files };
    return { system_prompt: this.systemPrompt(), state: this.state };
  }

  private systemPrompt(): SystemPrompt {
    const s = this.state;
    return {
      task_description: `An agent works in a bash shell on a Linux machine as user ${s.user} on host ${s.host}. Its goal: ${TASK_TEXT[s.task](s.project)}.`,
      action_space:
        'One bash command line per action. Commands: ls [-l] [-a], cd, pwd, cat [-n], echo, mkdir [-p], rm [-r] [-f], touch, cp [-r], mv, grep [-n] [-i] [-v] [-c] [-r], wc [-l] [-w] [-c], head [-n N], tail [-n N], sort [-r] [-n] [-u], uniq [-c], find PATH [-name GLOB] [-type f|d], export, env, history, date, ps, whoami. Operators: | > >> ; && ||, $VAR, globs.',
      initial_state: `Working directory: ${s.home} (prompt ${this.shell.prompt()}). Files under ${s.home}:\n${s.files.map((f) => '  ' + f.slice(s.home.length + 1)).join('\n')}`,
      demonstrations:
        'Action: mkdir -p tmp/x && cd tmp/x && pwd\nObservation:\n/home/demo/tmp/x\ndemo@host:~/tmp/x$\n\nAction: cat nope.txt\nObservation:\ncat: nope.txt: No such file or directory\ndemo@host:~/tmp/x$',
      simulation_instruction: 'You are the terminal. Print exactly what bash would print for the command, then the next prompt line. No explanations.',
    };
  }

  step(action: string): StepResult {
    this.clock.tick(this.rng, 2, 25);
    const cmd = action.replace(/\r?\n$/, '');
    const r = this.shell.run(cmd.includes('\n') ? cmd.split('\n')[0] : cmd);
    const st = new SpanText();
    for (const l of r.lines) {
      // The line break joins the line's last piece so same-class lines form one span.
      l.pieces.forEach((p, i) => st.add(i === l.pieces.length - 1 ? p.text + '\n' : p.text, p.kind));
      if (l.pieces.length === 0) st.det('\n');
      if (l.origin) l.origin.file.known[l.origin.idx] = true;
    }
    st.det(this.shell.prompt());
    return { observation: st.text, spans: st.spans, timestamp: this.clock.iso(), ok: r.code === 0 };
  }

  /** Used by agents and tests: the node at a path (relative to cwd) or undefined. */
  node(path: string): FsNode | undefined {
    return this.shell.fs.get(this.shell.abs(path));
  }
}

function seedProject(fs: MemFs, rng: Rng, home: string, project: string, mtime: number): string[] {
  const root = `${home}/${project}`;
  const files: [string, string][] = [];
  files.push([
    `${root}/README.md`,
    `# ${project}\n\nInternal tool for ${rng.pick(['tracking stock', 'weekly reports', 'order processing', 'data cleanup'])}.\nRun \`python3 src/main.py\` to start.\n`,
  ]);
  const notes = rng.sample(TODO_ITEMS, rng.int(3, 5));
  if (rng.chance(0.6)) notes.push(notes[0]);
  files.push([`${root}/notes.txt`, notes.map((n) => n + '\n').join('')]);
  const nRows = rng.int(4, 9);
  const rows = ['region,product,qty,price'];
  for (let i = 0; i < nRows; i++)
    rows.push(`${rng.pick(REGIONS)},${rng.pick(PRODUCTS)},${rng.int(1, 500)},${rng.int(1, 99)}.${String(rng.int(0, 99)).padStart(2, '0')}`);
  files.push([`${root}/data/sales.csv`, rows.join('\n') + '\n']);
  if (rng.chance(0.6))
    files.push([
      `${root}/data/customers.csv`,
      'id,name,city\n' +
        Array.from(
          { length: rng.int(3, 6) },
          (_, i) => `${i + 1},${rng.pick(['Ana', 'Ben', 'Chen', 'Dara', 'Eli', 'Femi', 'Gus'])},${rng.pick(['Lyon', 'Oslo', 'Pune', 'Quito', 'Rome'])}`,
        ).join('\n') +
        '\n',
    ]);
  const logLines: string[] = [];
  let t = mtime;
  for (let i = 0, n = rng.int(8, 16); i < n; i++) {
    t += rng.int(5, 600) * 1000;
    const lvl = rng.pick(['INFO', 'INFO', 'INFO', 'WARN', 'ERROR'] as const);
    logLines.push(`${new Date(t).toISOString().slice(0, 19).replace('T', ' ')} ${lvl} ${rng.pick(LOG_MSGS[lvl])}`);
  }
  if (!logLines.some((l) => l.includes(' ERROR ')))
    logLines.push(`${new Date(t + 1000).toISOString().slice(0, 19).replace('T', ' ')} ERROR ${rng.pick(LOG_MSGS.ERROR)}`);
  files.push([`${root}/logs/app.log`, logLines.join('\n') + '\n']);
  if (rng.chance(0.5))
    files.push([
      `${root}/logs/access.log`,
      Array.from(
        { length: rng.int(2, 5) },
        () => `10.0.${rng.int(0, 9)}.${rng.int(2, 250)} GET /${rng.pick(['', 'api/items', 'login', 'health'])} ${rng.pick([200, 200, 404, 500])}`,
      ).join('\n') + '\n',
    ]);
  files.push([
    `${root}/src/main.py`,
    `from utils import load\n\n\ndef main():\n    rows = load("data/sales.csv")\n    print(len(rows), "rows")\n\n\nif __name__ == "__main__":\n    main()\n`,
  ]);
  files.push([`${root}/src/utils.py`, `import csv\n\n\ndef load(path):\n    with open(path) as f:\n        return list(csv.DictReader(f))\n`]);
  if (rng.chance(0.5)) files.push([`${root}/tmp_${rng.int(100, 999)}.tmp`, 'scratch\n']);
  if (rng.chance(0.5)) files.push([`${root}/cache.tmp`, '']);
  for (const [p, c] of files) fs.put(p, c, mtime + rng.int(0, 86400) * 1000, false, true);
  return files.map(([p]) => p).sort();
}
