// Validation of trajectories and source records through ajv, with errors that say where
// (file, line, JSON pointer) and what was expected, in words a user can act on. The validators
// are compiled ahead of time (validators.generated.ts, by scripts/gen-validators.ts), so nothing
// here needs eval: the app runs under a Content-Security-Policy without 'unsafe-eval'.
import type { ErrorObject } from 'ajv';
import type { Trajectory } from './types.ts';
import * as generated from './validators.generated.ts';
import { joinPointer } from './locate.ts';
import { LIMITS, scanRecord } from '../limits.ts';

/** One problem in the input. `pointer` is relative to the record the line holds. */
export interface DataError {
  file?: string;
  /** 1-based line in the file (the record's line for JSONL, the field's line for JSON). */
  line?: number;
  /** JSON pointer of the offending value inside the record ('' for the record itself). */
  pointer: string;
  message: string;
}

/** `file:line: /pointer: message`, the one-line form the CLI prints. */
export function formatDataError(e: DataError): string {
  const where = `${e.file ?? '<input>'}${e.line !== undefined ? `:${e.line}` : ''}`;
  return `${where}: ${e.pointer ? e.pointer + ': ' : ''}${e.message}`;
}

/** An ajv validate function as the standalone code exports it. */
type ValidateFunction = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return v.length > 40 ? `a string ("${v.slice(0, 37)}...")` : `"${v}"`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

function valueAt(root: unknown, pointer: string): unknown {
  let cur = root;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

const NOT_FINITE = 'number out of range (JSON has no Infinity or NaN; it would be written back as null)';

/**
 * Pointers of every non-finite number in a parsed record (1e400 parses to Infinity), free-form
 * fields such as metadata included. Iterative, so deep nesting cannot overflow the stack.
 */
export function nonFiniteNumbers(root: unknown, limit = 20): string[] {
  return scanRecord(root, { nonFiniteLimit: limit }).nonFinite;
}

function toDataErrors(errors: ErrorObject[], root: unknown): { pointer: string; message: string }[] {
  const out: { pointer: string; message: string }[] = [];
  const seen = new Set<string>();
  // anyOf reports one error per branch plus a summary; keep only the summary, reworded.
  const anyOfPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  for (const e of errors) {
    const got = valueAt(root, e.instancePath);
    let pointer = e.instancePath;
    let message: string;
    if (anyOfPaths.has(e.instancePath) && e.keyword !== 'anyOf') continue;
    switch (e.keyword) {
      case 'type':
        if (typeof got === 'number' && !Number.isFinite(got)) {
          message = NOT_FINITE;
          break;
        }
        message = `expected ${String(e.params.type).replace(',', ' or ')}, got ${describe(got)}`;
        break;
      case 'required':
        pointer = joinPointer(e.instancePath, e.params.missingProperty as string);
        message = 'missing required field';
        break;
      case 'additionalProperties':
        pointer = joinPointer(e.instancePath, e.params.additionalProperty as string);
        message = 'unknown field (not part of the schema; put extra data under "metadata")';
        break;
      case 'enum':
        message = `expected one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}, got ${describe(got)}`;
        break;
      case 'format':
        message = `expected a ${e.params.format} string (e.g. 2025-01-31T12:00:00Z), got ${describe(got)}`;
        break;
      case 'anyOf':
        message = `expected a string, null or an array of content parts, got ${describe(got)}`;
        break;
      default:
        message = `${e.message ?? 'invalid'}, got ${describe(got)}`;
    }
    const key = pointer + '\n' + message;
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ pointer, message });
    }
  }
  return out;
}

export type RecordSchemaName = 'trajectory' | 'agentworldbench' | 'openai' | 'sharegpt' | 'agentinstruct';

const VALIDATORS: Record<RecordSchemaName, ValidateFunction> = {
  trajectory: generated.trajectory,
  agentworldbench: generated.agentworldbench,
  openai: generated.openai,
  sharegpt: generated.sharegpt,
  agentinstruct: generated.agentinstruct,
};

/** Schema problems of one record, pointers relative to the record. Empty when valid. */
export function schemaErrors(kind: RecordSchemaName, record: unknown): { pointer: string; message: string }[] {
  // The limits first: a record past them is not looked at further (LIMITS in ../limits.ts).
  const scan = scanRecord(record, { trajectory: kind === 'trajectory' });
  if (scan.limit) return [scan.limit];
  const fn = VALIDATORS[kind];
  const errors = fn(record) ? [] : toDataErrors(fn.errors ?? [], record);
  for (const pointer of scan.nonFinite) {
    if (!errors.some((e) => e.pointer === pointer)) errors.push({ pointer, message: NOT_FINITE });
  }
  return errors;
}

/**
 * Checks one trajectory: the JSON Schema, then what a schema cannot say (span ranges inside
 * their observation, sorted and non-overlapping).
 */
export function validateTrajectory(value: unknown): { pointer: string; message: string }[] {
  const errors = schemaErrors('trajectory', value);
  if (errors.length) return errors;
  const t = value as Trajectory;
  if (t.turns.length > LIMITS.turns) return [{ pointer: '/turns', message: `${t.turns.length} turns; a trajectory holds at most ${LIMITS.turns} (split it)` }];
  t.turns.forEach((turn, i) => {
    const spans = turn.metadata?.spans;
    if (!spans) return;
    let prevEnd = 0;
    spans.forEach((s, j) => {
      const p = joinPointer('', 'turns', i, 'metadata', 'spans', j);
      if (s.end < s.start) errors.push({ pointer: p, message: `span end ${s.end} is before its start ${s.start}` });
      else if (s.end > turn.observation.length)
        errors.push({ pointer: joinPointer(p, 'end'), message: `span ends at ${s.end}, past the observation's length ${turn.observation.length}` });
      else if (s.start < prevEnd)
        errors.push({
          pointer: joinPointer(p, 'start'),
          message: `span starts at ${s.start}, inside or before the previous span (which ends at ${prevEnd}); spans must be sorted and not overlap`,
        });
      prevEnd = Math.max(prevEnd, s.end);
    });
  });
  return errors;
}

/** Dataset-level checks: trajectory ids must be unique (splits and the RL pool key on them). */
export function duplicateIdErrors(trajectories: { id: string; source?: { file?: string; line?: number } }[]): DataError[] {
  const first = new Map<string, { file?: string; line?: number }>();
  const errors: DataError[] = [];
  for (const t of trajectories) {
    const prev = first.get(t.id);
    if (prev) {
      errors.push({
        file: t.source?.file,
        line: t.source?.line,
        pointer: '/id',
        message: `duplicate trajectory id "${t.id}" (first seen at ${prev.file ?? '<input>'}${prev.line ? ':' + prev.line : ''})`,
      });
    } else first.set(t.id, t.source ?? {});
  }
  return errors;
}
