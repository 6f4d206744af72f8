// Text features of the local rubric judge: what it measures on one text (values, words, fields,
// line shapes, repetition, vocabulary) and on a pair (the token alignment of a prediction with
// its reference, each reference token tagged with its docs/method.md §8 content class). Pure functions;
// the scoring rules live in rubricScores.ts.
import type { SpanKind, SpanLabel } from '../schema/types.ts';
import { LIMITS } from '../limits.ts';

export function normalize(s: string): string {
  return s
    .replace(/\r\n?/g, '\n')
    .trimEnd()
    .replace(/^(?:[ \t]*\n)+/, '');
}

const STOP = new Set(
  'the and for are was were with that this from have has had not but you your all any can its into out per via than then there their they them our over under one two'.split(
    ' ',
  ),
);

/** Content words: lower-case alphanumeric runs of 3+ characters, not stop words, not bare numbers (those are values). */
export function contentWords(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const w of text.toLowerCase().match(/[a-z0-9_]{3,}/g) ?? []) if (!STOP.has(w) && !/^\d+$/.test(w)) m.set(w, (m.get(w) ?? 0) + 1);
  return m;
}

/** `s` without its trailing run of `chars` (a manual scan: `/[.:]+$/` is quadratic on long runs). */
function trimTrailing(s: string, chars: string): string {
  let e = s.length;
  while (e > 0 && chars.includes(s[e - 1])) e--;
  return s.slice(0, e);
}

/** Value tokens: numbers, identifiers with digits or underscores, paths, versions, addresses, times. */
export function valueTokens(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const raw of text.match(/[A-Za-z0-9_][\w.\-/:@]*/g) ?? []) {
    const t = trimTrailing(raw, '.:-/');
    if (!/[0-9_/@]|\.\w/.test(t)) continue;
    m.set(t, (m.get(t) ?? 0) + 1);
  }
  return m;
}

export interface Overlap {
  common: number;
  na: number;
  nb: number;
}

export function multisetOverlap(a: Map<string, number>, b: Map<string, number>): Overlap {
  let common = 0;
  let na = 0;
  let nb = 0;
  for (const v of a.values()) na += v;
  for (const v of b.values()) nb += v;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (w) common += Math.min(v, w);
  }
  return { common, na, nb };
}

export function f1(o: Overlap): number {
  if (o.na === 0 && o.nb === 0) return 1;
  if (o.na === 0 || o.nb === 0) return 0;
  return (2 * o.common) / (o.na + o.nb);
}

