// Turns of AgentWorldBench records as backend requests, and the message layout an endpoint is
// sent: the public inference script's (eval.py `infer`): the record's system_str as the system
// message when it is not empty, then for each earlier turn its action (the `prompt` entry, with
// its headers) as a user message and its observation (the `response` entry) as an assistant
// message, then the current action as the last user message. The model is expected to answer
// inside <predicted_observation> tags; the judge reads the last such block (or the whole text).
import type { TurnRequest } from '../backend.ts';
import type { ChatMessage } from '../chat.ts';
import { decorateAction, decorateObservation } from '../formats/agentworldbench.ts';
import { systemPromptFromText, systemPromptToText } from '../formats/systemPromptText.ts';
import type { SpanLabel } from '../schema/types.ts';
import { judgeInputOf, type AwbSampleRecord } from './records.ts';

/** The current action as the record writes it: `prompt[turn_idx - 1]`, else `current_prompt`. */
function rawAction(r: AwbSampleRecord): string {
  const t = r.turn_idx;
  return typeof r.prompt[t - 1] === 'string' ? r.prompt[t - 1] : String(r.current_prompt ?? '');
}

/**
 * The turn a record asks for: plain fields for models and baselines (headers removed, the
 * system_str split into the five fields when it is in our layout), the record's own texts for
 * the endpoint layout, and the reference observation (for the reference baseline only).
 */
export function turnRequestFromRecord(r: AwbSampleRecord): TurnRequest {
  const input = judgeInputOf({ ...r, gen: '' });
  const t = r.turn_idx;
  const system = typeof r.system_str === 'string' ? r.system_str : '';
  return {
    sample: { domain: input.domain, systemPrompt: systemPromptFromText(system), history: input.history, action: input.action },
    reference: input.reference,
    awb: { system, actions: [...r.prompt.slice(0, t - 1), rawAction(r)], observations: r.response.slice(0, t - 1) },
  };
}

/** The record of a native trajectory's turn, in the layout `lwm convert --to agentworldbench` writes. */
export function awbTexts(turn: TurnRequest): NonNullable<TurnRequest['awb']> {
  if (turn.awb) return turn.awb;
  const { sample } = turn;
  return {
    system: systemPromptToText(sample.systemPrompt),
    actions: [...sample.history.map((h, i) => decorateAction(h.action, i + 1)), decorateAction(sample.action, sample.history.length + 1)],
    observations: sample.history.map((h) => decorateObservation(h.observation)),
  };
}

/** The AgentWorldBench chat layout of a turn: what an OpenAI-compatible endpoint is sent. */
export function awbMessages(turn: TurnRequest): { role: 'system' | ChatMessage['role']; content: string }[] {
  const { system, actions, observations } = awbTexts(turn);
  const messages: { role: 'system' | ChatMessage['role']; content: string }[] = [];
  if (system) messages.push({ role: 'system', content: system });
  const earlier = Math.min(actions.length - 1, observations.length);
  for (let i = 0; i < earlier; i++) messages.push({ role: 'user', content: actions[i] }, { role: 'assistant', content: observations[i] });
  messages.push({ role: 'user', content: actions[actions.length - 1] });
  return messages;
}

/** Span labels a record carries for its reference observation (native exports add them). */
export function recordSpans(r: AwbSampleRecord): SpanLabel[] | undefined {
  return Array.isArray(r.spans) ? (r.spans as SpanLabel[]) : undefined;
}
