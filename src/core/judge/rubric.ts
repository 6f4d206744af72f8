// The local rubric judge: a deterministic, reference-grounded scorer of the five dimensions
// (SPEC §7) that needs no model. Each dimension is a small, documented rule over cheap text
// features (docs/judging.md gives the rules and thresholds); the point is a judge that runs
// everywhere, instantly and reproducibly — in the browser during RL, in CI, offline — whose
// rankings track an LLM judge's, not a judge that understands the environment.
import type { SpanLabel } from '../schema/types.ts';
import { DIMENSIONS, scoredVerdict, type Judge, type JudgeInput, type Scores, type ScoredVerdict } from './types.ts';
import { verify } from './verifier.ts';

/** Maps a 0–1 quality to the 1–5 scale: ≥0.9 → 5, ≥0.7 → 4, ≥0.45 → 3, ≥0.2 → 2, else 1. */
export function toScale(x: number): number {
  if (x >= 0.9) return 5;
  if (x >= 0.7) return 4;
  if (x >= 0.45) return 3;
  if (x >= 0.2) return 2;
  return 1;
}

const STOP = new Set('the and for are was were with that this from have has had not but you your all any can its into out per via than then there their they them our over under one two'.split(' '));

function normalize(s: string): string {
  return s.replace(/\r\n?/g, '\n').replace(/\s+$/, '').replace(/^(?:[ \t]*\n)+/, '');
}

/** Content words: lower-case alphanumeric runs of 3+ characters, not stop words, not bare numbers (those are values). */
function contentWords(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const w of text.toLowerCase().match(/[a-z0-9_]{3,}/g) ?? []) if (!STOP.has(w) && !/^\d+$/.test(w)) m.set(w, (m.get(w) ?? 0) + 1);
  return m;
}

/** Value tokens: numbers, identifiers with digits or underscores, paths, versions, addresses, times. */
function valueTokens(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const raw of text.match(/[A-Za-z0-9_][\w.\-/:@]*/g) ?? []) {
    const t = raw.replace(/[.:\-/]+$/, '');
    if (!/[0-9_/@]|\.\w/.test(t)) continue;
    m.set(t, (m.get(t) ?? 0) + 1);
  }
  return m;
}

