// The five scorers of the local rubric judge, one function per dimension, over one shared
// comparison of the prediction with its reference. Every weight and threshold is in
// RUBRIC_WEIGHTS; docs/judging.md §3 prints the table and says what each dimension rewards.
import { scoredVerdict, type JudgeInput, type Scores, type ScoredVerdict } from './types.ts';
import {
  alignTokens,
  cachedFeatures,
  contentTokens,
  diceOfMultisets,
  ERROR_MARK,
  isJsonish,
  jsonKeyTokens,
  jaccard,
  jsonDepthWithin,
  jsonPaths,
  META_TALK,
  multisetOverlap,
  normalize,
  PLACEHOLDER,
  ratio,
  repetition,
  TextFeatures,
  tokenClasses,
  tryJson,
  type TokenClass,
} from './rubricText.ts';
import { verify } from './verifier.ts';
import { LIMITS } from '../limits.ts';

/** Every weight of the rubric judge, by dimension. */
export const RUBRIC_WEIGHTS = {
  format: {
    /** Text references: shares of line-shape overlap, line-count fit, length fit, punctuation overlap. */
    lineShapes: 0.7,
    lineCount: 0.1,
    length: 0.05,
    punctuation: 0.15,
    /** JSON references, a prediction that does not parse: looks like JSON / does not, plus this share of the length fit. */
    brokenJson: 0.3,
    notJson: 0.1,
    unparsedLength: 0.1,
  },
  factuality: {
    /** Weight of a reference token by content class (docs/method.md §8): runtime metadata is never a fact to reproduce. */
    class: { deterministic: 1, unlabelled: 1, pre_existing: 0.5, runtime_metadata: 0 } as Record<TokenClass, number>,
    /**
     * Informativeness of a reference token: 1 / (1 + k) when the context already showed it in k
     * earlier texts (history, action, task context), divided by the number of reference lines
     * that hold it (a word on every line is layout); single characters weigh this much.
     */
    singleChar: 0.1,
    /** Invented prediction tokens allowed per free (pre-existing or runtime) reference token it did not reproduce. */
    freeAllowance: 1.5,
    /**
     * Factuality and Quality weigh a token by its informativeness to this power: the turn's new
     * content is the fact to get right, text shown before is nearly free.
     */
    knownPower: 2,
    /** Highest Factuality when the deterministic region does not match exactly (the rule verifier fails). */
    verifierCap: 2,
  },
  consistency: {
    /**
     * Cost of the share of prediction words that only earlier observations had (a stale screen):
     * none, repeating the session never contradicts it; Factuality and Quality miss the new content.
     */
    stale: 0,
    /** Cost of the share of prediction words nobody showed, neither the reference nor the context: invented entities. */
    invented: 1,
  },
  realism: {
    /** Multiplier when one of the two is an error and the other is not. */
    behaviourMismatch: 0.4,
    /** Credit of a number the reference does not have, of a length it uses (another PID, time, size). */
    numberCredit: 0.5,
    /** Plausibility when the prediction has no word or number of two or more characters. */
    noTokens: 0.3,
    /** Share of plausibility (words the reference or the context has) against style (the reference's own vocabulary, Dice). */
    plausibility: 0.7,
    /** Excess repetition (share of lines or 3-grams) for Realism 2 / 1; excess longest run of one word likewise. */
    repetitionMild: 0.4,
    repetitionSevere: 0.75,
    runMild: 6,
    runSevere: 12,
    metaTalk: 2,
    placeholder: 1,
    /** Length ratio (prediction / reference, references of 20+ characters) costing 1 and 2 points. */
    lengthMild: 4,
    lengthSevere: 10,
    brokenJson: 1,
    /** Realism stays within this many points above the mean of Factuality and Consistency (rounded down). */
    aboveGrounding: 1,
  },
  quality: {
    /** Weight of a reference token by content class when counting what the prediction covers. */
    class: { deterministic: 1, unlabelled: 1, pre_existing: 1, runtime_metadata: 0.5 } as Record<TokenClass, number>,
    /** Prediction tokens beyond this multiple of the reference's count cut Quality proportionally. */
    lengthSlack: 1.25,
    /** Quality stays within this many points above Factuality. */
    aboveFactuality: 1,
  },
} as const;

