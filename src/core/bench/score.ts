// AgentWorldBench scoring (docs/method.md §8), as the public scorer (eval.py `aggregate_scores`) computes
// it: for each domain and each dimension, the mean of the scores over the domain's valid samples,
// reported as (mean − 1) / 4 × 100; the total column uses each sample's total_score. A score of 0
// (or none) is invalid: it is left out of that dimension's mean, and a total_score of 0 (or none)
// is left out of the total. Overall pools the totals of all valid samples of all domains (a
// sample-weighted mean, not a mean of domain means). A failed sample is left out of every mean
// and counted in `failed`; it is never scored as zero. Means are exact (Python's statistics.mean).
import { DIMENSIONS, INVALID_SCORE, type Dimension } from '../judge/types.ts';
import { exactMean, pyFixed } from '../judge/pyfloat.ts';
import { DOMAINS } from '../schema/types.ts';

export interface ScoredSample {
  domain: string;
  failed: boolean;
  /** The five scores, 1–5; 0, null or absent marks an invalid dimension (ignored when failed). */
  scores?: Partial<Record<Dimension, number | null>>;
  /** The sample's total_score (0 or null: none); when absent, the mean of its valid scores. */
  total?: number | null;
  /** The rule verifier's verdict, when the record carries one: whether it had a deterministic region to check, and whether the prediction reproduced it exactly. */
  verifier?: { applicable: boolean; pass: boolean };
}

/** Verifier exact-match on the deterministic region: records checked (an applicable verdict, judged or not), how many matched. */
export interface VerifierRate {
  checked: number;
  matched: number;
  /** matched / checked × 100; null when nothing was checked. */
  rate: number | null;
}

export interface ScoreRow {
  domain: string;
  valid: number;
  failed: number;
  /** Valid samples with a total_score (the public scorer's overall "Valid" counts these). */
  scored: number;
  /** Per dimension, 0–100 (null when no valid sample has a valid score for it). */
  dimensions: Record<Dimension, number | null>;
  /** 0–100 (null when no valid sample has a total_score). */
  total: number | null;
  /** Over every sample with a verifier verdict, failed judgements included (the verifier does not depend on the judge). */
  verifier: VerifierRate;
}

export interface ScoreTable {
  domains: ScoreRow[];
  overall: ScoreRow;
}

export const toPercent = (mean: number): number => ((mean - 1) / 4) * 100;

/** A usable score: a finite number other than the invalid marker 0. */
const usable = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v) && v !== INVALID_SCORE;

function sampleTotal(s: ScoredSample): number | null {
  if (s.total !== undefined) return usable(s.total) ? s.total : null;
  const valid = DIMENSIONS.map((d) => s.scores?.[d]).filter(usable);
  return valid.length ? valid.reduce((a, b) => a + b, 0) / valid.length : null;
}

function row(domain: string, samples: ScoredSample[]): ScoreRow {
  const valid = samples.filter((s) => !s.failed);
  const mean = (values: (number | null | undefined)[]) => {
    const xs = values.filter(usable);
    return xs.length ? toPercent(exactMean(xs)) : null;
  };
  const dimensions = {} as Record<Dimension, number | null>;
  for (const d of DIMENSIONS) dimensions[d] = mean(valid.map((s) => s.scores?.[d]));
  const totals = valid.map(sampleTotal);
  const checked = samples.filter((s) => s.verifier?.applicable);
  const matched = checked.filter((s) => s.verifier!.pass).length;
  const verifier = { checked: checked.length, matched, rate: checked.length ? (matched / checked.length) * 100 : null };
  return {
    domain,
    valid: valid.length,
    failed: samples.length - valid.length,
    scored: totals.filter(usable).length,
    dimensions,
    total: mean(totals),
    verifier,
  };
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

const fmt = (x: number | null): string => (x === null ? '-' : pyFixed(x, 2));

/**
 * The per-domain table as aligned text: each dimension, total, valid and failed counts; and,
 * when the records carry verifier verdicts, the verifier's exact-match rate on the deterministic
 * region (`exact`, 0–100) over the records it could check (`checked`).
 */
export function formatScoreTable(table: ScoreTable): string {
  const withVerifier = table.overall.verifier.checked > 0;
  const head = ['domain', ...DIMENSIONS, 'total', 'valid', 'failed', ...(withVerifier ? ['exact', 'checked'] : [])];
  const rows = [...table.domains, table.overall].map((r) => [
    r.domain,
    ...DIMENSIONS.map((d) => fmt(r.dimensions[d])),
    fmt(r.total),
    String(r.valid),
    String(r.failed),
    ...(withVerifier ? [fmt(r.verifier.rate), String(r.verifier.checked)] : []),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const out = [line(head), widths.map((w) => '-'.repeat(w)).join('  ')];
  rows.forEach((r, i) => {
    if (i === rows.length - 1) out.push(widths.map((w) => '-'.repeat(w)).join('  '));
    out.push(line(r));
  });
  return out.join('\n') + '\n';
}

const DISPLAY: Record<string, string> = { mcp: 'MCP', search: 'Search', terminal: 'Terminal', swe: 'SWE', android: 'Android', web: 'Web', os: 'OS' };

/** Python's str.capitalize: the first character upper case, the rest lower case. */
const capitalize = (s: string): string => {
  const [first = '', ...rest] = Array.from(s);
  return first.toUpperCase() + rest.join('').toLowerCase();
};

/** Python's string order (by code point; JavaScript's default compares UTF-16 units). */
function codePointOrder(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/**
 * The public scorer's printed report (eval.py `aggregate_scores`), character for character:
 * domains in Python's sorted order, a dimension with no valid score printed as the scorer
 * prints an empty mean (0 → -25.00), and the overall block only when some total was scored.
 */
export function formatOfficial(table: ScoreTable): string {
  const rule = '='.repeat(70);
  const out = ['', rule, 'AgentWorldBench Evaluation Results', rule];
  const fixed = (x: number | null) => pyFixed(x ?? toPercent(0), 2);
  for (const r of [...table.domains].sort((a, b) => codePointOrder(a.domain, b.domain))) {
    out.push(
      '',
      `--- ${Object.hasOwn(DISPLAY, r.domain) ? DISPLAY[r.domain] : capitalize(r.domain)} (${r.valid}/${r.valid + r.failed} valid, ${r.failed} failed) ---`,
    );
    if (!r.valid) {
      out.push('  No valid results.');
      continue;
    }
    for (const d of DIMENSIONS) out.push(`  ${d.padStart(15)}: ${fixed(r.dimensions[d])}`);
    out.push(`  ${'total_score'.padStart(15)}: ${fixed(r.total)}`);
  }
  const o = table.overall;
  if (o.scored) {
    const samples = o.valid + o.failed;
    out.push('', rule, `Overall: ${fixed(o.total)}`, `Total samples: ${samples}, Valid: ${o.scored}, Failed: ${samples - o.scored}`, rule);
  }
  return out.join('\n') + '\n';
}
