// Rejection-sampling SFT builder (docs/method.md §5): N candidate observations per turn sample from a
// teacher backend (the local model or an endpoint), each judged against the real observation,
// kept when the judge's mean score reaches a threshold. Retention — kept candidates over judged
// candidates — is reported overall and per domain (the method kept 7,094 of 10,250, 69.2%). A
// candidate whose judging failed is neither kept nor rejected: it is counted apart and left out
// of the rate, as a failed judgement is left out of every benchmark mean.
// A kept candidate becomes an SFT sample whose target is the candidate's prediction, trained at
// its turn's mask weight, and whose reasoning trace (a <think> block before the tag, if any) can
// be trained on too.
import type { LwmBackend, GenerateRequest } from '../core/backend.ts';
import { extractPrediction } from '../core/judge/extract.ts';
import { judgeInputFor } from '../core/judge/sample.ts';
import type { Judge } from '../core/judge/types.ts';
import { BUILTIN_TEMPLATES, renderSystem, type PromptTemplate } from '../core/templates/index.ts';
import type { TurnSample } from '../core/turns/index.ts';
import { DEFAULT_KEEP_THRESHOLD } from '../core/trainSpec.ts';

export interface RejectionOptions {
  /** Candidates per sample (N). Default 4. */
  candidates?: number;
  /** Keep a candidate whose judge mean (1–5) is at least this. Default 4. */
  threshold?: number;
  /** 'all' keeps every candidate above the threshold; 'best' at most one per sample. Default 'all'. */
  keep?: 'all' | 'best';
  temperature?: number;
  maxTokens?: number;
  seed?: number;
  /** Template of the prompt form (local models). Default v0. */
  template?: PromptTemplate;
  /** How a sample becomes a request. Default: a turn request with `template` (promptRequest). */
  request?: (sample: TurnSample) => GenerateRequest;
  /** The turn's mask weight (docs/method.md §4), carried on each kept candidate. Default: none (the trainer weighs it). */
  weightOf?: (sample: TurnSample) => number;
  /** Samples generated at once (endpoints take parallel requests; a local GPU model wants 1). Default 1. */
  concurrency?: number;
  signal?: AbortSignal;
}

export interface KeptCandidate {
  sample: TurnSample;
  /** The backend's whole output. */
  output: string;
  /** The observation inside it (docs/method.md §7 extraction). */
  prediction: string;
  /** Text of the first <think> block, when the output has one. */
  reasoning?: string;
  score: number;
  /** The turn's mask weight, when `weightOf` was given. */
  weight?: number;
}

export interface Retention {
  /** Judged and at or above the threshold (and, with keep 'best', the best of its sample). */
  kept: number;
  /** Judged and below the threshold (or, with keep 'best', beaten by another of its sample). */
  rejected: number;
  /** Candidates whose judging failed: neither kept nor rejected, left out of the rate. */
  failed: number;
  /** kept + rejected: candidates that got a verdict. */
  judged: number;
  /** Every candidate generated: judged + failed. */
  total: number;
  /** kept / judged (0 when nothing was judged). */
  rate: number;
}

export function emptyRetention(): Retention {
  return { kept: 0, rejected: 0, failed: 0, judged: 0, total: 0, rate: 0 };
}

/** "7,094 of 10,250 kept, 69.2%", plus the judge failures when there were any. */
export function formatRetention(r: Retention): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const base = `${n(r.kept)} of ${n(r.judged)} kept, ${(r.rate * 100).toFixed(1)}%`;
  return r.failed ? `${base} (${n(r.failed)} judge ${r.failed === 1 ? 'failure' : 'failures'} left out)` : base;
}

export interface RejectionResult {
  kept: KeptCandidate[];
  overall: Retention;
  perDomain: Record<string, Retention>;
}

/**
 * The default request: the turn itself with its template, so a local teacher lays it out and
 * cuts it to its context as it was trained (src/core/templates/fit.ts) and an endpoint gets it
 * as chat messages.
 */
export function promptRequest(template: PromptTemplate): (s: TurnSample) => GenerateRequest {
  return (s) => ({ sample: s, template });
}

