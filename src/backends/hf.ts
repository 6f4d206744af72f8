// A pretrained Hugging Face model (a folder loaded by src/model/hf/load.ts) as an LwmBackend on
// the GPU. Unlike a checkpoint of ours, it was never trained on our turn layout: a turn request is
// rendered with the model's own chat template, in the AgentWorldBench message layout an endpoint
// is sent (src/core/bench/awbLayout.ts: the system prompt as the system message, earlier turns as
// alternating user / assistant messages, the current action as the last user message), with the
// generation prompt added, and encoded with the model's own tokenizer. Generation stops at the
// model's end-of-sequence ids (generation_config.json). The KV rows of recent prompts are kept, so
// a later turn of the same session prefills only its new messages.
//
// An export of one of our fine-tunes of such a model (`lwm export … --to hf`, the Train view's
// downloads) holds lwm_template.json beside the chat template: it is served in the layout it was
// trained on instead (./trainedChat.ts: our template wrapped in the chat format, the same ids as
// the SFT pipeline's), and its text stops at the observation's closing tag.
import { isChatRequest, isTurnRequest, type GenerateRequest, type LwmBackend } from '../core/backend.ts';
import { awbMessages } from '../core/bench/awbLayout.ts';
import type { ContextPart, ContextReport } from '../core/playground/context.ts';
import type { ChatMessage, HfTokenizer } from '../core/tokenizer/hf.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { GpuGenerator, type GenerateStats } from '../model/generate.ts';
import { paramLayout } from '../core/model/params.ts';
import { ParamBuffers, planFor } from '../model/shards.ts';
import type { WeightStorage } from '../model/halfWeights.ts';
import type { LoadedHfModel } from '../model/hf/load.ts';
import { decodeStream } from './stream.ts';
import { folderTrainedChat, stopAtClose, type TrainedChat } from './trainedChat.ts';

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

/** What a prompt became: its ids, the messages kept, and what was cut to fit. */
export interface HfPrompt {
  ids: number[];
  messages: ChatMessage[];
  /** Earlier user/assistant pairs left out (oldest first) so the prompt fits the room. */
  droppedTurns: number;
  /** The system message was cut at its end (after every earlier turn was left out) to fit. */
  systemCut: boolean;
}

function needTokenizer(tok: HfTokenizer | null, name: string): HfTokenizer {
  if (!tok) throw new HfPromptError(`${name} has no tokenizer (tokenizer.json), so text cannot be turned into token ids`);
  return tok;
}

/** Marks where the system message was cut. */
const CUT = ' …';

/** The longest start of the system message (in characters) with which the rest fits the room; null when none does. */
function cutSystem(t: HfTokenizer, system: ChatMessage, rest: ChatMessage[], room: number): { ids: number[]; messages: ChatMessage[] } | null {
  const render = (n: number) => {
    const messages = [{ ...system, content: system.content.slice(0, n) + CUT }, ...rest];
    return { ids: t.encodeChat(messages, { addGenerationPrompt: true }), messages };
  };
  let best = render(0);
  if (best.ids.length > room) return null;
  let lo = 0;
  let hi = system.content.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const r = render(mid);
    if (r.ids.length <= room) [lo, best] = [mid, r];
    else hi = mid - 1;
  }
  return best;
}

/**
 * The prompt ids of a request within `room` tokens. Chat and turn requests go through the chat
 * template (with the generation prompt); when they do not fit, the oldest earlier turns are left
 * out a pair at a time, then the system message is cut at its end (the current action always
 * stays whole). A raw prompt is encoded as transformers' tokenizer(text) does and keeps its end.
 */
export function hfPrompt(tok: HfTokenizer | null, request: GenerateRequest, room: number, name = 'the model'): HfPrompt {
  const t = needTokenizer(tok, name);
  if (!isTurnRequest(request) && !isChatRequest(request)) {
    const ids = t.encode(request.prompt);
    return { ids: ids.length > room ? ids.slice(ids.length - room) : ids, messages: [], droppedTurns: 0, systemCut: false };
  }
  if (!t.chatTemplateNames.length) {
    throw new HfPromptError(
      `${name} has no chat template (tokenizer_config.json's chat_template or chat_template.jinja), so a turn cannot be laid out as chat messages; use an instruct / chat model folder`,
    );
  }
  const all = requestMessages(request);
  const head = all[0]?.role === 'system' ? 1 : 0;
  const pairs = Math.floor((all.length - head - 1) / 2);
  for (let dropped = 0; dropped <= pairs; dropped++) {
    const messages = [...all.slice(0, head), ...all.slice(head + 2 * dropped)];
    const ids = t.encodeChat(messages, { addGenerationPrompt: true });
    if (ids.length <= room) return { ids, messages, droppedTurns: dropped, systemCut: false };
  }
  const cut = head ? cutSystem(t, all[0], all.slice(-1), room) : null;
  if (cut) return { ...cut, droppedTurns: pairs, systemCut: true };
  const alone = t.encodeChat(all.slice(-1), { addGenerationPrompt: true }).length;
  throw new HfPromptError(
    `the current action alone takes ${alone} tokens in the chat template, more than the ${room} tokens of room (context minus max tokens); shorten the action, lower max tokens, or load the model with a longer context`,
  );
}

/** Each message's tokens: what rendering it adds to the messages before it (chat templates render message by message); the last one counts the generation prompt. */
function messageTokens(tok: HfTokenizer, messages: ChatMessage[]): number[] {
  const out: number[] = [];
  let before = 0;
  for (let i = 0; i < messages.length; i++) {
    const upTo = tok.encodeChat(messages.slice(0, i + 1), { addGenerationPrompt: i === messages.length - 1 }).length;
    out.push(upTo - before);
    before = upTo;
  }
  return out;
}

