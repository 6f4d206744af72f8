// The local rubric judge: a deterministic, reference-grounded scorer of the five dimensions
// (docs/method.md §7) that needs no model. The reference's content classes (docs/method.md §8) decide what counts:
// deterministic content must come back exactly, pre-existing content and runtime metadata only
// need the right form and plausible values, so copying the reference's shape without its
// content does not pay. One scorer per dimension (rubricScores.ts), one table of weights
// (RUBRIC_WEIGHTS), text features in rubricText.ts; docs/judging.md §3 says what each rewards
// and gives the judge ladder's measured means. The point is a judge that runs everywhere,
// instantly and reproducibly — in the browser during RL, in CI, offline — and ranks what it
// judges: scripts/judge-ladder.ts measures that.
import { DIMENSIONS, scoredVerdict, type Judge, type JudgeInput, type Scores, type ScoredVerdict } from './types.ts';
import { clearFeatureCache, normalize } from './rubricText.ts';
import { clearShapeCache, scoreAll } from './rubricScores.ts';

export { RUBRIC_WEIGHTS, toScale } from './rubricScores.ts';

/** Empties the feature cache of references and history texts (benchmarks measure the cold path with it). */
export function clearRubricCache(): void {
  clearFeatureCache();
  clearShapeCache();
}

export interface RubricDetail {
  verdict: ScoredVerdict;
  /** The 0–1 quantities behind each score (shown in the viewer, pinned by tests). */
  features: Record<string, number>;
}

function all(n: number): Scores {
  return Object.fromEntries(DIMENSIONS.map((d) => [d, n])) as Scores;
}

/**
 * Characters of each text (prediction, reference, action, context, each history text) the rubric
 * compares. Past it a text is compared by its first JUDGE_TEXT_CHARS characters, so one judgement
 * costs bounded time and memory whatever the sizes; the verdict's weaknesses say so.
 */
export const JUDGE_TEXT_CHARS = 256 * 1024;

const cut = (s: string) => (s.length > JUDGE_TEXT_CHARS ? s.slice(0, JUDGE_TEXT_CHARS) : s);

/** The input with every text cut to JUDGE_TEXT_CHARS (spans past the cut dropped or shortened); null when none is longer. */
export function boundedInput(input: JudgeInput): JudgeInput | null {
  const texts = [input.prediction, input.reference, input.action, input.context ?? '', ...input.history.flatMap((t) => [t.action, t.observation])];
  if (texts.every((t) => t.length <= JUDGE_TEXT_CHARS)) return null;
  const out: JudgeInput = {
    ...input,
    prediction: cut(input.prediction),
    reference: cut(input.reference),
    action: cut(input.action),
    history: input.history.map((t) => ({ action: cut(t.action), observation: cut(t.observation) })),
  };
  if (input.context !== undefined) out.context = cut(input.context);
  if (input.spans)
    out.spans = input.spans.filter((s) => s.start < JUDGE_TEXT_CHARS).map((s) => (s.end > JUDGE_TEXT_CHARS ? { ...s, end: JUDGE_TEXT_CHARS } : s));
  return out;
}

export function rubricJudgeDetailed(input: JudgeInput): RubricDetail {
  const pred = normalize(input.prediction);
  const ref = normalize(input.reference);
  if (pred === ref) return { verdict: scoredVerdict(all(5), ['identical to the real observation'], []), features: { identical: 1 } };
  if (pred.trim() === '') {
    return { verdict: scoredVerdict(all(1), [], ['the prediction is empty while the real observation is not']), features: { empty: 1 } };
  }
  const bounded = boundedInput(input);
  if (!bounded) return scoreAll(input);
  const detail = scoreAll(bounded);
  const sizes = `the prediction has ${input.prediction.length}, the reference ${input.reference.length}`;
  detail.verdict.weaknesses.push(`compared on the first ${JUDGE_TEXT_CHARS} characters of each text only (${sizes})`);
  detail.features.truncated = 1;
  return detail;
}

export function rubricJudge(input: JudgeInput): ScoredVerdict {
  return rubricJudgeDetailed(input).verdict;
}

/** The local rubric judge behind the common Judge interface. */
export const localJudge: Judge = {
  name: 'local-rubric',
  judge: async (input) => rubricJudge(input),
};
