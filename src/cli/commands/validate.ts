// `lwm validate FILE`: imports FILE (any supported format, streamed) and lists every problem as
// `file:line: /pointer: message` on stderr. Exit 0 when clean, 1 when anything is wrong.
// Also home of the file helpers the other data commands share.
import { createReadStream, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CliIO } from '../io.ts';
import { inputFileProblem, parseCommandArgs, UsageError, writeOutput } from '../io.ts';
import { FORMAT_NAMES, importStream, type FormatName, type ImportOptions } from '../../core/formats/index.ts';
import { formatDataError, type DataError } from '../../core/schema/validate.ts';
import type { Trajectory } from '../../core/schema/types.ts';

/** Options every data command accepts. */
export const IMPORT_OPTIONS = {
  format: { type: 'string' },
  domain: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export function importFormat(value: string | undefined): FormatName | 'auto' {
  if (value === undefined || value === 'auto') return 'auto';
  if (!(FORMAT_NAMES as readonly string[]).includes(value)) throw new UsageError(`--format must be one of auto, ${FORMAT_NAMES.join(', ')}; got '${value}'`);
  return value as FormatName;
}

/** The built-in default dataset, used when a command is given no FILE. */
export const DEFAULT_DATASET = fileURLToPath(new URL('../../../public/default-dataset.jsonl', import.meta.url));

/** The one FILE argument; with none, the built-in default dataset (said on stderr when `io` is given). */
export function singleFile(positionals: string[], usage: string, io?: CliIO): string {
  if (positionals.length === 0) {
    io?.err(`(no FILE given: using the built-in default dataset, ${DEFAULT_DATASET})\n`);
    return DEFAULT_DATASET;
  }
  if (positionals.length !== 1) throw new UsageError(`expected one FILE, got ${positionals.length}\nusage: ${usage}`);
  return positionals[0];
}

export interface LoadedFile {
  trajectories: Trajectory[];
  errors: DataError[];
  errorCount: number;
  format?: FormatName;
  /** False when the file could not be opened at all (already reported). */
  readable: boolean;
}

/**
 * Streams a file through the importer. Errors go to stderr as they come, up to `maxShown`; the
 * trajectories are collected unless `collect` is false (validate only counts them).
 */
export async function loadFile(
  io: CliIO,
  file: string,
  options: ImportOptions & { collect?: boolean; maxShown?: number } = {},
): Promise<LoadedFile & { turns: number; count: number }> {
  const out = {
    trajectories: [] as Trajectory[],
    errors: [] as DataError[],
    errorCount: 0,
    format: undefined as FormatName | undefined,
    readable: true,
    turns: 0,
    count: 0,
  };
  const problem = inputFileProblem(file);
  if (problem) {
    io.err(problem + '\n');
    return { ...out, readable: false, errorCount: 1 };
  }
  const total = statSync(file).size;
  const maxShown = options.maxShown ?? 200;
  const report = (e: DataError) => {
    out.errorCount++;
    if (out.errors.length < maxShown) {
      out.errors.push(e);
      io.err(formatDataError(e) + '\n');
    }
  };
  for await (const ev of importStream(createReadStream(file, { highWaterMark: 1 << 20 }), { file, total, ...options })) {
    if (ev.kind === 'format') out.format = ev.format;
    else if (ev.kind === 'error') report(ev.error);
    else {
      const t = ev.trajectory;
      out.count++;
      out.turns += t.turns.length;
      if (options.collect !== false) out.trajectories.push(t);
    }
  }
  if (out.errorCount > out.errors.length) io.err(`${file}: ${out.errorCount - out.errors.length} more errors not shown\n`);
  return out;
}

/**
 * Writes lines to a file (or stdout when `path` is undefined) through writeOutput: respecting
 * back-pressure, and replacing the file only once every line is written.
 */
export async function writeLines(io: CliIO, path: string | undefined, lines: Iterable<string>): Promise<number> {
  let n = 0;
  await writeOutput(
    io,
    path,
    (function* () {
      for (const l of lines) {
        n++;
        yield l + '\n';
      }
    })(),
  );
  return n;
}

const USAGE = 'lwm validate FILE [--format auto|native|agentworldbench|openai|sharegpt|agentinstruct] [--domain D] [--json]';

export default async function validate(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { ...IMPORT_OPTIONS, json: { type: 'boolean' } });
  if (values.help) {
    io.out(`usage: ${USAGE}\nChecks every record against the trajectory schema; errors go to stderr as file:line: /pointer: message.\n`);
    return 0;
  }
  const file = singleFile(positionals, USAGE, io);
  const r = await loadFile(io, file, { format: importFormat(values.format), domain: values.domain, keepRaw: false, collect: false });
  if (!r.readable) return 1;
  if (values.json) {
    io.out(JSON.stringify({ file, format: r.format ?? null, trajectories: r.count, turns: r.turns, errors: r.errorCount, valid: r.errorCount === 0 }) + '\n');
  } else {
    io.out(`${file}: ${r.count} trajectories, ${r.turns} turns, format ${r.format ?? 'unknown'}, ${r.errorCount} error${r.errorCount === 1 ? '' : 's'}\n`);
  }
  return r.errorCount ? 1 : 0;
}
