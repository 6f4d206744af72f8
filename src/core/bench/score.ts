// AgentWorldBench scoring (SPEC §8): for each domain and each dimension, the mean of the 1–5
// scores over the domain's valid samples, reported as (mean − 1) / 4 × 100; the total column
// uses each sample's total_score (the mean of its five scores). Overall pools all valid samples
// of all domains (a sample-weighted mean, not a mean of domain means). A failed sample is left
// out of every mean and counted in `failed`; it is never scored as zero.
import { DIMENSIONS, type Dimension } from '../judge/types.ts';
import { DOMAINS } from '../schema/types.ts';

export interface ScoredSample {
  domain: string;
  failed: boolean;
  /** The five scores, 1–5 (ignored when failed). */
  scores?: Partial<Record<Dimension, number | null>>;
  /** 1–5; the mean of the five scores when absent. */
  total?: number | null;
}

export interface ScoreRow {
  domain: string;
  valid: number;
  failed: number;
  /** Per dimension, 0–100 (null when no valid sample). */
  dimensions: Record<Dimension, number | null>;
  /** 0–100 (null when no valid sample). */
  total: number | null;
}

export interface ScoreTable {
  domains: ScoreRow[];
  overall: ScoreRow;
}

export const toPercent = (mean: number): number => ((mean - 1) / 4) * 100;

function sampleTotal(s: ScoredSample): number {
  if (typeof s.total === 'number' && Number.isFinite(s.total)) return s.total;
  let sum = 0;
  for (const d of DIMENSIONS) sum += s.scores?.[d] ?? Number.NaN;
  return sum / DIMENSIONS.length;
}

function row(domain: string, samples: ScoredSample[]): ScoreRow {
  const valid = samples.filter((s) => !s.failed);
  const mean = (f: (s: ScoredSample) => number) => {
    if (!valid.length) return null;
    let sum = 0;
    for (const s of valid) sum += f(s);
    return toPercent(sum / valid.length);
  };
  const dimensions = {} as Record<Dimension, number | null>;
  for (const d of DIMENSIONS) dimensions[d] = mean((s) => s.scores?.[d] ?? Number.NaN);
  return { domain, valid: valid.length, failed: samples.length - valid.length, dimensions, total: mean(sampleTotal) };
}

/** Known domains first in benchmark order, then any others alphabetically. */
function domainOrder(a: string, b: string): number {
  const ia = (DOMAINS as readonly string[]).indexOf(a);
  const ib = (DOMAINS as readonly string[]).indexOf(b);
  if (ia >= 0 || ib >= 0) return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
  return a < b ? -1 : a > b ? 1 : 0;
}

export function scoreSamples(samples: readonly ScoredSample[]): ScoreTable {
  const by = new Map<string, ScoredSample[]>();
  for (const s of samples) {
    let list = by.get(s.domain);
    if (!list) by.set(s.domain, (list = []));
    list.push(s);
  }
  const domains = [...by.keys()].sort(domainOrder).map((d) => row(d, by.get(d)!));
  return { domains, overall: row('overall', [...samples]) };
}

const fmt = (x: number | null): string => (x === null ? '-' : x.toFixed(2));

/** The per-domain table as aligned text: each dimension, total, valid and failed counts. */
export function formatScoreTable(table: ScoreTable): string {
  const head = ['domain', ...DIMENSIONS, 'total', 'valid', 'failed'];
  const rows = [...table.domains, table.overall].map((r) => [r.domain, ...DIMENSIONS.map((d) => fmt(r.dimensions[d])), fmt(r.total), String(r.valid), String(r.failed)]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const out = [line(head), widths.map((w) => '-'.repeat(w)).join('  ')];
  rows.forEach((r, i) => {
    if (i === rows.length - 1) out.push(widths.map((w) => '-'.repeat(w)).join('  '));
    out.push(line(r));
  });
  return out.join('\n') + '\n';
}
