// `lwm infer RECORDS --backend local|endpoint|copy-last|reference [-o PRED.jsonl]`: the
// AgentWorldBench protocol's first step. RECORDS is an AgentWorldBench file (one record per
// judged turn) or native trajectories (their eval-split turns, as `lwm convert --to
// agentworldbench` writes them). One prediction record per input, in input order, every input
// field kept and `gen` added; a generation that fails gets `gen_error` and the run goes on.
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { parseCommandArgs, UsageError, writeFileAtomicSync, type CliIO } from '../io.ts';
import type { BackendRef } from '../../core/backendRef.ts';
import { inferRecords, sharedPrefixOrder } from '../../core/bench/infer.ts';
import { parseJsonl, readRecords, sampleKey, type AwbPredictionRecord, type AwbSampleRecord } from '../../core/bench/records.ts';
import { evalTurnRecords } from '../../core/bench/evalTurns.ts';
import { BackendError } from '../../backends/errors.ts';
import { nodeSource } from '../../backends/node.ts';
import { openReady, type ReadyBackend } from '../../backends/open.ts';
import type { WeightStorage } from '../../model/halfWeights.ts';
import { loadFile } from './validate.ts';
import { parseSeed } from './convert.ts';
import { modelArg } from './common.ts';

const BACKENDS = ['local', 'onnx', 'endpoint', 'copy-last', 'reference'] as const;
type BackendKind = (typeof BACKENDS)[number];

const HELP = `Usage: lwm infer RECORDS --backend local|onnx|endpoint|copy-last|reference [options] [-o PRED.jsonl]

Writes one AgentWorldBench prediction record per input, in input order: every input field kept
and "gen" (the raw output) added. RECORDS is an AgentWorldBench file, or native trajectories
(any format lwm reads), whose eval-split turns are used, laid out as \`lwm convert --to
agentworldbench\` writes them (with the turns' span labels, for the verifier). A record whose
generation fails gets an empty "gen" and "gen_error" and the run goes on (the judge counts it
failed); a refused key stops the run (exit 1). Progress goes to standard error.

  --backend local        a checkpoint of ours (--model CKPT.safetensors), on the GPU, prompted
                         with the template it was trained with (a fine-tune of a Hugging Face
                         model: inside its chat format, with its base's tokenizer, as trained)
  --backend onnx         an ONNX causal-LM folder (--model DIR: onnx/model.onnx, config.json,
                         tokenizer.json) through onnxruntime-web (WASM): with a chat template, sent
                         the AgentWorldBench message layout; without one (our own exports),
                         prompted with our template; with both a chat template and
                         lwm_template.json (an export of our fine-tune), in its trained layout
  --variant V            onnx: which model file (fp32 = onnx/model.onnx, fp16, q4, quantized, … =
                         onnx/model_V.onnx, or a file name); default model.onnx where there is one
  --backend endpoint     an OpenAI-compatible /v1/chat/completions (vLLM, SGLang, Ollama, ...),
                         sent the AgentWorldBench layout: system_str, earlier actions and
                         observations as user/assistant messages, the current action
  --backend copy-last    baseline: the previous observation (turn 1: the initial state)
  --backend reference    baseline: the real observation (the ceiling; a check of the judge)

  --model M              checkpoint path (local), ONNX folder (onnx) or model name (endpoint)
  --base-url URL         endpoint base URL, e.g. http://127.0.0.1:8000/v1
  --api-key KEY          endpoint API key (default: $LWM_API_KEY, then $OPENAI_API_KEY)
  --max-tokens N         output budget (endpoint default 32768, as the public script; local
                         default a quarter of the context)
  --temperature T        endpoint default 0.6 (the public script's); local default 0 (greedy)
  --top-p P, --seed S    sampling
  --concurrency N        endpoint requests in flight (default 4); output order is kept
  --no-stream            endpoint: ask for whole replies instead of a stream
  --timeout S            endpoint: seconds per request, or between streamed chunks (default 120)
  --retries N            endpoint: extra attempts after a transient error (default 3)
  --template V           local: the template version to prompt with (default: the checkpoint's)
  --weights W            local: f32 (default) or f16 weights on the GPU (half the matrices'
                         memory, f32 accumulation; logits move by f16 rounding)
  --prefix-slots N       local: prompts whose KV cache is kept (default 4; 0: off). A prompt that
                         starts like a kept one (the same system prompt, the next turn of the
                         same trajectory) is computed only from where it differs; records are
                         run grouped by shared start (output stays in input order)
  --limit N              only the first N records
  --eval-fraction F      native input: share of trajectories held out (default 0.1, as training)
  --split-seed N         native input: the split's seed (default 0, as training's default)
  -o, --output FILE      write here (default, or -: standard output)
  --resume               keep the records FILE already holds (by task, id and turn) and generate
                         the rest; failed ones (gen_error) are tried again
`;