/** Maps a 0–1 quality to the 1–5 scale: ≥0.9 → 5, ≥0.7 → 4, ≥0.45 → 3, ≥0.2 → 2, else 1. */
export function toScale(x: number): number {
  if (x >= 0.9) return 5;
  if (x >= 0.7) return 4;
  if (x >= 0.45) return 3;
  if (x >= 0.2) return 2;
  return 1;
}

/** What one scorer found. */
export interface DimensionResult {
  score: number;
  features: Record<string, number>;
  strengths: string[];
  weaknesses: string[];
}

/** The prediction set against its reference, computed once and read by every scorer. */
export interface Comparison {
  input: JudgeInput;
  pred: string;
  ref: string;
  predF: TextFeatures;
  refF: TextFeatures;
  /** The reference parsed as JSON, when it is a JSON object or array. */
  refJson: object | undefined;
  /** True when span labels classify the reference's content. */
  labelled: boolean;
  /** Reference content tokens: informativeness (see `informativeness`), matched by the prediction (LCS), class. */
  refInfo: Float64Array;
  refMatched: Uint8Array;
  refClass: TokenClass[];
  /** Digit counts of the reference's numbers. */
  refNumberLengths: Set<number>;
  /** Lower-cased words that are JSON structure in the reference (field names): not state. */
  refStructure: Set<string>;
  /** Prediction content tokens and which belong to the alignment. */
  predTokens: string[];
  predMatched: Uint8Array;
  /** In how many texts the context showed a lower-cased word before this turn (history, action, task context). */
  knownIn: (w: string) => number;
  /** Whether the context showed a word before this turn. */
  known: (w: string) => boolean;
  /** On how many lines of the session itself (earlier turns and this action, not the task context) a word appeared. */
  sessionLines: (w: string) => number;
  /** Words of earlier observations only. */
  seenInObservations: (w: string) => boolean;
}

function vocabOf(texts: string[]): (w: string) => number {
  const sets = texts.map((t) => cachedFeatures(t).vocab);
  return (w) => {
    let k = 0;
    for (const s of sets) if (s.has(w)) k++;
    return k;
  };
}

/** How much a reference token tells: single characters little, words the context showed often less. */
export function informativeness(token: string, knownIn: (w: string) => number): number {
  return token.length < 2 ? RUBRIC_WEIGHTS.factuality.singleChar : 1 / (1 + knownIn(token.toLowerCase()));
}

/** What a judgement needs of a reference alone, computed once per reference and span labels. */
interface ReferenceShape {
  json: object | undefined;
  tokens: string[];
  classes: TokenClass[];
  /** Per token: 0 for JSON structure, else 1 / (reference lines that hold the word). */
  layout: Float64Array;
  /** Digit counts of the reference's numbers. */
  numberLengths: Set<number>;
  /** Lower-cased words that are JSON structure (field names) in the reference. */
  structure: Set<string>;
}

const shapeCache = new Map<string, ReferenceShape>();
const SHAPE_CACHE_SIZE = 256;

export function clearShapeCache(): void {
  shapeCache.clear();
}

