// `lwm convert FILE --to native|agentworldbench|trl|verl [-o OUT]`: imports FILE and writes it in
// another format, one JSON object per line. Records that do not import are listed on stderr
// (exit 1) and left out of the output; the rest is still written.
import type { CliIO } from '../io.ts';
import { checkOutputPath, intOption, parseCommandArgs, UsageError } from '../io.ts';
import { EXPORT_TARGETS, exportLines, type ExportTarget } from '../../core/formats/index.ts';
import { IMPORT_OPTIONS, importFormat, loadFile, singleFile, writeLines } from './validate.ts';

const USAGE = 'lwm convert FILE --to native|agentworldbench|trl|verl [--kind sft|rl] [--seed N] [-o OUT] [--format F] [--domain D]';

export function parseSeed(value: string | undefined): number {
  if (value === undefined) return 0;
  return intOption('seed', value, 0, 0xffffffff);
}

export default async function convert(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    ...IMPORT_OPTIONS,
    to: { type: 'string' },
    out: { type: 'string', short: 'o' },
    kind: { type: 'string' },
    seed: { type: 'string' },
  });
  if (values.help) {
    io.out(
      `usage: ${USAGE}\n` +
        '  native           our trajectory JSONL\n' +
        '  agentworldbench  one record per turn, {task, id, prompt, response, current_prompt, system_str, turn_idx, total_turns}\n' +
        '  trl | verl       SFT (every turn) or RL (--kind rl: one turn per trajectory) rows with mask category and loss weight\n',
    );
    return 0;
  }
  const file = singleFile(positionals, USAGE, io);
  if (!values.to) throw new UsageError(`--to is required\nusage: ${USAGE}`);
  if (!(EXPORT_TARGETS as readonly string[]).includes(values.to)) throw new UsageError(`--to must be one of ${EXPORT_TARGETS.join(', ')}; got '${values.to}'`);
  const kind = values.kind ?? 'sft';
  if (kind !== 'sft' && kind !== 'rl') throw new UsageError(`--kind must be sft or rl, got '${kind}'`);
  if (values.kind && values.to !== 'trl' && values.to !== 'verl') throw new UsageError('--kind only applies to --to trl or --to verl');
  const seed = parseSeed(values.seed);
  const target = values.to as ExportTarget;
  if (values.out !== undefined) checkOutputPath(values.out);
  const r = await loadFile(io, file, { format: importFormat(values.format), domain: values.domain, keepRaw: target === 'agentworldbench' });
  if (!r.readable) return 1;
  if (values.out !== undefined && r.errorCount && r.trajectories.length === 0) {
    io.err(`${values.out}: left as it was (nothing in ${file} converted)\n`);
    return 1;
  }
  const n = await writeLines(io, values.out, exportLines(target, r.trajectories, { kind, seed }));
  if (values.out) io.err(`${values.out}: wrote ${n} ${target} records from ${r.trajectories.length} trajectories\n`);
  return r.errorCount ? 1 : 0;
}
