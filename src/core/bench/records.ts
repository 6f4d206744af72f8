// Reading, checking and writing AgentWorldBench record files (docs/method.md §8): one JSON object a line.
// The record types (sample, prediction, judged) live in schema/agentworldbench.ts, shared with
// the importer and exporter; extra keys are kept as they are, so a file passes through
// predict → judge → score without losing anything its producer wrote.
import { extractPrediction } from '../judge/extract.ts';
import { DIMENSIONS, type HistoryTurn, type JudgeInput } from '../judge/types.ts';
import type { AwbPredictionRecord, AwbSampleRecord } from '../schema/agentworldbench.ts';
import { domainOfTask, type SpanLabel } from '../schema/types.ts';
import { scanRecord } from '../limits.ts';

export type { AwbRecord, AwbSampleRecord, AwbPredictionRecord, AwbJudgedRecord } from '../schema/agentworldbench.ts';

/** Whether a judged record is left out of the scores (the public scorer's `failed != 0.0`). */
export function isFailedRecord(r: { failed?: unknown }): boolean {
  return !(r.failed === false || r.failed === 0);
}

/** A score a judged file may hold: 1–5, or 0 (the public scorer's "no usable score"). */
export function isScoreValue(v: number): boolean {
  return v === 0 || (v >= 1 && v <= 5);
}

/** Reader problems, one per line, `file:line: message` as the CLI prints them. */
export type RecordProblem = string;

/** The lines of a text with their 1-based numbers, found one at a time (no split of the whole text). */
function* textLines(text: string): Generator<[number, string]> {
  for (let from = 0, n = 1; from < text.length; n++) {
    let nl = text.indexOf('\n', from);
    if (nl < 0) nl = text.length;
    yield [n, text.slice(from, nl)];
    from = nl + 1;
  }
}

export function parseJsonl(text: string, file: string): { records: { line: number; value: unknown }[]; errors: RecordProblem[] } {
  const records: { line: number; value: unknown }[] = [];
  const errors: RecordProblem[] = [];
  for (const [n, raw] of textLines(text)) {
    const t = raw.trim();
    if (!t) continue;
    try {
      records.push({ line: n, value: JSON.parse(t) });
    } catch (e) {
      errors.push(`${file}:${n}: not valid JSON (${(e as Error).message})`);
    }
  }
  return { records, errors };
}

export type RecordKind = 'sample' | 'prediction' | 'judged';

/** Checks the fields a record of the given kind must have; returns problems, empty if fine. */
export function checkRecord(value: unknown, kind: RecordKind, where: string): RecordProblem[] {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [`${where}: expected a JSON object`];
  // Past the depth and size limits nothing else is looked at (the judge would write it back out).
  const scan = scanRecord(value);
  if (scan.limit) return [`${where}: ${scan.limit.pointer}: ${scan.limit.message}`];
  const r = value as Record<string, unknown>;
  const errs: string[] = [];
  if (typeof r.task !== 'string' || !r.task) errs.push(`${where}: "task" (the domain) must be a non-empty string`);
  if (typeof r.id !== 'string' && typeof r.id !== 'number') errs.push(`${where}: "id" must be a string or number`);
  if (!Number.isInteger(r.turn_idx) || (r.turn_idx as number) < 1) errs.push(`${where}: "turn_idx" must be an integer ≥ 1`);
  for (const k of ['prompt', 'response'] as const) {
    if (!Array.isArray(r[k]) || !(r[k] as unknown[]).every((x) => typeof x === 'string')) errs.push(`${where}: "${k}" must be an array of strings`);
  }
  if (errs.length === 0) {
    const t = r.turn_idx as number;
    if ((r.response as string[]).length < t)
      errs.push(`${where}: "response" has ${(r.response as string[]).length} observations but turn_idx is ${t}: the reference observation is missing`);
    if ((r.prompt as string[]).length < t && typeof r.current_prompt !== 'string')
      errs.push(`${where}: "prompt" has ${(r.prompt as string[]).length} actions but turn_idx is ${t}, and there is no "current_prompt"`);
  }
  if (kind !== 'sample' && typeof r.gen !== 'string') errs.push(`${where}: "gen" (the model output) must be a string`);
  // 1e400 parses to Infinity and would be written back as null: an error wherever it is.
  const scored = kind === 'judged' && !isFailedRecord(r);
  for (const p of scan.nonFinite) {
    if (scored && [...DIMENSIONS, 'total_score'].some((k) => p === `/${k}`)) continue; // checked below
    errs.push(`${where}: ${p}: number out of range (JSON has no Infinity; it would be written back as null)`);
  }
  if (kind === 'judged') {
    if (!(r.failed === undefined || r.failed === null || typeof r.failed === 'boolean' || (typeof r.failed === 'number' && Number.isFinite(r.failed))))
      errs.push(`${where}: "failed" must be a boolean or a number (0 = scored, anything else = failed)`);
    else if (!isFailedRecord(r)) {
      // A valid record's scores: numbers, or 0 / null / absent for a dimension with no usable score.
      // A number that cannot be a score (6, -100, 1e308) is an error, never a figure like 125 or
      // Infinity in the table. (Verdict parsing clamps what a judge writes; a file is not clamped.)
      for (const k of [...DIMENSIONS, 'total_score']) {
        const v = r[k];
        if (v !== undefined && v !== null && (typeof v !== 'number' || !Number.isFinite(v)))
          errs.push(`${where}: "${k}" must be a number (0 or absent when there is no usable score; or mark the record "failed": true)`);
        else if (typeof v === 'number' && !isScoreValue(v))
          errs.push(`${where}: /${k}: ${v} is not a score: scores run from 1 to 5 (0, null or absent: no usable score; or mark the record "failed": true)`);
      }
    }
  }
  return errs;
}