function referenceShape(input: JudgeInput, ref: string, refF: TextFeatures): ReferenceShape {
  const key = input.spans?.length ? `${JSON.stringify(input.spans)}\u0000${input.reference}` : input.reference;
  const hit = shapeCache.get(key);
  if (hit) return hit;
  const parsed = isJsonish(ref) ? tryJson(ref) : undefined;
  const json = parsed !== null && typeof parsed === 'object' ? parsed : undefined;
  // Span offsets index the raw reference, so its tokens are read there, not in the normalised text.
  const toks = contentTokens(input.reference);
  const classes = tokenClasses(toks, input.spans?.length ? input.spans : undefined);
  // A word on many lines of the reference is part of its layout (an element role, a column, a
  // URL scheme); the facts are what varies from line to line.
  const layout = Float64Array.from(toks, (t) => 1 / Math.max(1, refF.lineVocab.get(t.text.toLowerCase()) ?? 1));
  // Field names of a JSON reference are its structure (Format's key paths), not facts; so is a
  // field name's word where it appears as a value (`"type": "text"` beside a `"text"` field).
  const structure = new Set<string>();
  if (json !== undefined) {
    const isKey = jsonKeyTokens(input.reference, toks);
    toks.forEach((t, i) => isKey[i] && structure.add(t.text.toLowerCase()));
    toks.forEach((t, i) => structure.has(t.text.toLowerCase()) && (layout[i] = 0));
  }
  const numberLengths = new Set(toks.filter((t) => /^\d/.test(t.text)).map((t) => t.text.length));
  const shape: ReferenceShape = { json, tokens: toks.map((t) => t.text), classes, layout, numberLengths, structure };
  if (shapeCache.size >= SHAPE_CACHE_SIZE) shapeCache.delete(shapeCache.keys().next().value as string);
  shapeCache.set(key, shape);
  return shape;
}

export function compare(input: JudgeInput): Comparison {
  const pred = normalize(input.prediction);
  const ref = normalize(input.reference);
  const refF = cachedFeatures(ref);
  const shape = referenceShape(input, ref, refF);
  const observations = input.history.map((t) => t.observation);
  const knownIn = vocabOf([...observations, ...input.history.map((t) => t.action), input.action, input.context ?? '']);
  const seen = vocabOf(observations);
  const sessionTexts = [...observations, ...input.history.map((t) => t.action), input.action].map((t) => cachedFeatures(t).lineVocab);
  const sessionLines = (w: string) => sessionTexts.reduce((n, m) => n + (m.get(w) ?? 0), 0);
  const predTokens = contentTokens(pred).map((t) => t.text);
  const align = alignTokens(shape.tokens, predTokens);
  const refInfo = Float64Array.from(shape.tokens, (t, i) => (shape.layout[i] === 0 ? 0 : informativeness(t, knownIn) * shape.layout[i]));
  const known = (t: string) => knownIn(t) > 0;
  return {
    input,
    pred,
    ref,
    predF: new TextFeatures(pred),
    refF,
    refJson: shape.json,
    labelled: (input.spans?.length ?? 0) > 0,
    refInfo,
    refMatched: align.a,
    refClass: shape.classes,
    refNumberLengths: shape.numberLengths,
    refStructure: shape.structure,
    predTokens,
    predMatched: align.b,
    knownIn,
    known,
    sessionLines,
    seenInObservations: (t) => seen(t) > 0,
  };
}

// ---- Format ------------------------------------------------------------------------------

