// The rule verifier (docs/method.md §7): a binary check that the deterministic region of the real
// observation — what the action and the visible session fully determine — appears exactly in
// the prediction. Regions come from span labels when the trajectory has them; otherwise from
// per-domain rules (docs/judging.md lists them). Content the model could not know (pre-existing
// state, runtime metadata) is never checked here; the rubric judge scores its plausibility.
import type { SpanLabel } from '../schema/types.ts';
import type { HistoryTurn } from './types.ts';
import { braceObjects } from './parse.ts';
import { tryJson } from './rubricText.ts';

export interface VerifierInput {
  domain: string;
  history: HistoryTurn[];
  action: string;
  reference: string;
  prediction: string;
  spans?: SpanLabel[];
}

/** One checked piece of the reference. */
export interface VerifiedRegion {
  /** Human-readable place: `span [12, 40)`, `whole observation`, `field result.id`, `echoed "foo"`. */
  label: string;
  /** The text (or JSON value) the prediction must reproduce. */
  expected: string;
}

export interface VerifierResult {
  /** 1 when every region matched (or there was nothing to check). */
  pass: boolean;
  /** False when the reference has no deterministic region: `pass` is then vacuously true. */
  applicable: boolean;
  /** Which rule produced the regions: `spans`, `silent-command`, `echo`, `read-after-write`, `reread`, `mcp-result-fields`, `echoed-arguments`, `none`. */
  rule: string;
  regions: VerifiedRegion[];
  /** The first region that did not match, and why. */
  failure?: { region: VerifiedRegion; reason: string };
}

export function verify(input: VerifierInput): VerifierResult {
  const prediction = normalize(input.prediction);
  if (input.spans?.some((s) => s.kind === 'deterministic')) return verifySpans(input.reference, input.spans, prediction);
  if (input.spans && input.spans.length > 0) return notApplicable('spans');
  switch (input.domain) {
    case 'terminal':
    case 'os':
    case 'swe': {
      const r = shellRule(input);
      if (r) return matchTextRegions(r.rule, r.regions, prediction);
      return echoedArguments(input, prediction);
    }
    case 'mcp': {
      const r = mcpResultFields(input, input.prediction);
      return r ?? echoedArguments(input, prediction);
    }
    default:
      return echoedArguments(input, prediction);
  }
}

function notApplicable(rule: string): VerifierResult {
  return { pass: true, applicable: false, rule, regions: [] };
}

function normalize(s: string): string {
  return s
    .replace(/\r\n?/g, '\n')
    .replace(/^(?:[ \t]*\n)+/, '')
    .trimEnd();
}

interface TextRegion extends VerifiedRegion {
  /** Must sit at the very start / end of the prediction. */
  atStart: boolean;
  atEnd: boolean;
}

/** Deterministic spans in order; touching spans merge; text between them is free. */
function verifySpans(reference: string, spans: SpanLabel[], prediction: string): VerifierResult {
  const det = spans.filter((s) => s.kind === 'deterministic' && s.end >= s.start).sort((a, b) => a.start - b.start);
  const merged: { start: number; end: number }[] = [];
  for (const s of det) {
    const last = merged[merged.length - 1];
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else merged.push({ start: Math.max(0, s.start), end: Math.min(reference.length, s.end) });
  }
  const regions: TextRegion[] = [];
  for (const m of merged) {
    const atStart = reference.slice(0, m.start).trim() === '';
    const atEnd = reference.slice(m.end).trim() === '';
    let text = reference.slice(m.start, m.end).replace(/\r\n?/g, '\n');
    if (atStart) text = text.replace(/^(?:[ \t]*\n)+/, '');
    if (atEnd) text = text.trimEnd();
    if (text === '' && !(atStart && atEnd)) continue;
    regions.push({ label: `span [${m.start}, ${m.end})`, expected: text, atStart, atEnd });
  }
  if (regions.length === 0) return notApplicable('spans');
  return matchTextRegions('spans', regions, prediction);
}

/**
 * Regions as a pattern `R1 * R2 * … Rn` (with `*` any text, and the ends anchored where the
 * region touches the reference's ends). Taking each region at its leftmost place is exact for
 * such patterns, so this never rejects a prediction that could match.
 */
function matchTextRegions(rule: string, regions: TextRegion[], prediction: string): VerifierResult {
  const result: VerifierResult = { pass: true, applicable: true, rule, regions: regions.map(({ label, expected }) => ({ label, expected })) };
  let pos = 0;
  for (let i = 0; i < regions.length; i++) {
    const r = regions[i];
    const region = result.regions[i];
    const isLast = i === regions.length - 1;
    if (r.atStart && r.atEnd && regions.length === 1) {
      if (prediction !== r.expected)
        return fail(result, region, r.expected === '' ? 'the observation must be empty' : 'the observation must equal the reference exactly');
      return result;
    }
    if (i === 0 && r.atStart) {
      if (!prediction.startsWith(r.expected)) return fail(result, region, 'the prediction does not start with this text');
      pos = r.expected.length;
      continue;
    }
    if (isLast && r.atEnd) {
      if (!prediction.endsWith(r.expected) || prediction.length - r.expected.length < pos)
        return fail(result, region, 'the prediction does not end with this text');
      continue;
    }
    const at = prediction.indexOf(r.expected, pos);
    if (at < 0) return fail(result, region, prediction.includes(r.expected) ? 'found, but out of order' : 'missing from the prediction');
    pos = at + r.expected.length;
  }
  return result;
}