/**
 * Errors a record file's reader lists before it stops reading: a file with any error is refused,
 * and one that is not JSONL at all (a pretty-printed object, 6 million lines) is told in one
 * pass, not line by line to its end.
 */
export const MAX_RECORD_ERRORS = 200;

/** The records of a JSONL text, checked as `kind`; errors in line order, at most MAX_RECORD_ERRORS and a last one saying reading stopped. */
export function readRecords<T extends AwbSampleRecord>(
  text: string,
  file: string,
  kind: RecordKind,
): { records: T[]; lines: number[]; errors: RecordProblem[] } {
  const records: T[] = [];
  const lines: number[] = [];
  const errors: RecordProblem[] = [];
  for (const [n, raw] of textLines(text)) {
    const t = raw.trim();
    if (!t) continue;
    let value: unknown;
    try {
      value = JSON.parse(t);
    } catch (e) {
      errors.push(`${file}:${n}: not valid JSON (${(e as Error).message})`);
    }
    if (value !== undefined) {
      const errs = checkRecord(value, kind, `${file}:${n}`);
      if (errs.length) errors.push(...errs);
      else {
        records.push(value as T);
        lines.push(n);
      }
    }
    if (errors.length >= MAX_RECORD_ERRORS) {
      errors.push(`${file}:${n}: stopped reading after ${errors.length} errors; a record file holds one JSON object a line`);
      break;
    }
  }
  return { records, lines, errors };
}

export function toJsonl(records: readonly object[]): string {
  return records.map((r) => JSON.stringify(r)).join('\n') + (records.length ? '\n' : '');
}

// Headers the benchmark wraps around actions and observations in its records.
const TURN_HEADER = /^\s*#{1,6}[ \t]*Turn[ \t]+\d+[ \t]*:?[ \t]*\r?\n/i;
const ACTION_HEADER = /^\s*\*\*Action:?\*\*:?[ \t]*(?:\r?\n)?/i;
const OBSERVATION_HEADER = /^\s*\*\*Environment Observation:?\*\*:?[ \t]*(?:\r?\n)?/i;

export function plainAction(text: string): string {
  return text.replace(TURN_HEADER, '').replace(ACTION_HEADER, '');
}

export function plainObservation(text: string): string {
  return text.replace(TURN_HEADER, '').replace(OBSERVATION_HEADER, '');
}

/** A sample key shared across models and judges. */
export function sampleKey(r: { task: string; id: string | number; turn_idx: number }): string {
  return `${domainOfTask(r.task)}/${r.id}#${r.turn_idx}`;
}

/** What a judge needs, from a prediction record: history, current action, extracted prediction, reference. */
export function judgeInputOf(r: AwbPredictionRecord): JudgeInput {
  const t = r.turn_idx;
  const history: HistoryTurn[] = [];
  for (let i = 0; i < t - 1; i++) history.push({ action: plainAction(r.prompt[i] ?? ''), observation: plainObservation(r.response[i] ?? '') });
  const action = plainAction(typeof r.current_prompt === 'string' ? r.current_prompt : r.prompt[t - 1]);
  const input: JudgeInput = {
    domain: domainOfTask(r.task),
    history,
    action,
    prediction: extractPrediction(r.gen),
    reference: plainObservation(r.response[t - 1]),
  };
  if (r.system_str) input.context = r.system_str;
  const spans = r.spans as SpanLabel[] | undefined;
  if (Array.isArray(spans)) input.spans = spans;
  return input;
}