function multisetOverlap(a: Map<string, number>, b: Map<string, number>): { common: number; na: number; nb: number } {
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

function f1(o: { common: number; na: number; nb: number }): number {
  if (o.na === 0 && o.nb === 0) return 1;
  if (o.na === 0 || o.nb === 0) return 0;
  return (2 * o.common) / (o.na + o.nb);
}

/** `key: value`, `key = value` at line starts and `"key": value` anywhere (compact JSON). */
function keyValues(text: string): Map<string, string> {
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

function lineShape(line: string): string {
  return line.replace(/[A-Za-z]+/g, 'a').replace(/[0-9]+/g, '0').replace(/\s+/g, ' ').trim();
}

function isJsonish(text: string): boolean {
  const t = text.trim();
  return (t.startsWith('{') && t.endsWith('}')) || (t.startsWith('[') && t.endsWith(']'));
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function jsonPaths(v: unknown, path: string, out: Set<string>): void {
  if (Array.isArray(v)) {
    out.add(`${path}[]`);
    for (const x of v.slice(0, 50)) jsonPaths(x, `${path}[]`, out);
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      const p = `${path}.${k}`;
      out.add(`${p}:${x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x}`);
      jsonPaths(x, p, out);
    }
  }
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let common = 0;
  for (const x of a) if (b.has(x)) common++;
  return common / (a.size + b.size - common);
}

function diceOfMultisets(a: string[], b: string[]): number {
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

function ratio(a: number, b: number): number {
  if (a === 0 && b === 0) return 1;
  return Math.min(a, b) / Math.max(a, b);
}

/** Repetition features of a text: share of duplicated non-blank lines, of repeated word 3-grams, longest run of one word. */
function repetition(text: string): { dupLines: number; dupTrigrams: number; longestRun: number } {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  const dupLines = lines.length >= 3 ? 1 - new Set(lines).size / lines.length : 0;
  const words = text.toLowerCase().match(/\S+/g) ?? [];
  // Words as small integers so a 3-gram is one number, not a new string.
  const ids = new Map<string, number>();
  const seq = new Array<number>(words.length);
  for (let i = 0; i < words.length; i++) {
    let id = ids.get(words[i]);
    if (id === undefined) ids.set(words[i], (id = ids.size));
    seq[i] = id;
  }
  let dupTrigrams = 0;
  if (words.length >= 8 && ids.size < 1 << 17) {
    const grams = new Set<number>();
    const total = words.length - 2;
    for (let i = 0; i < total; i++) grams.add((seq[i] * 131072 + seq[i + 1]) * 131072 + seq[i + 2]);
    dupTrigrams = 1 - grams.size / total;
  }
  let longestRun = words.length ? 1 : 0;
  for (let i = 1, run = 1; i < seq.length; i++) {
    run = seq[i] === seq[i - 1] ? run + 1 : 1;
    if (run > longestRun) longestRun = run;
  }
  return { dupLines, dupTrigrams, longestRun };
}

/** Features of one text, each computed on first use (history texts only need values and fields). */
class TextFeatures {
  private _values?: Map<string, number>;
  private _words?: Map<string, number>;
  private _kv?: Map<string, string>;
  private _rep?: ReturnType<typeof repetition>;
  private _shapes?: string[];
  private _punct?: string[];
  constructor(private readonly text: string) {}
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
}

// References and history texts recur: an RL group judges G predictions against one reference,
// and consecutive turns of a trajectory share their history. Their features are computed once.
const featureCache = new Map<string, TextFeatures>();
const FEATURE_CACHE_SIZE = 1024;

/** Empties the feature cache (benchmarks measure the cold path with it). */
export function clearRubricCache(): void {
  featureCache.clear();
}

function cachedFeatures(text: string): TextFeatures {
  let f = featureCache.get(text);
  if (f) return f;
  f = new TextFeatures(text);
  if (featureCache.size >= FEATURE_CACHE_SIZE) featureCache.delete(featureCache.keys().next().value as string);
  featureCache.set(text, f);
  return f;
}

const META_TALK = /\b(as an ai|language model|i cannot|i can't|i'm sorry|i am sorry|simulated|simulation|predicted observation|world model|this output|the judge|score of|here is the (?:output|observation|result))\b/i;
const PLACEHOLDER = /lorem ipsum|\[(?:insert|placeholder|output|todo|redacted)[^\]]*\]|<(?:insert|placeholder|output)[^>]*>|\bTODO\b|\bxxx+\b|\{\{[^}]*\}\}/i;

/** The reference with pre-existing and runtime-metadata spans blanked: the part facts are checked on. */
function factualPart(reference: string, spans: SpanLabel[] | undefined): { text: string; excluded: boolean } {
  if (!spans || spans.length === 0) return { text: reference, excluded: false };
  let out = '';
  let pos = 0;
  let excluded = false;
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    if (s.kind === 'deterministic' || s.start < pos) continue;
    out += reference.slice(pos, s.start) + ' ';
    pos = Math.max(pos, s.end);
    excluded = true;
  }
  return { text: out + reference.slice(pos), excluded };
}

export interface RubricDetail {
  verdict: ScoredVerdict;
  /** The 0–1 quantities behind each score (shown in the viewer, pinned by tests). */
  features: Record<string, number>;
}

