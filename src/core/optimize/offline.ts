// The offline optimizer (issue 16 item 2): no endpoint, no model. It edits a template's text by
// adding, removing or moving instructions drawn from a library keyed to the judge's dimensions and
// the verifier's mismatch rules, guided by the error analysis: the weakest dimension first, the
// most frequent mismatch next, and the words the judge's weaknesses use. The instructions live in
// one block of the template delimited by two Jinja comments (which render to nothing), so the
// optimizer only ever touches its own lines and the rest of the template stays the author's.
import { Rng } from '../random.ts';
import type { Dimension } from '../judge/types.ts';
import type { ErrorAnalysis } from './analysis.ts';

export const BLOCK_BEGIN = '{# optimizer instructions #}';
export const BLOCK_END = '{# end of optimizer instructions #}';
/**
 * The block's markers as written before the project settled on one spelling: templates saved then
 * (template versions, promoted candidates, a stored loop's versions, best.json files) still have
 * them. Read as the block; the next edit writes the current markers in their place.
 */
export const OLD_BLOCK_BEGIN = '{# optimiser instructions #}'; // old spelling, read for stored data
export const OLD_BLOCK_END = '{# end of optimiser instructions #}'; // old spelling, read for stored data

/** Where a template's block is: its begin marker's offset, its lines' span, and the offset after its end marker. */
function findBlock(text: string): { at: number; body: [number, number]; after: number } | null {
  for (const [begin, end] of [
    [BLOCK_BEGIN, BLOCK_END],
    [OLD_BLOCK_BEGIN, OLD_BLOCK_END],
  ]) {
    const b = text.indexOf(begin);
    const e = text.indexOf(end, b + 1);
    if (b >= 0 && e >= 0) return { at: b, body: [b + begin.length, e], after: e + end.length };
  }
  return null;
}

export interface Instruction {
  id: string;
  /** The dimension it addresses, or the verifier rule (`rule:echo`, `rule:spans`, ...). */
  target: Dimension | `rule:${string}`;
  /** Words in the judge's weaknesses that make this instruction the better pick. */
  keywords: string[];
  text: string;
}

