// `lwm optimize --template FILE --data FILE|--domain D --backend B --judge J -o DIR`: the prompt
// optimization loop (src/core/optimize, the same code the app's worker runs) from the command
// line. Each round scores the best template so far on the dev samples with the simulator and the
// judge, asks the optimizer for candidates, scores them, and keeps a candidate only when the
// paired comparison with its parent supports it; the final best is scored on the held-out test
// samples. Everything is written to DIR after every step (optimizeOutput.ts), so --resume
// continues a run that was stopped, or extends a finished one with more rounds.
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errnoText, FileError, parseCommandArgs, UsageError, type CliIO } from '../io.ts';
import { evalTurnRecords } from '../../core/bench/evalTurns.ts';
import { sampleFromRecord, type BenchSample } from '../../core/bench/runner.ts';
import { generateTrajectories } from '../../envs/generate.ts';
import { benchEvaluator, layoutSampleOf, splitForOptimization, templateValidator, type OptimizationSplits } from '../../core/optimize/evaluate.ts';
import { newLoopState, runOptimization, storedLoopState, type LoopConfig, type LoopState, type Optimizer } from '../../core/optimize/loop.ts';
import { endpointOptimizer, offlineOptimizer } from '../../core/optimize/optimizers.ts';
import { SYSTEM_PROMPT_FIELDS, type KnownDomain } from '../../core/schema/types.ts';
import { TEMPLATE_VARIABLE_NAMES } from '../../core/templates/jinja.ts';
import { EndpointClient } from '../../backends/endpoint.ts';
import { envApiKey } from './common.ts';
import { awbRecordsOf, openInferBackend, parseInferArgs, type InferArgs } from './infer.ts';
import { judgeSettings, openJudge, type JudgeValues } from './judge.ts';
import {
  checkOptimizeArgs,
  checkOutputDir,
  OPTIONS,
  readStartTemplate,
  resumeValues,
  RUN_FILE,
  STATE_FILE,
  storedOptions,
  type DataSource,
  type OptimizeArgs,
  type OptimizeValues,
} from './optimizeArgs.ts';
import { formatRun, splitsFingerprint, writeRunFiles, writeState } from './optimizeOutput.ts';
import { loadFile } from './validate.ts';
import { progressLine } from './optimizeProgress.ts';

const HELP = `Usage: lwm optimize --template FILE (--data FILE | --domain D) --backend B [--judge J] -o DIR [options]

Improves a prompt template by measured error analysis (docs/method.md §9). Each round scores the
best template so far on the dev samples (the simulator predicts, the judge and the verifier score),
the optimizer proposes candidates from the errors, each is scored on the same samples, and one
replaces its parent only when the paired comparison (mean difference over the samples and its
confidence interval) clears --margin. The best version is scored once on held-out test samples.
Progress goes to standard error, the round and version tables to standard output.

The template and the samples
  --template FILE         a template JSON (as the Prompts view stores it, or an old JSON
                          template), a template text (docs/templates.md), or a built-in version
                          (v0, v1, v2, compact)
  --text-for DOMAIN       a template with per-domain texts: optimize that domain's text
  --data FILE             AgentWorldBench records, or trajectories (any format lwm reads; every
                          turn is a sample unless --eval-fraction keeps only held-out ones)
  --eval-fraction F       trajectories: use only the eval split of this share (default 1: all)
  --split-seed N          trajectories: that split's seed (default 0)
  --domain D|all          trajectories from the built-in environments (D1,D2 for several)
  --n N, --gen-seed S     built-in environments: trajectories per domain (default 12), seed (0)
  --dev N, --test N       samples per domain in the dev split (default 8) and the held-out test
                          split (default 8; 0: no test), split by trajectory

The simulator (as lwm infer)
  --backend local|onnx|endpoint|copy-last|reference, --model M, --base-url URL, --api-key KEY,
  --max-tokens N, --temperature T, --top-p P, --concurrency N, --no-stream, --timeout S,
  --retries N, --prefix-slots N. A checkpoint or an ONNX export is prompted with each candidate
  template as it renders (renderContext); an endpoint or a chat model gets the template's system
  text (renderSystem) and the turns as chat messages. The baselines ignore the template.

The judge (as lwm judge)
  --judge local|endpoint  (default local: the deterministic rubric judge and the verifier)
  --judge-base-url URL, --judge-model M, --judge-api-key KEY, --judge-max-tokens N,
  --judge-temperature T, --judge-prompts DIR, --judge-concurrency N, --judge-retries N,
  --judge-timeout S

The optimizer
  --optimizer offline|endpoint   offline (default): instructions from a library keyed to the
                          judge's dimensions and the verifier's rules, added, moved or removed;
                          endpoint: an OpenAI-compatible LLM rewrites the template (its reply is
                          checked: placeholders kept, valid syntax, renders on every dev sample;
                          a refused reply is kept as an invalid version with the reason)
  --optimizer-base-url URL, --optimizer-model M, --optimizer-api-key KEY,
  --optimizer-temperature T (default 0.7), --optimizer-max-tokens N (default 4096),
  --optimizer-timeout S (default 300)

The loop
  --rounds N              rounds (default 3)
  --candidates K          candidates per round (default 3)
  --margin M              a candidate must beat its parent by more than M points (0-100) at the
                          lower end of the interval (default 0)
  --level L               confidence level of the interval (default 0.95)
  --budget N              at most N model calls and N judge calls in the whole run, test included
  --seed S                the loop's seed (splits, offline optimizer; default 0)
  -o, --output DIR        where the run is written (required; see docs/optimize.md)
  --resume                continue the run in DIR (its options are kept; --rounds, --budget and
                          connection options may change); a finished run gets more rounds
`;

