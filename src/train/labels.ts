// SFT label files (docs/method.md §5): what `lwm labels` writes and `lwm train --labels FILE` reads. One
// JSON object a line, one kept candidate each:
//
//   {"trajectory_id": "terminal-000003", "turn_index": 2, "domain": "terminal",
//    "label": "<the observation to train on>", "reasoning": "<think text, optional>",
//    "score": 4.6, "weight": 1}
//
// `weight` is the turn's mask weight when the file was written (docs/method.md §4), kept for readers of the
// file; `lwm train` weighs every label with the run's own mask of that turn, so labelled and
// reference rows of one run always agree. Labels are made for the train split only (the same
// split by trajectory `lwm train` makes with the same seed, eval share and domains), so a label
// never teaches the model a held-out turn.
import { parseJsonl, toJsonl } from '../core/bench/records.ts';
import type { Trajectory } from '../core/schema/types.ts';
import { expandTurns, keyedUniform, splitByTrajectory, turnSample, type TurnSample } from '../core/turns/index.ts';
import { formatRetention, type KeptCandidate, type RejectionResult, type SftLabel } from './rejection.ts';

export interface LabelRecord {
  trajectory_id: string;
  /** 0-based, as TurnSample.turnIndex. */
  turn_index: number;
  domain: string;
  label: string;
  reasoning?: string;
  /** The judge's mean (1–5) of the kept candidate. */
  score?: number;
  weight?: number;
}

export function labelRecords(kept: KeptCandidate[]): LabelRecord[] {
  return kept.map((k) => {
    const r: LabelRecord = { trajectory_id: k.sample.trajectoryId, turn_index: k.sample.turnIndex, domain: k.sample.domain, label: k.prediction };
    if (k.reasoning !== undefined) r.reasoning = k.reasoning;
    r.score = k.score;
    if (k.weight !== undefined) r.weight = k.weight;
    return r;
  });
}

export function labelsJsonl(kept: KeptCandidate[]): string {
  return toJsonl(labelRecords(kept));
}

/**
 * Reads a label file against the trajectories it was made from. Problems name the file and
 * line; a label whose trajectory or turn the data does not have is a problem, not a silent skip.
 */
export function readLabelFile(text: string, file: string, trajectories: Trajectory[]): { labels: SftLabel[]; errors: string[] } {
  const parsed = parseJsonl(text, file);
  const errors = [...parsed.errors];
  const byId = new Map(trajectories.map((t) => [t.id, t]));
  const labels: SftLabel[] = [];
  for (const { line, value } of parsed.records) {
    const where = `${file}:${line}`;
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      errors.push(`${where}: expected a JSON object`);
      continue;
    }
    const r = value as Record<string, unknown>;
    const here: string[] = [];
    if (typeof r.trajectory_id !== 'string' || !r.trajectory_id) here.push(`${where}: "trajectory_id" must be a non-empty string`);
    if (!Number.isInteger(r.turn_index) || (r.turn_index as number) < 0) here.push(`${where}: "turn_index" must be an integer ≥ 0`);
    if (typeof r.label !== 'string') here.push(`${where}: "label" (the observation to train on) must be a string`);
    if (r.reasoning !== undefined && typeof r.reasoning !== 'string') here.push(`${where}: "reasoning" must be a string when present`);
    if (r.weight !== undefined && !(typeof r.weight === 'number' && r.weight >= 0 && r.weight <= 1))
      here.push(`${where}: "weight" must be a number in [0, 1] when present`);
    if (here.length) {
      errors.push(...here);
      continue;
    }
    const t = byId.get(r.trajectory_id as string);
    if (!t) {
      errors.push(`${where}: no trajectory "${r.trajectory_id}" in the training data (was the label file made from other data?)`);
      continue;
    }
    const i = r.turn_index as number;
    if (i >= t.turns.length) {
      errors.push(`${where}: trajectory "${t.id}" has ${t.turns.length} turns; turn_index ${i} is past its end`);
      continue;
    }
    const sample: TurnSample = { ...turnSample(t, i), targetObservation: r.label as string, targetSpans: undefined };
    const l: SftLabel = { sample };
    if (typeof r.reasoning === 'string') l.reasoning = r.reasoning;
    labels.push(l);
  }
  return { labels, errors };
}

/** The turn samples labels are made for: the train split `lwm train` makes with these settings. */
export function labelSamples(trajectories: Trajectory[], options: { domains?: string[]; evalFraction?: number; seed?: number } = {}): TurnSample[] {
  let data = trajectories;
  if (options.domains?.length) data = data.filter((t) => options.domains!.includes(t.domain));
  const split = splitByTrajectory(data, { evalFraction: options.evalFraction ?? 0.1, seed: options.seed ?? 0 });
  return expandTurns(split.train);
}

/** Retention as the method reports it: overall, then one line per domain. */
export function retentionReport(r: Pick<RejectionResult, 'overall' | 'perDomain'>): string {
  const lines = [`retention: ${formatRetention(r.overall)}`];
  for (const [d, x] of Object.entries(r.perDomain).sort(([a], [b]) => (a < b ? -1 : 1))) lines.push(`  ${d}: ${formatRetention(x)}`);
  return lines.join('\n') + '\n';
}

/** Retention as metric values (the Train view shows them with the run): overall and per domain. */
export function retentionMetrics(r: Pick<RejectionResult, 'overall' | 'perDomain'>): Record<string, number> {
  const m: Record<string, number> = {
    labels_kept: r.overall.kept,
    labels_rejected: r.overall.rejected,
    labels_judge_failed: r.overall.failed,
    labels_retention: r.overall.rate,
  };
  for (const [d, x] of Object.entries(r.perDomain)) {
    m[`labels_kept_${d}`] = x.kept;
    m[`labels_judged_${d}`] = x.judged;
    m[`labels_judge_failed_${d}`] = x.failed;
    m[`labels_retention_${d}`] = x.rate;
  }
  return m;
}

/** At most `n` samples, a seeded spread over trajectories and domains rather than the first n. */
export function spreadSamples(samples: TurnSample[], n: number | undefined, seed: number): TurnSample[] {
  if (n === undefined || n >= samples.length) return samples;
  const key = (s: TurnSample) => keyedUniform(`${s.trajectoryId}#${s.turnIndex}`, seed);
  return [...samples].sort((a, b) => key(a) - key(b)).slice(0, n);
}
