// `lwm expand FILE [--seed N] [--eval-fraction F] [--json]`: how many turn samples the train and
// eval splits get (split by trajectory) and how many turns the RL pool holds (one per train
// trajectory), overall and per domain.
import type { CliIO } from '../io.ts';
import { parseCommandArgs, UsageError } from '../io.ts';
import { summarizeExpansion } from '../../core/turns/index.ts';
import { IMPORT_OPTIONS, importFormat, loadFile, singleFile } from './validate.ts';
import { parseSeed } from './convert.ts';

const USAGE = 'lwm expand FILE [--seed N] [--eval-fraction F] [--json] [--format F] [--domain D]';

export default async function expand(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    ...IMPORT_OPTIONS,
    seed: { type: 'string' },
    'eval-fraction': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.out(`usage: ${USAGE}\nSplits by trajectory (default eval fraction 0.1) and picks one RL turn per train trajectory.\n`);
    return 0;
  }
  const file = singleFile(positionals, USAGE, io);
  const seed = parseSeed(values.seed);
  const fraction = values['eval-fraction'] === undefined ? 0.1 : Number(values['eval-fraction']);
  if (!(fraction >= 0 && fraction <= 1) || values['eval-fraction']?.trim() === '')
    throw new UsageError(`--eval-fraction must be a number in [0, 1], got '${values['eval-fraction']}'`);
  const r = await loadFile(io, file, { format: importFormat(values.format), domain: values.domain, keepRaw: false });
  if (!r.readable) return 1;
  const s = summarizeExpansion(r.trajectories, { evalFraction: fraction, seed });
  if (values.json) {
    io.out(JSON.stringify({ file, seed, evalFraction: fraction, ...s, errors: r.errorCount }) + '\n');
  } else {
    const rows = [
      ['domain', 'trajectories', 'samples', 'train', 'eval'],
      ...Object.entries(s.perDomain)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([d, v]) => [d, v.trajectories, v.samples, v.train, v.eval].map(String)),
      ['all', s.trajectories, s.turns, s.train.samples, s.eval.samples].map(String),
    ];
    io.out(table(rows));
    io.out(`train: ${s.train.trajectories} trajectories, ${s.train.samples} turn samples\n`);
    io.out(`eval:  ${s.eval.trajectories} trajectories, ${s.eval.samples} turn samples\n`);
    io.out(`RL pool: ${s.rlPool} turns (one per train trajectory), seed ${seed}\n`);
  }
  return r.errorCount ? 1 : 0;
}

/** A left-aligned first column and right-aligned numbers, for terminals. */
export function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')).join('\n') + '\n';
}
