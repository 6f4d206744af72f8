// Error analysis of one evaluation (issue 16 item 1): what the optimizers read. From the judged
// records of a template on the dev samples: each sample's objective score, the lowest-scoring
// samples, the judge's weaknesses grouped by dimension (with the dimension's mean), and the
// verifier's mismatches grouped by rule (the kind of deterministic region the prediction got
// wrong). Everything here is a pure function of the records, so a loop is reproducible.
import { isFailedRecord, type AwbJudgedRecord } from '../bench/records.ts';
import { NO_GENERATION } from '../bench/runner.ts';
import { scoreJudged } from '../bench/runner.ts';
import type { ScoreTable } from '../bench/score.ts';
import { toPercent } from '../bench/score.ts';
import { DIMENSIONS, INVALID_SCORE, type Dimension } from '../judge/types.ts';
import { domainOfTask } from '../schema/types.ts';

/**
 * A sample's objective, 0–100 (AgentWorldBench's scale): its total score. A sample whose
 * generation failed or was empty counts as 0 (the template made the model produce nothing usable);
 * a sample the judge itself could not score is null and drops out of the paired comparison.
 */
export function sampleObjective(r: AwbJudgedRecord): number | null {
  if (isFailedRecord(r)) return generationFailed(r) ? 0 : null;
  const t = r.total_score;
  if (typeof t !== 'number' || !Number.isFinite(t) || t === INVALID_SCORE) return null;
  return toPercent(t);
}

function generationFailed(r: AwbJudgedRecord): boolean {
  const error = typeof r.error === 'string' ? r.error : '';
  return !r.gen || error === NO_GENERATION || /generation failed/.test(error);
}

export interface LowSample {
  index: number;
  id: string | number;
  domain: string;
  turn: number;
  score: number;
  action: string;
  prediction: string;
  reference: string;
  weaknesses: string[];
  verifierFailure?: string;
}

export interface DimensionErrors {
  dimension: Dimension;
  /** Mean 0–100 over the samples with a valid score for it (null when none). */
  mean: number | null;
  /** The judge's weakness lines for samples scoring ≤ 3 on this dimension, most frequent first. */
  weaknesses: { text: string; count: number }[];
  /** Samples scoring ≤ 3 on this dimension. */
  low: number;
}

export interface MismatchGroup {
  /** The verifier rule whose region did not match (spans, echo, read-after-write, ...). */
  rule: string;
  count: number;
  examples: string[];
}

export interface ErrorAnalysis {
  table: ScoreTable;
  objectives: (number | null)[];
  /** Mean objective over scored samples (null when none). */
  mean: number | null;
  lowest: LowSample[];
  /** Weakest dimension first. */
  dimensions: DimensionErrors[];
  mismatches: MismatchGroup[];
  verifier: { checked: number; matched: number };
}

const clip = (s: string, n: number): string => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);

