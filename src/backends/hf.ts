// A pretrained Hugging Face model (a folder loaded by src/model/hf/load.ts) as an LwmBackend on
// the GPU. Unlike a checkpoint of ours, it was never trained on our turn layout: a turn request is
// rendered with the model's own chat template, in the AgentWorldBench message layout an endpoint
// is sent (src/core/bench/awb-layout.ts: the system prompt as the system message, earlier turns as
// alternating user / assistant messages, the current action as the last user message), with the
// generation prompt added, and encoded with the model's own tokenizer. Generation stops at the
// model's end-of-sequence ids (generation_config.json). The KV rows of recent prompts are kept, so
// a later turn of the same session prefills only its new messages.
import { isChatRequest, isTurnRequest, type GenerateRequest, type LwmBackend } from '../core/backend.ts';
import { awbMessages } from '../core/bench/awb-layout.ts';
import type { ContextPart, ContextReport } from '../core/playground/context.ts';
import type { ChatMessage, HfTokenizer } from '../core/tokenizer/hf.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { GpuGenerator, type GenerateStats } from '../model/generate.ts';
import type { LoadedHfModel } from '../model/hf/load.ts';

/** A request that cannot be rendered for this model (no tokenizer, no chat template, too long). */
export class HfPromptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HfPromptError';
  }
}

/** The chat messages of a turn or chat request (the AgentWorldBench layout for a turn). */
export function requestMessages(request: Exclude<GenerateRequest, { prompt: string }>): ChatMessage[] {
  if (isTurnRequest(request)) return awbMessages(request);
  return [...(request.system ? [{ role: 'system', content: request.system }] : []), ...request.messages];
}

/** What a prompt became: its ids, the messages kept, and how many earlier turns were left out to fit. */
export interface HfPrompt {
  ids: number[];
  messages: ChatMessage[];
  /** Earlier user/assistant pairs left out (oldest first) so the prompt fits the room. */
  droppedTurns: number;
}

function needTokenizer(tok: HfTokenizer | null, name: string): HfTokenizer {
  if (!tok) throw new HfPromptError(`${name} has no tokenizer (tokenizer.json), so text cannot be turned into token ids`);
  return tok;
}

/**
 * The prompt ids of a request within `room` tokens. Chat and turn requests go through the chat
 * template (with the generation prompt); when they do not fit, the oldest earlier turns are left
 * out a pair at a time (the system message and the current action always stay). A raw prompt is
 * encoded as transformers' tokenizer(text) does and keeps its end.
 */
export function hfPrompt(tok: HfTokenizer | null, request: GenerateRequest, room: number, name = 'the model'): HfPrompt {
  const t = needTokenizer(tok, name);
  if (!isTurnRequest(request) && !isChatRequest(request)) {
    const ids = t.encode(request.prompt);
    return { ids: ids.length > room ? ids.slice(ids.length - room) : ids, messages: [], droppedTurns: 0 };
  }
  if (!t.chatTemplateNames.length) {
    throw new HfPromptError(`${name} has no chat template (tokenizer_config.json's chat_template or chat_template.jinja), so a turn cannot be laid out as chat messages; use an instruct / chat model folder`);
  }
  const all = requestMessages(request);
  const head = all[0]?.role === 'system' ? 1 : 0;
  for (let dropped = 0; ; dropped++) {
    const messages = [...all.slice(0, head), ...all.slice(head + 2 * dropped)];
    const ids = t.encodeChat(messages, { addGenerationPrompt: true });
    if (ids.length <= room) return { ids, messages, droppedTurns: dropped };
    if (head + 2 * (dropped + 1) >= all.length) {
      throw new HfPromptError(`the prompt takes ${ids.length} tokens with no earlier turn left, more than the ${room} tokens of room (context minus max tokens); shorten the system prompt or the action, lower max tokens, or load the model with a longer context`);
    }
  }
}

/**
 * The context bar of a chat prompt, exact: each message's tokens are what rendering it adds to
 * the messages before it (chat templates render message by message), the generation prompt
 * counts with the action.
 */