/** The context bar of a chat prompt, exact: each message's tokens in full and as sent, and what was left out or shortened to fit. */
export function hfContextReport(tok: HfTokenizer, request: Exclude<GenerateRequest, { prompt: string }>, context: number, maxTokens: number): ContextReport {
  const room = context - maxTokens;
  const all = requestMessages(request);
  const fitted = hfPrompt(tok, request, room);
  const full = messageTokens(tok, all);
  const sent = messageTokens(tok, fitted.messages);
  const head = all[0]?.role === 'system' ? 1 : 0;
  // Where each message of `all` sits in the prompt as sent (-1: left out).
  const at = all.map((_, i) => (i < head ? 0 : i - head < 2 * fitted.droppedTurns ? -1 : i - 2 * fitted.droppedTurns));
  const totals = { system: 0, history: 0, action: 0 };
  const parts: ContextPart[] = all.map((m, i) => {
    const group: ContextPart['group'] = i < head ? 'system' : i === all.length - 1 ? 'action' : 'history';
    const kept = at[i] < 0 ? 0 : sent[at[i]];
    totals[group] += kept;
    const label =
      group === 'system'
        ? 'system prompt'
        : group === 'action'
          ? 'action'
          : `turn ${Math.floor((i - head) / 2) + 1} ${m.role === 'user' ? 'action' : 'observation'}`;
    const status: ContextPart['status'] = at[i] < 0 ? 'left out' : group === 'system' && fitted.systemCut ? 'shortened' : 'kept';
    return { label, group, full: full[i], kept, status };
  });
  const whole = tok.encodeChat(all, { addGenerationPrompt: true }).length;
  return {
    exact: true,
    context,
    maxTokens,
    room,
    prompt: fitted.ids.length,
    full: whole,
    ...totals,
    truncated: fitted.droppedTurns > 0 || fitted.systemCut,
    parts,
    text: tok.decode(fitted.ids),
  };
}

/**
 * The ids a folder's model is given for a request within `room` tokens, and the text its answer
 * stops at: a fine-tune of ours (a chat template and lwm_template.json) in the layout it trained
 * on, fitted by the training policy; any other model as hfPrompt lays it out.
 */
export function hfServedPrompt(
  model: Pick<LoadedHfModel, 'name' | 'tokenizer' | 'hasChatTemplate' | 'stopIds' | 'template'>,
  request: GenerateRequest,
  room: number,
  trained: TrainedChat | null = folderTrainedChat(model),
): { ids: number[]; close?: string } {
  if (trained && (isTurnRequest(request) || isChatRequest(request))) {
    const p = trained.prompt(request, room);
    return { ids: p.fitted.ids, close: p.close };
  }
  return { ids: hfPrompt(model.tokenizer, request, room, model.name).ids };
}

export interface HfBackend {
  backend: LwmBackend;
  model: LoadedHfModel;
  /** A fine-tune of ours (lwm_template.json beside the chat template): the layout it is served in; null for any other model. */
  trained: TrainedChat | null;
  /** Tokens a prompt and its generation may take together (the KV cache's length). */
  context: number;
  /** Bytes the weights take on the GPU (f32, or f16 matrices). */
  weightBytes: number;
  stats: Readonly<GenerateStats>;
  /** Raw token ids in, generated ids out (stop ids included, as transformers' generate() returns them). */
  generateIds(
    promptIds: number[],
    o: { maxTokens: number; temperature: number; topK?: number; topP?: number; seed?: number; signal?: AbortSignal },
  ): AsyncIterable<number>;
  dispose(): void;
}

/** Puts a loaded folder's weights on `rt` (f32, or f16 with options.weights) and serves requests with the model's tokenizer and chat template, in `context` tokens. */
export function openHfBackend(
  rt: GpuRuntime,
  model: LoadedHfModel,
  options: { context: number; name?: string; prefixSlots?: number; weights?: WeightStorage },
): HfBackend {
  const params = ParamBuffers.upload(rt, planFor(rt, paramLayout(model.config), options.weights), model.params, 'hf.params');
  const gen = new GpuGenerator(rt, model.config, params, { maxSequences: 1, maxLength: options.context, prefixSlots: options.prefixSlots ?? 4 });
  const name = options.name ?? `hf:${model.name}`;
  const stop = new Set(model.stopIds);
  let trained: TrainedChat | null;
  try {
    trained = folderTrainedChat(model);
  } catch (e) {
    gen.dispose();
    params.release();
    throw new HfPromptError(`${model.name}: ${(e as Error).message}`);
  }
  const generateIds: HfBackend['generateIds'] = (promptIds, o) =>
    gen.generate(promptIds, {
      maxNewTokens: o.maxTokens,
      sampling: { temperature: o.temperature, topK: o.topK, topP: o.topP, seed: o.seed },
      stop: [...stop],
      signal: o.signal,
    });
  const backend: LwmBackend = {
    name,
    async *generate(request, o) {
      const room = options.context - o.maxTokens;
      if (room < 1)
        throw new HfPromptError(`max tokens ${o.maxTokens} leaves no room for the prompt in the ${options.context}-token context the model was loaded with`);
      const tok = needTokenizer(model.tokenizer, model.name);
      const { ids, close } = hfServedPrompt(model, request, room, trained);
      yield* decodeStream(generateIds(ids, o), (x) => tok.decode(x), stop, close === undefined ? o : stopAtClose(o, close));
    },
  };
  return {
    backend,
    model,
    trained,
    context: options.context,
    weightBytes: params.bytes,
    stats: gen.stats,
    generateIds,
    dispose() {
      gen.dispose();
      params.release();
    },
  };
}