/** The simulator: lwm infer's own option checks and opening code. */
function inferArgsOf(values: OptimizeValues): InferArgs {
  const flags = ['backend', 'model', 'base-url', 'api-key', 'max-tokens', 'temperature', 'top-p', 'concurrency', 'timeout', 'retries', 'prefix-slots'] as const;
  const argv = ['-'];
  for (const f of flags) if (values[f] !== undefined) argv.push(`--${f}`, String(values[f]));
  if (values['no-stream']) argv.push('--no-stream');
  const a = parseInferArgs(argv);
  if (a === 'help') throw new UsageError('--help is not a backend option');
  return a;
}

const JUDGE_FLAGS = {
  'base-url': 'judge-base-url',
  model: 'judge-model',
  'api-key': 'judge-api-key',
  'max-tokens': 'judge-max-tokens',
  temperature: 'judge-temperature',
  concurrency: 'judge-concurrency',
  retries: 'judge-retries',
  timeout: 'judge-timeout',
} as const;

/** The judge's options under lwm judge's names, checked by its code; errors say our names. */
function judgeValuesOf(values: OptimizeValues): { jv: JudgeValues; settings: ReturnType<typeof judgeSettings> } {
  const jv: JudgeValues = { judge: values.judge, 'judge-prompts': values['judge-prompts'] };
  for (const [theirs, ours] of Object.entries(JUDGE_FLAGS)) (jv as Record<string, unknown>)[theirs] = values[ours];
  try {
    return { jv, settings: judgeSettings(jv) };
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    throw new UsageError(
      e.message.replace(
        /--(base-url|model|api-key|max-tokens|temperature|concurrency|retries|timeout)\b/gu,
        (_, f: keyof typeof JUDGE_FLAGS) => `--${JUDGE_FLAGS[f]}`,
      ),
    );
  }
}

/** The samples: AgentWorldBench records, trajectories' turns, or the built-in environments' trajectories' turns; null after saying why not. */
async function loadSamples(d: DataSource, io: CliIO): Promise<BenchSample[] | null> {
  if (d.kind === 'domain') {
    const trajectories = d.domains.flatMap((dom) => generateTrajectories(dom as KnownDomain, d.n, d.seed));
    const records = evalTurnRecords(trajectories, 1, 0);
    io.err(
      `lwm optimize: ${trajectories.length} trajectories from the built-in environments (${d.domains.join(', ')}; ${d.n} each, seed ${d.seed}): ${records.length} turns\n`,
    );
    return records.map(sampleFromRecord);
  }
  let text: string;
  try {
    text = await readFile(d.file, 'utf8');
  } catch (e) {
    throw new FileError(`${d.file}: cannot read (${errnoText(e)}) (--data)`);
  }
  const awb = awbRecordsOf(text, d.file);
  if (awb) {
    if (awb.errors.length) return (void io.err(awb.errors.join('\n') + '\n'), null);
    return awb.records.map(sampleFromRecord);
  }
  const loaded = await loadFile(io, d.file, { keepRaw: false });
  if (!loaded.readable) return null;
  if (loaded.errorCount) return (void io.err(`${d.file}: ${loaded.errorCount} bad records; fix them or drop them first (lwm validate ${d.file})\n`), null);
  const records = evalTurnRecords(loaded.trajectories, d.evalFraction, d.splitSeed);
  io.err(
    `lwm optimize: ${d.file}: ${loaded.trajectories.length} trajectories; ${records.length} turns${d.evalFraction < 1 ? ` in the eval split (fraction ${d.evalFraction}, seed ${d.splitSeed})` : ''}\n`,
  );
  return records.map(sampleFromRecord);
}

