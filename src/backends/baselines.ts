// The two baselines every report shows beside a model. copy-last repeats the previous
// observation (for turn 1, the initial state from the system prompt): the score a simulator
// gets for writing nothing new. reference answers with the real observation: the ceiling, and a
// check of the judge (it should score it near the top). Both answer in the layout a model is
// asked for, inside <predicted_observation> tags, and need a turn request (src/core/backend.ts).
import { isTurnRequest, type GenerateOptions, type GenerateRequest, type LwmBackend, type TurnRequest } from '../core/backend.ts';

/** An observation as a model is asked to write it. */
export function taggedAnswer(observation: string): string {
  return `<predicted_observation>\n${observation}\n</predicted_observation>`;
}

function baseline(name: string, answer: (turn: TurnRequest) => string): LwmBackend {
  return {
    name,
    async *generate(request: GenerateRequest, options: GenerateOptions) {
      if (!isTurnRequest(request))
        throw new Error(
          `the ${name} baseline needs a turn request (system-prompt fields, history, action), not a ${'messages' in request ? 'chat' : 'prompt'} request`,
        );
      if (options.signal?.aborted) throw options.signal.reason ?? new Error('cancelled');
      yield taggedAnswer(answer(request));
    },
  };
}

/** The previous observation; for turn 1 the initial state (empty when the system prompt has none). */
export function copyLastObservation(turn: TurnRequest): string {
  const h = turn.sample.history;
  return h.length ? h[h.length - 1].observation : (turn.sample.systemPrompt.initial_state ?? '');
}

export function copyLastBackend(): LwmBackend {
  return baseline('copy-last', copyLastObservation);
}

export function referenceBackend(): LwmBackend {
  return baseline('reference', (turn) => {
    if (turn.reference === undefined) throw new Error('the reference baseline needs the real observation in the turn request');
    return turn.reference;
  });
}
