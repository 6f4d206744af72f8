// The benchmark runner: turn samples → backend predictions → judge + verifier → AgentWorldBench
// records and the score table. It drives any LwmBackend (the interface lives in core,
// src/core/backend.ts; the implementations in src/backends/ are handed in by the caller).
import type { GenerateOptions, GenerateRequest, LwmBackend, TurnRequest } from '../backend.ts';
import { systemPromptFromText } from '../formats/systemPromptText.ts';
import { turnRequestFromRecord } from './awbLayout.ts';
import { isFatal } from '../judge/llm.ts';
import { DIMENSIONS, type HistoryTurn, type Judge, type Verdict } from '../judge/types.ts';
import { verify, type VerifierResult } from '../judge/verifier.ts';
import { domainOfTask, type SpanLabel } from '../schema/types.ts';
import { isFailedRecord, judgeInputOf, type AwbJudgedRecord, type AwbPredictionRecord, type AwbSampleRecord } from './records.ts';
import { scoreSamples, type ScoreTable } from './score.ts';

/** One benchmark item: a turn to predict, with what came before it. */
export interface BenchSample {
  id: string | number;
  domain: string;
  /** 1-based, as in AgentWorldBench. */
  turnIdx: number;
  totalTurns?: number;
  /** The rendered task context. */
  system: string;
  history: HistoryTurn[];
  action: string;
  reference: string;
  spans?: SpanLabel[];
  /** The record it was read from, exported unchanged apart from the added fields. */
  record?: AwbSampleRecord;
}

/** A sample from an AgentWorldBench record (headers around actions and observations removed). */
export function sampleFromRecord(r: AwbSampleRecord): BenchSample {
  const input = judgeInputOf({ ...r, gen: '' });
  const s: BenchSample = {
    id: r.id,
    domain: input.domain,
    turnIdx: r.turn_idx,
    system: r.system_str ?? '',
    history: input.history,
    action: input.action,
    reference: input.reference,
    record: r,
  };
  if (r.total_turns !== undefined) s.totalTurns = r.total_turns;
  if (input.spans) s.spans = input.spans;
  return s;
}

/** The fields of a turn sample (src/core/turns) the runner needs, so this module does not import it. */
export interface TurnSampleLike {
  trajectoryId: string;
  domain: string;
  /** 0-based. */
  turnIndex: number;
  history: { action: string; observation: string }[];
  action: string;
  targetObservation: string;
  targetSpans?: SpanLabel[];
}

export function sampleFromTurn(t: TurnSampleLike, system: string, totalTurns?: number): BenchSample {
  const s: BenchSample = {
    id: t.trajectoryId,
    domain: t.domain,
    turnIdx: t.turnIndex + 1,
    system,
    history: t.history.map((h) => ({ action: h.action, observation: h.observation })),
    action: t.action,
    reference: t.targetObservation,
  };
  if (totalTurns !== undefined) s.totalTurns = totalTurns;
  if (t.targetSpans) s.spans = t.targetSpans;
  return s;
}

export const PREDICTION_INSTRUCTION =
  'Reply with the environment observation for the last action, inside <predicted_observation></predicted_observation> tags.';

/**
 * The built-in rendering, in AgentWorldBench's layout: the history as `### Turn k` blocks with
 * `**Action:**` and `**Environment Observation:**`, then the current action, as one user message.
 */
export function defaultRequest(s: BenchSample): GenerateRequest {
  const blocks = s.history.map((h, i) => `### Turn ${i + 1}\n**Action:**\n${h.action}\n\n**Environment Observation:**\n${h.observation}`);
  blocks.push(`### Turn ${s.turnIdx}\n**Action:**\n${s.action}\n\n${PREDICTION_INSTRUCTION}`);
  return { system: s.system, messages: [{ role: 'user', content: blocks.join('\n\n') }] };
}

/**
 * The sample as a turn request (src/core/backend.ts): what every backend serves, the baselines
 * included; an endpoint lays it out as the public inference script does (awbLayout.ts).
 */
export function turnRequestOf(s: BenchSample): TurnRequest {
  if (s.record) return turnRequestFromRecord(s.record);
  return { sample: { domain: s.domain, systemPrompt: systemPromptFromText(s.system), history: s.history, action: s.action }, reference: s.reference };
}

/** The sample as an AgentWorldBench record (its own record when it came from one). */
export function sampleRecord(s: BenchSample): AwbSampleRecord {
  if (s.record) return s.record;
  const prompt = [...s.history.map((h, i) => `### Turn ${i + 1}\n**Action:**\n${h.action}`), `### Turn ${s.turnIdx}\n**Action:**\n${s.action}`];
  const response = [...s.history.map((h) => `**Environment Observation:**\n${h.observation}`), `**Environment Observation:**\n${s.reference}`];
  const r: AwbSampleRecord = {
    task: s.domain,
    id: s.id,
    prompt,
    response,
    current_prompt: prompt[prompt.length - 1],
    system_str: s.system,
    turn_idx: s.turnIdx,
    total_turns: s.totalTurns ?? s.turnIdx,
  };
  if (s.spans) r.spans = s.spans;
  return r;
}