export function hfContextReport(tok: HfTokenizer, request: Exclude<GenerateRequest, { prompt: string }>, context: number, maxTokens: number): ContextReport {
  const room = context - maxTokens;
  const all = requestMessages(request);
  const fitted = hfPrompt(tok, request, room);
  const count = (messages: ChatMessage[], gen = false) => (messages.length || gen ? tok.encodeChat(messages, { addGenerationPrompt: gen }).length : 0);
  const head = all[0]?.role === 'system' ? 1 : 0;
  const parts: ContextPart[] = [];
  let before = 0;
  const totals = { system: 0, history: 0, action: 0 };
  for (let i = 0; i < all.length; i++) {
    const last = i === all.length - 1;
    const upTo = count(all.slice(0, i + 1), last);
    const n = upTo - before;
    before = upTo;
    const group: ContextPart['group'] = i < head ? 'system' : last ? 'action' : 'history';
    const left = group === 'history' && i - head < 2 * fitted.droppedTurns;
    if (!left) totals[group] += n;
    const label = group === 'system' ? 'system prompt' : group === 'action' ? 'action' : `turn ${Math.floor((i - head) / 2) + 1} ${all[i].role === 'user' ? 'action' : 'observation'}`;
    parts.push({ label, group, full: n, kept: left ? 0 : n, status: left ? 'left out' : 'kept' });
  }
  const full = count(all, true);
  return { exact: true, context, maxTokens, room, prompt: fitted.ids.length, full, ...totals, truncated: fitted.droppedTurns > 0, parts, text: tok.decode(fitted.ids) };
}

export interface HfBackend {
  backend: LwmBackend;
  model: LoadedHfModel;
  /** Tokens a prompt and its generation may take together (the KV cache's length). */
  context: number;
  stats: Readonly<GenerateStats>;
  /** Raw token ids in, generated ids out (stop ids included, as transformers' generate() returns them). */
  generateIds(promptIds: number[], o: { maxTokens: number; temperature: number; topK?: number; topP?: number; seed?: number; signal?: AbortSignal }): AsyncIterable<number>;
  dispose(): void;
}

/** Puts a loaded folder's weights on `rt` and serves requests with the model's tokenizer and chat template, in `context` tokens. */
export function openHfBackend(rt: GpuRuntime, model: LoadedHfModel, options: { context: number; name?: string; prefixSlots?: number }): HfBackend {
  const params = rt.storage('hf.params', model.params);
  const gen = new GpuGenerator(rt, model.config, params, { maxSequences: 1, maxLength: options.context, prefixSlots: options.prefixSlots ?? 4 });
  const name = options.name ?? `hf:${model.name}`;
  const stop = new Set(model.stopIds);
  const generateIds: HfBackend['generateIds'] = (promptIds, o) =>
    gen.generate(promptIds, { maxNewTokens: o.maxTokens, sampling: { temperature: o.temperature, topK: o.topK, topP: o.topP, seed: o.seed }, stop: [...stop], signal: o.signal });
  const backend: LwmBackend = {
    name,
    async *generate(request, o) {
      const room = options.context - o.maxTokens;
      if (room < 1) throw new HfPromptError(`max tokens ${o.maxTokens} leaves no room for the prompt in the ${options.context}-token context the model was loaded with`);
      const tok = needTokenizer(model.tokenizer, model.name);
      const { ids } = hfPrompt(tok, request, room, model.name);
      const out: number[] = [];
      let sent = '';
      for await (const id of generateIds(ids, o)) {
        if (stop.has(id)) break;
        out.push(id);
        o.onTokens?.(out.length);
        // Decode everything so far and send the new part, so multi-byte characters arrive whole.
        let full = tok.decode(out);
        if (full.endsWith('\uFFFD')) continue;
        const stopAt = o.stop?.map((s) => full.indexOf(s)).filter((i) => i >= 0).sort((a, b) => a - b)[0];
        if (stopAt !== undefined) full = full.slice(0, stopAt);
        if (full.length > sent.length) {
          yield full.slice(sent.length);
          sent = full;
        }
        if (stopAt !== undefined) return;
      }
      // A tail that never decoded whole (a byte-level model cut mid-character) is sent as it is.
      const rest = out.length ? tok.decode(out) : '';
      if (rest.length > sent.length) yield rest.slice(sent.length);
    },
  };
  return {
    backend,
    model,
    context: options.context,
    stats: gen.stats,
    generateIds,
    dispose() {
      gen.dispose();
      rt.release(params);
    },
  };
}