function fail(result: VerifierResult, region: VerifiedRegion, reason: string): VerifierResult {
  result.pass = false;
  result.failure = { region, reason };
  return result;
}

// ---- terminal, os, swe ------------------------------------------------------------------

/** The shell command inside an action: a JSON tool call's command argument, a fenced block, or the text. */
export function shellCommand(action: string): string {
  const t = action.trim();
  if (t.startsWith('{')) {
    try {
      const o = JSON.parse(t) as Record<string, unknown>;
      const args = (o.arguments ?? o.args ?? o.parameters ?? o.input ?? o) as Record<string, unknown>;
      const c = args.command ?? args.cmd ?? args.code;
      if (typeof c === 'string') return c.trim();
    } catch {
      /* not JSON: fall through */
    }
  }
  const fence = /```[a-z]*\n([\s\S]*?)```/i.exec(t);
  return (fence ? fence[1] : t).replace(/^\$\s+/, '').trim();
}

const SILENT = new Set(['cd', 'mkdir', 'touch', 'rm', 'rmdir', 'cp', 'mv', 'export', 'chmod', 'chown', 'ln', 'true', 'unset', 'alias']);
const META = /[|;&$`*?<>(){}\\]/;

function words(cmd: string): string[] {
  return cmd.match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
}

function unquote(w: string): string {
  return /^(["']).*\1$/s.test(w) ? w.slice(1, -1) : w;
}

/** The file a command writes with `>` (not `>>`), `tee FILE`, or a heredoc `cat > FILE`. */
function writtenFile(cmd: string): string | null {
  const m = /(?:^|[^>])>\s*("[^"]+"|'[^']+'|[^\s;&|<>]+)/.exec(cmd) ?? /\btee\s+("[^"]+"|'[^']+'|[^\s;&|<>-][^\s;&|<>]*)/.exec(cmd);
  return m ? unquote(m[1]) : null;
}

/** The file of a plain `cat FILE` (one file, no pipes or redirections). */
function catFile(cmd: string): string | null {
  const w = words(cmd);
  if (w.length !== 2 || w[0] !== 'cat' || META.test(cmd.replace(/"[^"]*"|'[^']*'/g, ''))) return null;
  return unquote(w[1]);
}

function shellRule(input: VerifierInput): { rule: string; regions: TextRegion[] } | null {
  const cmd = shellCommand(input.action);
  if (!cmd) return null;
  const reference = normalize(input.reference);
  const whole = (rule: string, label = 'whole observation') => ({ rule, regions: [{ label, expected: reference, atStart: true, atEnd: true }] });

  // A chain of silent state changes (and redirected writes) prints nothing when it succeeds.
  // split('&&') and trim: `/\s*&&\s*/` is quadratic on long runs of spaces.
  const parts = cmd
    .split('&&')
    .map((p, i) => (i > 0 ? p.trimStart() : p))
    .map((p, i, all) => (i < all.length - 1 ? p.trimEnd() : p));
  const silent = parts.every((p) => {
    const w = words(p);
    if (w.length === 0) return false;
    if (SILENT.has(w[0]) && !META.test(p.replace(/"[^"]*"|'[^']*'/g, '').replace(/&&/g, ''))) return true;
    return (w[0] === 'echo' || w[0] === 'printf') && writtenFile(p) !== null && !/\|/.test(p);
  });
  if (silent && reference === '') return whole('silent-command');

  // `echo` of literal text prints that text.
  const w = words(cmd);
  if (w[0] === 'echo' && !META.test(cmd.replace(/"[^"]*"|'[^']*'/g, '')) && !/[$`\\]/.test(cmd)) return whole('echo');

  // Reading a file the session itself wrote, or already printed, with nothing touching it since.
  const file = catFile(cmd);
  if (file) {
    for (let i = input.history.length - 1; i >= 0; i--) {
      const prev = shellCommand(input.history[i].action);
      if (!prev.includes(file)) continue;
      if (catFile(prev) === file) return whole('reread', `whole observation (re-read of ${file})`);
      if (writtenFile(prev) === file && !/>>/.test(prev)) return whole('read-after-write', `whole observation (read of ${file}, written at turn ${i + 1})`);
      break; // some other command touched the file: its content is no longer known
    }
  }
  return null;
}

// ---- mcp ----------------------------------------------------------------------------------

