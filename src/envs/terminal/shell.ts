// A POSIX-like shell over MemFs: tokenising, expansion, pipes, redirections, `;`/`&&`/`||`,
// and about twenty commands with GNU coreutils' messages and exit codes. Output is carried as
// labelled pieces so every character of an observation has an honest docs/method.md §8 class.
import type { SpanKind } from '../../core/schema/types.ts';
import { lsDate } from '../clock.ts';
import { compileGrep, RegexError, type GrepRegex } from './regex.ts';
import {
  baseName,
  byteLength,
  cloneNode,
  globMatcher,
  LIMITS,
  makeDir,
  makeFile,
  type MemFs,
  nameTooLong,
  nodeSize,
  parentOf,
  resolvePath,
  type DirNode,
  type FileNode,
  type FsNode,
} from './fs.ts';

export interface Piece {
  text: string;
  kind: SpanKind;
}
/** One output line; `origin` points at the file line it was read from, if any. */
export interface Line {
  pieces: Piece[];
  origin?: { file: FileNode; idx: number };
}

/**
 * A line read from a file: one object per line (a file may hold half a million of them), its
 * piece made on demand. It is its own origin, so `{ ...l, pieces }` copies keep where it came from.
 */
class FileLine implements Line {
  readonly origin: { file: FileNode; idx: number } = this;
  constructor(
    readonly file: FileNode,
    readonly idx: number,
    readonly text: string,
    readonly kind: SpanKind,
  ) {}
  get pieces(): Piece[] {
    return [{ text: this.text, kind: this.kind }];
  }
}

const det = (text: string): Piece => ({ text, kind: 'deterministic' });
const line = (...pieces: Piece[]): Line => ({ pieces });
const detLine = (text: string): Line => line(det(text));
export const lineText = (l: Line) => (l instanceof FileLine ? l.text : l.pieces.map((p) => p.text).join(''));
/** UTF-8 bytes of a line and its newline, without building its text. */
function lineBytes(l: Line): number {
  if (l instanceof FileLine) return byteLength(l.text) + 1;
  let n = 1;
  for (const p of l.pieces) n += byteLength(p.text);
  return n;
}
const allDeterministic = (l: Line) => (l instanceof FileLine ? l.kind === 'deterministic' : l.pieces.every((p) => p.kind === 'deterministic'));
/** The least certain kind among pieces: pre_existing beats runtime_metadata beats deterministic. */
function worstKind(lines: Line[]): SpanKind {
  let k: SpanKind = 'deterministic';
  for (const l of lines)
    for (const p of l.pieces) {
      if (p.kind === 'pre_existing') return 'pre_existing';
      if (p.kind === 'runtime_metadata') k = 'runtime_metadata';
    }
  return k;
}

interface CmdResult {
  out: Line[];
  err: string[];
  code: number;
}
/** Output written to the terminal, in order: stdout lines and stderr messages interleaved. */
export interface ShellOutput {
  lines: Line[];
  code: number;
}

type Token = { t: 'word'; v: string; glob: boolean } | { t: 'op'; v: string };

export interface ShellConfig {
  user: string;
  host: string;
  home: string;
  fs: MemFs;
  env: Map<string, { value: string; known: boolean }>;
  /** Fake clock in ms, advanced by the environment between commands. */
  now: () => number;
  /** Next PID for `ps`/`sleep &`-style metadata; seeded by the environment. */
  nextPid: () => number;
}

export class Shell {
  cwd: string;
  lastExit = 0;
  readonly history: string[] = [];
  constructor(readonly cfg: ShellConfig) {
    this.cwd = cfg.home;
  }

  get fs(): MemFs {
    return this.cfg.fs;
  }

  prompt(): string {
    const h = this.cfg.home;
    const shown = this.cwd === h ? '~' : this.cwd.startsWith(h + '/') ? '~' + this.cwd.slice(h.length) : this.cwd;
    return `${this.cfg.user}@${this.cfg.host}:${shown}$`;
  }

  /** Runs one command line; returns what it prints (without the prompt). */
  run(input: string): ShellOutput {
    const src = input.trim();
    if (src === '') return { lines: [], code: this.lastExit };
    this.history.push(src);
    return this.runList(src);
  }

  // ---- parsing -------------------------------------------------------------------------

  private expandVars(s: string): string {
    return s.replace(/\$(\?|[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})/g, (_, name: string) => {
      if (name === '?') return String(this.lastExit);
      const key = name.replace(/[{}]/g, '');
      return this.cfg.env.get(key)?.value ?? '';
    });
  }