/** Layout only: JSON key paths for JSON references; line shapes, line count, length and punctuation for text. */
export function scoreFormat(c: Comparison): DimensionResult {
  const w = RUBRIC_WEIGHTS.format;
  const r: DimensionResult = { score: 1, features: {}, strengths: [], weaknesses: [] };
  let x: number;
  if (c.refJson !== undefined) {
    const predJson = isJsonish(c.pred) ? tryJson(c.pred) : undefined;
    if (predJson === undefined || predJson === null || typeof predJson !== 'object') {
      x = (isJsonish(c.pred) ? w.brokenJson : w.notJson) + w.unparsedLength * ratio(c.ref.length, c.pred.length);
      r.weaknesses.push(
        `the real observation is JSON but the prediction does not parse as JSON${isJsonish(c.pred) && !jsonDepthWithin(c.pred) ? ` (it nests deeper than ${LIMITS.depth} levels)` : ''}`,
      );
    } else {
      const a = new Set<string>();
      const b = new Set<string>();
      jsonPaths(c.refJson, '$', a);
      jsonPaths(predJson, '$', b);
      x = r.features.jsonKeyJaccard = jaccard(a, b);
    }
  } else {
    const lineShapes = diceOfMultisets(c.refF.shapes, c.predF.shapes);
    const lineCount = ratio(c.refF.shapes.length, c.predF.shapes.length);
    const lengthFit = ratio(c.ref.length, c.pred.length);
    const punctuation = diceOfMultisets(c.refF.punct, c.predF.punct);
    x = w.lineShapes * lineShapes + w.lineCount * lineCount + w.length * lengthFit + w.punctuation * punctuation;
    Object.assign(r.features, { lineShapes, lineCount, lengthFit, punctuation });
  }
  r.features.format = x;
  r.score = toScale(x);
  if (r.score >= 4) r.strengths.push(c.refJson !== undefined ? 'same JSON structure as the real observation' : 'layout matches the real observation');
  else if (r.score <= 2 && c.refJson === undefined) r.weaknesses.push('layout differs from the real observation');
  return r;
}

// ---- Factuality --------------------------------------------------------------------------

/**
 * Labelled references: the weighted share of the reference's content tokens the prediction
 * reproduces in order (deterministic and unlabelled in full, pre-existing at half weight,
 * runtime metadata not at all; each also by informativeness², so text the context already
 * showed is nearly free), times one minus the share of invented tokens beyond what stands in
 * for free content it did not reproduce. A deterministic region that is not reproduced exactly
 * caps the score (the rule verifier). References without spans: value, word and field agreement.
 */
export function scoreFactuality(c: Comparison): DimensionResult {
  const r = c.labelled ? labelledFacts(c) : unlabelledFacts(c);
  if (c.input.spans?.some((s) => s.kind === 'deterministic')) {
    const v = verify({
      domain: c.input.domain,
      history: c.input.history,
      action: c.input.action,
      reference: c.input.reference,
      prediction: c.input.prediction,
      spans: c.input.spans,
    });
    r.features.verifier = v.pass ? 1 : 0;
    if (!v.pass) {
      r.score = Math.min(r.score, RUBRIC_WEIGHTS.factuality.verifierCap);
      r.weaknesses.push(`deterministic content differs (${v.failure?.region.label}: ${v.failure?.reason})`);
    }
  }
  if (r.score >= 4) r.strengths.push('reproduces the facts of the real observation');
  return r;
}

function labelledFacts(c: Comparison): DimensionResult {
  const w = RUBRIC_WEIGHTS.factuality;
  let total = 0;
  let got = 0;
  let freeMissing = 0;
  for (let i = 0; i < c.refInfo.length; i++) {
    const weight = w.class[c.refClass[i]] * c.refInfo[i] ** w.knownPower;
    total += weight;
    if (c.refMatched[i]) got += weight;
    else if (c.refClass[i] === 'pre_existing' || c.refClass[i] === 'runtime_metadata') freeMissing++;
  }
  const recall = total === 0 ? 1 : got / total;
  // Fabrication: prediction tokens that neither the reference nor anything shown before has
  // (repeating earlier output is Consistency's concern), beyond what stands in for free content.
  let invented = 0;
  for (let i = 0; i < c.predTokens.length; i++) if (!c.predMatched[i] && c.knownIn(c.predTokens[i].toLowerCase()) === 0) invented++;
  const unexplained = Math.max(0, invented - w.freeAllowance * freeMissing);
  const precision = c.predTokens.length === 0 ? 1 : 1 - unexplained / c.predTokens.length;
  const x = recall * precision;
  const r: DimensionResult = { score: toScale(x), features: { recall, precision, factuality: x }, strengths: [], weaknesses: [] };
  if (r.score <= 2) r.weaknesses.push('misses most facts of the real observation');
  if (precision < 0.7) r.weaknesses.push('invents content that neither the real observation nor the session has');
  return r;
}