/** The text as JSON, else its first brace object that parses; JSON nested past LIMITS.depth is text. */
function firstJson(text: string): unknown {
  const t = text.trim();
  const whole = tryJson(t);
  if (whole !== undefined) return whole;
  for (const b of braceObjects(t)) {
    const v = tryJson(b);
    if (v !== undefined) return v;
  }
  return undefined;
}

function actionArguments(action: string): Record<string, unknown> | null {
  const v = firstJson(action);
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  for (const k of ['arguments', 'args', 'parameters', 'params', 'input']) {
    let a = o[k];
    if (typeof a === 'string') a = firstJson(a);
    if (a && typeof a === 'object' && !Array.isArray(a)) return a as Record<string, unknown>;
  }
  return o;
}

type Scalar = string | number | boolean | null;

function scalarLeaves(v: unknown, path: string, out: { path: string; key: string; value: Scalar }[]): void {
  if (Array.isArray(v)) v.forEach((x, i) => scalarLeaves(x, `${path}[${i}]`, out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) scalarLeaves(x, path ? `${path}.${k}` : k, out);
  else if (path)
    out.push({
      path,
      key:
        path
          .replace(/\[\d+\]$/, '')
          .split('.')
          .pop() ?? path,
      value: v as Scalar,
    });
}

function atPath(v: unknown, path: string): unknown {
  let cur = v;
  for (const part of path.match(/[^.[\]]+|\[\d+\]/g) ?? []) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = part.startsWith('[') ? (cur as unknown[])[Number(part.slice(1, -1))] : (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/**
 * For a JSON tool result: every result field that repeats an argument of the call (same key,
 * same value) is determined by the action and must come back unchanged at the same place; and
 * a JSON result must be predicted as JSON.
 */
function mcpResultFields(input: VerifierInput, rawPrediction: string): VerifierResult | null {
  const ref = firstJson(input.reference);
  if (ref === undefined || ref === null || typeof ref !== 'object') return null;
  const args = actionArguments(input.action);
  if (!args) return null;
  const argValues = new Map<string, Scalar>();
  const argLeaves: { path: string; key: string; value: Scalar }[] = [];
  scalarLeaves(args, '', argLeaves);
  for (const a of argLeaves) if (a.value !== null && a.value !== '') argValues.set(a.key.toLowerCase(), a.value);
  const leaves: { path: string; key: string; value: Scalar }[] = [];
  scalarLeaves(ref, '', leaves);
  const echoed = leaves.filter((l) => argValues.has(l.key.toLowerCase()) && argValues.get(l.key.toLowerCase()) === l.value);
  if (echoed.length === 0) return null;
  const result: VerifierResult = {
    pass: true,
    applicable: true,
    rule: 'mcp-result-fields',
    regions: echoed.map((l) => ({ label: `field ${l.path}`, expected: JSON.stringify(l.value) })),
  };
  const pred = firstJson(rawPrediction);
  if (pred === undefined || pred === null || typeof pred !== 'object')
    return fail(result, result.regions[0], 'the reference is a JSON result but the prediction is not JSON');
  for (let i = 0; i < echoed.length; i++) {
    const got = atPath(pred, echoed[i].path);
    if (got !== echoed[i].value)
      return fail(result, result.regions[i], got === undefined ? 'field missing from the prediction' : `the prediction has ${JSON.stringify(got)}`);
  }
  return result;
}

// ---- every domain: echoed arguments -------------------------------------------------------

/** Quoted strings (and JSON string arguments) of the action that the environment printed back. */
function echoedArguments(input: VerifierInput, prediction: string): VerifierResult {
  const reference = normalize(input.reference);
  const candidates = new Set<string>();
  for (const m of input.action.matchAll(/"((?:[^"\\\n]|\\.){3,200})"|'([^'\n]{3,200})'/g)) candidates.add(m[1] ?? m[2]);
  const args = input.action.trim().startsWith('{') ? actionArguments(input.action) : null;
  if (args) {
    const leaves: { path: string; key: string; value: Scalar }[] = [];
    scalarLeaves(args, '', leaves);
    for (const l of leaves) if (typeof l.value === 'string' && l.value.length >= 3) candidates.add(l.value);
  }
  const found = [...candidates].filter((c) => c.trim().length >= 3 && reference.includes(c)).sort((a, b) => reference.indexOf(a) - reference.indexOf(b));
  // Drop arguments contained in a longer echoed argument: the longer one checks them already.
  const kept = found.filter((c) => !found.some((o) => o !== c && o.includes(c)));
  if (kept.length === 0) return notApplicable('none');
  const result: VerifierResult = {
    pass: true,
    applicable: true,
    rule: 'echoed-arguments',
    regions: kept.map((c) => ({ label: `echoed ${JSON.stringify(c.length > 60 ? c.slice(0, 57) + '...' : c)}`, expected: c })),
  };
  for (let i = 0; i < kept.length; i++) if (!prediction.includes(kept[i])) return fail(result, result.regions[i], 'missing from the prediction');
  return result;
}
