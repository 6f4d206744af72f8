// What a reference-grounded judge sees for one turn sample and a model's prediction.
import type { TurnSample } from '../turns/index.ts';
import type { JudgeInput } from './types.ts';

/** `context` is the rendered system prompt the model was given. */
export function judgeInputFor(sample: TurnSample, context: string, prediction: string): JudgeInput {
  return {
    domain: sample.domain,
    context,
    history: sample.history,
    action: sample.action,
    prediction,
    reference: sample.targetObservation,
    spans: sample.targetSpans,
  };
}