/**
 * References without span labels: every content token is a fact (weighted as for labelled ones,
 * class `unlabelled`); `key: value` fields cap the score by the share that agree when two or
 * more are comparable, and 5 needs every field and value right.
 */
function unlabelledFacts(c: Comparison): DimensionResult {
  const r = labelledFacts(c);
  let kvMatch = 0;
  let kvConflict = 0;
  for (const [k, v] of c.refF.kv) {
    const p = c.predF.kv.get(k);
    if (p === undefined) continue;
    if (p === v) kvMatch++;
    else kvConflict++;
  }
  if (kvMatch + kvConflict > 0) r.features.keyValueAgreement = kvMatch / (kvMatch + kvConflict);
  if (kvMatch + kvConflict >= 2) r.score = Math.min(r.score, toScale(kvMatch / (kvMatch + kvConflict)));
  const values = multisetOverlap(c.refF.values, c.predF.values);
  if (kvConflict > 0 || values.common < values.na) r.score = Math.min(r.score, 4);
  if (kvConflict > 0) r.weaknesses.push(`${kvConflict} field value${kvConflict > 1 ? 's' : ''} differ from the real observation`);
  return r;
}

// ---- Consistency -------------------------------------------------------------------------

/**
 * Agreement with what earlier turns established: the share of the reference's words that the
 * session already showed which the prediction keeps, each weighted 1 / (lines of the session
 * that hold it) (with nothing established, its agreement with the reference's content), less
 * the share of its words nobody showed (invented); field values that contradict earlier turns
 * cap the score.
 */
export function scoreConsistency(c: Comparison): DimensionResult {
  const r: DimensionResult = { score: 1, features: {}, strengths: [], weaknesses: [] };
  // A word the session showed on k lines weighs 1 / k: one file name from an earlier turn says
  // more about the session than a label on every line of every screen.
  let established = 0;
  let kept = 0;
  for (const t of c.refF.vocab) {
    const k = c.sessionLines(t);
    if (k === 0 || c.refStructure.has(t)) continue;
    const weight = 1 / k;
    established += weight;
    if (c.predF.vocab.has(t)) kept += weight;
  }
  const carried = established > 0 ? kept / established : weightedRecall(c, RUBRIC_WEIGHTS.factuality.knownPower);
  let stale = 0;
  let invented = 0;
  for (const t of c.predF.vocab) {
    if (c.refF.vocab.has(t)) continue;
    if (c.seenInObservations(t)) stale++;
    else if (!c.known(t) && !/^\d/.test(t)) invented++;
  }
  const n = Math.max(1, c.predF.vocab.size);
  const w = RUBRIC_WEIGHTS.consistency;
  const x = carried * Math.max(0, 1 - w.stale * (stale / n) - w.invented * (invented / n));
  const staleShare = stale / n;
  const contradictions = contradictedFields(c);
  r.score = toScale(x);
  if (contradictions === 1) r.score = Math.min(r.score, 2);
  if (contradictions >= 2) r.score = 1;
  Object.assign(r.features, { carried, stale: staleShare, invented: invented / n, contradictions, consistency: x });
  if (contradictions > 0) r.weaknesses.push(`contradicts ${contradictions} value${contradictions > 1 ? 's' : ''} established in earlier turns`);
  else if (established > 0 && carried === 1 && staleShare === 0) r.strengths.push('keeps the values the action and earlier turns established');
  if (staleShare >= 0.3) r.weaknesses.push('repeats earlier output the real environment no longer shows');
  return r;
}

/** Share of the reference's content reproduced, each token weighted by class (Quality's table) and informativeness^power. */
function weightedRecall(c: Comparison, power: number): number {
  const classW = RUBRIC_WEIGHTS.quality.class;
  let total = 0;
  let got = 0;
  for (let i = 0; i < c.refInfo.length; i++) {
    const weight = classW[c.refClass[i]] * c.refInfo[i] ** power;
    total += weight;
    if (c.refMatched[i]) got += weight;
  }
  return total === 0 ? 1 : got / total;
}