function lastAction(r: AwbJudgedRecord): string {
  const p = typeof r.current_prompt === 'string' ? r.current_prompt : '';
  return p.replace(/^### Turn \d+\s*\*\*Action:\*\*\s*/u, '');
}

function referenceOf(r: AwbJudgedRecord): string {
  const last = Array.isArray(r.response) ? r.response[r.response.length - 1] : '';
  return typeof last === 'string' ? last.replace(/^\*\*Environment Observation:\*\*\s*/u, '') : '';
}

function verifierOf(r: AwbJudgedRecord): { applicable: boolean; pass: boolean; rule: string; failure?: string } | null {
  const v = r.verifier as { applicable?: unknown; pass?: unknown; rule?: unknown; failure?: unknown } | undefined;
  if (!v || typeof v !== 'object' || (typeof v.pass !== 'number' && typeof v.pass !== 'boolean')) return null;
  return {
    applicable: v.applicable !== false,
    pass: v.pass === true || v.pass === 1,
    rule: typeof v.rule === 'string' ? v.rule : 'unknown',
    ...(typeof v.failure === 'string' ? { failure: v.failure } : {}),
  };
}

function countLines(lines: readonly string[]): { text: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const l of lines) {
    const key = l.trim();
    if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([text, count]) => ({ text, count })).sort((a, b) => b.count - a.count || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
}

function dimensionErrors(records: readonly AwbJudgedRecord[]): DimensionErrors[] {
  const out = DIMENSIONS.map((dimension): DimensionErrors => {
    const scores: number[] = [];
    const weak: string[] = [];
    let low = 0;
    for (const r of records) {
      if (isFailedRecord(r)) continue;
      const s = r[dimension];
      if (typeof s !== 'number' || s === INVALID_SCORE || !Number.isFinite(s)) continue;
      scores.push(s);
      if (s <= 3) {
        low++;
        weak.push(...(r.weaknesses ?? []));
      }
    }
    const mean = scores.length ? toPercent(scores.reduce((a, b) => a + b, 0) / scores.length) : null;
    return { dimension, mean, weaknesses: countLines(weak).slice(0, 8), low };
  });
  return out.sort((a, b) => (a.mean ?? Infinity) - (b.mean ?? Infinity) || DIMENSIONS.indexOf(a.dimension) - DIMENSIONS.indexOf(b.dimension));
}

function mismatchGroups(records: readonly AwbJudgedRecord[]): { groups: MismatchGroup[]; checked: number; matched: number } {
  const groups = new Map<string, MismatchGroup>();
  let checked = 0;
  let matched = 0;
  for (const r of records) {
    const v = verifierOf(r);
    if (!v?.applicable) continue;
    checked++;
    if (v.pass) {
      matched++;
      continue;
    }
    const g = groups.get(v.rule) ?? { rule: v.rule, count: 0, examples: [] };
    g.count++;
    if (v.failure && g.examples.length < 3) g.examples.push(clip(v.failure, 200));
    groups.set(v.rule, g);
  }
  return { groups: [...groups.values()].sort((a, b) => b.count - a.count || (a.rule < b.rule ? -1 : 1)), checked, matched };
}

/** The analysis of one template's judged dev records (in sample order). */
export function analyseErrors(records: readonly AwbJudgedRecord[], options: { lowest?: number } = {}): ErrorAnalysis {
  const objectives = records.map(sampleObjective);
  const scored = objectives.filter((x): x is number => x !== null);
  const lowest = records
    .map((r, index): LowSample | null => {
      const score = objectives[index];
      if (score === null) return null;
      const v = verifierOf(r);
      const low: LowSample = {
        index,
        id: r.id,
        domain: domainOfTask(r.task),
        turn: r.turn_idx,
        score,
        action: clip(lastAction(r), 300),
        prediction: clip(r.gen ?? '', 400),
        reference: clip(referenceOf(r), 400),
        weaknesses: r.weaknesses ?? [],
      };
      if (v && !v.pass && v.failure) low.verifierFailure = v.failure;
      return low;
    })
    .filter((x): x is LowSample => x !== null)
    .sort((a, b) => a.score - b.score || a.index - b.index)
    .slice(0, options.lowest ?? 5);
  const m = mismatchGroups(records);
  return {
    table: scoreJudged(records),
    objectives,
    mean: scored.length ? scored.reduce((a, b) => a + b, 0) / scored.length : null,
    lowest,
    dimensions: dimensionErrors(records),
    mismatches: m.groups,
    verifier: { checked: m.checked, matched: m.matched },
  };
}

/** The analysis as text for an optimizer's prompt (bounded length). */
export function formatAnalysis(a: ErrorAnalysis): string {
  const lines: string[] = [
    `Mean score ${a.mean === null ? 'n/a' : a.mean.toFixed(1)} / 100 over ${a.objectives.length} samples; verifier exact match ${a.verifier.matched}/${a.verifier.checked}.`,
    '',
    'Dimensions, weakest first:',
  ];
  for (const d of a.dimensions) {
    lines.push(`- ${d.dimension}: ${d.mean === null ? 'n/a' : d.mean.toFixed(1)} (${d.low} samples at 3 or below)`);
    for (const w of d.weaknesses.slice(0, 3)) lines.push(`  - ${clip(w.text, 200)} (×${w.count})`);
  }
  if (a.mismatches.length) {
    lines.push('', 'Verifier mismatches by rule:');
    for (const m of a.mismatches) lines.push(`- ${m.rule}: ${m.count}${m.examples.length ? ` (e.g. ${m.examples[0]})` : ''}`);
  }
  lines.push('', 'Lowest-scoring samples:');
  for (const s of a.lowest) {
    lines.push(`- [${s.domain} turn ${s.turn}] score ${s.score.toFixed(1)}; action: ${clip(s.action, 120)}`);
    lines.push(`  predicted: ${clip(s.prediction, 200)}`);
    lines.push(`  real: ${clip(s.reference, 200)}`);
    if (s.verifierFailure) lines.push(`  verifier: ${clip(s.verifierFailure, 160)}`);
  }
  return lines.join('\n');
}
