// The local WebGPU model as an LwmBackend: text in, streamed text out, through the model's own
// tokenizer and the KV-cache generator. Turn and chat requests are laid out in the turn structure
// the model was trained on (system, then action/observation turns), ending at the opening tag of
// the predicted observation, and cut to the context by the same truncation policy as training
// (src/core/templates/fit.ts), so the model sees the layout it learned.
import { emptySystemPrompt } from '../core/schema/types.ts';
import { fitPrompt } from '../core/templates/fit.ts';
import { BUILTIN_TEMPLATES, DEFAULT_STAGE_TEMPLATES, type PromptTemplate } from '../core/templates/index.ts';
import type { Tokenizer } from '../core/tokenizer/index.ts';
import type { Turn } from '../core/schema/types.ts';
import type { GpuGenerator } from '../model/generate.ts';
import type { ChatMessage } from '../core/chat.ts';
import { isChatRequest, isTurnRequest, type GenerateOptions, type GenerateRequest, type LwmBackend, type TurnRequest } from '../core/backend.ts';
import { decodeStream } from './stream.ts';

/** The template of a turn request without one: the eval template (a fixed wording the SFT mix includes). */
const DEFAULT_TEMPLATE: PromptTemplate = BUILTIN_TEMPLATES[Object.keys(DEFAULT_STAGE_TEMPLATES.eval)[0]];

/**
 * The layout of a chat request: the system text as given (no preamble or closing of ours), user
 * messages as actions, assistant messages as observations — v0's turn markers.
 */
export const CHAT_LAYOUT: PromptTemplate = {
  ...BUILTIN_TEMPLATES.v0,
  version: 'chat',
  description: 'chat requests to the local model',
  text: BUILTIN_TEMPLATES.v0.text.replace(
    /^[\s\S]*?(?=\{% for turn in history %\})/,
    '<|system|>\n{% if system_text %}\n{{ system_text }}\n{% else %}\n\n{% endif %}\n',
  ),
};

/** A chat request as a turn request: user/assistant pairs become history turns, the last user message the action. */
export function chatAsTurn(messages: readonly ChatMessage[], system: string, domain = 'chat'): TurnRequest {
  const history: Turn[] = [];
  let action: string | undefined;
  for (const m of messages) {
    if (m.role === 'user') {
      if (action !== undefined) history.push({ action, observation: '' });
      action = m.content;
    } else {
      history.push({ action: action ?? '', observation: m.content });
      action = undefined;
    }
  }
  return { sample: { domain, systemPrompt: { ...emptySystemPrompt(), text: system }, history, action: action ?? '' }, template: CHAT_LAYOUT };
}

/**
 * The tokens the model is given for a request within `room` tokens. Turn and chat requests are
 * cut by the training policy; a raw prompt has no structure to cut by and keeps its end.
 */
export function localPromptIds(tok: Tokenizer, request: GenerateRequest, room: number): number[] {
  if (isTurnRequest(request)) return fitPrompt(tok, request.template ?? DEFAULT_TEMPLATE, request.sample, room).ids;
  if (isChatRequest(request)) {
    const turn = chatAsTurn(request.messages, request.system);
    return fitPrompt(tok, turn.template!, turn.sample, room).ids;
  }
  const ids = tok.encode(request.prompt, { allowSpecial: true });
  return ids.length > room ? ids.slice(ids.length - room) : ids;
}

export function localBackend(gen: GpuGenerator, tok: Tokenizer, name = 'local'): LwmBackend {
  return {
    name,
    async *generate(request: GenerateRequest, o: GenerateOptions) {
      const room = gen.limits.maxLength - o.maxTokens;
      if (room < 1) throw new RangeError(`local backend: maxTokens ${o.maxTokens} leaves no room for a prompt in ${gen.limits.maxLength} tokens`);
      const ids = localPromptIds(tok, request, room);
      const stopIds = [...tok.observationStops];
      const sampling = { temperature: o.temperature, topK: o.topK, topP: o.topP, seed: o.seed };
      yield* decodeStream(
        gen.generate(ids, { maxNewTokens: o.maxTokens, sampling, stop: stopIds, signal: o.signal }),
        (x) => tok.decode(x),
        new Set(stopIds),
        o,
      );
    },
  };
}