/** A few dev samples' system-prompt fields, for the endpoint optimizer's prompt (one per domain, at most three). */
function samplesText(dev: BenchSample[]): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const s of dev) {
    if (seen.has(s.domain) || seen.size >= 3) continue;
    seen.add(s.domain);
    const sp = layoutSampleOf(s).systemPrompt;
    const fields = sp.text !== undefined ? [['system_text', sp.text]] : SYSTEM_PROMPT_FIELDS.map((f) => [f, sp[f]]);
    out.push(`[${s.domain}]`, ...fields.filter(([, v]) => v).map(([f, v]) => `${f}: ${v.length > 400 ? `${v.slice(0, 399)}…` : v}`));
  }
  return out.join('\n');
}

function openOptimizer(a: OptimizeArgs, dev: BenchSample[]): Optimizer {
  const o = a.optimizer;
  if (o.kind === 'offline') return offlineOptimizer();
  const client = new EndpointClient({
    baseUrl: o.baseUrl!,
    model: o.model!,
    apiKey: o.apiKey ?? envApiKey(),
    timeoutMs: o.timeout * 1000,
    pageOrigin: null,
    maxConcurrency: 1,
  });
  return endpointOptimizer({
    complete: client.asChatComplete,
    samples: samplesText(dev),
    variables: TEMPLATE_VARIABLE_NAMES,
    temperature: o.temperature,
    maxTokens: o.maxTokens,
  });
}

/** A JSON file of the run in DIR; FileError naming it when it cannot be read. */
function readRunFile<T>(dir: string, name: string): T {
  const file = join(dir, name);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch (e) {
    throw new FileError(`${file}: cannot read it to resume (${(e as Error).message})`);
  }
}

/** The splits, checked against the run being resumed; null after saying why not. */
function checkSplits(a: OptimizeArgs, samples: BenchSample[], io: CliIO): OptimizationSplits | null {
  const splits = splitForOptimization(samples, { devPerDomain: a.devPerDomain, testPerDomain: a.testPerDomain, seed: a.seed });
  if (splits.dev.length < 2)
    return (void io.err(`lwm optimize: only ${splits.dev.length} dev sample(s) in the data; the paired comparison needs at least 2\n`), null);
  if (a.resume) {
    const was = JSON.stringify(readRunFile<unknown>(a.dir, 'splits.json'));
    if (was !== splitsFingerprint(splits))
      return (
        void io.err(`lwm optimize: the data no longer gives the dev and test samples of the run in ${a.dir} (splits.json); resume with the same data\n`), null
      );
  }
  io.err(`lwm optimize: ${splits.dev.length} dev and ${splits.test.length} test samples (${a.devPerDomain} and ${a.testPerDomain} per domain)\n`);
  return splits;
}

/** A new state, or the saved one with this invocation's rounds and budget (a finished run opens again when there are rounds left). */
function loopState(a: OptimizeArgs, splits: OptimizationSplits): LoopState {
  const config: LoopConfig = {
    rounds: a.rounds,
    candidates: a.candidates,
    margin: a.margin,
    level: a.level,
    seed: a.seed,
    devSize: splits.dev.length,
    testSize: splits.test.length,
    ...(a.budget !== undefined && { budget: { modelCalls: a.budget, judgeCalls: a.budget } }),
  };
  if (!a.resume) return newLoopState(config);
  // A state.json written before the spelling settled loads too (its versions' optimizer key).
  const s = storedLoopState(readRunFile<LoopState>(a.dir, STATE_FILE));
  if (!Array.isArray(s?.versions) || typeof s.round !== 'number' || !s.config) throw new FileError(`${join(a.dir, STATE_FILE)}: not an optimization state`);
  if (a.rounds < s.round) throw new UsageError(`--rounds ${a.rounds}: the run in ${a.dir} has already done ${s.round} round(s)`);
  newLoopState(config); // checks the new settings
  s.config = { ...s.config, rounds: a.rounds, budget: config.budget };
  if (!config.budget) delete s.config.budget;
  if (s.stopped && s.round < a.rounds) {
    delete s.stopped;
    delete s.stopNote;
    delete s.test;
  }
  return s;
}

