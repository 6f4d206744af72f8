// `lwm labels`: rejection sampling (docs/method.md §5) as a command. A teacher writes N candidate
// observations per train-split turn, a judge scores each against the real observation, and the
// candidates at or above the threshold go to a label file that `lwm train --stage sft --labels
// FILE` trains on. Retention is printed overall and per domain, judge failures apart.
import { writeFileSync } from 'node:fs';
import type { GenerateRequest, LwmBackend } from '../../core/backend.ts';
import type { TurnSample } from '../../core/turns/index.ts';
import { DEFAULT_KEEP_THRESHOLD } from '../../core/trainSpec.ts';
import { parseCommandArgs, UsageError, type CliIO, type Command } from '../io.ts';
import { envApiKey, isUserError, loadTrainingData, openNodeRuntime, readWhole } from './common.ts';

const USAGE = `lwm labels [--data FILE | --domain D] --teacher local|endpoint -o LABELS.jsonl [options]

Teacher:
  --teacher local          a checkpoint of ours on the GPU (--from CKPT)
  --teacher endpoint       an OpenAI-compatible model: --base-url URL --model NAME [--api-key KEY]
Judge (scores each candidate against the real observation, 1–5):
  --judge local|endpoint   the local rubric (default), or an LLM judge:
                           --judge-base-url URL --judge-model NAME [--judge-api-key KEY]
Sampling:
  --candidates N           candidates per turn (default 4)
  --threshold X            keep a candidate whose judge mean is at least X, 1–5 (default ${DEFAULT_KEEP_THRESHOLD})
  --keep all|best          every candidate above the threshold, or the best one per turn (default all)
  --samples N              label at most N turns of the train split (a seeded spread; default all)
  --temperature T          teacher sampling temperature (default 1)
  --max-tokens N           longest candidate (default 256; local: a quarter of the context)
  --concurrency N          turns in flight (endpoint teacher; default 4)
  --seed S --eval-fraction F   the split lwm train makes with the same values (defaults 0, 0.1)
  --json                   print the retention as JSON on standard output

Keys default to $LWM_API_KEY, then $OPENAI_API_KEY.`;

/** The share of each domain's trajectories lwm train holds out for evaluation: labels come from the rest. */
const DEFAULT_EVAL_FRACTION = 0.1;
/** Longest candidate from an endpoint teacher; the local one is held to a quarter of its context too. */
const DEFAULT_MAX_TOKENS = 256;
/** Progress lines on stderr at most this often. */
const PROGRESS_EVERY_MS = 2000;

