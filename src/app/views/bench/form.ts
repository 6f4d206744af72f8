// The Bench form's checks, pure: numbers as typed (endpoints are checked by stores/endpoints.ts).
import type { BenchGeneration } from '../../../core/records.ts';

export interface BenchNumberFields {
  perDomain: string;
  evalFraction: string;
  seed: string;
  maxTokens: string;
  temperature: string;
}

export interface BenchNumbers {
  perDomain: number;
  evalFraction: number;
  seed: number;
  generation: BenchGeneration;
}

const INTEGER = /^\s*\d+\s*$/;

export function parseBenchNumbers(f: BenchNumberFields): { values: BenchNumbers | null; errors: Partial<Record<keyof BenchNumberFields, string>> } {
  const errors: Partial<Record<keyof BenchNumberFields, string>> = {};
  const perDomain = Number(f.perDomain);
  if (!INTEGER.test(f.perDomain) || perDomain < 1 || perDomain > 100_000)
    errors.perDomain = `Samples per domain must be a whole number from 1 to 100000; got '${f.perDomain}'.`;
  const evalFraction = Number(f.evalFraction);
  if (f.evalFraction.trim() === '' || !Number.isFinite(evalFraction) || evalFraction <= 0 || evalFraction > 1)
    errors.evalFraction = `Eval share must be a number above 0 and at most 1; got '${f.evalFraction}'.`;
  const seed = Number(f.seed);
  if (!INTEGER.test(f.seed) || !Number.isSafeInteger(seed) || seed > 0xffffffff)
    errors.seed = `Split seed must be a whole number from 0 to 4294967295; got '${f.seed}'.`;
  const generation: BenchGeneration = {};
  if (f.maxTokens.trim()) {
    const n = Number(f.maxTokens);
    if (!INTEGER.test(f.maxTokens) || n < 1 || n > 1_000_000) errors.maxTokens = `Max new tokens must be a whole number ≥ 1, or blank; got '${f.maxTokens}'.`;
    else generation.maxTokens = n;
  }
  if (f.temperature.trim()) {
    const t = Number(f.temperature);
    if (!Number.isFinite(t) || t < 0 || t > 100) errors.temperature = `Temperature must be a number ≥ 0, or blank; got '${f.temperature}'.`;
    else generation.temperature = t;
  }
  if (Object.keys(errors).length) return { values: null, errors };
  return { values: { perDomain, evalFraction, seed, generation }, errors };
}