export default async function optimize(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs(argv, OPTIONS);
  if (parsed.values.help) return (void io.out(HELP), 0);
  let values = parsed.values;
  if (values.resume && values.output) values = resumeValues(values.output, values);
  const a = checkOptimizeArgs(values, parsed.positionals);
  checkOutputDir(a.dir, a.resume);
  const inferArgs = inferArgsOf(values);
  const { jv, settings } = judgeValuesOf(values);
  const start = a.resume ? readRunFile<{ start: { text: string; note: string } }>(a.dir, RUN_FILE).start : startOf(values);
  if (typeof start?.text !== 'string') throw new FileError(`${join(a.dir, RUN_FILE)}: has no starting template ("start")`);
  const samples = await loadSamples(a.data, io);
  if (!samples) return 1;
  const splits = checkSplits(a, samples, io);
  if (!splits) return 1;
  const judge = await openJudge(
    io,
    jv,
    settings,
    splits.dev.map((s) => ({ task: s.record?.task ?? s.domain })),
  );
  if (!judge) return 1;
  const state = loopState(a, splits);
  // On --resume, run.json takes this invocation's rounds, budget and connection settings.
  writeRunFiles(a.dir, storedOptions(values), start, splits);
  if (a.resume) io.err(`lwm optimize: resuming ${a.dir}: ${state.round} round(s) done, ${state.versions.length} version(s)\n`);
  const opened = await openInferBackend(inferArgs, 1, io, 'lwm optimize');
  if (!opened) return 1;
  try {
    return await runLoop(a, state, start, splits, { ...opened, judge }, io);
  } finally {
    opened.dispose();
  }
}

function startOf(values: OptimizeValues): { text: string; note: string } {
  const t = readStartTemplate(values.template!, values['text-for']);
  return { text: t.text, note: `start: ${t.source}${t.version !== 'start' ? ` (${t.version})` : ''}` };
}

type Opened = NonNullable<Awaited<ReturnType<typeof openInferBackend>>> & { judge: Awaited<ReturnType<typeof openJudge>> & object };

async function runLoop(
  a: OptimizeArgs,
  state: LoopState,
  start: { text: string; note: string },
  splits: OptimizationSplits,
  o: Opened,
  io: CliIO,
): Promise<number> {
  const written = new Map<string, string>();
  const progress = progressLine(io, state);
  const evaluate = benchEvaluator({
    backend: o.backend,
    judge: o.judge,
    splits,
    form: o.form,
    generate: o.generate,
    concurrency: Math.max(o.concurrency, 1),
    onProgress: (p) => progress.sample(p.split, p.done, p.total, p.failed),
  });
  const env = {
    optimizer: openOptimizer(a, splits.dev),
    evaluate: (text: string, split: 'dev' | 'test', signal?: AbortSignal) => (progress.begin(text, split), evaluate(text, split, signal)),
    validate: templateValidator(splits.dev),
    onState: (s: LoopState) => writeState(a.dir, s, splits.dev, written),
  };
  writeState(a.dir, state, splits.dev, written);
  let s: LoopState;
  try {
    s = await runOptimization(env, state, start);
  } catch (e) {
    if (e instanceof UsageError || e instanceof FileError) throw e;
    if (/^the starting template cannot be used/.test((e as Error).message)) return (void io.err(`lwm optimize: --template: ${(e as Error).message}\n`), 1);
    io.err(`lwm optimize: ${(e as Error).message}\n(the run so far is in ${a.dir}; run again with --resume to continue)\n`);
    return 1;
  }
  io.out(formatRun(s));
  io.err(
    `lwm optimize: ${s.stopped}: ${s.stopNote}; ${s.calls.model} model calls, ${s.calls.judge} judge calls; the lineage is in ${join(a.dir, 'lineage.json')}\n`,
  );
  return 0;
}
