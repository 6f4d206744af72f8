// A fine-tune of a pretrained Hugging Face model served in the layout it was trained on. SFT and
// GSPO rendered every sample with our template wrapped in the model's chat format
// (src/core/templates/chatWrap.ts: the system text as the system message, history and action as
// the user message, `<predicted_observation>…</predicted_observation>` + end of turn as the
// assistant's reply) and encoded it with the model's tokenizer adding no special tokens. Its
// checkpoint (metadata hf_base + the run's spec) and its exports (lwm_template.json beside the chat
// template) keep the template as written; every backend that serves it — the checkpoint backend,
// the Hugging Face folder backend, the ONNX backend — lays a turn out here: the same wrapped
// template, fitted by the same policy (src/core/templates/fit.ts's fitPrompt) with the same
// tokenizer calls, up to and including the opening tag, so the prompt ids are those the SFT
// pipeline trained on for that sample's context. A chat request is laid out as the local backend
// lays one out (its messages as turns, CHAT_LAYOUT), wrapped the same way.
//
// Generation stops at the model's stop ids (the end of turn); the text stops at the observation's
// closing tag (a few tokens in the model's tokenizer, not one special id as in ours), which is not
// sent: a backend gets the text the local backend returns for our own models, the observation alone.
import { isChatRequest, type GenerateOptions, type GenerateRequest, type TurnRequest } from '../core/backend.ts';
import { contextReport, type ContextReport } from '../core/playground/context.ts';
import { chatTokenizer, chatWrap, wrapTemplate, type ChatWrap } from '../core/templates/chatWrap.ts';
import { fitPrompt, type FittedPrompt } from '../core/templates/fit.ts';
import type { PromptTemplate } from '../core/templates/index.ts';
import type { HfTokenizer } from '../core/tokenizer/hf.ts';
import type { TextPart, Tokenizer } from '../core/tokenizer/index.ts';
import { chatAsTurn } from './local.ts';

export interface TrainedChat {
  /** The template a turn request without its own is rendered with (as written: the run's trained one). */
  template: PromptTemplate;
  /** The model's tokenizer as training called it (no special tokens added; decode skips them), where our Tokenizer is expected. */
  tokenizer: Tokenizer;
  /** The chat template's text around the system, user and assistant contents. */
  chat: ChatWrap;
  /** A template of ours inside the model's chat format, as training wrapped it. */
  wrap(t: PromptTemplate): PromptTemplate;
  /** A turn or chat request's prompt within `room` tokens; `close` is the text the observation ends at. */
  prompt(request: Exclude<GenerateRequest, { prompt: string }>, room: number): { fitted: FittedPrompt; template: PromptTemplate; close: string };
  /** The context bar of a turn, exact: the wrapped template fitted as the prompt is (the text shows the chat's special tokens). */
  contextReport(request: TurnRequest, context: number, maxTokens: number): ContextReport;
}

/** The layout of a fine-tune trained with `template` on a model with this tokenizer and stop ids (ChatWrapError when its chat template cannot carry our samples). */
export function trainedChat(tok: HfTokenizer, stopIds: readonly number[], template: PromptTemplate): TrainedChat {
  const chat = chatWrap(tok);
  const tokenizer = chatTokenizer(tok, stopIds);
  const wrapped = new WeakMap<PromptTemplate, PromptTemplate>();
  const wrap = (t: PromptTemplate): PromptTemplate => {
    let w = wrapped.get(t);
    if (!w) wrapped.set(t, (w = wrapTemplate(t, chat)));
    return w;
  };
  // The pipeline's encoding of every piece (the chat tokenizer's encodeParts: the template's text
  // without added special tokens, the sample's values as text).
  const encode = (parts: readonly TextPart[]) => tok.encodeParts(parts);
  return {
    template,
    tokenizer,
    chat,
    wrap,
    prompt(request, room) {
      const turn = isChatRequest(request) ? chatAsTurn(request.messages, request.system) : request;
      const ours = turn.template ?? template;
      // The tag itself (its leading newline, if any, stays in the text, as our own models' does).
      return { fitted: fitPrompt(encode, wrap(ours), turn.sample, room), template: ours, close: ours.targetClose.trim() };
    },
    contextReport(request, context, maxTokens) {
      const shown = { ...(tokenizer as object), decode: (ids: readonly number[]) => tok.decode(ids) } as Tokenizer;
      return contextReport(shown, wrap(request.template ?? template), request, context, maxTokens);
    },
  };
}

/** A folder's trained layout: when it has both a chat template and lwm_template.json; null otherwise (served as before). */
export function folderTrainedChat(m: {
  tokenizer: HfTokenizer | null;
  hasChatTemplate: boolean;
  stopIds: readonly number[];
  template?: PromptTemplate;
}): TrainedChat | null {
  return m.template && m.tokenizer && m.hasChatTemplate ? trainedChat(m.tokenizer, m.stopIds, m.template) : null;
}

/** Generation options that also stop the text at the observation's closing tag. */
export function stopAtClose(o: GenerateOptions, close: string): GenerateOptions {
  return { ...o, stop: [...(o.stop ?? []), close] };
}