function intArg(name: string, v: string | undefined, dflt: number | undefined, min: number): number | undefined {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || !Number.isSafeInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got ${JSON.stringify(v)}`);
  return n;
}

function numArg(name: string, v: string | undefined, lo: number, hi: number, loOpen = false): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < lo || n > hi || (loOpen && n === lo))
    throw new UsageError(`--${name} must be a number in ${loOpen ? '(' : '['}${lo}, ${hi}], got ${JSON.stringify(v)}`);
  return n;
}

/** AgentWorldBench records when the file's first record is one; otherwise null (read as trajectories). */
export function awbRecordsOf(text: string, file: string): { records: AwbSampleRecord[]; errors: string[] } | null {
  const first = text.split('\n').find((l) => l.trim());
  if (!first) return null;
  let v: unknown;
  try {
    v = JSON.parse(first);
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v) || !('turn_idx' in v) || !('prompt' in v || 'response' in v)) return null;
  const r = readRecords<AwbSampleRecord>(text, file, 'sample');
  return { records: r.records, errors: r.errors };
}

/** Records a previous run wrote: those with a generation and no gen_error, by sample key (a torn last line is ignored). */
async function previousRecords(file: string): Promise<Map<string, AwbPredictionRecord>> {
  const kept = new Map<string, AwbPredictionRecord>();
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return kept;
    throw e;
  }
  for (const { value } of parseJsonl(text, file).records) {
    const r = value as AwbPredictionRecord;
    if (!r || typeof r !== 'object' || typeof r.gen !== 'string' || typeof r.task !== 'string' || !Number.isInteger(r.turn_idx)) continue;
    if (r.gen_error !== undefined) continue;
    kept.set(sampleKey(r), r);
  }
  return kept;
}

/** The final rewrite in input order: src/cli/io.ts's write-then-rename (the progress file stays whole on failure). */
async function writeAtomic(path: string, text: string): Promise<void> {
  writeFileAtomicSync(path, text);
}

/** The command line, checked. */
export interface InferArgs {
  file: string;
  kind: BackendKind;
  model?: string;
  /** onnx: the model file of the folder (a variant such as fp16 or q4, or a file name). */
  variant?: string;
  template?: string;
  prefixSlots: number;
  /** local: how the weights are held on the GPU (default f32). */
  weights?: WeightStorage;
  baseUrl?: string;
  apiKey?: string;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  seed?: number;
  concurrency: number;
  stream: boolean;
  timeout: number;
  retries: number;
  limit?: number;
  evalFraction: number;
  splitSeed: number;
  /** undefined: standard output. */
  output?: string;
  resume: boolean;
}

export function parseInferArgs(argv: string[]): InferArgs | 'help' {
  const { values, positionals } = parseCommandArgs(argv, {
    backend: { type: 'string' },
    model: { type: 'string' },
    variant: { type: 'string' },
    'base-url': { type: 'string' },
    'api-key': { type: 'string' },
    'max-tokens': { type: 'string' },
    temperature: { type: 'string' },
    'top-p': { type: 'string' },
    seed: { type: 'string' },
    concurrency: { type: 'string' },
    'no-stream': { type: 'boolean' },
    timeout: { type: 'string' },
    retries: { type: 'string' },
    template: { type: 'string' },
    'prefix-slots': { type: 'string' },
    weights: { type: 'string' },
    limit: { type: 'string' },
    'eval-fraction': { type: 'string' },
    'split-seed': { type: 'string' },
    output: { type: 'string', short: 'o' },
    resume: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return 'help';
  if (positionals.length !== 1) throw new UsageError('expected one RECORDS file');
  const kind = values.backend as BackendKind | undefined;
  if (!kind || !(BACKENDS as readonly string[]).includes(kind))
    throw new UsageError(`--backend must be one of ${BACKENDS.join(', ')}, got ${JSON.stringify(values.backend ?? '')}`);
  const isModel = kind === 'local' || kind === 'onnx' || kind === 'endpoint';
  const endpointOnly = ['base-url', 'api-key', 'concurrency', 'no-stream', 'timeout', 'retries'] as const;
  const modelOnly = ['model', 'max-tokens', 'temperature', 'top-p', 'seed'] as const;
  for (const f of endpointOnly) if (values[f] !== undefined && kind !== 'endpoint') throw new UsageError(`--${f} is for --backend endpoint`);
  for (const f of modelOnly)
    if (values[f] !== undefined && !isModel) throw new UsageError(`--${f} is for a model backend (local or endpoint), not the ${kind} baseline`);
  for (const f of ['template', 'prefix-slots', 'weights'] as const)
    if (values[f] !== undefined && kind !== 'local') throw new UsageError(`--${f} is for --backend local`);
  if (values.weights !== undefined && values.weights !== 'f32' && values.weights !== 'f16')
    throw new UsageError(`--weights must be f32 or f16, got ${JSON.stringify(values.weights)}`);
  if (kind === 'endpoint' && (!values['base-url'] || !values.model)) throw new UsageError('--backend endpoint needs --base-url and --model');
  if (kind === 'local' && !values.model) throw new UsageError('--backend local needs --model CKPT.safetensors');
  if (values.variant !== undefined && kind !== 'onnx') throw new UsageError('--variant is for --backend onnx (it picks the ONNX model file)');
  if (kind === 'onnx' && !values.model) throw new UsageError('--backend onnx needs --model DIR (an ONNX causal-LM folder)');
  const args: InferArgs = {
    file: positionals[0],
    kind,
    model: values.model,
    variant: values.variant,
    template: values.template,
    prefixSlots: intArg('prefix-slots', values['prefix-slots'], 4, 0)!,
    ...(values.weights !== undefined && { weights: values.weights as WeightStorage }),
    baseUrl: values['base-url'],
    apiKey: values['api-key'],
    maxTokens: intArg('max-tokens', values['max-tokens'], undefined, 1),
    temperature: numArg('temperature', values.temperature, 0, 100),
    topP: numArg('top-p', values['top-p'], 0, 1, true),
    seed: values.seed === undefined ? undefined : parseSeed(values.seed),
    concurrency: intArg('concurrency', values.concurrency, 4, 1)!,
    stream: !values['no-stream'],
    timeout: numArg('timeout', values.timeout, 0, 86_400, true) ?? 120,
    retries: intArg('retries', values.retries, 3, 0)!,
    limit: intArg('limit', values.limit, undefined, 1),
    evalFraction: numArg('eval-fraction', values['eval-fraction'], 0, 1) ?? 0.1,
    splitSeed: values['split-seed'] === undefined ? 0 : parseSeed(values['split-seed']),
    output: values.output === '-' ? undefined : values.output,
    resume: values.resume ?? false,
  };
  if (args.resume && !args.output) throw new UsageError('--resume needs -o FILE (the file the earlier run wrote)');
  return args;
}

/** The records to predict (an AgentWorldBench file, or native trajectories' eval-split turns), or null after saying why not. */
async function loadInputRecords(a: InferArgs, io: CliIO): Promise<AwbSampleRecord[] | null> {
  const file = a.file;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    io.err(`${file}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`);
    return null;
  }
  let records: AwbSampleRecord[];
  const awb = awbRecordsOf(text, file);
  if (awb) {
    if (awb.errors.length) {
      io.err(awb.errors.join('\n') + '\n');
      return null;
    }
    records = awb.records;
  } else {
    const loaded = await loadFile(io, file, { keepRaw: false });
    if (!loaded.readable) return null;
    if (loaded.errorCount) {
      io.err(`${file}: ${loaded.errorCount} bad records; fix them or drop them first (lwm validate ${file})\n`);
      return null;
    }
    records = evalTurnRecords(loaded.trajectories, a.evalFraction, a.splitSeed);
    io.err(
      `${file}: ${loaded.trajectories.length} trajectories; ${records.length} eval-split turns (eval fraction ${a.evalFraction}, split seed ${a.splitSeed})\n`,
    );
  }
  if (a.limit !== undefined) records = records.slice(0, a.limit);
  if (records.length === 0) {
    io.err(`${file}: no records to predict${awb ? '' : ' (no trajectory fell in the eval split; raise --eval-fraction)'}\n`);
    return null;
  }
  return records;
}

/** The model the command line names (src/core/backendRef.ts), and its name in records. */
export function inferRef(a: InferArgs): { ref: BackendRef; name?: string } {
  switch (a.kind) {
    case 'local':
      return {
        ref: {
          kind: 'checkpoint',
          checkpoint: {
            key: a.model!,
            label: a.model!,
            ...(a.template !== undefined && { template: a.template }),
            prefixSlots: a.prefixSlots,
            ...(a.weights && { weights: a.weights }),
          },
        },
        name: `local:${basename(a.model!)}`,
      };
    case 'onnx':
      return {
        ref: { kind: 'onnx', onnx: { folderId: a.model!, name: basename(a.model!), ...(a.variant !== undefined && { file: a.variant }), execution: 'wasm' } },
        name: `onnx:${basename(a.model!)}`,
      };
    case 'endpoint':
      return {
        ref: {
          kind: 'endpoint',
          endpoint: { baseUrl: a.baseUrl!, model: a.model!, concurrency: a.concurrency, timeoutMs: a.timeout * 1000, retries: a.retries, stream: a.stream },
        },
      };
    default:
      return { ref: { kind: a.kind } };
  }
}

/** What `lwm infer` and `lwm optimize` run: the opened backend, and a line for the end of the run (the local model: how much of the prompts its kept KV cache covered). */
export type InferBackend = ReadyBackend & { summary?: () => string };

/** The backend the command line names, with its generation settings; null after saying why it cannot be opened. */
export async function openInferBackend(a: InferArgs, todo: number, io: CliIO, command = 'lwm infer'): Promise<InferBackend | null> {
  // A Hugging Face Hub id for a local model or an ONNX folder: its snapshot in the Hugging Face cache, named by its id.
  const named = a.model;
  if ((a.kind === 'local' || a.kind === 'onnx') && a.model !== undefined && todo > 0) a = { ...a, model: await modelArg(io, a.model) };
  const { ref, name: byPath } = inferRef(a);
  const name = named !== undefined && named !== a.model ? `${a.kind}:${named}` : byPath;
  const asked = {
    ...(a.maxTokens !== undefined && { maxTokens: a.maxTokens }),
    ...(a.temperature !== undefined && { temperature: a.temperature }),
    ...(a.topP !== undefined && { topP: a.topP }),
    ...(a.seed !== undefined && { seed: a.seed }),
  };
  // Nothing left to generate (a finished --resume): no model needed.
  if (todo === 0 && (ref.kind === 'checkpoint' || ref.kind === 'onnx')) {
    return {
      ref,
      backend: { name: name ?? a.kind, generate: () => (async function* () {})() },
      contextLength: null,
      form: 'turn',
      concurrency: 1,
      contextReport: () => null,
      generate: { maxTokens: 1, temperature: 0 },
      dispose() {},
    };
  }
  const source = nodeSource({ ...(a.apiKey !== undefined && { apiKey: a.apiKey }) });
  let opened: ReadyBackend;
  try {
    opened = await openReady(ref, source, asked, { ...(name !== undefined && { name }) });
  } catch (e) {
    source.release();
    if (e instanceof BackendError && e.about === 'settings') throw new UsageError(e.message);
    io.err(`${command}: ${(e as Error).message}\n`);
    return null;
  }
  const dispose = () => {
    opened.dispose();
    source.release();
  };
  const { stats } = opened;
  if (!stats) return { ...opened, dispose };
  const summary = () =>
    `${stats.promptTokens} prompt tokens, ${stats.reusedTokens} (${Math.round((100 * stats.reusedTokens) / Math.max(1, stats.promptTokens))}%) taken from the KV cache of earlier prompts`;
  return { ...opened, dispose, summary };
}

/** The progress file, opened for appending on --resume (a torn last line gets its newline); null after saying why not. */
async function openProgressFile(output: string, resume: boolean, io: CliIO): Promise<FileHandle | null> {
  try {
    const handle = await open(output, resume ? 'a' : 'w');
    // A run killed mid-line left a torn last line: start the next record on a line of its own.
    if (resume && (await handle.stat()).size > 0) {
      const tail = Buffer.alloc(1);
      const probe = await open(output, 'r');
      await probe.read(tail, 0, 1, (await probe.stat()).size - 1).finally(() => probe.close());
      if (tail[0] !== 0x0a) await handle.write('\n');
    }
    return handle;
  } catch (e) {
    io.err(`${output}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`);
    return null;
  }
}

/** Progress on standard error: at most once a second, and once at the end. */
function progressReporter(io: CliIO, name: string, total: number) {
  const t0 = Date.now();
  let lastReport = 0;
  let lastDone = -1;
  return (done: number, failed: number, force = false) => {
    const now = Date.now();
    if (force ? done === lastDone : now - lastReport < 1000) return;
    lastReport = now;
    lastDone = done;
    const s = (now - t0) / 1000;
    const rate = s > 0 ? done / s : 0;
    const eta = rate > 0 ? ` ETA ${Math.ceil((total - done) / rate)}s` : '';
    io.err(`lwm infer: ${name} ${done}/${total}${failed ? ` (${failed} failed)` : ''} ${rate.toFixed(1)} rec/s${done < total ? eta : ''}\n`);
  };
}

/**
 * Writes the prediction records of `count` inputs to standard output in input order while they
 * arrive in any order (each with its input index): each is held until every one before it is out.
 */
function inputOrderWriter(count: number, out: (line: string) => void) {
  const waiting = new Map<number, AwbPredictionRecord>();
  let next = 0;
  return (rec: AwbPredictionRecord, index: number) => {
    waiting.set(index, rec);
    for (let r; next < count && (r = waiting.get(next)); next++) {
      waiting.delete(next);
      out(JSON.stringify(r) + '\n');
    }
  };
}

export default async function infer(argv: string[], io: CliIO): Promise<number> {
  const a = parseInferArgs(argv);
  if (a === 'help') {
    io.out(HELP);
    return 0;
  }
  const records = await loadInputRecords(a, io);
  if (!records) return 1;
  // What an earlier run left.
  const previous = a.resume && a.output ? await previousRecords(a.output) : new Map<string, AwbPredictionRecord>();
  // Input indices of the records to generate, in the order to generate them.
  let order = records.map((_, i) => i).filter((i) => !previous.has(sampleKey(records[i])));
  if (a.resume) io.err(`lwm infer: resuming: ${records.length - order.length} of ${records.length} records already in ${a.output}\n`);
  // The local model keeps the previous prompt's KV cache: records that share a prompt start go one after another.
  if (a.kind === 'local' && a.prefixSlots > 0) order = sharedPrefixOrder(order.map((i) => records[i])).map((k) => order[k]);
  const todo = order.map((i) => records[i]);
  const opened = await openInferBackend(a, todo.length, io);
  if (!opened) return 1;
  const { backend, dispose } = opened;
  // The output: to a file, appended record by record as each is done (what --resume reads after
  // a crash), then rewritten in input order once everything is there; or to standard output in
  // input order.
  const handle = a.output ? await openProgressFile(a.output, a.resume, io) : undefined;
  if (handle === null) {
    dispose();
    return 1;
  }
  const fresh = new Map<string, AwbPredictionRecord>();
  // Without a file there is no --resume, so every input is in `todo`.
  const toStdout = handle ? undefined : inputOrderWriter(records.length, io.out);
  const report = progressReporter(io, backend.name, todo.length);
  let result;
  try {
    result = await inferRecords(todo, {
      backend,
      generate: opened.generate,
      concurrency: opened.concurrency,
      onProgress: (p) => report(p.done, p.failed),
      onRecord: async (rec, k) => {
        if (toStdout) return toStdout(rec, order[k]);
        fresh.set(sampleKey(rec), rec);
        await handle!.write(JSON.stringify(rec) + '\n');
      },
    });
  } finally {
    await handle?.close();
    dispose();
  }
  report(result.done, result.failed, true);
  if (opened.summary && todo.length) io.err(`lwm infer: ${opened.summary()}\n`);
  if (result.error) {
    io.err(
      `lwm infer: stopped after ${result.done} of ${todo.length} records: ${result.error.message}${a.output ? `\n(the finished records are in ${a.output}; run again with --resume to generate the rest)` : ''}\n`,
    );
    return 1;
  }
  if (a.output) {
    const ordered = records.map((r) => fresh.get(sampleKey(r)) ?? previous.get(sampleKey(r))!);
    await writeAtomic(a.output, ordered.map((r) => JSON.stringify(r) + '\n').join(''));
  }
  if (result.failed) {
    io.err(
      `lwm infer: ${result.failed} of ${todo.length} generations failed (written with "gen_error" and an empty "gen"; run again with --resume to retry them)\n`,
    );
    if (result.failed === todo.length) return 1;
  }
  return 0;
}
