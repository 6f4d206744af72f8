// The local rubric judge: a deterministic, reference-grounded scorer of the five dimensions
// (SPEC §7) that needs no model. The reference's content classes (SPEC §8) decide what counts:
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

export function rubricJudgeDetailed(input: JudgeInput): RubricDetail {
  const pred = normalize(input.prediction);
  const ref = normalize(input.reference);
  if (pred === ref) return { verdict: scoredVerdict(all(5), ['identical to the real observation'], []), features: { identical: 1 } };
  if (pred.trim() === '') {
    return { verdict: scoredVerdict(all(1), [], ['the prediction is empty while the real observation is not']), features: { empty: 1 } };
  }
  return scoreAll(input);
}

export function rubricJudge(input: JudgeInput): ScoredVerdict {
  return rubricJudgeDetailed(input).verdict;
}

/** The local rubric judge behind the common Judge interface. */
export const localJudge: Judge = {
  name: 'local-rubric',
  judge: async (input) => rubricJudge(input),
};