/** Fills the judged fields of a prediction record from a verdict (and the verifier, when run). */
export function judgedRecord(p: AwbPredictionRecord, verdict: Verdict, extra: { judge?: string; verifier?: VerifierResult } = {}): AwbJudgedRecord {
  const r = { ...p } as AwbJudgedRecord;
  if (verdict.failed) {
    for (const d of DIMENSIONS) r[d] = null;
    r.total_score = null;
    r.failed = true;
    r.strengths = [];
    r.weaknesses = [];
    r.error = verdict.error;
  } else {
    for (const d of DIMENSIONS) r[d] = verdict.scores[d];
    r.total_score = verdict.total;
    r.failed = false;
    r.strengths = verdict.strengths;
    r.weaknesses = verdict.weaknesses;
  }
  if (extra.judge) r.judge = extra.judge;
  if (extra.verifier)
    r.verifier = {
      pass: extra.verifier.pass ? 1 : 0,
      applicable: extra.verifier.applicable,
      rule: extra.verifier.rule,
      regions: extra.verifier.regions.length,
      ...(extra.verifier.failure ? { failure: `${extra.verifier.failure.region.label}: ${extra.verifier.failure.reason}` } : {}),
    };
  return r;
}

/** What a sample with an empty `gen` records, as the public judge does: failed, never five 1s. */
export const NO_GENERATION = 'No model generation';

/**
 * Judges one prediction record: extraction, judge, verifier. An empty generation is a failed
 * sample (the judge is not asked), as in the public judge.
 */
export async function judgeRecord(p: AwbPredictionRecord, judge: Judge, signal?: AbortSignal): Promise<AwbJudgedRecord> {
  if (!p.gen) return judgedRecord(p, { failed: true, error: NO_GENERATION }, { judge: judge.name });
  const input = judgeInputOf(p);
  const verdict = await judge.judge(input, signal);
  const verifier = verify(input);
  return judgedRecord(p, verdict, { judge: judge.name, verifier });
}

export interface BenchProgress {
  done: number;
  total: number;
  failed: number;
  sample: BenchSample;
  record: AwbJudgedRecord;
}

export interface BenchOptions {
  backend: LwmBackend;
  judge: Judge;
  /** Sample → backend request; defaults to `defaultRequest`. */
  toRequest?: (s: BenchSample) => GenerateRequest;
  generate: Omit<GenerateOptions, 'signal'>;
  /** Samples in flight at once (generation + judging). Default 4. */
  concurrency?: number;
  onProgress?: (p: BenchProgress) => void;
  signal?: AbortSignal;
}

export interface BenchResult {
  predictions: AwbPredictionRecord[];
  judged: AwbJudgedRecord[];
  table: ScoreTable;
  /** Share of samples with an applicable verifier rule that passed it. */
  verifier: { applicable: number; passed: number };
}

/**
 * Runs every sample through the backend and the judge. A sample whose generation or judging
 * fails is recorded as failed (with the error) and the run goes on; errors marked fatal
 * (refused key, CORS) and cancellation stop the run. Records keep the input order.
 */
export async function runBenchmark(samples: readonly BenchSample[], options: BenchOptions): Promise<BenchResult> {
  const toRequest = options.toRequest ?? defaultRequest;
  const predictions: AwbPredictionRecord[] = new Array(samples.length);
  const judged: AwbJudgedRecord[] = new Array(samples.length);
  let next = 0;
  let done = 0;
  let failed = 0;
  const verifierCount = { applicable: 0, passed: 0 };

  const one = async (i: number) => {
    const s = samples[i];
    const base = sampleRecord(s);
    let gen = '';
    let genError: string | null = null;
    try {
      for await (const piece of options.backend.generate(toRequest(s), { ...options.generate, signal: options.signal })) gen += piece;
    } catch (e) {
      if (isFatal(e) || options.signal?.aborted) throw e;
      genError = `${options.backend.name}: generation failed (${(e as Error).message})`;
    }
    const p: AwbPredictionRecord = { ...base, gen, model: options.backend.name };
    predictions[i] = p;
    let rec: AwbJudgedRecord;
    if (genError) rec = judgedRecord(p, { failed: true, error: genError }, { judge: options.judge.name });
    else {
      rec = await judgeRecord(p, options.judge, options.signal);
      const v = rec.verifier as { applicable: boolean; pass: number } | undefined;
      if (v?.applicable) {
        verifierCount.applicable++;
        verifierCount.passed += v.pass;
      }
    }
    judged[i] = rec;
    done++;
    if (rec.failed) failed++;
    options.onProgress?.({ done, total: samples.length, failed, sample: s, record: rec });
  };

  const worker = async () => {
    while (next < samples.length) {
      if (options.signal?.aborted) throw options.signal.reason ?? new Error('the benchmark was cancelled');
      await one(next++);
    }
  };
  const n = Math.max(1, Math.min(options.concurrency ?? 4, samples.length));
  await Promise.all(Array.from({ length: n }, worker));
  return { predictions, judged, table: scoreJudged(judged), verifier: verifierCount };
}

/** The score table of judged records (imported or fresh). */
export function scoreJudged(records: readonly AwbJudgedRecord[]): ScoreTable {
  return scoreSamples(
    records.map((r) => ({
      domain: domainOfTask(r.task),
      failed: isFailedRecord(r),
      scores: { format: r.format, factuality: r.factuality, consistency: r.consistency, realism: r.realism, quality: r.quality },
      // A record without total_score has none (the public scorer does not recompute it).
      total: r.total_score ?? null,
      ...verifierVerdict(r.verifier),
    })),
  );
}

/** The verdict a judged record's `verifier` field holds (ours: `{pass: 1|0, applicable, ...}`), if any. */
function verifierVerdict(v: unknown): { verifier?: { applicable: boolean; pass: boolean } } {
  if (!v || typeof v !== 'object') return {};
  const { pass, applicable } = v as { pass?: unknown; applicable?: unknown };
  if (typeof pass !== 'number' && typeof pass !== 'boolean') return {};
  return { verifier: { applicable: applicable !== false, pass: pass === true || pass === 1 } };
}
