// Our prompt template inside a pretrained model's chat format: how a fine-tune of a Hugging Face
// model (`lwm train --from HF_FOLDER`) sees every sample, and so how it is served afterwards (the
// checkpoint, Hugging Face and ONNX backends render a turn with the same wrapped template and the
// same tokenizer calls, so the prompt ids are those the SFT pipeline trained on). The system text
// is the system message, the history and the current action the user message, the observation (in
// its tag) the assistant's reply, closed by the template's end of turn. The wrapper strings come
// from the folder's own chat template, rendered around markers:
//
//   render([system: ⟦S⟧, user: ⟦U⟧], add_generation_prompt)  →  sysOpen ⟦S⟧ sysToUser ⟦U⟧ userToAssistant
//   render([..., assistant: ⟦A⟧])                               →  … ⟦A⟧ assistantClose
//
// and the model's tokenizer stands in for ours (ids as transformers gives them, no special tokens
// added: the template writes its own BOS), with the end of turn as the stop token.
import type { HfTokenizer } from '../tokenizer/hf.ts';
import type { SpecialTokenName, TextPart, Tokenizer } from '../tokenizer/tokenizer.ts';
import type { PromptTemplate } from './builtin.ts';

/** A chat template that cannot carry our samples, or a model without what serving needs. */
export class ChatWrapError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChatWrapError';
  }
}

const MARK = { system: '\u2063SYS\u2063', user: '\u2063USR\u2063', assistant: '\u2063AST\u2063' };

export interface ChatWrap {
  sysOpen: string;
  sysToUser: string;
  userToAssistant: string;
  assistantClose: string;
}

/** The chat template's text around the system, user and assistant contents. */
export function chatWrap(tok: HfTokenizer): ChatWrap {
  if (!tok.chatTemplateNames.length)
    throw new ChatWrapError(
      "the model folder has no chat template (tokenizer_config.json chat_template or chat_template.jinja); SFT renders samples in the model's chat format",
    );
  const base = [
    { role: 'system', content: MARK.system },
    { role: 'user', content: MARK.user },
  ];
  const prompt = tok.renderChat(base, { addGenerationPrompt: true });
  const full = tok.renderChat([...base, { role: 'assistant', content: MARK.assistant }]);
  const s = prompt.indexOf(MARK.system);
  const u = prompt.indexOf(MARK.user);
  const a = full.indexOf(MARK.assistant);
  if (s < 0 || u < s) throw new ChatWrapError('the chat template drops the system or the user message; it cannot carry our samples');
  if (a < 0) throw new ChatWrapError('the chat template drops the assistant message; it cannot carry our samples');
  return {
    sysOpen: prompt.slice(0, s),
    sysToUser: prompt.slice(s + MARK.system.length, u),
    userToAssistant: prompt.slice(u + MARK.user.length),
    assistantClose: full.slice(a + MARK.assistant.length),
  };
}

const HISTORY_LOOP = /\{%-?\s*for\s+\w+\s+in\s+history\b/u;

/** A literal of the chat format inside a Jinja template text (refused when it holds Jinja delimiters). */
function literal(s: string): string {
  if (/\{[{%#]/u.test(s)) throw new ChatWrapError(`the chat template's text ${JSON.stringify(s)} holds Jinja delimiters; it cannot wrap our template`);
  return s;
}

/** A template text inside the model's chat format: the system message's start before it, its end (and the user message's start) before the history loop. */
function wrapText(text: string, w: ChatWrap): string {
  const m = HISTORY_LOOP.exec(text);
  if (!m) throw new ChatWrapError('the prompt template has no {% for turn in history %} loop to put the user message around');
  return literal(w.sysOpen) + text.slice(0, m.index) + literal(w.sysToUser) + text.slice(m.index);
}

/** Our template inside the model's chat format (the system text, history and tags unchanged). */
export function wrapTemplate(t: PromptTemplate, w: ChatWrap): PromptTemplate {
  const out: PromptTemplate = {
    ...t,
    text: wrapText(t.text, w),
    targetOpen: w.userToAssistant + t.targetOpen,
    targetClose: t.targetClose + w.assistantClose.replace(/\s+$/, ''),
  };
  if (t.domains) out.domains = Object.fromEntries(Object.entries(t.domains).map(([d, text]) => [d, wrapText(text, w)]));
  return out;
}

export function wrapTemplates(set: Readonly<Record<string, PromptTemplate>>, w: ChatWrap): Record<string, PromptTemplate> {
  return Object.fromEntries(Object.entries(set).map(([k, t]) => [k, wrapTemplate(t, w)]));
}

/**
 * The chat template's end of an assistant message (trailing whitespace dropped) and its id when
 * it is one token; null id when it is more (or nothing). For Llama 3 and Qwen this is the end of
 * turn (`<|eot_id|>`, `<|im_end|>`), which the folder's first end-of-sequence id need not be.
 */
export function chatTurnEnd(tok: HfTokenizer, w: ChatWrap): { text: string; id: number | null } {
  const text = w.assistantClose.replace(/\s+$/u, '');
  const ids = text ? tok.encodeParts([{ text }]) : [];
  return { text, id: ids.length === 1 ? ids[0] : null };
}

/**
 * The model's tokenizer where the pipeline expects ours: encode without added special tokens (the
 * chat text carries them; data, with allowSpecial false or as encodeParts' data parts, never
 * becomes an added token), decode as transformers does, and the special ids the pipeline asks for
 * (pad, bos, eos, the closing tag's stop) mapped onto the model's own: the chat template's end of
 * turn (else the first end-of-sequence id) for the stops, the pad token (else that) for padding.
 */
export function chatTokenizer(tok: HfTokenizer, stopIds: readonly number[]): Tokenizer {
  // What a reply trained in the chat format ends with: the template's end of turn, when one token.
  let end: number | null = null;
  if (tok.chatTemplateNames.length) {
    try {
      end = chatTurnEnd(tok, chatWrap(tok)).id;
    } catch (e) {
      if (!(e instanceof ChatWrapError)) throw e;
    }
  }
  const stop = end ?? stopIds[0] ?? tok.eosTokenId;
  if (stop === null || stop === undefined)
    throw new ChatWrapError('the model has no end-of-sequence token (generation_config.json or tokenizer_config.json) to stop generation at');
  const pad = tok.tokenId('<|finetune_right_pad_id|>') ?? tok.tokenId('<|endoftext|>') ?? tok.tokenId('<pad>') ?? stop;
  const special = new Proxy({} as Record<SpecialTokenName, number>, {
    get: (_t, name) => (name === 'pad' ? pad : name === 'bos' ? (tok.bosTokenId ?? stop) : stop),
  });
  const adapter = {
    vocabSize: tok.vocabSize,
    special,
    // A reply ends at the model's end of turn; generation also stops at any end-of-sequence id.
    observationStops: [stop, ...stopIds.filter((id) => id !== stop)],
    encode: (text: string, options: { allowSpecial?: boolean } = {}) =>
      options.allowSpecial === false ? tok.encodeText(text) : tok.encode(text, { addSpecialTokens: false }),
    encodeParts: (parts: readonly TextPart[]) => tok.encodeParts(parts),
    decode: (ids: readonly number[]) => tok.decode(ids, { skipSpecialTokens: true }),
    toJSON: () => {
      throw new Error('a Hugging Face tokenizer is stored as its files, not as our BPE');
    },
  };
  // The pipeline reads only these members (encode, encodeParts, decode, the special ids, the observation stops and the vocabulary size).
  return adapter as unknown as Tokenizer;
}