/** Fields of the prediction whose key earlier turns gave other values, where the real environment kept an earlier one. */
function contradictedFields(c: Comparison): number {
  const histKv = new Map<string, Set<string>>();
  for (const text of [...c.input.history.map((t) => t.observation), ...c.input.history.map((t) => t.action), c.input.action]) {
    for (const [k, v] of cachedFeatures(text).kv) {
      let s = histKv.get(k);
      if (!s) histKv.set(k, (s = new Set()));
      s.add(v);
    }
  }
  let n = 0;
  for (const [k, v] of c.predF.kv) {
    const known = histKv.get(k);
    if (!known || known.has(v)) continue;
    const refV = c.refF.kv.get(k);
    if (refV === undefined || known.has(refV)) n++;
  }
  return n;
}

// ---- Realism -----------------------------------------------------------------------------

/**
 * Could this environment have printed it? The share of the prediction's words and numbers that
 * are the reference's or the context's (a number of a length the reference uses: half), blended
 * with the Dice of the two vocabularies (style);
 * cut when it is an error and the reference is not (or the reverse); then points off for
 * degenerate repetition, talk about itself, placeholders, a wrong order of length, broken JSON.
 */
export function scoreRealism(c: Comparison, grounded: number): DimensionResult & { degenerate: number } {
  const w = RUBRIC_WEIGHTS.realism;
  const r = { score: 1, features: {} as Record<string, number>, strengths: [] as string[], weaknesses: [] as string[], degenerate: 0 };
  let counted = 0;
  let plausible = 0;
  for (let i = 0; i < c.predTokens.length; i++) {
    const t = c.predTokens[i];
    if (t.length < 2) continue;
    counted++;
    if (c.predMatched[i] || c.refF.vocab.has(t.toLowerCase()) || c.known(t.toLowerCase())) plausible++;
    // Another number of the right size is plausible in form only: half the credit.
    else if (/^\d/.test(t) && c.refNumberLengths.has(t.length)) plausible += w.numberCredit;
  }
  const plausibility = counted === 0 ? (c.refF.vocab.size === 0 ? 1 : w.noTokens) : plausible / counted;
  const style = styleAgreement(c.refF.vocab, c.predF.vocab);
  const behaviour = ERROR_MARK.test(c.pred) === ERROR_MARK.test(c.ref) ? 1 : w.behaviourMismatch;
  let score = toScale((w.plausibility * plausibility + (1 - w.plausibility) * style) * behaviour);
  if (behaviour < 1)
    r.weaknesses.push(
      ERROR_MARK.test(c.ref) ? 'the real action failed but the prediction does not show an error' : 'shows an error where the real action succeeded',
    );
  const pr = repetition(c.pred);
  const rr = c.refF.rep;
  const excess = Math.max(pr.dupLines - rr.dupLines, pr.dupTrigrams - rr.dupTrigrams, 0);
  const runExcess = pr.longestRun - rr.longestRun;
  if (excess >= w.repetitionSevere || runExcess >= w.runSevere) r.degenerate = 2;
  else if (excess >= w.repetitionMild || runExcess >= w.runMild) r.degenerate = 1;
  if (r.degenerate) {
    score = Math.min(score, r.degenerate === 2 ? 1 : 2);
    r.weaknesses.push('degenerate repetition');
  }
  if (META_TALK.test(c.pred) && !META_TALK.test(c.ref)) {
    score -= w.metaTalk;
    r.weaknesses.push('talks about itself instead of being the environment');
  }
  if (PLACEHOLDER.test(c.pred) && !PLACEHOLDER.test(c.ref)) {
    score -= w.placeholder;
    r.weaknesses.push('contains placeholder text');
  }
  if (c.ref.length >= 20) {
    const lr = (r.features.lengthRatio = c.pred.length / c.ref.length);
    if (lr > w.lengthSevere || lr < 1 / w.lengthSevere) score -= 2;
    else if (lr > w.lengthMild || lr < 1 / w.lengthMild) score -= 1;
  }
  if (c.refJson !== undefined && isJsonish(c.pred) && tryJson(c.pred) === undefined) score -= w.brokenJson;
  // Behavioural fidelity needs evidence, from the reference (Factuality) and from the session
  // (Consistency): output that agrees with neither is not how this environment answers this
  // action, however well it reads.
  r.score = Math.max(1, Math.min(score, grounded + w.aboveGrounding));
  Object.assign(r.features, { plausibility, style, behaviour, repetitionExcess: excess, runExcess });
  if (r.score === 5) r.strengths.push('reads like real environment output');
  return r;
}

