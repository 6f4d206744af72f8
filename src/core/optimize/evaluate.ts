// What one evaluation of a template is, for the loop's callers (the app's worker and the CLI):
// the dev and test samples, split by trajectory so no trajectory's turns are on both sides, and
// an `evaluate(text, split)` that renders every sample with the template, runs the simulator and
// judges the predictions (src/core/bench/runner.ts), in sample order.
import type { GenerateOptions, GenerateRequest, LwmBackend } from '../backend.ts';
import type { AwbJudgedRecord } from '../bench/records.ts';
import { runBenchmark, type BenchProgress, type BenchSample } from '../bench/runner.ts';
import type { Judge } from '../judge/types.ts';
import { keyedUniform } from '../random.ts';

export interface OptimisationSplits {
  dev: BenchSample[];
  test: BenchSample[];
}

export interface SplitOptions {
  /** Samples per domain in the dev split (the loop's working set). */
  devPerDomain: number;
  /** Samples per domain in the test split (scored once, at the end). */
  testPerDomain: number;
  seed: number;
}

/** A sample's trajectory: its record's id when it came from one, else its id. */
const trajectoryOf = (s: BenchSample): string => String(s.record?.id ?? s.id);

/**
 * Dev and test samples, per domain: trajectories are ordered by a hash of (id, seed); the first
 * go to dev until it holds `devPerDomain` samples, the rest to test. The same data and seed give
 * the same splits whatever the input order; the splits keep the input order.
 */
export function splitForOptimisation(samples: readonly BenchSample[], o: SplitOptions): OptimisationSplits {
  const byDomain = new Map<string, Map<string, number[]>>();
  samples.forEach((s, i) => {
    let trajs = byDomain.get(s.domain);
    if (!trajs) byDomain.set(s.domain, (trajs = new Map()));
    const t = trajectoryOf(s);
    trajs.set(t, [...(trajs.get(t) ?? []), i]);
  });
  const dev = new Set<number>();
  const test = new Set<number>();
  for (const trajs of byDomain.values()) {
    const order = [...trajs.keys()].sort((a, b) => keyedUniform(a, o.seed) - keyedUniform(b, o.seed) || (a < b ? -1 : 1));
    let nDev = 0;
    let nTest = 0;
    for (const t of order) {
      const idx = trajs.get(t)!;
      if (nDev < o.devPerDomain) {
        for (const i of idx.slice(0, o.devPerDomain - nDev)) dev.add(i);
        nDev += Math.min(idx.length, o.devPerDomain - nDev);
      } else if (nTest < o.testPerDomain) {
        for (const i of idx.slice(0, o.testPerDomain - nTest)) test.add(i);
        nTest += Math.min(idx.length, o.testPerDomain - nTest);
      }
    }
  }
  return { dev: samples.filter((_, i) => dev.has(i)), test: samples.filter((_, i) => test.has(i)) };
}

export interface EvaluatorOptions {
  backend: LwmBackend;
  judge: Judge;
  splits: OptimisationSplits;
  /** The sample rendered with a template text: the request the simulator gets. */
  render: (text: string, sample: BenchSample) => GenerateRequest;
  generate: Omit<GenerateOptions, 'signal'>;
  concurrency?: number;
  onProgress?: (p: BenchProgress & { split: 'dev' | 'test' }) => void;
}

/** The loop's `evaluate`: judged records of a template on a split, in sample order. */
export function benchEvaluator(o: EvaluatorOptions): (text: string, split: 'dev' | 'test', signal?: AbortSignal) => Promise<AwbJudgedRecord[]> {
  return async (text, split, signal) => {
    const samples = o.splits[split];
    const result = await runBenchmark(samples, {
      backend: o.backend,
      judge: o.judge,
      toRequest: (s) => o.render(text, s),
      generate: o.generate,
      concurrency: o.concurrency,
      signal,
      onProgress: o.onProgress ? (p) => o.onProgress!({ ...p, split }) : undefined,
    });
    return result.judged;
  };
}
