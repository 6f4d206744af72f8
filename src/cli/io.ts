// What a command sees of the outside world, so tests can run commands in-process; and the one
// place where the CLI writes files, checks input paths and makes printed text safe for terminals.
import { chmodSync, closeSync, fsyncSync, lstatSync, openSync, realpathSync, renameSync, statSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import { open, rename, unlink, chmod } from 'node:fs/promises';
import { once } from 'node:events';
import { basename, dirname, join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  /** Lines typed on standard input (for interactive commands such as `lwm env`). */
  stdinLines(): AsyncIterable<string>;
  /** Resolves when standard output can take more (back-pressure); absent when it always can. */
  drain?(): Promise<void> | void;
}

/** A command: parses its own arguments, returns the exit code (0 fine, 1 invalid input, 2 usage). */
export type Command = (argv: string[], io: CliIO) => Promise<number>;

export class UsageError extends Error {}

/** A file the command cannot read or write: one line on stderr, exit 1. */
export class FileError extends Error {}

// ---------------------------------------------------------------------------------------------
// Terminal safety

/**
 * Control characters (C0 but tab and newline, DEL, C1) and bidirectional overrides, written as
 * `\uXXXX`: data can neither retitle, clear or recolour the terminal nor reorder what it shows.
 * Inside a JSON string the escape is the same value, so JSON output stays equal JSON.
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `scheme://user:password@host` → `scheme://***@host`: credentials are never echoed. */
export function redactCredentials(text: string): string {
  // A bounded scheme keeps this linear on long runs such as 'a.a.a.a…'.
  if (!text.includes('@')) return text;
  return text.replace(/\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#@]*(?:@[^\s/?#@]*)*@/gi, '$1***@');
}

/** What main() hands a command: everything printed is escaped, credentials on stderr redacted. */
export function safeIO(io: CliIO): CliIO {
  return {
    out: (t) => io.out(escapeControl(t)),
    err: (t) => io.err(escapeControl(redactCredentials(t))),
    stdinLines: () => io.stdinLines(),
    ...(io.drain && { drain: () => io.drain!() }),
  };
}

// ---------------------------------------------------------------------------------------------
// Standard streams

let stdoutClosed = false;

export function nodeIO(): CliIO {
  installSignalCleanup();
  // `lwm ... | head`: the reader went away. End quietly, as a Unix tool does, leaving no temp files.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') {
      stdoutClosed = true;
      removeTemps();
      process.exit(0);
    }
    throw e;
  });
  process.stderr.on('error', () => {});
  return {
    out: (t) => void (stdoutClosed || process.stdout.write(t)),
    err: (t) => void process.stderr.write(t),
    drain: () => (process.stdout.writableNeedDrain && !stdoutClosed ? once(process.stdout, 'drain').then(() => {}) : undefined),
    async *stdinLines() {
      const { createInterface } = await import('node:readline');
      const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
      for await (const line of rl) yield line;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Arguments

/** node:util parseArgs, with its errors turned into usage errors (exit code 2). */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, allowPositionals = true) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** An integer option in [min, max] written as plain decimal digits ('' and '1e3' are usage errors). */
export function intOption(name: string, v: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(v);
  if (!/^\s*[-+]?\d+\s*$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// Input files

/**
 * Why FILE cannot be read as data, or null when it can: only regular files are read, so a FIFO
 * with no writer cannot hang a command and /dev/zero cannot fill memory.
 */
export function inputFileProblem(file: string): string | null {
  let st: Stats;
  try {
    st = statSync(file);
  } catch (e) {
    return `${file}: cannot read (${errnoText(e)})`;
  }
  if (st.isFile()) return null;
  return `${file}: cannot read (${st.isDirectory() ? 'EISDIR: is a directory' : `not a regular file but ${kindOf(st)}; save the data to a file first`})`;
}

function kindOf(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a file';
}

/** `ENOENT: no such file or directory` from a Node error, without the syscall and path. */
export function errnoText(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (!err?.code) return String((e as Error)?.message ?? e);
  const m = /^[A-Z0-9]+: ([^,]+)/.exec(err.message);
  return m ? `${err.code}: ${m[1]}` : err.code;
}

// ---------------------------------------------------------------------------------------------
// Output files: written beside the target and renamed over it only when complete.

const temps = new Set<string>();

function removeTemps() {
  for (const t of temps) {
    try {
      unlinkSync(t);
    } catch {
      /* already gone */
    }
  }
  temps.clear();
}

let signalsInstalled = false;
/** On SIGTERM / SIGINT / SIGHUP: remove half-written temp files, then die of the signal. */
function installSignalCleanup() {
  if (signalsInstalled) return;
  signalsInstalled = true;
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.once(sig, () => {
      removeTemps();
      process.kill(process.pid, sig);
    });
  }
}

interface Target {
  path: string;
  /** Devices and FIFOs (/dev/null, /dev/stdout) are written in place: they cannot be renamed over. */
  direct: boolean;
  mode?: number;
}

/**
 * Checks that `path` can be an output file before any work is done: its folder exists and it is
 * not a folder. Throws FileError with the one-line reason.
 */
export function checkOutputPath(path: string): Target {
  if (path === '') throw new FileError(`cannot write to an empty file name`);
  let st: Stats;
  try {
    st = statSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new FileError(`${path}: cannot write (${errnoText(e)})`);
    const dir = dirname(path);
    let ds: Stats;
    try {
      ds = statSync(dir);
    } catch (e2) {
      throw new FileError(`${path}: cannot write (${(e2 as NodeJS.ErrnoException).code === 'ENOENT' ? `no such directory: ${dir}` : errnoText(e2)})`);
    }
    if (!ds.isDirectory()) throw new FileError(`${path}: cannot write (not a directory: ${dir})`);
    return { path, direct: false };
  }
  if (st.isDirectory()) throw new FileError(`${path}: cannot write (EISDIR: is a directory)`);
  // A symbolic link stays a link: the file it points to is the one replaced.
  const real = lstatSync(path).isSymbolicLink() ? realpathSync(path) : path;
  return { path: real, direct: !st.isFile(), mode: st.mode & 0o7777 };
}

function tempBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`);
}

export type OutputContent = string | Uint8Array | Iterable<string> | AsyncIterable<string>;

async function* chunks(content: OutputContent): AsyncIterable<string | Uint8Array> {
  if (typeof content === 'string' || content instanceof Uint8Array) yield content;
  else yield* content;
}

/**
 * Writes `content` to `path`, or to standard output when `path` is undefined (waiting for
 * `io.drain` between chunks, so a slow reader holds the producer back instead of memory).
 * A file is written to a temporary file beside it and renamed over it only once complete: an
 * error in the producer, a full disk or a signal leaves the previous file as it was.
 */
export async function writeOutput(io: CliIO, path: string | undefined, content: OutputContent): Promise<void> {
  if (path === undefined) {
    for await (const c of chunks(content)) {
      io.out(typeof c === 'string' ? c : new TextDecoder().decode(c));
      await io.drain?.();
    }
    return;
  }
  const target = checkOutputPath(path);
  const file = target.direct ? target.path : tempBeside(target.path);
  let handle;
  try {
    handle = await open(file, target.direct ? 'w' : 'wx', 0o666);
  } catch (e) {
    throw new FileError(`${path}: cannot write (${errnoText(e)})`);
  }
  if (!target.direct) temps.add(file);
  let ok = false;
  try {
    let pending = '';
    const flush = async () => {
      if (pending) await handle.write(pending);
      pending = '';
    };
    for await (const c of chunks(content)) {
      if (typeof c === 'string') {
        pending += c;
        if (pending.length >= 1 << 16) await flush();
      } else {
        await flush();
        await handle.write(c);
      }
    }
    await flush();
    if (!target.direct) await handle.sync();
    ok = true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code) throw new FileError(`${path}: cannot write (${errnoText(e)})`);
    throw e;
  } finally {
    await handle.close().catch(() => {});
    if (!target.direct) {
      if (ok) {
        try {
          if (target.mode !== undefined) await chmod(file, target.mode);
          await rename(file, target.path);
        } catch (e) {
          ok = false;
          // biome-ignore lint/correctness/noUnsafeFinally: the throw is the catch's; the finally below only cleans up
          throw new FileError(`${path}: cannot write (${errnoText(e)})`);
        } finally {
          if (!ok) await unlink(file).catch(() => {});
          temps.delete(file);
        }
      } else {
        await unlink(file).catch(() => {});
        temps.delete(file);
      }
    }
  }
}

/** writeOutput for bytes already in memory, synchronously (training checkpoints). */
export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  const target = checkOutputPath(path);
  const file = target.direct ? target.path : tempBeside(target.path);
  let fd: number;
  try {
    fd = openSync(file, target.direct ? 'w' : 'wx', 0o666);
  } catch (e) {
    throw new FileError(`${path}: cannot write (${errnoText(e)})`);
  }
  if (!target.direct) temps.add(file);
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
    if (!target.direct) fsyncSync(fd);
    closeSync(fd);
    if (!target.direct) {
      if (target.mode !== undefined) chmodSync(file, target.mode);
      renameSync(file, target.path);
    }
  } catch (e) {
    try {
      closeSync(fd);
    } catch {
      /* closed */
    }
    if (!target.direct) {
      try {
        unlinkSync(file);
      } catch {
        /* gone */
      }
    }
    throw new FileError(`${path}: cannot write (${errnoText(e)})`);
  } finally {
    temps.delete(file);
  }
}