/** The instruction library. Each line is written for a simulator of an environment's observations. */
export const INSTRUCTIONS: readonly Instruction[] = [
  {
    id: 'format-tags',
    target: 'format',
    keywords: ['tag', 'format', 'wrapper', 'markdown', 'commentary'],
    text: 'Write only the observation, inside <predicted_observation></predicted_observation> tags, with no commentary before or after it.',
  },
  {
    id: 'format-shape',
    target: 'format',
    keywords: ['json', 'structure', 'field', 'layout', 'schema'],
    text: 'Keep the exact output format the environment uses: the same JSON structure and field names, the same line layout, the same prompt and error formats as earlier observations.',
  },
  {
    id: 'fact-no-invent',
    target: 'factuality',
    keywords: ['file', 'invent', 'hallucinat', 'nonexistent', 'exist', 'name'],
    text: 'Never invent files, directories, names or values that were not created or shown earlier in the session; reproduce values already shown exactly.',
  },
  {
    id: 'fact-errors',
    target: 'factuality',
    keywords: ['error', 'fail', 'success', 'wrong', 'incorrect'],
    text: 'When the action cannot succeed in the current state (a missing file, a bad argument, a forbidden operation), answer with the error the environment would give, not a success.',
  },
  {
    id: 'fact-numbers',
    target: 'factuality',
    keywords: ['count', 'number', 'size', 'value', 'total'],
    text: 'Compute counts, sizes and totals from the state shown so far instead of guessing round numbers.',
  },
  {
    id: 'cons-state',
    target: 'consistency',
    keywords: ['state', 'earlier', 'previous', 'contradict', 'forgot', 'history'],
    text: 'Carry every state change from earlier turns forward: what was created, deleted, moved or modified stays so unless an action changed it again.',
  },
  {
    id: 'cons-ids',
    target: 'consistency',
    keywords: ['id', 'identifier', 'order', 'same'],
    text: 'Reuse the identifiers, paths and ordering already established in the session; do not renumber or rename anything.',
  },
  {
    id: 'real-plausible',
    target: 'realism',
    keywords: ['plausib', 'realistic', 'generic', 'placeholder', 'fake'],
    text: 'Make unknown details (timestamps, ids, sizes of pre-existing files) plausible for this environment, never placeholders such as "example" or "xxx".',
  },
  {
    id: 'real-verbatim',
    target: 'realism',
    keywords: ['tone', 'style', 'explain', 'narrat', 'assistant'],
    text: 'Sound like the environment, not an assistant: no explanations, apologies or narration.',
  },
  {
    id: 'qual-complete',
    target: 'quality',
    keywords: ['incomplete', 'truncat', 'missing', 'short', 'partial', 'leaves out', 'misses'],
    text: 'Give the complete observation the action produces, not a summary or an excerpt.',
  },
  {
    id: 'qual-concise',
    target: 'quality',
    keywords: ['verbose', 'long', 'repeat', 'redundant', 'extra'],
    text: 'Do not add output the action would not produce, and do not repeat earlier observations.',
  },
  { id: 'rule-echo', target: 'rule:echo', keywords: [], text: 'When the action prints given text (echo, printf), output that text character for character.' },
  {
    id: 'rule-read-after-write',
    target: 'rule:read-after-write',
    keywords: [],
    text: 'When the action reads a file written earlier in the session, output exactly the content that was written.',
  },
  {
    id: 'rule-reread',
    target: 'rule:reread',
    keywords: [],
    text: 'When the action shows something already shown earlier and unchanged since, repeat it exactly as it was shown.',
  },
  {
    id: 'rule-silent',
    target: 'rule:silent-command',
    keywords: [],
    text: 'Commands that print nothing on success (cd, mkdir, touch, rm, cp, mv) produce an empty observation when they succeed.',
  },
  {
    id: 'rule-spans',
    target: 'rule:spans',
    keywords: [],
    text: 'The parts of the observation that the action and the visible session determine must be reproduced exactly; only genuinely unknown details may vary.',
  },
  {
    id: 'rule-mcp',
    target: 'rule:mcp-result-fields',
    keywords: [],
    text: 'Tool results must echo the arguments of the call in their fields exactly (same ids, names and values).',
  },
  {
    id: 'rule-echoed-arguments',
    target: 'rule:echoed-arguments',
    keywords: [],
    text: 'Values given in the action (names, paths, ids, numbers) appear in the observation exactly as given.',
  },
];

/** The text with an old-marker block's markers replaced by the current ones (as it is when it has none). */
export function withCurrentMarkers(text: string): string {
  const found = findBlock(text);
  if (!found || text.startsWith(BLOCK_BEGIN, found.at)) return text;
  const [from, to] = found.body;
  return `${text.slice(0, found.at)}${BLOCK_BEGIN}${text.slice(from, to)}${BLOCK_END}${text.slice(found.after)}`;
}

/** The instruction lines currently in a template's block (empty when it has no block). */
export function blockInstructions(text: string): string[] {
  const block = findBlock(text);
  if (!block) return [];
  return text
    .slice(...block.body)
    .split('\n')
    .map((l) => l.replace(/^\s*-\s*/u, '').trim())
    .filter(Boolean);
}

/** Where a new block goes: after the line holding the anchor placeholder, else before the history loop, else at the end. */
export const DEFAULT_ANCHOR = /\{\{-?\s*simulation_instruction\b[^}]*-?\}\}/u;

const OPENS = /^(if|for|macro|call|filter)$/u;
const CLOSES = /^end(if|for|macro|call|filter)$/u;

