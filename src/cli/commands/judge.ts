// `lwm judge PRED.jsonl --judge local|endpoint ...`: judged records from prediction records.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkOutputPath, inputFileProblem, intOption, parseCommandArgs, UsageError, writeOutput, type CliIO } from '../io.ts';
import { toJsonl, type AwbJudgedRecord, type AwbPredictionRecord } from '../../core/bench/records.ts';
import { readRecordFile } from './recordFile.ts';
import { judgedRecord, judgeRecord, scoreJudged } from '../../core/bench/runner.ts';
import { formatScoreTable } from '../../core/bench/score.ts';
import { localJudge } from '../../core/judge/rubric.ts';
import { DEFAULT_JUDGE_MAX_TOKENS, DEFAULT_JUDGE_TEMPERATURE } from '../../core/judge/llm.ts';
import type { Judge } from '../../core/judge/types.ts';
import { domainOfTask } from '../../core/schema/types.ts';
import { endpointJudge } from '../../backends/endpoint.ts';
import { envApiKey } from './common.ts';

/** Judgements in flight: enough to keep a served model busy without tripping its rate limit. */
const DEFAULT_CONCURRENCY = 4;
/** Extra attempts after an unparseable verdict or a transient error. */
const DEFAULT_RETRIES = 2;
const DEFAULT_TIMEOUT_S = 120;
/** The longest pause a server's Retry-After may ask for before the request counts as failed. */
const DEFAULT_MAX_RETRY_WAIT_S = 60;

const HELP = `Usage: lwm judge PRED.jsonl --judge local|endpoint [options]

Judges AgentWorldBench prediction records (records with "gen") against their reference
observations and writes judged records (five scores, total_score, failed, strengths,
weaknesses, plus the rule verifier's verdict as "verifier": {pass, applicable, rule, regions,
failure}, which lwm score reads and the public scorer ignores). PRED.jsonl may be - (standard
input). The domain is the last '/'-part of "task". A
record with an empty "gen" is failed ("No model generation"), as in the public judge; a verdict
missing a dimension scores the others (the missing one is 0, left out of the means).

  --judge local|endpoint   the deterministic local rubric judge, or an LLM judge
  --base-url URL           OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1
  --model NAME             the judge model served there
  --api-key KEY            API key (default: $LWM_API_KEY, then $OPENAI_API_KEY)
  --max-tokens N           reply budget per request (default ${DEFAULT_JUDGE_MAX_TOKENS}, as the public judge)
  --temperature T          sampling temperature (default ${DEFAULT_JUDGE_TEMPERATURE}, as the public judge)
  --judge-prompts DIR      system prompts per domain from DIR/DOMAIN/judge_system_prompt.txt
                           (the public prompts/ folder); default: our built-in prompt
  --concurrency N          judgements in flight (default ${DEFAULT_CONCURRENCY})
  --retries N              extra attempts after an unparseable verdict or a transient error
                           (default ${DEFAULT_RETRIES}; one policy: a sample costs at most N + 1 requests)
  --max-retry-wait S       longest pause a server's Retry-After may ask for (default ${DEFAULT_MAX_RETRY_WAIT_S})
  --timeout S              seconds per request (default ${DEFAULT_TIMEOUT_S})
  -o, --output FILE        write judged records here (default: standard output)

Every record is written, failures included as failed records (with "error"); a refused key
or another error that stops the run marks the records not yet judged as failed and exits 1.
The score table goes to standard output when -o is given, else to standard error.
`;

function positiveInt(name: string, v: string | undefined, dflt: number, min = 1): number {
  if (v === undefined) return dflt;
  return intOption(name, v, min);
}

/** --base-url: an absolute http(s) URL (file:, javascript:, data: ... are usage errors). */
export function checkBaseUrl(v: string): void {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new UsageError(`--base-url must be an absolute http:// or https:// URL, got ${JSON.stringify(v)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`--base-url must be an http:// or https:// URL, not ${u.protocol}`);
  // Never echoed back: the message does not repeat the URL.
  if (u.username || u.password) throw new UsageError('--base-url must not hold a user name or password; pass the key with --api-key or $LWM_API_KEY');
}

function nonNegative(name: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`--${name} must be a number ≥ 0, got ${JSON.stringify(v)}`);
  return n;
}