/** Dice of two vocabularies, numbers compared by their number of digits (another PID or time is the same style). */
function styleAgreement(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  const form = (v: Set<string>) => new Set([...v].map((t) => (/^\d/.test(t) ? `#${t.length}` : t)));
  const fa = form(a);
  const fb = form(b);
  let common = 0;
  for (const t of fa) if (fb.has(t)) common++;
  return (2 * common) / (fa.size + fb.size);
}

// ---- Quality -----------------------------------------------------------------------------

/**
 * Completeness and proportion: the share of the reference's content reproduced (each token
 * weighted by class and by informativeness, runtime metadata at half), cut when the prediction
 * runs longer than the reference; at most one point above Factuality; degenerate output 1–2.
 */
export function scoreQuality(c: Comparison, factuality: number, degenerate: number): DimensionResult {
  const w = RUBRIC_WEIGHTS.quality;
  let total = 0;
  let got = 0;
  for (let i = 0; i < c.refInfo.length; i++) {
    const weight = w.class[c.refClass[i]] * c.refInfo[i] ** RUBRIC_WEIGHTS.factuality.knownPower;
    total += weight;
    if (c.refMatched[i]) got += weight;
  }
  const completeness = total === 0 ? (c.predTokens.length === 0 ? 1 : 0) : got / total;
  const limit = w.lengthSlack * c.refMatched.length + 2;
  const proportion = c.predTokens.length <= limit ? 1 : limit / c.predTokens.length;
  const x = completeness * proportion;
  let score = Math.min(toScale(x), factuality + w.aboveFactuality);
  if (degenerate === 2) score = 1;
  else if (degenerate === 1) score = Math.min(score, 2);
  const r: DimensionResult = { score, features: { completeness, proportion, quality: x }, strengths: [], weaknesses: [] };
  if (completeness < 0.45) r.weaknesses.push('leaves out most of what the real observation shows');
  if (proportion < 0.7) r.weaknesses.push('much longer than the real observation');
  return r;
}

/** All five, in one verdict. */
export function scoreAll(input: JudgeInput): { verdict: ScoredVerdict; features: Record<string, number> } {
  const c = compare(input);
  const format = scoreFormat(c);
  const factuality = scoreFactuality(c);
  const consistency = scoreConsistency(c);
  const realism = scoreRealism(c, Math.floor((factuality.score + consistency.score) / 2));
  const quality = scoreQuality(c, factuality.score, realism.degenerate);
  const parts = { format, factuality, consistency, realism, quality };
  const scores = Object.fromEntries(Object.entries(parts).map(([d, p]) => [d, Math.min(5, Math.max(1, Math.round(p.score)))])) as Scores;
  const features: Record<string, number> = {};
  for (const p of Object.values(parts)) Object.assign(features, p.features);
  const strengths = Object.values(parts).flatMap((p) => p.strengths);
  const weaknesses = Object.values(parts).flatMap((p) => p.weaknesses);
  return { verdict: scoredVerdict(scores, strengths, weaknesses), features };
}
