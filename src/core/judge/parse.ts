// A tolerant reader of LLM judge verdicts. Judges are asked for a JSON verdict inside a tag,
// but real replies wrap it in prose, fences, several drafts, Python-style literals and
// fractions. Each step below widens the net only when the stricter one found nothing. Scores are
// read as the public AgentWorldBench parser reads them: a missing or 0 dimension is invalid
// (INVALID_SCORE, left out of the total) while the others still count; a reply with no usable
// score at all is reported as unparseable (the caller then retries or records the sample as
// failed — never as a low score).
import { DIMENSIONS, INVALID_SCORE, type Dimension, type Scores } from './types.ts';
import { stripThink } from './extract.ts';
import { pyRound } from './pyfloat.ts';

export type ParsedVerdict = { ok: true; scores: Scores; strengths: string[]; weaknesses: string[]; via: ParseStep } | { ok: false; error: string };

/** Which step found the verdict (shown in diagnostics; tests pin it). */
export type ParseStep = 'tag' | 'fence' | 'braces' | 'repaired' | 'pattern';

const TAGS = ['verdict', 'final_evaluation', 'evaluation'];

export function parseVerdict(reply: string): ParsedVerdict {
  // An unclosed <think> stops at the verdict tag instead of swallowing it.
  const text = stripThink(reply, TAGS);
  if (!text.trim()) return { ok: false, error: 'the judge reply is empty' };
  const tagged = lastTagBody(text);
  const regions = tagged !== null ? [tagged, text] : [text];
  let missingReport: string | null = null;

  for (const [ri, region] of regions.entries()) {
    // Later candidates first: judges reason, then give the final answer at the end.
    const candidates: { body: string; step: ParseStep }[] = [];
    for (const f of fencedBlocks(region).reverse()) candidates.push({ body: f, step: ri === 0 && tagged !== null ? 'tag' : 'fence' });
    for (const b of braceObjects(region).reverse()) candidates.push({ body: b, step: ri === 0 && tagged !== null ? 'tag' : 'braces' });
    for (const c of candidates) {
      let value: unknown;
      let step = c.step;
      try {
        value = JSON.parse(c.body);
      } catch {
        try {
          value = JSON.parse(repairJson(c.body));
          step = 'repaired';
        } catch {
          continue;
        }
      }
      const found = verdictFrom(value);
      if (found.ok) return { ...found.verdict, ok: true, via: step };
      if (found.missing && !missingReport) missingReport = found.missing;
    }
  }
  const pattern = scoresByPattern(tagged ?? text) ?? (tagged !== null ? scoresByPattern(text) : null);
  if (pattern) return { ok: true, scores: pattern, strengths: [], weaknesses: [], via: 'pattern' };
  return { ok: false, error: missingReport ?? 'no verdict with five scores found in the judge reply' };
}

function lastTagBody(text: string): string | null {
  const lower = text.toLowerCase();
  let best: { at: number; body: string } | null = null;
  for (const tag of TAGS) {
    const open = lower.lastIndexOf(`<${tag}>`);
    if (open < 0) continue;
    const start = open + tag.length + 2;
    const close = lower.indexOf(`</${tag}>`, start);
    const body = close >= 0 ? text.slice(start, close) : text.slice(start);
    if (!best || open > best.at) best = { at: open, body };
  }
  return best ? best.body : null;
}

function fencedBlocks(text: string): string[] {
  const out: string[] = [];
  // The header is matched atomically (`(?=(…))\1`): letting the lazy body take back header
  // characters made an unclosed fence quadratic. Headers hold no backticks, so matches are unchanged.
  const re = /```(?=([a-zA-Z0-9_-]*[ \t]*\r?\n?))\1([\s\S]*?)```/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) if (m[2].includes('{')) out.push(m[2].trim());
  return out;
}

/**
 * Balanced `{…}` spans at the top level, found scanning forward; plus, for a reply cut off or
 * with a stray opening brace early on, the object that closes at the last `}` found by scanning
 * backward. Quotes of either kind are respected so braces inside strings do not count.
 */