function thinkOf(output: string): string | undefined {
  const m = /<think>([\s\S]*?)(<\/think>|$)/i.exec(output);
  return m ? m[1].trim() : undefined;
}

export async function rejectionSample(
  samples: TurnSample[],
  backend: LwmBackend,
  judge: Judge,
  options: RejectionOptions = {},
  onProgress?: (done: number, total: number) => void,
): Promise<RejectionResult> {
  const n = options.candidates ?? 4;
  const threshold = options.threshold ?? DEFAULT_KEEP_THRESHOLD;
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`rejection sampling: candidates must be a positive integer, got ${n}`);
  if (!(threshold >= 1 && threshold <= 5)) throw new RangeError(`rejection sampling: threshold must be within 1–5 (the judge's scale), got ${threshold}`);
  const template = options.template ?? BUILTIN_TEMPLATES.v0;
  const request = options.request ?? promptRequest(template);
  const perDomain: Record<string, Retention> = Object.create(null); // domains come from data
  const overall = emptyRetention();
  const kept: KeptCandidate[][] = samples.map(() => []);
  let done = 0;

  const one = async (index: number) => {
    const sample = samples[index];
    const dom = (perDomain[sample.domain] ??= emptyRetention());
    const here: KeptCandidate[] = [];
    for (let c = 0; c < n; c++) {
      if (options.signal?.aborted) return;
      let output = '';
      for await (const piece of backend.generate(request(sample), {
        maxTokens: options.maxTokens ?? 256,
        temperature: options.temperature ?? 1,
        seed: (options.seed ?? 0) * 100_003 + index * 101 + c,
        stop: [template.targetClose.trim()],
        signal: options.signal,
      })) {
        output += piece;
      }
      const prediction = extractPrediction(output);
      const verdict = await judge.judge(judgeInputFor(sample, renderSystem(template, sample), prediction), options.signal);
      overall.total++;
      dom.total++;
      if (verdict.failed) {
        overall.failed++;
        dom.failed++;
        continue;
      }
      overall.judged++;
      dom.judged++;
      if (verdict.total >= threshold) {
        const k: KeptCandidate = { sample, output, prediction, reasoning: thinkOf(output), score: verdict.total };
        if (options.weightOf) k.weight = options.weightOf(sample);
        here.push(k);
      } else {
        overall.rejected++;
        dom.rejected++;
      }
    }
    const chosen = options.keep === 'best' ? here.sort((a, b) => b.score - a.score).slice(0, 1) : here;
    kept[index] = chosen;
    // Above the threshold but not the best of its sample: rejected by the keep rule.
    for (const r of [overall, dom]) {
      r.kept += chosen.length;
      r.rejected += here.length - chosen.length;
    }
    onProgress?.(++done, samples.length);
  };

  // A simple pool: `concurrency` samples in flight, results kept in sample order.
  let next = 0;
  const workers = Array.from({ length: Math.max(1, options.concurrency ?? 1) }, async () => {
    while (next < samples.length) await one(next++);
  });
  await Promise.all(workers);
  for (const r of [overall, ...Object.values(perDomain)]) r.rate = r.judged ? r.kept / r.judged : 0;
  return { kept: kept.flat(), overall, perDomain };
}

/** A chosen SFT label: the sample with its target replaced, what `runTraining` trains on. */
export interface SftLabel {
  sample: TurnSample;
  reasoning?: string;
  /** The turn's mask weight; when absent the trainer uses the run's mask for that turn. */
  weight?: number;
}

/** Kept candidates as SFT samples: the prediction becomes the target; reasoning and mask weight ride along. */
export function keptAsSamples(kept: KeptCandidate[]): SftLabel[] {
  return kept.map((k) => {
    const l: SftLabel = { sample: { ...k.sample, targetObservation: k.prediction, targetSpans: undefined } };
    if (k.reasoning !== undefined) l.reasoning = k.reasoning;
    if (k.weight !== undefined) l.weight = k.weight;
    return l;
  });
}
