// Predictions for AgentWorldBench records (the protocol's `infer` step): every record through a
// backend, one prediction record per input with every input field kept and `gen` added. A
// record whose generation fails gets an empty `gen` and `gen_error` (the judge then counts it
// failed, "No model generation", as the public judge does) and the run goes on; an error marked
// fatal (a refused key, CORS) or cancellation stops it. Records are handed out in input order,
// each as soon as it and every record before it are done, so a caller can write them as it goes.
import type { GenerateOptions, GenerateRequest, LwmBackend } from '../backend.ts';
import { isFatal } from '../judge/llm.ts';
import { turnRequestFromRecord } from './awbLayout.ts';
import type { AwbPredictionRecord, AwbSampleRecord } from './records.ts';

export interface InferProgress {
  done: number;
  total: number;
  failed: number;
}

export interface InferOptions {
  backend: LwmBackend;
  generate: Omit<GenerateOptions, 'signal'>;
  /** Records generated at once. Default 1. */
  concurrency?: number;
  /** Record → request; default: its turn (turnRequestFromRecord). */
  toRequest?: (r: AwbSampleRecord) => GenerateRequest;
  /** Each prediction record, in input order. */
  onRecord: (record: AwbPredictionRecord, index: number) => void | Promise<void>;
  onProgress?: (p: InferProgress) => void;
  signal?: AbortSignal;
}

export interface InferResult extends InferProgress {
  /** The error that stopped the run (fatal or cancelled); records after the last handed out were not generated. */
  error?: Error;
}

/** The prediction record of a sample record: its fields, then `gen` (and `gen_error` when generation failed). */
export function predictionRecord(r: AwbSampleRecord, gen: string, error?: string): AwbPredictionRecord {
  const { gen_error: _stale, ...rest } = r as AwbSampleRecord & { gen_error?: unknown };
  void _stale;
  const p: AwbPredictionRecord = { ...rest, gen };
  if (error !== undefined) p.gen_error = error;
  return p;
}

export async function inferRecords(records: readonly AwbSampleRecord[], options: InferOptions): Promise<InferResult> {
  const toRequest = options.toRequest ?? turnRequestFromRecord;
  const stop = new AbortController();
  const onAbort = () => stop.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const finished: (AwbPredictionRecord | undefined)[] = new Array(records.length);
  let next = 0;
  let emitted = 0;
  let done = 0;
  let failed = 0;
  let error: Error | undefined;
  let emitting: Promise<void> = Promise.resolve();

  // Hands out the finished prefix in order; serialised so a slow writer never sees two at once.
  const flush = () => {
    emitting = emitting.then(async () => {
      while (emitted < records.length && finished[emitted]) {
        const i = emitted++;
        const rec = finished[i]!;
        finished[i] = undefined;
        await options.onRecord(rec, i);
      }
    });
    return emitting;
  };

  const one = async (i: number) => {
    const r = records[i];
    let gen = '';
    let genError: string | undefined;
    try {
      for await (const piece of options.backend.generate(toRequest(r), { ...options.generate, signal: stop.signal })) gen += piece;
    } catch (e) {
      if (isFatal(e) || stop.signal.aborted) throw e;
      genError = `${options.backend.name}: ${(e as Error).message}`;
      gen = '';
    }
    finished[i] = predictionRecord(r, gen, genError);
    done++;
    if (genError !== undefined) failed++;
    options.onProgress?.({ done, total: records.length, failed });
    await flush();
  };

  const worker = async () => {
    while (next < records.length && !error && !stop.signal.aborted) {
      const i = next++;
      try {
        await one(i);
      } catch (e) {
        error ??= e instanceof Error ? e : new Error(String(e));
        stop.abort(error);
      }
    }
  };
  const n = Math.max(1, Math.min(options.concurrency ?? 1, records.length));
  await Promise.all(Array.from({ length: n }, worker));
  await emitting;
  options.signal?.removeEventListener('abort', onAbort);
  if (!error && options.signal?.aborted) error = options.signal.reason instanceof Error ? options.signal.reason : new Error('cancelled');
  return { done: emitted, total: records.length, failed, ...(error ? { error } : {}) };
}

/** The texts a record's prompt is made of, in order: the system prompt, earlier actions and observations, the current action. */
function conversationOf(r: AwbSampleRecord): string[] {
  const t = r.turn_idx;
  const texts = [typeof r.system_str === 'string' ? r.system_str : ''];
  for (let i = 0; i < t - 1; i++) texts.push(String(r.prompt[i] ?? ''), String(r.response[i] ?? ''));
  texts.push(String(typeof r.prompt[t - 1] === 'string' ? r.prompt[t - 1] : (r.current_prompt ?? '')));
  return texts;
}

/**
 * The order to generate records in so that those whose prompts share a start run one after
 * another: records under one system prompt together, a trajectory's turns in turn order right
 * after each other (turn k's conversation is the start of turn k+1's), trajectories that branch
 * from a common history side by side. A model that keeps the previous prompt's KV cache then
 * prefills only what is new. Input indices, sorted by the conversations compared text by text
 * (a conversation before any it is the start of); equal ones keep their input order.
 */
export function sharedPrefixOrder(records: readonly AwbSampleRecord[]): number[] {
  const keys = records.map(conversationOf);
  const cmp = (a: number, b: number) => {
    const x = keys[a];
    const y = keys[b];
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
    return x.length - y.length || a - b;
  };
  return records.map((_, i) => i).sort(cmp);
}