/** `key: value`, `key = value` at line starts and `"key": value` anywhere (compact JSON). */
export function keyValues(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const hit of text.matchAll(/"([\w.\- ]{1,40})"\s*:\s*("(?:[^"\\\n]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)/g)) {
    m.set(hit[1].toLowerCase(), hit[2].replace(/^"|"$/g, ''));
  }
  for (const hit of text.matchAll(/^[ \t]*([A-Za-z_][\w.\- ]{0,39}?)[ \t]*(?:=|:)[ \t]*([^\n]{1,200}?)[ \t,]*$/gm)) {
    const key = hit[1].toLowerCase();
    if (!m.has(key)) m.set(key, hit[2].replace(/^["']|["']$/g, ''));
  }
  return m;
}

/** A line's shape: its indentation kept, letter runs → `a`, digit runs → `0`, other whitespace runs → one space. */
export function lineShape(line: string): string {
  const indent = /^[ \t]*/.exec(line)![0];
  return (
    indent +
    line
      .slice(indent.length)
      .replace(/[A-Za-z]+/g, 'a')
      .replace(/[0-9]+/g, '0')
      .replace(/\s+/g, ' ')
      .trim()
  );
}

export function isJsonish(text: string): boolean {
  const t = text.trim();
  return (t.startsWith('{') && t.endsWith('}')) || (t.startsWith('[') && t.endsWith(']'));
}

/**
 * Whether the arrays and objects of a JSON text nest at most `max` deep: one scan that skips
 * strings. Deeper JSON (a model can write 100,000 levels) is judged as text: walking it would
 * overflow the stack.
 */
export function jsonDepthWithin(text: string, max: number = LIMITS.depth): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote (escapes skipped in pairs).
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return false;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return true;
}

/** The parsed JSON text, or undefined when it does not parse or nests deeper than LIMITS.depth. */
export function tryJson(text: string): unknown {
  if (!jsonDepthWithin(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Most key paths jsonPaths collects from one value. */
export const MAX_JSON_PATHS = 10_000;

/**
 * Key paths of a JSON value with the type of each value: `$.result.items[].id:number`. A string
 * that itself holds a JSON object or array (a tool result's text) is followed into, as `path{}`.
 * Bounded: LIMITS.depth levels in all (strings followed into included), MAX_JSON_PATHS paths.
 */
export function jsonPaths(v: unknown, path: string, out: Set<string>, depth = 0): void {
  if (depth > LIMITS.depth || out.size >= MAX_JSON_PATHS) return;
  if (typeof v === 'string' && isJsonish(v)) {
    const inner = tryJson(v);
    if (inner !== null && typeof inner === 'object') jsonPaths(inner, `${path}{}`, out, depth + 1);
  } else if (Array.isArray(v)) {
    out.add(`${path}[]`);
    for (const x of v.slice(0, 50)) jsonPaths(x, `${path}[]`, out, depth + 1);
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (out.size >= MAX_JSON_PATHS) return;
      const p = `${path}.${k}`;
      out.add(`${p}:${x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x}`);
      jsonPaths(x, p, out, depth + 1);
    }
  }
}

export function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let common = 0;
  for (const x of a) if (b.has(x)) common++;
  return common / (a.size + b.size - common);
}

export function diceOfMultisets(a: string[], b: string[]): number {
  if (a.length === 0 && b.length === 0) return 1;
  const m = new Map<string, number>();
  for (const x of a) m.set(x, (m.get(x) ?? 0) + 1);
  let common = 0;
  for (const x of b) {
    const c = m.get(x);
    if (c) {
      common++;
      m.set(x, c - 1);
    }
  }
  return (2 * common) / (a.length + b.length);
}

/** min/max of two sizes; 1 when both are 0. */
export function ratio(a: number, b: number): number {
  if (a === 0 && b === 0) return 1;
  return Math.min(a, b) / Math.max(a, b);
}

export interface Repetition {
  /** Share of duplicated non-blank lines (texts of 3+ lines). */
  dupLines: number;
  /** Share of repeated word 3-grams (texts of 8+ words). */
  dupTrigrams: number;
  /** Longest run of one word. */
  longestRun: number;
}

/** Word 3-grams are packed into one number as (a·2^17 + b)·2^17 + c, exact below 2^53. */
const TRIGRAM_BASE = 1 << 17;

export function repetition(text: string): Repetition {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const dupLines = lines.length >= 3 ? 1 - new Set(lines).size / lines.length : 0;
  const words = text.toLowerCase().match(/\S+/g) ?? [];
  const ids = new Map<string, number>();
  const seq = new Array<number>(words.length);
  for (let i = 0; i < words.length; i++) {
    let id = ids.get(words[i]);
    if (id === undefined) ids.set(words[i], (id = ids.size));
    seq[i] = id;
  }
  let dupTrigrams = 0;
  if (words.length >= 8 && ids.size < TRIGRAM_BASE) {
    const grams = new Set<number>();
    const total = words.length - 2;
    for (let i = 0; i < total; i++) grams.add((seq[i] * TRIGRAM_BASE + seq[i + 1]) * TRIGRAM_BASE + seq[i + 2]);
    dupTrigrams = 1 - grams.size / total;
  }
  let longestRun = words.length ? 1 : 0;
  for (let i = 1, run = 1; i < seq.length; i++) {
    run = seq[i] === seq[i - 1] ? run + 1 : 1;
    if (run > longestRun) longestRun = run;
  }
  return { dupLines, dupTrigrams, longestRun };
}

/**
 * The vocabulary of a text: its lower-cased letter and digit runs of two or more characters.
 * Single characters are left out: random text is full of them and every text has them.
 */
export function vocabulary(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[a-z]{2,}|\d{2,}/g) ?? []);
}

/** Features of one text, each computed on first use (history texts only need a few). */
export class TextFeatures {
  private _values?: Map<string, number>;
  private _words?: Map<string, number>;
  private _kv?: Map<string, string>;
  private _rep?: Repetition;
  private _shapes?: string[];
  private _punct?: string[];
  private _vocab?: Set<string>;
  private _lineVocab?: Map<string, number>;
  constructor(readonly text: string) {}
  get values() {
    return (this._values ??= valueTokens(this.text));
  }
  get words() {
    return (this._words ??= contentWords(this.text));
  }
  get kv() {
    return (this._kv ??= keyValues(this.text));
  }
  get rep() {
    return (this._rep ??= repetition(this.text));
  }
  get shapes() {
    return (this._shapes ??= this.text.split('\n').map(lineShape));
  }
  get punct() {
    return (this._punct ??= this.text.match(/[^\w\s]/g) ?? []);
  }
  get vocab() {
    return (this._vocab ??= vocabulary(this.text));
  }
  /** Word → number of lines that hold it. */
  get lineVocab() {
    if (!this._lineVocab) {
      const m = new Map<string, number>();
      for (const line of this.text.split('\n')) for (const w of vocabulary(line)) m.set(w, (m.get(w) ?? 0) + 1);
      this._lineVocab = m;
    }
    return this._lineVocab;
  }
}

// References and history texts recur: an RL group judges G predictions against one reference,
// and consecutive turns of a trajectory share their history. Their features are computed once.
const featureCache = new Map<string, TextFeatures>();
const FEATURE_CACHE_SIZE = 1024;

export function clearFeatureCache(): void {
  featureCache.clear();
}

