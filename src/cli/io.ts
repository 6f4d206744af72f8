// What a command sees of the outside world, so tests can run commands in-process.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  /** Lines typed on standard input (for interactive commands such as `lwm env`). */
  stdinLines(): AsyncIterable<string>;
}

/** A command: parses its own arguments, returns the exit code (0 fine, 1 invalid input, 2 usage). */
export type Command = (argv: string[], io: CliIO) => Promise<number>;

export class UsageError extends Error {}

export function nodeIO(): CliIO {
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    async *stdinLines() {
      const { createInterface } = await import('node:readline');
      const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
      for await (const line of rl) yield line;
    },
  };
}

/** node:util parseArgs, with its errors turned into usage errors (exit code 2). */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, allowPositionals = true) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}
