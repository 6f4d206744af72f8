// `lwm score JUDGED.jsonl [--json]`: the AgentWorldBench table of a judged file.
import { parseCommandArgs, UsageError, type CliIO } from '../io.ts';
import { type AwbJudgedRecord } from '../../core/bench/records.ts';
import { readRecordFile } from './record-file.ts';
import { scoreJudged } from '../../core/bench/runner.ts';
import { formatScoreTable } from '../../core/bench/score.ts';

const HELP = `Usage: lwm score JUDGED.jsonl [--json]

Scores a judged AgentWorldBench file: per domain and dimension (mean - 1) / 4 x 100 over the
valid samples, the total from each sample's total_score, valid and failed counts, and the
overall figure over all valid samples. Failed samples are counted, never scored as zero.
`;

export default async function score(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('expected one JUDGED.jsonl file');
  const file = positionals[0];
  const { records, errors } = await readRecordFile<AwbJudgedRecord>(file, 'judged');
  if (errors.length) {
    io.err(errors.join('\n') + '\n');
    return 1;
  }
  if (records.length === 0) {
    io.err(`${file}: no judged records\n`);
    return 1;
  }
  const table = scoreJudged(records);
  io.out(values.json ? JSON.stringify(table, null, 2) + '\n' : formatScoreTable(table));
  return 0;
}
