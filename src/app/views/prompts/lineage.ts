// What the lineage view shows of an optimization's loop state, pure: a version's dev score as
// mean ± the half-width of its confidence interval, the paired test against its parent with its
// two-sided p-value, and the rounds as columns of candidates. The interval and the p-value use
// the Student t of the loop's own paired comparison (src/core/optimize/paired.ts).
import type { LoopState, Version } from '../../../core/optimize/loop.ts';
import { studentTCdf, studentTQuantile, type PairedComparison } from '../../../core/optimize/paired.ts';

/** Mean and the half-width of its `level` interval over the scored samples (null half-width with fewer than 2). */
export function meanInterval(objectives: readonly (number | null)[] | undefined, level: number): { mean: number; half: number | null; n: number } | null {
  const xs = (objectives ?? []).filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  if (!xs.length) return null;
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  if (xs.length < 2) return { mean, half: null, n: 1 };
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1));
  return { mean, half: studentTQuantile(1 - (1 - level) / 2, xs.length - 1) * (sd / Math.sqrt(xs.length)), n: xs.length };
}

/** Two-sided p-value of the paired t-test (mean difference 0); 1 when every difference is equal to zero, null with fewer than 2 pairs. */
export function pairedP(c: PairedComparison | undefined): number | null {
  if (!c || c.n < 2 || c.meanDiff === null || c.sdDiff === null) return null;
  if (c.sdDiff === 0) return c.meanDiff === 0 ? 1 : 0;
  const t = c.meanDiff / (c.sdDiff / Math.sqrt(c.n));
  return Math.min(1, 2 * (1 - studentTCdf(Math.abs(t), c.n - 1)));
}

/** Cohen's d of the paired differences (mean / sd); null when undefined. */
export function pairedEffect(c: PairedComparison | undefined): number | null {
  if (!c || c.meanDiff === null || !c.sdDiff) return null;
  return c.meanDiff / c.sdDiff;
}

export const fmtScore = (x: number | null | undefined): string => (typeof x === 'number' ? x.toFixed(1) : '—');
export const fmtSigned = (x: number): string => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(1)}`;
export function fmtP(p: number | null): string {
  if (p === null) return 'p —';
  return p < 0.001 ? 'p < 0.001' : `p = ${p.toFixed(p < 0.01 ? 3 : 2)}`;
}

/** The start, then each round's candidates in id order: the lineage as the view lays it out. */
export function roundsOf(s: LoopState): { round: number; versions: Version[] }[] {
  const out: { round: number; versions: Version[] }[] = [];
  for (const v of s.versions) {
    let col = out.find((c) => c.round === v.round);
    if (!col) out.push((col = { round: v.round, versions: [] }));
    col.versions.push(v);
  }
  return out.sort((a, b) => a.round - b.round);
}

/** The best score after each round, from the start (round 0): the chart's points. */
export function bestPerRound(s: LoopState): { round: number; mean: number | null; best: string }[] {
  const start = s.versions.find((v) => v.round === 0);
  const points = start ? [{ round: 0, mean: start.mean ?? null, best: start.id }] : [];
  for (const r of s.rounds) points.push({ round: r.round, mean: r.mean, best: r.best });
  return points;
}

/** The line of versions from the start to `id` (the winner's ancestry). */
export function ancestry(s: LoopState, id: string): string[] {
  const out: string[] = [];
  let v = s.versions.find((x) => x.id === id);
  while (v) {
    out.unshift(v.id);
    v = v.parent ? s.versions.find((x) => x.id === v!.parent) : undefined;
  }
  return out;
}
