// `lwm judge PRED.jsonl --judge local|endpoint ...`: judged records from prediction records.
import { writeFile } from 'node:fs/promises';
import { parseCommandArgs, UsageError, type CliIO } from '../io.ts';
import { toJsonl, type AwbJudgedRecord, type AwbPredictionRecord } from '../../core/bench/records.ts';
import { readRecordFile } from './record-file.ts';
import { judgeRecord, scoreJudged } from '../../core/bench/runner.ts';
import { formatScoreTable } from '../../core/bench/score.ts';
import { localJudge } from '../../core/judge/rubric.ts';
import type { Judge } from '../../core/judge/types.ts';
import { endpointJudge, EndpointError } from '../../backends/endpoint.ts';

const HELP = `Usage: lwm judge PRED.jsonl --judge local|endpoint [options]

Judges AgentWorldBench prediction records (records with "gen") against their reference
observations and writes judged records (five scores, total_score, failed, strengths,
weaknesses, plus the rule verifier's result).

  --judge local|endpoint   the deterministic local rubric judge, or an LLM judge
  --base-url URL           OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1
  --model NAME             the judge model served there
  --api-key KEY            API key (default: $LWM_API_KEY, then $OPENAI_API_KEY)
  --concurrency N          judgements in flight (default 4)
  --retries N              extra attempts for an unparseable verdict (default 2)
  --timeout S              seconds per request (default 120)
  -o, --output FILE        write judged records here (default: standard output)

The score table goes to standard output when -o is given, else to standard error.
`;

function positiveInt(name: string, v: string | undefined, dflt: number, min = 1): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got ${JSON.stringify(v)}`);
  return n;
}

export default async function judge(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    judge: { type: 'string' },
    'base-url': { type: 'string' },
    model: { type: 'string' },
    'api-key': { type: 'string' },
    concurrency: { type: 'string' },
    retries: { type: 'string' },
    timeout: { type: 'string' },
    output: { type: 'string', short: 'o' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('expected one PRED.jsonl file');
  const kind = values.judge ?? 'local';
  const concurrency = positiveInt('concurrency', values.concurrency, 4);
  const retries = positiveInt('retries', values.retries, 2, 0);
  const timeout = positiveInt('timeout', values.timeout, 120);
  let theJudge: Judge;
  if (kind === 'local') theJudge = localJudge;
  else if (kind === 'endpoint') {
    if (!values['base-url'] || !values.model) throw new UsageError('--judge endpoint needs --base-url and --model');
    const apiKey = values['api-key'] ?? process.env.LWM_API_KEY ?? process.env.OPENAI_API_KEY;
    theJudge = endpointJudge({ baseUrl: values['base-url'], model: values.model, apiKey, maxConcurrency: concurrency, timeoutMs: timeout * 1000, pageOrigin: null }, { retries });
  } else throw new UsageError(`--judge must be local or endpoint, got ${JSON.stringify(kind)}`);

  const file = positionals[0];
  const { records, errors } = await readRecordFile<AwbPredictionRecord>(file, 'prediction');
  if (errors.length) {
    io.err(errors.join('\n') + '\n');
    return 1;
  }

  const judged: AwbJudgedRecord[] = new Array(records.length);
  let next = 0;
  const worker = async () => {
    while (next < records.length) {
      const i = next++;
      judged[i] = await judgeRecord(records[i], theJudge);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, records.length)) }, worker));
  } catch (e) {
    if (e instanceof EndpointError) {
      io.err(`lwm judge: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
  const failed = judged.filter((r) => r.failed);
  if (failed.length) {
    const first = String(failed[0].error ?? 'unknown error');
    io.err(`lwm judge: ${failed.length} of ${judged.length} judgements failed (left out of the scores); first: ${first}\n`);
    if (failed.length === judged.length) return 1;
  }
  const table = formatScoreTable(scoreJudged(judged));
  if (values.output) {
    await writeFile(values.output, toJsonl(judged));
    io.out(table);
  } else {
    io.out(toJsonl(judged));
    io.err(table);
  }
  return 0;
}