/** The `{% … %}` tags of a text with their first word and where they end. */
function statementTags(text: string): { word: string; index: number; end: number }[] {
  return [...text.matchAll(/\{%-?\s*(\w+)[\s\S]*?-?%\}/gu)].map((m) => ({ word: m[1], index: m.index!, end: m.index! + m[0].length }));
}

/**
 * Where the block is inserted: at the end of the anchor's line when the anchor is at the top level
 * of the template; when it sits inside a block (a field's `{% if %}`, which renders only when the
 * sample has that field), at the end of the line closing the outermost such block; without an
 * anchor, at the start of the line of the top-level history loop (the end of the system text).
 * Null: append at the end.
 */
function insertionPoint(text: string, anchor: RegExp): { at: number; before: boolean } | null {
  const tags = statementTags(text);
  const lineEnd = (i: number) => (text.indexOf('\n', i) < 0 ? text.length : text.indexOf('\n', i));
  const m = anchor.exec(text);
  let depth = 0;
  let closeOutermost = -1;
  for (const t of tags) {
    if (m && t.index > m.index && depth === 0) break;
    if (OPENS.test(t.word)) depth++;
    else if (CLOSES.test(t.word)) depth = Math.max(0, depth - 1);
    if (m && t.index > m.index && depth === 0) closeOutermost = t.end;
    if (!m && depth === 1 && t.word === 'for' && /\bin\s+history\b/u.test(text.slice(t.index, t.end)))
      return { at: text.lastIndexOf('\n', t.index - 1) + 1, before: true };
  }
  if (!m) return null;
  return { at: lineEnd(closeOutermost >= 0 ? closeOutermost : m.index + m[0].length), before: false };
}

/** The template with its block's lines replaced (the block is created when missing; see insertionPoint for where). */
export function withInstructions(text: string, lines: readonly string[], anchor: RegExp = DEFAULT_ANCHOR): string {
  const body = lines.map((l) => `- ${l}`).join('\n');
  const block = lines.length ? `${BLOCK_BEGIN}\n${body}\n${BLOCK_END}` : `${BLOCK_BEGIN}\n${BLOCK_END}`;
  const found = findBlock(text);
  if (found) return text.slice(0, found.at) + block + text.slice(found.after);
  const p = insertionPoint(text, new RegExp(anchor.source, anchor.flags.replace('g', '')));
  if (p?.before) return `${text.slice(0, p.at)}\n${block}\n${text.slice(p.at)}`;
  if (p) return `${text.slice(0, p.at)}\n\n${block}${text.slice(p.at)}`;
  return `${text.replace(/\s*$/u, '')}\n\n${block}\n`;
}

export interface Proposal {
  text: string;
  /** One line: what changed and why. */
  note: string;
}

interface Edit {
  apply(lines: string[]): string[];
  note: string;
}

function keywordHits(i: Instruction, analysis: ErrorAnalysis): number {
  const dim = analysis.dimensions.find((d) => d.dimension === i.target);
  const words = (dim?.weaknesses ?? []).map((w) => ({ text: w.text.toLowerCase(), count: w.count }));
  return i.keywords.reduce((n, k) => n + words.filter((w) => w.text.includes(k)).reduce((a, w) => a + w.count, 0), 0);
}

/** The library entries for a target not yet in the template, best first (keyword hits, then the seed). */
function candidatesFor(target: Instruction['target'], present: ReadonlySet<string>, analysis: ErrorAnalysis, rng: Rng): Instruction[] {
  const pool = INSTRUCTIONS.filter((i) => i.target === target && !present.has(i.text));
  const tieBreak = new Map(pool.map((i) => [i.id, rng.next()]));
  return pool.sort((a, b) => keywordHits(b, analysis) - keywordHits(a, analysis) || tieBreak.get(a.id)! - tieBreak.get(b.id)!);
}

const fmtMean = (m: number | null): string => (m === null ? 'n/a' : m.toFixed(1));

