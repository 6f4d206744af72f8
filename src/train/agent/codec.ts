// The agent policy's tokens (docs/method.md §13): how its prompts and actions become ids and back.
// A policy of ours writes the layout in our tokenizer's markers and ends an action with its
// end-of-turn token. A Hugging Face model writes it in its own chat format (the folder's chat
// template: the task section the system message, the history the user message, the action the
// assistant's reply) and ends an action with the template's end of turn, which must be one
// token: that token, not the folder's end-of-sequence id, is what says the action is complete.
import { chatTokenizer, chatTurnEnd, chatWrap, ChatWrapError } from '../../core/templates/chatWrap.ts';
import type { HfTokenizer } from '../../core/tokenizer/hf.ts';
import type { TextPart, Tokenizer } from '../../core/tokenizer/index.ts';
import { TOKENS_FORMAT, type PolicyFormat } from '../../envs/tasks/index.ts';

export interface PolicyCodec {
  readonly vocabSize: number;
  /** The id padding rows. */
  readonly pad: number;
  /** The id that ends an action (an action that ends with it is well formed). */
  readonly endAction: number;
  /** Ids that stop an action's generation: endAction first. */
  readonly stops: readonly number[];
  /** The layout's markers: our tokens, or the chat format's text. */
  readonly format: PolicyFormat;
  encodeParts(parts: readonly TextPart[]): number[];
  decode(ids: readonly number[]): string;
}

/** Our tokenizer's codec: its markers, its end-of-turn token, its observation stops. */
export function ourCodec(tok: Tokenizer): PolicyCodec {
  return {
    vocabSize: tok.vocabSize,
    pad: tok.special.pad,
    endAction: tok.special.endTurn,
    stops: [...tok.observationStops],
    format: TOKENS_FORMAT,
    encodeParts: (parts) => tok.encodeParts(parts),
    decode: (ids) => tok.decode(ids),
  };
}

/**
 * A Hugging Face tokenizer's codec in its chat format; ChatWrapError for a folder without a chat
 * template, or one whose end of turn is not a single token. Generation also stops at the folder's
 * end-of-sequence ids (`stopIds`); an action cut there is not well formed.
 */
export function chatCodec(tok: HfTokenizer, stopIds: readonly number[]): PolicyCodec {
  const w = chatWrap(tok);
  const { text: close, id: endAction } = chatTurnEnd(tok, w);
  if (endAction === null)
    throw new ChatWrapError(
      `the chat template ends an assistant message with ${JSON.stringify(close)}, ${close ? tok.encodeParts([{ text: close }]).length : 0} tokens; an agent policy needs one token to end its action`,
    );
  // The pipeline's chat tokenizer already leads its stops with that end of turn and picks the pad.
  const t = chatTokenizer(tok, stopIds);
  return {
    vocabSize: tok.vocabSize,
    pad: t.special.pad,
    endAction,
    stops: [...t.observationStops],
    format: { kind: 'chat', sysOpen: w.sysOpen, sysToUser: w.sysToUser, userToAssistant: w.userToAssistant, close },
    encodeParts: (parts) => tok.encodeParts(parts),
    decode: (ids) => tok.decode(ids, { skipSpecialTokens: true }),
  };
}
