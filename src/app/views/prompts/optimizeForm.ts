// The optimization form's numbers, checked as typed (pure): each error names its field and what it got.
import type { BenchGeneration } from '../../../core/records.ts';

export interface OptimizeNumberFields {
  rounds: string;
  candidates: string;
  devPerDomain: string;
  testPerDomain: string;
  evalFraction: string;
  seed: string;
  margin: string;
  budget: string;
  maxTokens: string;
  temperature: string;
}

export interface OptimizeNumbers {
  rounds: number;
  candidates: number;
  devPerDomain: number;
  testPerDomain: number;
  evalFraction: number;
  seed: number;
  margin: number;
  /** Most model calls (and as many judge calls) in the whole run; absent: no budget. */
  budget?: number;
  generation: BenchGeneration;
}

export const OPTIMIZE_DEFAULTS: OptimizeNumberFields = {
  rounds: '2',
  candidates: '2',
  devPerDomain: '6',
  testPerDomain: '4',
  evalFraction: '0.2',
  seed: '1',
  margin: '0',
  budget: '',
  maxTokens: '',
  temperature: '',
};

const INTEGER = /^\s*\d+\s*$/;

function whole(errors: Record<string, string>, key: string, label: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!INTEGER.test(text) || n < min || n > max) errors[key] = `${label} must be a whole number from ${min} to ${max}; got '${text}'.`;
  return n;
}

function generationOf(f: OptimizeNumberFields, errors: Record<string, string>): BenchGeneration {
  const g: BenchGeneration = {};
  if (f.maxTokens.trim()) {
    const n = whole(errors, 'maxTokens', 'Max new tokens', f.maxTokens, 1, 1_000_000);
    if (!errors.maxTokens) g.maxTokens = n;
  }
  if (f.temperature.trim()) {
    const t = Number(f.temperature);
    if (!Number.isFinite(t) || t < 0 || t > 100) errors.temperature = `Temperature must be a number ≥ 0, or blank; got '${f.temperature}'.`;
    else g.temperature = t;
  }
  return g;
}

export function parseOptimizeNumbers(f: OptimizeNumberFields): { values: OptimizeNumbers | null; errors: Partial<Record<keyof OptimizeNumberFields, string>> } {
  const errors: Record<string, string> = {};
  const rounds = whole(errors, 'rounds', 'Rounds', f.rounds, 1, 100);
  const candidates = whole(errors, 'candidates', 'Candidates per round', f.candidates, 1, 20);
  const devPerDomain = whole(errors, 'devPerDomain', 'Dev samples per domain', f.devPerDomain, 1, 100_000);
  const testPerDomain = whole(errors, 'testPerDomain', 'Test samples per domain', f.testPerDomain, 0, 100_000);
  const seed = whole(errors, 'seed', 'Seed', f.seed, 0, 0xffffffff);
  const evalFraction = Number(f.evalFraction);
  if (f.evalFraction.trim() === '' || !Number.isFinite(evalFraction) || evalFraction <= 0 || evalFraction > 1)
    errors.evalFraction = `Eval share must be a number above 0 and at most 1; got '${f.evalFraction}'.`;
  const margin = Number(f.margin);
  if (f.margin.trim() === '' || !Number.isFinite(margin) || margin < 0 || margin > 100)
    errors.margin = `Margin must be a number from 0 to 100 (score points); got '${f.margin}'.`;
  const budget = f.budget.trim() ? whole(errors, 'budget', 'Budget', f.budget, 1, 100_000_000) : undefined;
  const generation = generationOf(f, errors);
  if (Object.keys(errors).length) return { values: null, errors };
  return {
    values: { rounds, candidates, devPerDomain, testPerDomain, evalFraction, seed, margin, ...(budget !== undefined && { budget }), generation },
    errors,
  };
}
