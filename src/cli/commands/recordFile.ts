// Reads an AgentWorldBench prediction or judged JSONL file for the judge, score and agree
// commands: an unreadable file is one more error, in the same `file: message` form.
import { readFile } from 'node:fs/promises';
import type { CliIO } from '../io.ts';
import { readRecords, type AwbSampleRecord, type RecordKind } from '../../core/bench/records.ts';
import { errnoText, inputFileProblem } from '../io.ts';

/** `-` reads standard input (through `io`), so `lwm infer … | lwm judge - … | lwm score -` works. */
export async function readRecordFile<T extends AwbSampleRecord>(
  file: string,
  kind: RecordKind,
  io?: CliIO,
): Promise<{ records: T[]; lines: number[]; errors: string[] }> {
  let text: string;
  if (file === '-' && io) {
    const lines: string[] = [];
    for await (const l of io.stdinLines()) lines.push(l);
    return readRecords<T>(lines.join('\n'), '(stdin)', kind);
  }
  const problem = inputFileProblem(file);
  if (problem) return { records: [], lines: [], errors: [problem] };
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    return { records: [], lines: [], errors: [`${file}: cannot read (${errnoText(e)})`] };
  }
  const r = readRecords<T>(text, file, kind);
  return r;
}
