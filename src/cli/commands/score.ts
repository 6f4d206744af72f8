// `lwm score JUDGED.jsonl [--format table|official|json]`: the AgentWorldBench table of a judged file.
import { parseCommandArgs, UsageError, type CliIO } from '../io.ts';
import type { AwbJudgedRecord } from '../../core/bench/records.ts';
import { readRecordFile } from './recordFile.ts';
import { scoreJudged } from '../../core/bench/runner.ts';
import { formatOfficial, formatScoreTable } from '../../core/bench/score.ts';

const HELP = `Usage: lwm score JUDGED.jsonl [--format table|official|json]

Scores a judged AgentWorldBench file (ours, or one written by the public scorer) exactly as the
public scorer does: the domain is the last '/'-part of "task"; a record counts only when its
"failed" is false or 0 (a missing "failed" counts as failed); per domain and dimension
(mean - 1) / 4 x 100 over the valid samples, a score of 0 or none left out of that mean; the
total from each sample's total_score; the overall figure over the totals of all valid samples.
Failed samples are counted, never scored as zero. JUDGED.jsonl may be - (standard input).

Where the records carry the rule verifier's verdict ("verifier", as lwm judge writes it), the
table adds, per domain, the verifier's exact-match rate on the deterministic region (exact,
0-100) over the records it could check (checked); --format official stays the public report.

  --format table      one aligned row per domain plus overall (default)
  --format official   the public scorer's printed report, character for character
  --format json       the table as JSON (--json is the same)
`;

const FORMATS = ['table', 'official', 'json'] as const;

export default async function score(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { format: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('expected one JUDGED.jsonl file');
  const format = values.json ? 'json' : (values.format ?? 'table');
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got ${JSON.stringify(format)}`);
  if (values.json && values.format && values.format !== 'json') throw new UsageError('--json and --format disagree');
  const file = positionals[0];
  const { records, errors } = await readRecordFile<AwbJudgedRecord>(file, 'judged', io);
  if (errors.length) {
    io.err(errors.join('\n') + '\n');
    return 1;
  }
  if (records.length === 0) {
    io.err(`${file}: no judged records\n`);
    return 1;
  }
  const table = scoreJudged(records);
  io.out(format === 'json' ? JSON.stringify(table, null, 2) + '\n' : format === 'official' ? formatOfficial(table) : formatScoreTable(table));
  return 0;
}
