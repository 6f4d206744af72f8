// `lwm convert FILE --to native|agentworldbench|trl|verl [-o OUT]`: imports FILE and writes it in
// another format, one JSON object per line (verl: Parquet when OUT ends in .parquet). Records that
// do not import are listed on stderr (exit 1). With any such error an -o file is not written at
// all (so `convert F -o F` never loses F's bad lines); standard output still gets the rest.
import type { CliIO } from '../io.ts';
import { checkOutputPath, intOption, parseCommandArgs, UsageError, writeFileAtomicSync } from '../io.ts';
import {
  EXPORT_TARGETS,
  exportLines,
  exportSizeWarning,
  exportVerlParquet,
  TRAINING_EXPORT_KINDS,
  type ExportTarget,
  type TrainingExportKind,
} from '../../core/formats/index.ts';
import { IMPORT_OPTIONS, importFormat, loadFile, singleFile, writeLines } from './validate.ts';

const USAGE = 'lwm convert FILE --to native|agentworldbench|trl|verl [--kind sft|rl|multiturn] [--seed N] [-o OUT] [--format F] [--domain D]';

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
        '  trl | verl       SFT (every turn) or RL (--kind rl: one turn per trajectory) rows with mask category and loss weight;\n' +
        '                   verl also --kind multiturn (one row per trajectory, a loss weight per turn)\n' +
        '  -o OUT           JSON lines; for verl OUT must end in .parquet (Parquet, what verl reads) or .jsonl\n',
    );
    return 0;
  }
  const file = singleFile(positionals, USAGE, io);
  if (!values.to) throw new UsageError(`--to is required\nusage: ${USAGE}`);
  if (!(EXPORT_TARGETS as readonly string[]).includes(values.to)) throw new UsageError(`--to must be one of ${EXPORT_TARGETS.join(', ')}; got '${values.to}'`);
  const kind = (values.kind ?? 'sft') as TrainingExportKind;
  if (!(TRAINING_EXPORT_KINDS as readonly string[]).includes(kind))
    throw new UsageError(`--kind must be one of ${TRAINING_EXPORT_KINDS.join(', ')}, got '${kind}'`);
  if (values.kind && values.to !== 'trl' && values.to !== 'verl') throw new UsageError('--kind only applies to --to trl or --to verl');
  if (kind === 'multiturn' && values.to !== 'verl') throw new UsageError('--kind multiturn only applies to --to verl');
  const seed = parseSeed(values.seed);
  const target = values.to as ExportTarget;
  const out = values.out;
  const parquet = out !== undefined && /\.parquet$/i.test(out);
  if (parquet && target !== 'verl') throw new UsageError(`-o ${out}: Parquet is written for --to verl only; name the output .jsonl`);
  if (target === 'verl' && out !== undefined && !parquet && !/\.jsonl$/i.test(out)) {
    throw new UsageError(`-o ${out}: for --to verl the output must end in .parquet (Parquet, what verl reads) or .jsonl (JSON lines)`);
  }
  if (out !== undefined) checkOutputPath(out);
  const r = await loadFile(io, file, { format: importFormat(values.format), domain: values.domain, keepRaw: target === 'agentworldbench' });
  if (!r.readable) return 1;
  if (out !== undefined && r.errorCount) {
    const errors = `${r.errorCount} error${r.errorCount === 1 ? '' : 's'} in ${file}`;
    io.err(`${out}: left as it was (${errors}; nothing written: without -o the records that convert go to standard output)\n`);
    return 1;
  }
  const big = exportSizeWarning(target, r.trajectories, { kind });
  if (big) io.err(`lwm convert: warning: ${big}\n`);
  let n: number;
  if (parquet) {
    const written = exportVerlParquet(r.trajectories, { kind, seed });
    writeFileAtomicSync(out, written.bytes);
    n = written.rows;
  } else n = await writeLines(io, out, exportLines(target, r.trajectories, { kind, seed }));
  if (out) io.err(`${out}: wrote ${n} ${target} ${parquet ? 'Parquet rows' : 'records'} from ${r.trajectories.length} trajectories\n`);
  return r.errorCount ? 1 : 0;
}