const int = (name: string, v: string | undefined, dflt: number | undefined, min = 1): number | undefined => {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got '${v}'`);
  return n;
};

const num = (name: string, v: string | undefined, dflt: number, lo: number, hi: number): number => {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < lo || n > hi) throw new UsageError(`--${name} must be a number in [${lo}, ${hi}], got '${v}'`);
  return n;
};

const OPTIONS = {
  data: { type: 'string' },
  domain: { type: 'string', multiple: true },
  teacher: { type: 'string' },
  from: { type: 'string' },
  'base-url': { type: 'string' },
  model: { type: 'string' },
  'api-key': { type: 'string' },
  judge: { type: 'string', default: 'local' },
  'judge-base-url': { type: 'string' },
  'judge-model': { type: 'string' },
  'judge-api-key': { type: 'string' },
  candidates: { type: 'string' },
  threshold: { type: 'string' },
  keep: { type: 'string', default: 'all' },
  samples: { type: 'string' },
  temperature: { type: 'string' },
  'max-tokens': { type: 'string' },
  concurrency: { type: 'string' },
  seed: { type: 'string' },
  'eval-fraction': { type: 'string' },
  out: { type: 'string', short: 'o' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type LabelValues = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>['values'];
type Teacher = { backend: LwmBackend; request: (s: TurnSample) => GenerateRequest };

/** The command's settings from the flags, every one checked before the data is read. */
function labelSettings(values: LabelValues) {
  const teacherKind = values.teacher;
  if (teacherKind !== 'local' && teacherKind !== 'endpoint') throw new UsageError(`--teacher must be local or endpoint\nusage: ${USAGE}`);
  if (teacherKind === 'local' && !values.from) throw new UsageError('--teacher local needs --from CKPT (the checkpoint that writes the candidates)');
  if (teacherKind === 'endpoint' && (!values['base-url'] || !values.model)) throw new UsageError('--teacher endpoint needs --base-url and --model');
  const judgeKind = values.judge;
  if (judgeKind !== 'local' && judgeKind !== 'endpoint') throw new UsageError(`--judge must be local or endpoint, got '${judgeKind}'`);
  if (judgeKind === 'endpoint' && (!values['judge-base-url'] || !values['judge-model']))
    throw new UsageError('--judge endpoint needs --judge-base-url and --judge-model');
  if (values.keep !== 'all' && values.keep !== 'best') throw new UsageError(`--keep must be all or best, got '${values.keep}'`);
  if (!values.out) throw new UsageError(`-o LABELS.jsonl is required (the file lwm train --labels reads)\nusage: ${USAGE}`);
  const options = {
    candidates: int('candidates', values.candidates, 4)!,
    threshold: num('threshold', values.threshold, DEFAULT_KEEP_THRESHOLD, 1, 5),
    keep: values.keep as 'all' | 'best',
    temperature: num('temperature', values.temperature, 1, 0, 5),
    maxTokens: int('max-tokens', values['max-tokens'], undefined),
    // An endpoint answers several requests at once; the local teacher is one GPU.
    concurrency: int('concurrency', values.concurrency, teacherKind === 'endpoint' ? 4 : 1)!,
    seed: int('seed', values.seed, 0, 0)!,
  };
  const evalFraction = num('eval-fraction', values['eval-fraction'], DEFAULT_EVAL_FRACTION, 0, 1);
  const maxSamples = int('samples', values.samples, undefined);
  return { teacherKind, judgeKind: judgeKind as 'local' | 'endpoint', options, evalFraction, maxSamples, out: values.out };
}

/**
 * The local teacher: the --from checkpoint on the GPU through Dawn; null when it cannot start
 * (said on stderr). What it holds goes into `release`, first to last in the order to free it.
 */
async function openLocalTeacher(io: CliIO, from: string, release: (() => void)[]) {
  const bytes = readWhole(io, from);
  if (bytes === null) return null;
  const { localTeacher } = await import('../../train/teacher.ts');
  const runtime = await openNodeRuntime(io, 'lwm labels: the local teacher needs WebGPU: ');
  if (!runtime) return null;
  release.push(() => runtime.dispose());
  io.err(`adapter: ${runtime.describe()}\n`);
  const local = localTeacher(runtime, bytes);
  release.unshift(() => local.dispose());
  return local;
}

/** Progress on stderr, at most every PROGRESS_EVERY_MS, and at the end. */
function progressPrinter(io: CliIO) {
  let lastShown = 0;
  return (done: number, total: number) => {
    if (done === total || Date.now() - lastShown > PROGRESS_EVERY_MS) {
      lastShown = Date.now();
      io.err(`[labels] ${done}/${total} turns\n`);
    }
  };
}

const labels: Command = async (argv, io) => {
  const { values } = parseCommandArgs(argv, OPTIONS, false);
  if (values.help) {
    io.out(`Usage: ${USAGE}\n`);
    return 0;
  }
  const { teacherKind, judgeKind, options, evalFraction, maxSamples, out } = labelSettings(values);
  const envKey = envApiKey();
  const loaded = await loadTrainingData(io, values.data);
  if (!loaded) return 1;

  const { labelSamples, labelsJsonl, retentionReport, spreadSamples } = await import('../../train/labels.ts');
  const { rejectionSample } = await import('../../train/rejection.ts');
  const { makeJudge, endpointTeacher } = await import('../../train/teacher.ts');
  const { categorizeDataset } = await import('../../core/masking/index.ts');
  const { EndpointError } = await import('../../backends/endpoint.ts');
  const { UserFacingError } = await import('../../train/context.ts');

  let samples = labelSamples(loaded.trajectories, { domains: values.domain, evalFraction, seed: options.seed });
  if (samples.length === 0) {
    io.err(`${loaded.file}: no train-split turns${values.domain ? ` in ${values.domain.join(', ')}` : ''} to label\n`);
    return 1;
  }
  samples = spreadSamples(samples, maxSamples, options.seed);
  // The mask weight of each turn, categorised over the whole file as lwm train does.
  const masks = new Map(categorizeDataset(loaded.trajectories).map((m) => [m.id, m]));
  const weightOf = (s: (typeof samples)[number]) => masks.get(s.trajectoryId)?.turns[s.turnIndex]?.weight ?? 1;

  const release: (() => void)[] = [];
  try {
    const judge = makeJudge(
      judgeKind,
      { baseUrl: values['judge-base-url'] ?? '', model: values['judge-model'] ?? '', apiKey: values['judge-api-key'] ?? envKey },
      { pageOrigin: null },
    );
    let teacher: Teacher;
    let maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
    if (teacherKind === 'endpoint') {
      teacher = endpointTeacher({ baseUrl: values['base-url']!, model: values.model!, apiKey: values['api-key'] ?? envKey }, undefined, {
        pageOrigin: null,
        maxConcurrency: options.concurrency,
      });
    } else {
      const local = await openLocalTeacher(io, values.from!, release);
      if (!local) return 1;
      teacher = local;
      maxTokens = Math.min(maxTokens, local.maxTokens);
    }
    io.err(
      `labelling ${samples.length} train-split turns × ${options.candidates} candidates from ${teacher.backend.name}, judged by ${judge.name} (threshold ${options.threshold})\n`,
    );
    const r = await rejectionSample(samples, teacher.backend, judge, { ...options, maxTokens, request: teacher.request, weightOf }, progressPrinter(io));
    writeFileSync(out, labelsJsonl(r.kept));
    io.err(`${r.kept.length} labels written to ${out}\n`);
    if (values.json) io.out(JSON.stringify({ labels: out, overall: r.overall, per_domain: r.perDomain }) + '\n');
    else io.out(retentionReport(r));
    if (r.overall.judged === 0) {
      io.err('lwm labels: every judgement failed; no candidate could be kept or rejected\n');
      return 1;
    }
    return 0;
  } catch (e) {
    if (isUserError(e, [EndpointError, UserFacingError])) {
      io.err(`lwm labels: ${(e as Error).message}\n`);
      return 1;
    }
    throw e;
  } finally {
    for (const free of release) free();
  }
};

export default labels;