function addEdits(analysis: ErrorAnalysis, present: ReadonlySet<string>, rng: Rng): Edit[] {
  const edits: Edit[] = [];
  const dims = analysis.dimensions.filter((d) => d.mean !== null && d.mean < 100);
  const rules = analysis.mismatches;
  // Interleave: weakest dimension, most frequent mismatch, next dimension, next mismatch...
  const targets: { target: Instruction['target']; why: string }[] = [];
  for (let i = 0; i < Math.max(dims.length, rules.length); i++) {
    if (dims[i]) targets.push({ target: dims[i].dimension, why: `${dims[i].dimension} ${fmtMean(dims[i].mean)}/100, ${dims[i].low} low sample(s)` });
    if (rules[i]) targets.push({ target: `rule:${rules[i].rule}`, why: `${rules[i].count} verifier mismatch(es) of rule ${rules[i].rule}` });
  }
  // Every target's entries, best first; taken rank by rank so K candidates cover several targets
  // and a target whose first entry was already tried falls back to its next one.
  const ranked = targets.map((t) => ({ t, pool: candidatesFor(t.target, present, analysis, rng) }));
  for (let rank = 0; ranked.some((r) => r.pool.length > rank); rank++) {
    for (const { t, pool } of ranked) {
      const pick = pool[rank];
      if (pick) edits.push({ apply: (lines) => [...lines, pick.text], note: `added "${pick.text.slice(0, 60)}…" for ${t.why}` });
    }
  }
  return edits;
}

function targetOf(line: string): Instruction['target'] | null {
  return INSTRUCTIONS.find((i) => i.text === line)?.target ?? null;
}

function reorderEdits(analysis: ErrorAnalysis, lines: readonly string[]): Edit[] {
  const edits: Edit[] = [];
  const weakest = analysis.dimensions[0];
  const strongest = [...analysis.dimensions].reverse().find((d) => d.mean !== null);
  const wi = lines.findIndex((l) => targetOf(l) === weakest?.dimension);
  if (weakest && wi > 0) {
    edits.push({
      apply: (ls) => [ls[wi], ...ls.filter((_, j) => j !== wi)],
      note: `moved the ${weakest.dimension} instruction to the top (weakest dimension, ${fmtMean(weakest.mean)}/100)`,
    });
  }
  const si = lines.findIndex((l) => targetOf(l) === strongest?.dimension);
  if (strongest && si >= 0 && strongest !== weakest) {
    edits.push({
      apply: (ls) => ls.filter((_, j) => j !== si),
      note: `removed the ${strongest.dimension} instruction (strongest dimension, ${fmtMean(strongest.mean)}/100) to keep the prompt short`,
    });
  }
  return edits;
}

/**
 * K candidates from a template and the analysis of its errors, each one edit away from it, with
 * a one-line note. Deterministic for a given (text, analysis, seed). Texts in `exclude` (versions
 * already tried) are skipped.
 */
export function proposeOffline(
  template: string,
  analysis: ErrorAnalysis,
  k: number,
  seed: number | string,
  options: { anchor?: RegExp; exclude?: ReadonlySet<string> } = {},
): Proposal[] {
  // A template saved with the old markers is the same template: no candidate differs from it, or
  // from a version already tried, by the markers alone.
  const text = withCurrentMarkers(template);
  const exclude = new Set([...(options.exclude ?? [])].map(withCurrentMarkers));
  const rng = new Rng(`offline:${seed}`);
  const lines = blockInstructions(text);
  const present = new Set(lines);
  const edits = [...addEdits(analysis, present, rng), ...reorderEdits(analysis, lines)];
  const out: Proposal[] = [];
  const seen = new Set<string>();
  for (const e of edits) {
    if (out.length >= k) break;
    const candidate = withInstructions(text, e.apply(lines), options.anchor);
    if (candidate === text || seen.has(candidate) || exclude.has(candidate)) continue;
    seen.add(candidate);
    out.push({ text: candidate, note: e.note });
  }
  return out;
}
