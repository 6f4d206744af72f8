// A CliIO that records what a command prints and feeds it stdin lines, for in-process tests.
import type { CliIO } from './io.ts';

export function captureIO(stdin: string[] = []): CliIO & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    out(t: string) {
      io.stdout += t;
    },
    err(t: string) {
      io.stderr += t;
    },
    async *stdinLines() {
      for (const l of stdin) yield l;
    },
  };
  return io;
}
