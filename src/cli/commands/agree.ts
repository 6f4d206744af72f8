// `lwm agree FILE...`: how well judges agree on several models' judged files.
import { basename } from 'node:path';
import { parseCommandArgs, UsageError, type CliIO } from '../io.ts';
import type { AwbJudgedRecord } from '../../core/bench/records.ts';
import { agreementScore } from '../../core/bench/agreement.ts';
import { readRecordFile } from './recordFile.ts';
import { judgeAgreement, type JudgedScore } from '../../core/judge/agree.ts';

const HELP = `Usage: lwm agree FILE... [--json]

Judge agreement over judged AgentWorldBench files. Each FILE is either JUDGE@MODEL=PATH, or a
PATH whose records name their judge ("judge") and model ("model"; default: the file name).
For each pair of judges: Spearman rho and Kendall tau-b between their rankings of the models
(by mean total_score over the samples both judged), and Pearson r over those samples.
Failed samples are left out.
`;

const fmt = (x: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(3));

export default async function agree(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (positionals.length < 2) throw new UsageError('expected at least two judged files (two judges, or one judge per file)');
  const scores: JudgedScore[] = [];
  const errors: string[] = [];
  for (const arg of positionals) {
    const m = /^([^@=]+)@([^=]+)=(.+)$/.exec(arg);
    const path = m ? m[3] : arg;
    const r = await readRecordFile<AwbJudgedRecord>(path, 'judged');
    errors.push(...r.errors);
    r.records.forEach((rec, i) => {
      const judge = m ? m[1] : typeof rec.judge === 'string' ? rec.judge : null;
      const model = m ? m[2] : typeof rec.model === 'string' ? rec.model : basename(path).replace(/\.jsonl$/, '');
      if (!judge) {
        errors.push(`${path}:${r.lines[i]}: the record names no "judge"; pass the file as JUDGE@MODEL=${path}`);
        return;
      }
      const score = agreementScore(rec, judge, model);
      if (score) scores.push(score);
    });
  }
  if (errors.length) {
    io.err(errors.join('\n') + '\n');
    return 1;
  }
  const pairs = judgeAgreement(scores);
  if (pairs.length === 0) {
    io.err('lwm agree: the files name only one judge; agreement needs at least two\n');
    return 1;
  }
  if (values.json) {
    io.out(JSON.stringify(pairs, (_k, v) => (typeof v === 'number' && Number.isNaN(v) ? null : v), 2) + '\n');
    return 0;
  }
  const rows = [['judge A', 'judge B', 'models', 'samples', 'spearman', 'kendall_tau_b', 'pearson']];
  for (const p of pairs) rows.push([p.judges[0], p.judges[1], String(p.models.length), String(p.samples), fmt(p.spearman), fmt(p.kendallTauB), fmt(p.pearson)]);
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const lines = rows.map((r) => r.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '));
  for (const p of pairs) {
    if (p.samples === 0) {
      lines.push('', `${p.judges[0]} and ${p.judges[1]} share no judged (model, sample) pair: check the model names and sample ids`);
      continue;
    }
    lines.push('', `model means (1-5), ${p.judges[0]} vs ${p.judges[1]}:`);
    p.models.forEach((m, i) => lines.push(`  ${m}: ${p.means[0][i].toFixed(3)}  ${p.means[1][i].toFixed(3)}`));
  }
  io.out(lines.join('\n') + '\n');
  return 0;
}