export function cachedFeatures(text: string): TextFeatures {
  let f = featureCache.get(text);
  if (f) return f;
  f = new TextFeatures(text);
  if (featureCache.size >= FEATURE_CACHE_SIZE) featureCache.delete(featureCache.keys().next().value as string);
  featureCache.set(text, f);
  return f;
}

// ---- content tokens, classes and alignment ---------------------------------------------------

/** A reference token's content class; `unlabelled` where no span covers it (or there are no spans). */
export type TokenClass = SpanKind | 'unlabelled';

/** Content tokens: letter runs and digit runs. Punctuation and spacing are the Format dimension's. */
export function contentTokens(text: string): { text: string; start: number }[] {
  return [...text.matchAll(/[A-Za-z]+|\d+/g)].map((m) => ({ text: m[0], start: m.index }));
}

/**
 * Tokens that name a JSON field (`"key":`, also inside a JSON string's escaped text): structure,
 * which Format judges through key paths, not facts.
 */
export function jsonKeyTokens(text: string, tokens: { start: number }[]): Uint8Array {
  const out = new Uint8Array(tokens.length);
  const keys = [...text.matchAll(/\\?"([^"\\\n]{1,60})\\?"\s*:/g)].map((m) => [m.index, m.index + m[0].length]);
  let j = 0;
  tokens.forEach((t, i) => {
    while (j < keys.length && keys[j][1] <= t.start) j++;
    if (j < keys.length && keys[j][0] <= t.start) out[i] = 1;
  });
  return out;
}

/** The class of each token by the span that holds its first character. */
export function tokenClasses(tokens: { start: number }[], spans: readonly SpanLabel[] | undefined): TokenClass[] {
  const sorted = [...(spans ?? [])].sort((a, b) => a.start - b.start);
  let j = 0;
  return tokens.map((t) => {
    while (j < sorted.length && sorted[j].end <= t.start) j++;
    const s = sorted[j];
    return s && s.start <= t.start && t.start < s.end ? s.kind : 'unlabelled';
  });
}

/** Above this many table cells (reference × prediction tokens) the alignment falls back to multisets. */
const MAX_ALIGN_CELLS = 4_000_000;

/**
 * Which tokens of `a` and of `b` belong to a longest common subsequence of the two token lists
 * (exact, case-sensitive). Common prefix and suffix are taken first; very long pairs fall back
 * to multiset matching, which ignores order.
 */
export function alignTokens(a: readonly string[], b: readonly string[]): { a: Uint8Array; b: Uint8Array } {
  const ma = new Uint8Array(a.length);
  const mb = new Uint8Array(b.length);
  let lo = 0;
  while (lo < a.length && lo < b.length && a[lo] === b[lo]) ma[lo] = mb[lo++] = 1;
  let ea = a.length;
  let eb = b.length;
  while (ea > lo && eb > lo && a[ea - 1] === b[eb - 1]) ma[--ea] = mb[--eb] = 1;
  const n = ea - lo;
  const m = eb - lo;
  if (n === 0 || m === 0) return { a: ma, b: mb };
  if (n * m > MAX_ALIGN_CELLS || Math.min(n, m) >= 0xffff) {
    const pool = new Map<string, number[]>();
    for (let j = lo; j < eb; j++) (pool.get(b[j]) ?? pool.set(b[j], []).get(b[j])!).push(j);
    for (let i = lo; i < ea; i++) {
      const j = pool.get(a[i])?.shift();
      if (j !== undefined) ma[i] = mb[j] = 1;
    }
    return { a: ma, b: mb };
  }
  // L[i][j] = LCS length of a[lo+i..ea) and b[lo+j..eb), filled backwards, then walked forwards.
  const w = m + 1;
  const L = new Uint16Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      L[i * w + j] = a[lo + i] === b[lo + j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
    }
  }
  for (let i = 0, j = 0; i < n && j < m; ) {
    if (a[lo + i] === b[lo + j]) {
      ma[lo + i] = mb[lo + j] = 1;
      i++;
      j++;
    } else if (L[(i + 1) * w + j] >= L[i * w + j + 1]) i++;
    else j++;
  }
  return { a: ma, b: mb };
}

// ---- what a real environment would not print -------------------------------------------------

export const META_TALK =
  /\b(as an ai|language model|i cannot|i can't|i'm sorry|i am sorry|simulated|simulation|predicted observation|world model|this output|the judge|score of|here is the (?:output|observation|result))\b/i;
export const PLACEHOLDER =
  /lorem ipsum|\[(?:insert|placeholder|output|todo|redacted)[^\]]{0,200}\]|<(?:insert|placeholder|output)[^>]{0,200}>|\bTODO\b|\bxxx+\b|\{\{[^}]{0,200}\}\}/i;
/** Marks of a failed action: an error observation is a different behaviour from a success. */
export const ERROR_MARK =
  /\b(?:error|errors|exception|traceback|no such|not found|cannot|denied|invalid|unknown command|usage:)\b|"isError"\s*:\s*true|"error"\s*:\s*\{/i;