  private tokenize(src: string): Token[] | string {
    const toks: Token[] = [];
    let i = 0;
    while (i < src.length) {
      const c = src[i];
      if (c === ' ' || c === '\t') {
        i++;
        continue;
      }
      if (c === '#') break;
      const op = /^(2>>|2>|>>|>|\||<)/.exec(src.slice(i));
      if (op) {
        toks.push({ t: 'op', v: op[1] });
        i += op[1].length;
        continue;
      }
      let word = '';
      let glob = false;
      let quoted = false;
      while (i < src.length && !/[\s|;&<>]/.test(src[i])) {
        const ch = src[i];
        if (ch === "'") {
          const j = src.indexOf("'", i + 1);
          if (j < 0) return "bash: unexpected EOF while looking for matching `''";
          word += src.slice(i + 1, j);
          i = j + 1;
          quoted = true;
        } else if (ch === '"') {
          let j = i + 1;
          let raw = '';
          while (j < src.length && src[j] !== '"') {
            if (src[j] === '\\' && j + 1 < src.length && '"\\$'.includes(src[j + 1])) {
              raw += src[j + 1] === '$' ? '\u0000' : src[j + 1];
              j += 2;
            } else raw += src[j++];
          }
          if (j >= src.length) return 'bash: unexpected EOF while looking for matching `"\'';
          word += this.expandVars(raw).replace(/\u0000/g, '$');
          i = j + 1;
          quoted = true;
        } else if (ch === '\\') {
          // A backslash escapes the next character; one at the very end stays itself (as in
          // `bash -c 'echo a\'`), and the scan always moves on.
          word += i + 1 < src.length ? src[i + 1] : '\\';
          i += 2;
          quoted = true;
        } else {
          let j = i;
          while (j < src.length && !/[\s|;&<>'"\\]/.test(src[j])) j++;
          const raw = src.slice(i, j);
          if (/[*?[]/.test(raw)) glob = true;
          word += this.expandVars(raw);
          i = j;
        }
      }
      if (word === '' && !quoted) {
        // A lone '&' (background) is not supported; bash would start a job.
        return `bash: syntax error near unexpected token \`${src[i] ?? 'newline'}'`;
      }
      toks.push({ t: 'word', v: word, glob });
    }
    return toks;
  }

  // ---- execution -----------------------------------------------------------------------

  /** Splits at top-level `;`, `&&`, `||` (outside quotes); expansion waits until each part runs. */
  private splitList(src: string): { text: string; sep: string }[] | string {
    const parts: { text: string; sep: string }[] = [];
    let cur = '';
    for (let i = 0; i < src.length; i++) {
      const c = src[i];
      if (c === "'" || c === '"') {
        const j = src.indexOf(c, i + 1);
        if (j < 0) return `bash: unexpected EOF while looking for matching \`${c}'`;
        cur += src.slice(i, j + 1);
        i = j;
        continue;
      }
      if (c === '\\') {
        cur += src.slice(i, i + 2);
        i++;
        continue;
      }
      const two = src.slice(i, i + 2);
      if (two === '&&' || two === '||' || c === ';') {
        const sep = c === ';' ? ';' : two;
        if (cur.trim() === '') return `bash: syntax error near unexpected token \`${sep}'`;
        parts.push({ text: cur, sep });
        cur = '';
        i += sep.length - 1;
        continue;
      }
      cur += c;
    }
    if (cur.trim() !== '') parts.push({ text: cur, sep: ';' });
    else if (parts.length && parts[parts.length - 1].sep !== ';') return 'bash: syntax error: unexpected end of file';
    return parts;
  }

  private runList(src: string): ShellOutput {
    const parts = this.splitList(src);
    if (typeof parts === 'string') {
      this.lastExit = 2;
      return { lines: [detLine(parts)], code: 2 };
    }
    const lines: Line[] = [];
    let skip = false;
    let code = this.lastExit;
    for (const { text, sep } of parts) {
      if (!skip) {
        const toks = this.tokenize(text);
        if (typeof toks === 'string') {
          this.lastExit = 2;
          return { lines: [...lines, detLine(toks)], code: 2 };
        }
        const r = toks.length ? this.runPipeline(toks) : { lines: [], code: 0 };
        pushAll(lines, r.lines);
        code = r.code;
        this.lastExit = code;
      }
      skip = (sep === '&&' && code !== 0) || (sep === '||' && code === 0);
    }
    return { lines, code };
  }

  private runPipeline(toks: Token[]): ShellOutput {
    const stages: Token[][] = [[]];
    for (const t of toks) {
      if (t.t === 'op' && t.v === '|') stages.push([]);
      else stages[stages.length - 1].push(t);
    }
    if (stages.some((s) => s.length === 0)) {
      return { lines: [detLine("bash: syntax error near unexpected token `|'")], code: 2 };
    }
    const printed: Line[] = [];
    let input: Line[] | null = null;
    let code = 0;
    for (const [k, stage] of stages.entries()) {
      const last = k === stages.length - 1;
      const parsed = this.parseSimple(stage);
      if (typeof parsed === 'string') return { lines: [...printed, detLine(parsed)], code: 2 };
      if (parsed.tooLong) return { lines: [...printed, detLine(`bash: ${parsed.argv[0]}: Argument list too long`)], code: 126 };
      const r = this.exec(parsed.argv, input, !last || parsed.out !== null);
      for (const e of r.err) if (!parsed.dropErr) printed.push(detLine(e));
      code = r.code;
      let out = r.out;
      if (parsed.out) {
        const w = this.writeRedirect(parsed.out.path, out, parsed.out.append, parsed.argv[0] ?? 'bash');
        if (w) {
          printed.push(detLine(w));
          code = 1;
        }
        out = [];
      }
      if (last) pushAll(printed, out);
      else input = out;
    }
    return { lines: printed, code };
  }

  private parseSimple(toks: Token[]): { argv: string[]; out: { path: string; append: boolean } | null; dropErr: boolean; tooLong?: boolean } | string {
    const argv: string[] = [];
    let argBytes = 0;
    let out: { path: string; append: boolean } | null = null;
    let dropErr = false;
    for (let i = 0; i < toks.length; i++) {
      const t = toks[i];
      if (t.t === 'op') {
        const target = toks[i + 1];
        if (target?.t !== 'word') return `bash: syntax error near unexpected token \`${target ? target.v : 'newline'}'`;
        if (t.v === '>' || t.v === '>>') out = { path: target.v, append: t.v === '>>' };
        else if (t.v === '2>' || t.v === '2>>') dropErr = target.v === '/dev/null';
        else if (t.v === '<') argv.push(target.v);
        i++;
      } else {
        // ARG_MAX counts every argument's bytes and its NUL; stop expanding once past it.
        for (const a of t.glob ? this.glob(t.v) : [t.v]) {
          argv.push(a);
          argBytes += byteLength(a) + 1;
          if (argBytes > LIMITS.argBytes) return { argv, out, dropErr, tooLong: true };
        }
      }
    }
    return { argv, out, dropErr };
  }

  /** Expands a glob in its last path component; bash keeps the word when nothing matches. */
  private glob(word: string): string[] {
    const slash = word.lastIndexOf('/');
    const dirPart = slash >= 0 ? word.slice(0, slash + 1) : '';
    const pat = globMatcher(word.slice(slash + 1));
    const dir = this.fs.get(resolvePath(this.cwd, dirPart || '.', this.cfg.home));
    if (dir?.type !== 'dir') return [word];
    const hits = [...dir.children.keys()].filter((n) => pat.test(n) && (!n.startsWith('.') || word.slice(slash + 1).startsWith('.'))).sort();
    return hits.length ? hits.map((h) => dirPart + h) : [word];
  }

  private writeRedirect(path: string, lines: Line[], append: boolean, cmd: string): string | null {
    if (path === '/dev/null') return null;
    const abs = this.abs(path);
    if (nameTooLong(abs)) return `bash: ${path}: File name too long`;
    const parent = this.fs.get(parentOf(abs));
    if (parent?.type !== 'dir') return `bash: ${path}: No such file or directory`;
    const existing = parent.children.get(baseName(abs));
    if (existing && existing.type === 'dir') return `bash: ${path}: Is a directory`;
    // A file never grows past LIMITS.fileBytes: the lines that fit are written, then EFBIG.
    let room = LIMITS.fileBytes - (existing && append ? byteLength(existing.content) : 0);
    let fit = 0;
    for (; fit < lines.length; fit++) {
      room -= lineBytes(lines[fit]);
      if (room < 0) break;
    }
    const texts: string[] = new Array(fit);
    const known: boolean[] = new Array(fit);
    for (let i = 0; i < fit; i++) {
      const l = lines[i];
      texts[i] = lineText(l) + '\n';
      known[i] = allDeterministic(l);
    }
    const text = texts.join('');
    if (existing && append) {
      existing.content += text;
      pushAll(existing.known, known);
      existing.mtime = this.cfg.now();
    } else {
      // Built here, not by makeFile: the known flags are the lines' own, so the text is not split again.
      const f: FileNode = { ...makeFile('', this.cfg.now(), true, true), content: text, known };
      parent.children.set(baseName(abs), f);
    }
    if (fit < lines.length) return `${cmd}: write error: File too large`;
    return null;
  }

  abs(p: string): string {
    return resolvePath(this.cwd, p, this.cfg.home);
  }

  /** The file's lines; with `maxBytes`, only those up to the first that ends past it (what a capped output can take). */
  private fileLines(f: FileNode, maxBytes = Infinity): Line[] {
    const out: Line[] = [];
    const c = f.content;
    let bytes = 0;
    for (let from = 0, idx = 0; from < c.length && bytes <= maxBytes; idx++) {
      let nl = c.indexOf('\n', from);
      if (nl < 0) nl = c.length;
      const text = c.slice(from, nl);
      out.push(new FileLine(f, idx, text, f.known[idx] ? 'deterministic' : 'pre_existing'));
      if (maxBytes !== Infinity) bytes += byteLength(text) + 1;
      from = nl + 1;
    }
    return out;
  }

  /**
   * Reads a file operand the way most coreutils do; returns lines or the errno reason. With
   * `maxBytes` (a command whose output line holds its input line, such as cat) reading stops
   * once the lines read pass it: the output is cut there anyway.
   */
  readOperand(p: string, maxBytes?: number): Line[] | 'ENOENT' | 'EISDIR' | 'ENOTDIR' {
    const n = this.fs.lookup(this.abs(p));
    if (n === 'ENOENT' || n === 'ENOTDIR') return n;
    if (n.type === 'dir') return 'EISDIR';
    n.seen = true;
    return this.fileLines(n, maxBytes);
  }

  private exec(argv: string[], stdin: Line[] | null, piped: boolean): CmdResult {
    const [name, ...args] = argv;
    if (name === undefined) return { out: [], err: [], code: 0 };
    // Own keys only: `constructor` or `__proto__` is a command not found, not Object's.
    const fn = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
    if (!fn) return { out: [], err: [`bash: ${name}: command not found`], code: 127 };
    return fn.call(this, args, stdin, piped);
  }

  // ---- commands --------------------------------------------------------------------------

  /** Splits `-abc` style flags; returns the bad flag's letter when one is not allowed. */
  static flags(args: string[], allowed: string, withValue = ''): { flags: Set<string>; values: Map<string, string>; rest: string[]; bad?: string } {
    const flags = new Set<string>();
    const values = new Map<string, string>();
    const rest: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      if (a.startsWith('-') && a.length > 1 && !/^-\d+$/.test(a)) {
        for (let k = 1; k < a.length; k++) {
          const f = a[k];
          if (withValue.includes(f)) {
            const v = a.slice(k + 1) || args[++i];
            values.set(f, v ?? '');
            break;
          }
          if (!allowed.includes(f)) return { flags, values, rest, bad: f };
          flags.add(f);
        }
      } else if (/^-\d+$/.test(a) && withValue.includes('n')) {
        values.set('n', a.slice(1));
      } else rest.push(a);
    }
    return { flags, values, rest };
  }
}

const invalid = (cmd: string, f: string): CmdResult => ({
  out: [],
  err: [`${cmd}: invalid option -- '${f}'`, `Try '${cmd} --help' for more information.`],
  code: cmd === 'ls' ? 2 : 1,
});
const missingOperand = (cmd: string): CmdResult => ({
  out: [],
  err: [`${cmd}: missing operand`, `Try '${cmd} --help' for more information.`],
  code: 1,
});
const ERRNO: Record<string, string> = { ENOENT: 'No such file or directory', EISDIR: 'Is a directory', ENOTDIR: 'Not a directory' };

type CommandFn = (this: Shell, args: string[], stdin: Line[] | null, piped: boolean) => CmdResult;

function namePiece(node: FsNode, text: string): Piece {
  return { text, kind: node.seen ? 'deterministic' : 'pre_existing' };
}

function lsLong(node: FsNode, name: string, user: string): Line {
  const p = namePiece(node, '');
  const size = nodeSize(node);
  return line(
    { text: `${node.mode} `, kind: p.kind },
    { text: `${node.type === 'dir' ? 2 : 1} ${user} ${user} ${String(size).padStart(5)} ${lsDate(node.mtime)}`, kind: 'runtime_metadata' },
    { text: ` ${name}`, kind: p.kind },
  );
}

/** Runs `inner` over each operand or stdin: the shared shape of cat/head/tail/wc/sort/grep. */
function eachInput(
  sh: Shell,
  cmd: string,
  files: string[],
  stdin: Line[] | null,
  openMsg: (f: string, why: string) => string,
  inner: (lines: Line[], label: string) => Line[],
  linePerLine = false,
): CmdResult {
  if (files.length === 0) return { out: inner(stdin ?? [], '-'), err: [], code: 0 };
  const out: Line[] = [];
  const err: string[] = [];
  // One command's output is capped like a file (LIMITS.fileBytes), so `cat f f f ...` stays bounded.
  let room = LIMITS.fileBytes;
  for (const f of files) {
    // An output line per input line, at least as long: the input past the room is never shown.
    const r = sh.readOperand(f, linePerLine ? room : undefined);
    if (typeof r === 'string') {
      err.push(openMsg(f, ERRNO[r]));
      continue;
    }
    for (const l of inner(r, f)) {
      room -= lineBytes(l);
      if (room < 0) {
        err.push(`${cmd}: write error: File too large`);
        return { out, err, code: 1 };
      }
      out.push(l);
    }
  }
  return { out, err, code: err.length ? 1 : 0 };
}

const COMMANDS: Record<string, CommandFn> = {
  pwd() {
    return { out: [detLine(this.cwd)], err: [], code: 0 };
  },
  whoami() {
    return { out: [detLine(this.cfg.user)], err: [], code: 0 };
  },
  hostname() {
    return { out: [detLine(this.cfg.host)], err: [], code: 0 };
  },
  true() {
    return { out: [], err: [], code: 0 };
  },
  false() {
    return { out: [], err: [], code: 1 };
  },
  clear() {
    return { out: [], err: [], code: 0 };
  },
  date() {
    const d = new Date(this.cfg.now());
    const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
    const mons = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const p2 = (n: number) => String(n).padStart(2, '0');
    const text = `${days[d.getUTCDay()]} ${mons[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2)} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} UTC ${d.getUTCFullYear()}`;
    return { out: [line({ text, kind: 'runtime_metadata' })], err: [], code: 0 };
  },
  ps() {
    const bash = this.cfg.nextPid() - 1000;
    const ps = this.cfg.nextPid();
    const row = (pid: number, cmd: string) =>
      line({ text: String(pid).padStart(7), kind: 'runtime_metadata' }, det(' pts/0    '), { text: '00:00:00', kind: 'runtime_metadata' }, det(` ${cmd}`));
    return { out: [detLine('    PID TTY          TIME CMD'), row(bash, 'bash'), row(ps, 'ps')], err: [], code: 0 };
  },
  echo(args) {
    let a = args;
    let newline = true;
    if (a[0] === '-n') {
      newline = false;
      a = a.slice(1);
    }
    if (a[0] === '-e') a = a.slice(1);
    void newline;
    return { out: [detLine(a.join(' '))], err: [], code: 0 };
  },
  cd(args) {
    if (args.length > 1) return { out: [], err: ['bash: cd: too many arguments'], code: 1 };
    let target = args[0] ?? this.cfg.home;
    let print = false;
    if (target === '-') {
      const old = this.cfg.env.get('OLDPWD');
      if (!old) return { out: [], err: ['bash: cd: OLDPWD not set'], code: 1 };
      target = old.value;
      print = true;
    }
    const abs = this.abs(target);
    const n = this.fs.lookup(abs);
    if (n === 'ENOENT') return { out: [], err: [`bash: cd: ${target}: No such file or directory`], code: 1 };
    if (n === 'ENOTDIR' || n.type !== 'dir') return { out: [], err: [`bash: cd: ${target}: Not a directory`], code: 1 };
    n.seen = true;
    this.cfg.env.set('OLDPWD', { value: this.cwd, known: true });
    this.cfg.env.set('PWD', { value: abs, known: true });
    this.cwd = abs;
    return { out: print ? [detLine(abs)] : [], err: [], code: 0 };
  },
  ls(args, _stdin, piped) {
    const { flags, rest, bad } = Shell.flags(args, 'la1hR');
    if (bad) return invalid('ls', bad);
    const targets = rest.length ? rest : ['.'];
    const out: Line[] = [];
    const err: string[] = [];
    let code = 0;
    const files: string[] = [];
    const dirs: string[] = [];
    for (const t of targets) {
      const n = this.fs.lookup(this.abs(t));
      if (typeof n === 'string') {
        err.push(`ls: cannot access '${t}': No such file or directory`);
        code = 2;
        continue;
      }
      (n.type === 'dir' ? dirs : files).push(t);
    }
    const render = (entries: [string, FsNode][]) => {
      if (flags.has('l')) {
        out.push(line({ text: `total ${entries.reduce((s, [, n]) => s + Math.ceil(nodeSize(n) / 4096) * 4, 0)}`, kind: 'runtime_metadata' }));
        for (const [name, n] of entries) {
          out.push(lsLong(n, name, this.cfg.user));
          n.seen = true;
        }
      } else if (piped || flags.has('1')) {
        for (const [name, n] of entries) {
          out.push(line(namePiece(n, name)));
          n.seen = true;
        }
      } else if (entries.length) {
        const pieces: Piece[] = [];
        entries.forEach(([name, n], k) => {
          if (k) pieces.push(det('  '));
          pieces.push(namePiece(n, name));
          n.seen = true;
        });
        out.push(line(...pieces));
      }
    };
    if (files.length) {
      const entries = files.map((f) => [f, this.fs.get(this.abs(f))!] as [string, FsNode]);
      if (flags.has('l'))
        for (const [name, n] of entries) {
          out.push(lsLong(n, name, this.cfg.user));
          n.seen = true;
        }
      else render(entries.map(([f, n]) => [f, n]));
    }
    for (const d of dirs) {
      const node = this.fs.get(this.abs(d)) as DirNode;
      if (targets.length > 1) {
        if (out.length) out.push(detLine(''));
        out.push(detLine(`${d}:`));
      }
      let entries = [...node.children.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      if (flags.has('a')) entries = [['.', node], ['..', node], ...entries] as [string, FsNode][];
      else entries = entries.filter(([n]) => !n.startsWith('.'));
      render(entries);
    }
    return { out, err, code };
  },
  cat(args, stdin) {
    const { rest, flags, bad } = Shell.flags(args, 'n');
    if (bad) return invalid('cat', bad);
    const r = eachInput(
      this,
      'cat',
      rest,
      stdin,
      (f, why) => `cat: ${f}: ${why}`,
      (ls) => ls,
      true,
    );
    if (flags.has('n')) r.out = r.out.map((l, i) => ({ ...l, pieces: [det(`${String(i + 1).padStart(6)}\t`), ...l.pieces] }));
    return r;
  },
  head(args, stdin) {
    return headTail.call(this, 'head', args, stdin);
  },
  tail(args, stdin) {
    return headTail.call(this, 'tail', args, stdin);
  },
  wc(args, stdin) {
    const { flags, rest, bad } = Shell.flags(args, 'lwc');
    if (bad) return invalid('wc', bad);
    const want = flags.size ? flags : new Set(['l', 'w', 'c']);
    const rows: [number[], SpanKind, string][] = [];
    const count = (lines: Line[]) => {
      const text = lines.map((l) => lineText(l) + '\n').join('');
      return [lines.length, text.split(/\s+/).filter(Boolean).length, new TextEncoder().encode(text).length];
    };
    const r = eachInput(
      this,
      'wc',
      rest,
      stdin,
      (f, why) => `wc: ${f}: ${why}`,
      (lines, label) => {
        rows.push([count(lines), worstKind(lines), label]);
        return [];
      },
    );
    if (rows.length > 1) {
      const tot = [0, 1, 2].map((k) => rows.reduce((s, [c]) => s + c[k], 0));
      rows.push([tot, rows.some((x) => x[1] === 'pre_existing') ? 'pre_existing' : 'deterministic', 'total']);
    }
    // GNU wc pads every column to the widest wanted count, except a lone count of one input.
    const idx = (['l', 'w', 'c'] as const).map((k, i) => (want.has(k) ? i : -1)).filter((i) => i >= 0);
    const width = want.size === 1 && rows.length === 1 ? 0 : Math.max(1, ...rows.flatMap(([c]) => idx.map((i) => String(c[i]).length)));
    r.out = rows.map(([c, kind, label]) => {
      const nums = (['l', 'w', 'c'] as const)
        .map((k, i) => (want.has(k) ? String(c[i]).padStart(width) : null))
        .filter((x) => x !== null)
        .join(' ');
      return line({ text: nums, kind }, det(label === '-' ? '' : ` ${label}`));
    });
    return r;
  },
  sort(args, stdin) {
    const { flags, rest, bad } = Shell.flags(args, 'rnu');
    if (bad) return invalid('sort', bad);
    const all: Line[] = [];
    const r = eachInput(
      this,
      'sort',
      rest,
      stdin,
      (f, why) => `sort: cannot read: ${f}: ${why}`,
      (ls) => {
        pushAll(all, ls);
        return [];
      },
    );
    let sorted = all.slice().sort((a, b) => {
      const x = lineText(a),
        y = lineText(b);
      if (flags.has('n')) return (parseFloat(x) || 0) - (parseFloat(y) || 0) || (x < y ? -1 : x > y ? 1 : 0);
      return x < y ? -1 : x > y ? 1 : 0;
    });
    if (flags.has('r')) sorted.reverse();
    if (flags.has('u')) sorted = sorted.filter((l, i) => i === 0 || lineText(l) !== lineText(sorted[i - 1]));
    r.out = r.err.length ? [] : sorted;
    return r.err.length ? { ...r, code: 2 } : r;
  },
  uniq(args, stdin) {
    const { flags, rest, bad } = Shell.flags(args, 'cd');
    if (bad) return invalid('uniq', bad);
    return eachInput(
      this,
      'uniq',
      rest.slice(0, 1),
      stdin,
      (f, why) => `uniq: ${f}: ${why}`,
      (lines) => {
        const groups: [Line, number][] = [];
        for (const l of lines) {
          const g = groups[groups.length - 1];
          if (g && lineText(g[0]) === lineText(l)) g[1]++;
          else groups.push([l, 1]);
        }
        return groups
          .filter(([, n]) => !flags.has('d') || n > 1)
          .map(([l, n]) =>
            flags.has('c') ? { ...l, pieces: [{ text: `${String(n).padStart(7)} `, kind: l.pieces[0]?.kind ?? 'deterministic' }, ...l.pieces] } : l,
          );
      },
    );
  },
  grep(args, stdin) {
    const { flags, rest, bad } = Shell.flags(args, 'nivcrlwE');
    if (bad)
      return {
        out: [],
        err: [`grep: invalid option -- '${bad}'`, 'Usage: grep [OPTION]... PATTERNS [FILE]...', "Try 'grep --help' for more information."],
        code: 2,
      };
    if (rest.length === 0) return { out: [], err: ['Usage: grep [OPTION]... PATTERNS [FILE]...', "Try 'grep --help' for more information."], code: 2 };
    const [pat, ...files0] = rest;
    // A linear-time matcher: a RegExp from user text could backtrack for minutes.
    let re: GrepRegex;
    try {
      re = compileGrep(pat, { extended: flags.has('E'), ignoreCase: flags.has('i'), word: flags.has('w') });
    } catch (e) {
      return { out: [], err: [`grep: ${(e as Error).message}`], code: 2 };
    }
    let files = files0;
    if (flags.has('r')) {
      files = [];
      for (const f of files0.length ? files0 : ['.']) {
        const abs = this.abs(f);
        const n = this.fs.get(abs);
        if (!n) {
          files.push(f);
          continue;
        }
        this.fs.walk(abs, n, (p, node) => {
          if (node.type === 'file') files.push(f === '.' ? p.slice(abs.length + 1) : f.replace(/\/$/, '') + p.slice(abs.length));
        });
      }
    }
    const multi = files.length > 1 || flags.has('r');
    let matched = 0;
    let r: ReturnType<typeof eachInput>;
    // The matcher's step budget ends the command as grep ends when it runs out of memory.
    try {
      r = eachInput(
        this,
        'grep',
        files,
        stdin,
        (f, why) => `grep: ${f}: ${why}`,
        (lines, label) => {
          const hits: Line[] = [];
          lines.forEach((l, idx) => {
            if (re.test(lineText(l)) !== flags.has('v')) {
              const prefix: Piece[] = [];
              const k = l.pieces[0]?.kind ?? 'deterministic';
              if (multi) prefix.push(det(`${label}:`));
              if (flags.has('n')) prefix.push({ text: `${idx + 1}:`, kind: k });
              hits.push({ ...l, pieces: [...prefix, ...l.pieces] });
            }
          });
          matched += hits.length;
          if (flags.has('l')) return hits.length ? [detLine(label)] : [];
          if (flags.has('c')) return [line(...(multi ? [det(`${label}:`)] : []), { text: String(hits.length), kind: worstKind(lines) })];
          return hits;
        },
      );
    } catch (e) {
      if (e instanceof RegexError) return { out: [], err: [`grep: ${e.message}`], code: 2 };
      throw e;
    }
    if (r.err.length) return { ...r, code: 2 };
    return { ...r, code: matched ? 0 : 1 };
  },
  mkdir(args) {
    const { flags, rest, bad } = Shell.flags(args, 'pv');
    if (bad) return invalid('mkdir', bad);
    if (!rest.length) return missingOperand('mkdir');
    const err: string[] = [];
    for (const d of rest) {
      const abs = this.abs(d);
      if (nameTooLong(abs)) {
        err.push(`mkdir: cannot create directory ‘${d}’: File name too long`);
        continue;
      }
      if (flags.has('p')) {
        // One walk down the tree: linear in the path's length.
        let node: DirNode = this.fs.root;
        for (const part of abs.split('/').filter(Boolean)) {
          let n = node.children.get(part);
          if (!n) {
            n = makeDir(this.cfg.now(), true);
            node.children.set(part, n);
          } else if (n.type !== 'dir') {
            err.push(`mkdir: cannot create directory ‘${d}’: Not a directory`);
            break;
          }
          node = n;
        }
        continue;
      }
      const parent = this.fs.lookup(parentOf(abs));
      if (this.fs.get(abs)) err.push(`mkdir: cannot create directory ‘${d}’: File exists`);
      else if (typeof parent === 'string' || parent.type !== 'dir') err.push(`mkdir: cannot create directory ‘${d}’: No such file or directory`);
      else parent.children.set(baseName(abs), makeDir(this.cfg.now(), true));
    }
    return { out: [], err, code: err.length ? 1 : 0 };
  },
  touch(args) {
    if (!args.length) return { out: [], err: ['touch: missing file operand', "Try 'touch --help' for more information."], code: 1 };
    const err: string[] = [];
    for (const f of args) {
      const abs = this.abs(f);
      const n = this.fs.get(abs);
      if (n) {
        n.mtime = this.cfg.now();
        continue;
      }
      const parent = this.fs.get(parentOf(abs));
      if (parent?.type !== 'dir') {
        err.push(`touch: cannot touch '${f}': No such file or directory`);
        continue;
      }
      parent.children.set(baseName(abs), makeFile('', this.cfg.now(), true, true));
    }
    return { out: [], err, code: err.length ? 1 : 0 };
  },
  rm(args) {
    const { flags, rest, bad } = Shell.flags(args, 'rfRv');
    if (bad) return invalid('rm', bad);
    if (!rest.length) return flags.has('f') ? { out: [], err: [], code: 0 } : missingOperand('rm');
    const err: string[] = [];
    for (const f of rest) {
      const abs = this.abs(f);
      const n = this.fs.get(abs);
      if (!n) {
        if (!flags.has('f')) err.push(`rm: cannot remove '${f}': No such file or directory`);
        continue;
      }
      if (n.type === 'dir' && !flags.has('r') && !flags.has('R')) {
        err.push(`rm: cannot remove '${f}': Is a directory`);
        continue;
      }
      if (abs === '/') {
        err.push("rm: it is dangerous to operate recursively on '/'");
        continue;
      }
      (this.fs.get(parentOf(abs)) as DirNode).children.delete(baseName(abs));
    }
    return { out: [], err, code: err.length ? 1 : 0 };
  },
  cp(args) {
    return cpMv.call(this, 'cp', args);
  },
  mv(args) {
    return cpMv.call(this, 'mv', args);
  },
  find(args) {
    let i = 0;
    const roots: string[] = [];
    while (i < args.length && !args[i].startsWith('-')) roots.push(args[i++]);
    if (!roots.length) roots.push('.');
    let nameRe: { test(name: string): boolean } | null = null;
    let type: string | null = null;
    for (; i < args.length; i++) {
      const a = args[i];
      if ((a === '-name' || a === '-iname') && args[i + 1] !== undefined) {
        nameRe = globMatcher(args[++i], a === '-iname');
      } else if (a === '-type' && args[i + 1] !== undefined) type = args[++i];
      else if (a === '-name' || a === '-type') return { out: [], err: [`find: missing argument to \`${a}'`], code: 1 };
      else return { out: [], err: [`find: unknown predicate \`${a}'`], code: 1 };
    }
    const out: Line[] = [];
    const err: string[] = [];
    for (const r of roots) {
      const abs = this.abs(r);
      const n = this.fs.get(abs);
      if (!n) {
        err.push(`find: ‘${r}’: No such file or directory`);
        continue;
      }
      this.fs.walk(abs, n, (p, node) => {
        const shown = r.replace(/\/$/, '') + p.slice(abs.length);
        if (nameRe && !nameRe.test(baseName(p === '/' ? '/' : p))) return;
        if (type && (type === 'f') !== (node.type === 'file')) return;
        out.push(line(namePiece(node, shown || r)));
        node.seen = true;
      });
    }
    return { out, err, code: err.length ? 1 : 0 };
  },
  export(args) {
    for (const a of args) {
      const eq = a.indexOf('=');
      if (eq > 0) this.cfg.env.set(a.slice(0, eq), { value: a.slice(eq + 1), known: true });
      else if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(a)) return { out: [], err: [`bash: export: \`${a}': not a valid identifier`], code: 1 };
    }
    return { out: [], err: [], code: 0 };
  },
  env() {
    const out = [...this.cfg.env.entries()].map(([k, v]) => line(det(`${k}=`), { text: v.value, kind: v.known ? 'deterministic' : 'pre_existing' }));
    for (const [, v] of this.cfg.env) v.known = true;
    return { out, err: [], code: 0 };
  },
  history() {
    return { out: this.history.map((h, i) => detLine(`${String(i + 1).padStart(5)}  ${h}`)), err: [], code: 0 };
  },
};
COMMANDS.printenv = COMMANDS.env;

function headTail(this: Shell, cmd: 'head' | 'tail', args: string[], stdin: Line[] | null): CmdResult {
  const { rest, values, bad } = Shell.flags(args, '', 'n');
  if (bad) return invalid(cmd, bad);
  const nRaw = values.get('n') ?? '10';
  const n = Number(nRaw);
  if (!Number.isInteger(n) || n < 0) return { out: [], err: [`${cmd}: invalid number of lines: ‘${nRaw}’`], code: 1 };
  const multi = rest.length > 1;
  let first = true;
  return eachInput(
    this,
    cmd,
    rest,
    stdin,
    (f, why) => `${cmd}: cannot open '${f}' for reading: ${why}`,
    (lines, label) => {
      const sel = cmd === 'head' ? lines.slice(0, n) : n === 0 ? [] : lines.slice(-n);
      const hdr = multi ? [...(first ? [] : [detLine('')]), detLine(`==> ${label} <==`)] : [];
      first = false;
      return [...hdr, ...sel];
    },
  );
}

function cpMv(this: Shell, cmd: 'cp' | 'mv', args: string[]): CmdResult {
  const { flags, rest, bad } = Shell.flags(args, cmd === 'cp' ? 'rRfv' : 'fv');
  if (bad) return invalid(cmd, bad);
  if (rest.length === 0) return { out: [], err: [`${cmd}: missing file operand`, `Try '${cmd} --help' for more information.`], code: 1 };
  if (rest.length === 1)
    return { out: [], err: [`${cmd}: missing destination file operand after '${rest[0]}'`, `Try '${cmd} --help' for more information.`], code: 1 };
  const dest = rest[rest.length - 1];
  const srcs = rest.slice(0, -1);
  const destAbs = this.abs(dest);
  const destNode = this.fs.get(destAbs);
  if (srcs.length > 1 && destNode?.type !== 'dir') return { out: [], err: [`${cmd}: target '${dest}' is not a directory`], code: 1 };
  const err: string[] = [];
  for (const s of srcs) {
    const abs = this.abs(s);
    const n = this.fs.get(abs);
    if (!n) {
      err.push(`${cmd}: cannot stat '${s}': No such file or directory`);
      continue;
    }
    if (cmd === 'cp' && n.type === 'dir' && !flags.has('r') && !flags.has('R')) {
      err.push(`cp: -r not specified; omitting directory '${s}'`);
      continue;
    }
    const target = destNode && destNode.type === 'dir' ? `${destAbs === '/' ? '' : destAbs}/${baseName(abs)}` : destAbs;
    if (target === abs || target.startsWith(abs + '/')) {
      err.push(`${cmd}: cannot ${cmd === 'cp' ? 'copy' : 'move'} '${s}' to a subdirectory of itself, '${dest}/${baseName(abs)}'`);
      continue;
    }
    const parent = this.fs.get(parentOf(target));
    if (parent?.type !== 'dir') {
      err.push(`${cmd}: cannot ${cmd === 'cp' ? 'create regular file' : 'move'} '${dest}': No such file or directory`);
      continue;
    }
    const copy = cmd === 'cp' ? cloneNode(n, this.cfg.now()) : n;
    copy.seen = true;
    parent.children.set(baseName(target), copy);
    if (cmd === 'mv') (this.fs.get(parentOf(abs)) as DirNode).children.delete(baseName(abs));
  }
  return { out: [], err, code: err.length ? 1 : 0 };
}

/** Appends without spreading (a spread of 100k+ items overflows the call stack). */
function pushAll<T>(dst: T[], src: readonly T[]): void {
  for (const x of src) dst.push(x);
}