export function rubricJudgeDetailed(input: JudgeInput): RubricDetail {
  const pred = normalize(input.prediction);
  const ref = normalize(input.reference);
  const all = (n: number): Scores => ({ format: n, factuality: n, consistency: n, realism: n, quality: n });
  if (pred === ref) return { verdict: scoredVerdict(all(5), ['identical to the real observation'], []), features: { identical: 1 } };
  if (pred.trim() === '') {
    return { verdict: scoredVerdict(all(1), [], ['the prediction is empty while the real observation is not']), features: { empty: 1 } };
  }
  const strengths: string[] = [];
  const weaknesses: string[] = [];
  const features: Record<string, number> = {};

  // ---- Format: does it look like the real thing? -------------------------------------------
  let formatX: number;
  const refJson = isJsonish(ref) ? tryJson(ref) : undefined;
  if (refJson !== undefined && typeof refJson === 'object' && refJson !== null) {
    const predJson = isJsonish(pred) ? tryJson(pred) : undefined;
    if (predJson === undefined || typeof predJson !== 'object' || predJson === null) {
      formatX = isJsonish(pred) ? 0.3 : 0.1;
      weaknesses.push('the real observation is JSON but the prediction does not parse as JSON');
    } else {
      const a = new Set<string>();
      const b = new Set<string>();
      jsonPaths(refJson, '$', a);
      jsonPaths(predJson, '$', b);
      formatX = jaccard(a, b);
      features.jsonKeyJaccard = formatX;
    }
  } else {
    const refShape = cachedFeatures(ref);
    const predLines = pred.split('\n');
    const shapes = diceOfMultisets(refShape.shapes, predLines.map(lineShape));
    const lineCount = ratio(refShape.shapes.length, predLines.length);
    const lengthFit = ratio(ref.length, pred.length);
    const punct = diceOfMultisets(refShape.punct, pred.match(/[^\w\s]/g) ?? []);
    formatX = 0.45 * shapes + 0.2 * lineCount + 0.15 * lengthFit + 0.2 * punct;
    Object.assign(features, { lineShapes: shapes, lineCount, lengthFit, punctuation: punct });
  }
  features.format = formatX;
  const format = toScale(formatX);

  // ---- Factuality: are the reference's facts there, and nothing contradicts them? ----------
  // Span offsets index the raw reference, so blank out before normalising.
  const blanked = factualPart(input.reference, input.spans);
  const factual = { text: normalize(blanked.text), excluded: blanked.excluded };
  const refF = cachedFeatures(factual.text);
  const refValues = refF.values;
  const predValues = valueTokens(pred);
  const valueOverlap = multisetOverlap(refValues, predValues);
  const valueScore = factual.excluded ? (valueOverlap.na === 0 ? 1 : valueOverlap.common / valueOverlap.na) : f1(valueOverlap);
  const wordOverlap = multisetOverlap(refF.words, contentWords(pred));
  const wordScore = factual.excluded ? (wordOverlap.na === 0 ? 1 : wordOverlap.common / wordOverlap.na) : f1(wordOverlap);
  const refKv = refF.kv;
  const predKv = keyValues(pred);
  let kvMatch = 0;
  let kvConflict = 0;
  for (const [k, v] of refKv) {
    const p = predKv.get(k);
    if (p === undefined) continue;
    if (p === v) kvMatch++;
    else kvConflict++;
  }
  let factX: number;
  if (kvMatch + kvConflict > 0) {
    const kvAgree = kvMatch / (kvMatch + kvConflict);
    factX = 0.45 * valueScore + 0.2 * wordScore + 0.35 * kvAgree;
    features.keyValueAgreement = kvAgree;
  } else if (valueOverlap.na + valueOverlap.nb > 0) factX = 0.7 * valueScore + 0.3 * wordScore;
  else factX = wordScore;
  Object.assign(features, { values: valueScore, words: wordScore, factuality: factX });
  let factuality = toScale(factX);
  // Fields are the main facts of structured output: with two or more comparable fields the
  // share that agree caps the score (2 of 3 wrong → at most 2).
  if (kvMatch + kvConflict >= 2) factuality = Math.min(factuality, toScale(kvMatch / (kvMatch + kvConflict)));
  // 5 means "no obvious flaw": a single wrong or missing value already is one.
  if (kvConflict > 0 || valueOverlap.common < valueOverlap.na) factuality = Math.min(factuality, 4);
  if (input.spans?.some((s) => s.kind === 'deterministic')) {
    const v = verify({ domain: input.domain, history: input.history, action: input.action, reference: input.reference, prediction: input.prediction, spans: input.spans });
    if (!v.pass) {
      factuality = Math.min(factuality, 2);
      weaknesses.push(`deterministic content differs (${v.failure?.region.label}: ${v.failure?.reason})`);
    }
  }
  if (kvConflict > 0) weaknesses.push(`${kvConflict} field value${kvConflict > 1 ? 's' : ''} differ from the real observation`);

  // ---- Consistency: agreement with the action and earlier turns ----------------------------
  const histKv = new Map<string, Set<string>>();
  const histValues = new Map<string, number>();
  const seen = [...input.history.map((t) => t.observation), ...input.history.map((t) => t.action), input.action];
  for (const text of seen) {
    const f = cachedFeatures(text);
    for (const [k, v] of f.kv) {
      let s = histKv.get(k);
      if (!s) histKv.set(k, (s = new Set()));
      s.add(v);
    }
    for (const t of f.values.keys()) histValues.set(t, 1);
  }
  let contradictions = 0;
  for (const [k, v] of predKv) {
    const known = histKv.get(k);
    if (!known || known.has(v)) continue;
    const refV = refKv.get(k);
    // A changed value is a contradiction only when the real environment kept the old one.
    if (refV === undefined || known.has(refV)) contradictions++;
  }
  let carriedTotal = 0;
  let carriedKept = 0;
  for (const t of refValues.keys()) {
    if (!histValues.has(t)) continue;
    carriedTotal++;
    if (predValues.has(t)) carriedKept++;
  }
  const carried = carriedTotal === 0 ? 1 : carriedKept / carriedTotal;
  let consistency = toScale(0.3 + 0.7 * carried);
  if (contradictions === 1) consistency = Math.min(consistency, 2);
  if (contradictions >= 2) consistency = 1;
  Object.assign(features, { carried, contradictions });
  if (contradictions > 0) weaknesses.push(`contradicts ${contradictions} value${contradictions > 1 ? 's' : ''} established in earlier turns`);
  else if (carriedTotal > 0 && carried === 1) strengths.push('keeps the values the action and earlier turns established');

  // ---- Realism: could a real environment have printed this? --------------------------------
  const pr = repetition(pred);
  const rr = ref === factual.text ? refF.rep : cachedFeatures(ref).rep;
  const excess = Math.max(pr.dupLines - rr.dupLines, pr.dupTrigrams - rr.dupTrigrams, 0);
  const runExcess = pr.longestRun - rr.longestRun;
  let degenerate = 0;
  if (excess >= 0.75 || runExcess >= 12) degenerate = 2;
  else if (excess >= 0.4 || runExcess >= 6) degenerate = 1;
  let realism = 5;
  if (degenerate === 2) realism = 1;
  else if (degenerate === 1) realism = 2;
  if (degenerate) weaknesses.push('degenerate repetition');
  if (META_TALK.test(pred) && !META_TALK.test(ref)) {
    realism -= 2;
    weaknesses.push('talks about itself instead of being the environment');
  }
  if (PLACEHOLDER.test(pred) && !PLACEHOLDER.test(ref)) {
    realism -= 1;
    weaknesses.push('contains placeholder text');
  }
  if (ref.length >= 20) {
    const lr = pred.length / ref.length;
    if (lr > 10 || lr < 0.1) realism -= 2;
    else if (lr > 4 || lr < 0.25) realism -= 1;
    features.lengthRatio = lr;
  }
  if (refJson !== undefined && isJsonish(pred) && tryJson(pred) === undefined) realism -= 1;
  realism = Math.max(1, realism);
  Object.assign(features, { repetitionExcess: excess, runExcess });

  // ---- Quality: overall usefulness as a stand-in for the real observation ------------------
  let quality = Math.round(0.35 * factuality + 0.25 * format + 0.15 * consistency + 0.25 * realism);
  // A well-formed observation with wrong facts is of little use as a stand-in.
  quality = Math.min(quality, factuality + 1);
  if (degenerate === 2) quality = 1;
  else if (degenerate === 1) quality = Math.min(quality, 2);

  if (format >= 4) strengths.push(refJson !== undefined ? 'same JSON structure as the real observation' : 'layout matches the real observation');
  else if (format <= 2 && refJson === undefined) weaknesses.push('layout differs from the real observation');
  if (factuality >= 4) strengths.push('reproduces the facts of the real observation');
  else if (factuality <= 2 && kvConflict === 0) weaknesses.push('misses most facts of the real observation');
  if (realism === 5) strengths.push('reads like real environment output');

  const scores: Scores = { format, factuality, consistency, realism, quality };
  for (const d of DIMENSIONS) scores[d] = Math.min(5, Math.max(1, Math.round(scores[d])));
  return { verdict: scoredVerdict(scores, strengths, weaknesses), features };
}

export function rubricJudge(input: JudgeInput): ScoredVerdict {
  return rubricJudgeDetailed(input).verdict;
}

/** The local rubric judge behind the common Judge interface. */
export const localJudge: Judge = {
  name: 'local-rubric',
  judge: async (input) => rubricJudge(input),
};