/** DIR/DOMAIN/judge_system_prompt.txt for every domain in the records; missing files are errors. */
async function loadJudgePrompts(dir: string, domains: Iterable<string>): Promise<{ prompts: Record<string, string>; errors: string[] }> {
  const prompts: Record<string, string> = Object.create(null); // keyed by domains from data
  const errors: string[] = [];
  for (const d of domains) {
    const file = join(dir, d, 'judge_system_prompt.txt');
    const problem = inputFileProblem(file);
    if (problem) {
      errors.push(`${problem} (the judge prompt for domain "${d}")`);
      continue;
    }
    try {
      prompts[d] = await readFile(file, 'utf8');
    } catch (e) {
      errors.push(`${file}: cannot read the judge prompt for domain "${d}" (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }
  return { prompts, errors };
}

export const JUDGE_OPTIONS = {
  judge: { type: 'string' },
  'base-url': { type: 'string' },
  model: { type: 'string' },
  'api-key': { type: 'string' },
  'max-tokens': { type: 'string' },
  temperature: { type: 'string' },
  'judge-prompts': { type: 'string' },
  concurrency: { type: 'string' },
  retries: { type: 'string' },
  'max-retry-wait': { type: 'string' },
  timeout: { type: 'string' },
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type JudgeValues = ReturnType<typeof parseCommandArgs<typeof JUDGE_OPTIONS>>['values'];

/** The judging settings from the flags, checked before the records are read. */
export function judgeSettings(values: JudgeValues) {
  const kind = values.judge ?? 'local';
  const settings = {
    kind,
    concurrency: positiveInt('concurrency', values.concurrency, DEFAULT_CONCURRENCY),
    retries: positiveInt('retries', values.retries, DEFAULT_RETRIES, 0),
    timeout: positiveInt('timeout', values.timeout, DEFAULT_TIMEOUT_S),
    maxTokens: positiveInt('max-tokens', values['max-tokens'], DEFAULT_JUDGE_MAX_TOKENS),
    temperature: nonNegative('temperature', values.temperature, DEFAULT_JUDGE_TEMPERATURE),
    maxRetryWait: nonNegative('max-retry-wait', values['max-retry-wait'], DEFAULT_MAX_RETRY_WAIT_S),
  };
  if (kind !== 'local' && kind !== 'endpoint') throw new UsageError(`--judge must be local or endpoint, got ${JSON.stringify(kind)}`);
  if (kind === 'endpoint' && (!values['base-url'] || !values.model)) throw new UsageError('--judge endpoint needs --base-url and --model');
  if (values['base-url'] !== undefined) checkBaseUrl(values['base-url']);
  if (kind === 'local') {
    for (const f of ['base-url', 'model', 'max-tokens', 'temperature', 'judge-prompts', 'max-retry-wait'] as const)
      if (values[f] !== undefined) throw new UsageError(`--${f} is for --judge endpoint`);
  }
  return settings;
}

/** The local rubric, or the endpoint judge with its prompts per domain; null when a prompt file is unusable (said). */
export async function openJudge(
  io: CliIO,
  values: JudgeValues,
  settings: ReturnType<typeof judgeSettings>,
  records: readonly Pick<AwbPredictionRecord, 'task'>[],
): Promise<Judge | null> {
  if (settings.kind === 'local') return localJudge;
  let systemPrompts: Record<string, string> | undefined;
  if (values['judge-prompts']) {
    const loaded = await loadJudgePrompts(values['judge-prompts'], new Set(records.map((r) => domainOfTask(r.task))));
    if (loaded.errors.length) {
      io.err(loaded.errors.join('\n') + '\n');
      return null;
    }
    systemPrompts = loaded.prompts;
  }
  const { concurrency, timeout, maxRetryWait, retries, maxTokens, temperature } = settings;
  return endpointJudge(
    {
      baseUrl: values['base-url']!,
      model: values.model!,
      apiKey: values['api-key'] ?? envApiKey(),
      maxConcurrency: concurrency,
      timeoutMs: timeout * 1000,
      pageOrigin: null,
      maxRetryAfterMs: maxRetryWait * 1000,
    },
    { retries, maxTokens, temperature, systemPrompts },
  );
}

/**
 * Judges every record, `concurrency` at a time. Every record gets a line: judged, failed, or
 * (after an error that stops the run) not judged; `error` is what stopped it.
 */
async function judgeAll(records: AwbPredictionRecord[], theJudge: Judge, concurrency: number): Promise<{ out: AwbJudgedRecord[]; error: Error | null }> {
  const judged: (AwbJudgedRecord | undefined)[] = new Array(records.length);
  const stop = new AbortController();
  const run: { error: Error | null } = { error: null };
  let next = 0;
  const worker = async () => {
    while (next < records.length && !run.error) {
      const i = next++;
      try {
        judged[i] = await judgeRecord(records[i], theJudge, stop.signal);
      } catch (e) {
        run.error ??= e instanceof Error ? e : new Error(String(e));
        stop.abort(run.error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, records.length)) }, worker));
  const out = Array.from(
    records,
    (rec, i) => judged[i] ?? judgedRecord(rec, { failed: true, error: `not judged: ${run.error?.message ?? 'the run stopped'}` }, { judge: theJudge.name }),
  );
  return { out, error: run.error };
}

export default async function judge(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, JUDGE_OPTIONS);
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('expected one PRED.jsonl file');
  const settings = judgeSettings(values);

  const file = positionals[0];
  if (values.output !== undefined) checkOutputPath(values.output);
  const { records, errors } = await readRecordFile<AwbPredictionRecord>(file, 'prediction', io);
  if (errors.length) {
    io.err(errors.join('\n') + '\n');
    return 1;
  }
  const theJudge = await openJudge(io, values, settings, records);
  if (!theJudge) return 1;
  const { out, error } = await judgeAll(records, theJudge, settings.concurrency);

  const table = formatScoreTable(scoreJudged(out));
  if (values.output) {
    await writeOutput(io, values.output, toJsonl(out));
    io.out(table);
  } else {
    await writeOutput(
      io,
      undefined,
      out.map((r) => toJsonl([r])),
    );
    io.err(table);
  }
  if (error) {
    io.err(`lwm judge: ${error.message}\n`);
    return 1;
  }
  const failed = out.filter((r) => r.failed);
  if (failed.length) {
    io.err(
      `lwm judge: ${failed.length} of ${out.length} judgements failed (written as failed records, left out of the scores); first: ${String(failed[0].error ?? 'unknown error')}\n`,
    );
    if (failed.length === out.length) return 1;
  }
  return 0;
}