export function braceObjects(text: string): string[] {
  // Bounded work on pathological replies (thousands of stray braces): verdicts sit near the end,
  // so only the last MAX_OPENERS openers are tried, each scanned at most MAX_SCAN characters.
  const openers: number[] = [];
  for (let k = text.lastIndexOf('{'); k >= 0 && openers.length < MAX_OPENERS; k = k > 0 ? text.lastIndexOf('{', k - 1) : -1) openers.push(k);
  openers.reverse();
  const out: string[] = [];
  let coveredTo = -1;
  for (const open of openers) {
    if (open <= coveredTo) continue; // inside an object already taken
    const end = matchForward(text, open);
    if (end < 0) continue;
    out.push(text.slice(open, end + 1));
    coveredTo = end;
  }
  const lastClose = text.lastIndexOf('}');
  if (lastClose >= 0) {
    const start = matchBackward(text, lastClose);
    if (start >= 0) {
      const s = text.slice(start, lastClose + 1);
      if (!out.includes(s)) out.push(s);
    }
  }
  return out;
}

const MAX_OPENERS = 256;
const MAX_SCAN = 65536;

function matchForward(text: string, open: number): number {
  let depth = 0;
  let quote = '';
  const stop = Math.min(text.length, open + MAX_SCAN);
  for (let k = open; k < stop; k++) {
    const ch = text[k];
    if (quote) {
      if (ch === '\\') k++;
      else if (ch === quote) quote = '';
      else if (ch === '\n' && quote === "'") quote = ''; // an apostrophe in prose, not a string
      continue;
    }
    if (ch === '"' || (ch === "'" && /[\s:{[,]/.test(text[k - 1] ?? ' '))) quote = ch;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return k;
  }
  return -1;
}

function matchBackward(text: string, close: number): number {
  let depth = 0;
  const stop = Math.max(0, close - MAX_SCAN);
  for (let k = close; k >= stop; k--) {
    const ch = text[k];
    if (ch === '}') depth++;
    else if (ch === '{' && --depth === 0) return k;
  }
  return -1;
}

/**
 * Makes near-JSON parseable: comments, trailing commas, single or curly quotes, bare keys,
 * Python literals, bare words and fractions as values. One pass that knows when it is inside a
 * string, so a repair never alters the text of a strength or weakness.
 */
export function repairJson(src: string): string {
  const s = src.replace(/[\u201c\u201d]/g, '"').replace(/[\u2018\u2019]/g, "'");
  let out = '';
  let i = 0;
  const nextSignificant = (from: number): string => {
    let k = from;
    while (k < s.length && /\s/.test(s[k])) k++;
    return s[k] ?? '';
  };
  while (i < s.length) {
    const ch = s[i];
    if (ch === '"' || ch === "'") {
      let j = i + 1;
      let body = '';
      while (j < s.length && s[j] !== ch) {
        if (s[j] === '\\' && j + 1 < s.length) {
          body += ch === "'" && s[j + 1] === "'" ? "'" : s[j] + s[j + 1];
          j += 2;
          continue;
        }
        if (s[j] === '\n') body += '\\n';
        else if (s[j] === '\t') body += '\\t';
        else if (ch === "'" && s[j] === '"') body += '\\"';
        else body += s[j];
        j++;
      }
      out += `"${body}"`;
      i = j + 1;
      continue;
    }
    if ((ch === '/' && s[i + 1] === '/') || ch === '#') {
      while (i < s.length && s[i] !== '\n') i++;
      continue;
    }
    if (ch === '/' && s[i + 1] === '*') {
      const end = s.indexOf('*/', i + 2);
      i = end < 0 ? s.length : end + 2;
      continue;
    }
    if (ch === ',') {
      const next = nextSignificant(i + 1);
      if (next === '}' || next === ']') {
        i++;
        continue;
      }
    }
    const num = /^-?\d+(?:\.\d+)?(?:\s*\/\s*\d+(?:\.\d+)?)?/.exec(s.slice(i, i + 32));
    if (num && (ch === '-' || /\d/.test(ch))) {
      out += num[0].includes('/') ? `"${num[0]}"` : num[0];
      i += num[0].length;
      continue;
    }
    const word = /^[A-Za-z_][\w-]*/.exec(s.slice(i, i + 200));
    if (word) {
      const w = word[0];
      const after = i + w.length;
      if (nextSignificant(after) === ':') out += `"${w}"`;
      else if (w === 'true' || w === 'false' || w === 'null') out += w;
      else if (w === 'True' || w === 'False') out += w.toLowerCase();
      else if (w === 'None') out += 'null';
      else out += `"${w}"`;
      i = after;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}

type VerdictFields = { scores: Scores; strengths: string[]; weaknesses: string[] };

function verdictFrom(value: unknown): { ok: true; verdict: VerdictFields } | { ok: false; missing?: string } {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { ok: false };
  const obj = lowerKeys(value as Record<string, unknown>);
  const holder = findScoreHolder(obj);
  if (!holder) return { ok: false };
  const scores = {} as Scores;
  const missing: Dimension[] = [];
  for (const d of DIMENSIONS) {
    const n = coerceScore(pickDimension(holder, d));
    if (n === null) missing.push(d);
    scores[d] = n ?? INVALID_SCORE;
  }
  // A verdict missing some dimensions still scores the others (as the public parser does).
  if (missing.length === DIMENSIONS.length) return { ok: false, missing: `the verdict lacks a usable score for: ${missing.join(', ')}` };
  return { ok: true, verdict: { scores, strengths: stringList(obj.strengths), weaknesses: stringList(obj.weaknesses) } };
}

function lowerKeys(o: Record<string, unknown>): Record<string, unknown> {
  // Null prototype: a verdict's key `__proto__` must stay a key, not replace the prototype.
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(o)) out[k.trim().toLowerCase()] = v;
  return out;
}

/** The object holding the dimension scores: `scores`, `score`, `ratings`, or the verdict itself. */
function findScoreHolder(obj: Record<string, unknown>): Record<string, unknown> | null {
  for (const key of ['scores', 'score', 'ratings', 'rating', 'dimensions', 'final_scores']) {
    const v = obj[key];
    if (v && typeof v === 'object' && !Array.isArray(v)) return lowerKeys(v as Record<string, unknown>);
  }
  if (DIMENSIONS.some((d) => pickDimension(obj, d) !== undefined)) return obj;
  for (const v of Object.values(obj)) {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const inner = lowerKeys(v as Record<string, unknown>);
      if (DIMENSIONS.some((d) => pickDimension(inner, d) !== undefined)) return inner;
    }
  }
  return null;
}

function pickDimension(o: Record<string, unknown>, d: Dimension): unknown {
  if (d in o) return o[d];
  for (const [k, v] of Object.entries(o)) {
    const bare = k.replace(/[^a-z]/g, '');
    if (bare === d || bare === `${d}score`) return v;
  }
  return undefined;
}

/**
 * A score as an integer 1–5, read as the public AgentWorldBench parser reads it: integers as
 * they are, other numbers rounded like Python's round (half to even: 2.5 → 2, 3.5 → 4), `true`
 * as 1, a string by its part before any '/' ("4/5" → 4, "8/10" → 8 → 5); then clamped to 1–5.
 * Beyond the public parser, a string's first number is read when that part is not a plain integer
 * ("4 out of 5", "score: 5", "3.5"), and `{score: n}` objects are unwrapped. 0, and anything that
 * gives no number, is unusable (null): the public scorer's invalid mark.
 */
export function coerceScore(v: unknown): number | null {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = lowerKeys(v as Record<string, unknown>);
    return coerceScore(o.score ?? o.value ?? o.rating);
  }
  let n: number;
  if (typeof v === 'boolean') n = v ? 1 : 0;
  else if (typeof v === 'number') n = v;
  else if (typeof v === 'string') {
    const head = v.split('/')[0].trim();
    if (/^[+-]?\d+$/.test(head)) n = Number(head);
    else {
      const single = /-?\d+(?:\.\d+)?/.exec(v);
      if (!single) return null;
      n = Number(single[0]);
    }
  } else return null;
  if (!Number.isFinite(n)) return null;
  n = pyRound(n);
  if (n === INVALID_SCORE) return null;
  return Math.min(5, Math.max(1, n));
}

function stringList(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x) => x !== null && x !== undefined).map((x) => String(x));
  if (typeof v === 'string' && v.trim()) return [v.trim()];
  return [];
}

/** Last resort: `format: 4`, `"Factuality" = "3/5"`, `**Realism**: 5` anywhere in the text. */
function scoresByPattern(text: string): Scores | null {
  const scores: Partial<Scores> = {};
  for (const d of DIMENSIONS) {
    const re = new RegExp(`["'*_]{0,8}${d}["'*_]*(?:\\s+score)?\\s*[:=]\\s*(?:["'*]+\\s*)?(-?\\d+(?:\\.\\d+)?(?:\\s*(?:/|out of)\\s*\\d+)?)`, 'gi');
    let last: string | null = null;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null) last = m[1];
    const n = last === null ? null : coerceScore(last);
    if (n === null) return null;
    scores[d] = n;
  }
  return scores as Scores;
}
