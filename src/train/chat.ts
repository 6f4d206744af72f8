// Training a pretrained Hugging Face model in its own chat format: our templates wrapped in the
// model's chat (src/core/templates/chatWrap.ts, shared with the backends that serve the
// fine-tune), with its errors as the user's (a chat template that cannot carry our samples).
import {
  chatTokenizer as coreChatTokenizer,
  chatWrap as coreChatWrap,
  ChatWrapError,
  wrapTemplates as coreWrapTemplates,
  type ChatWrap,
} from '../core/templates/chatWrap.ts';
import type { PromptTemplate } from '../core/templates/index.ts';
import type { HfTokenizer } from '../core/tokenizer/hf.ts';
import type { Tokenizer } from '../core/tokenizer/index.ts';
import { UserFacingError } from './context.ts';

export { wrapTemplate, type ChatWrap } from '../core/templates/chatWrap.ts';

function userFacing<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof ChatWrapError) throw new UserFacingError(e.message);
    throw e;
  }
}

/** The chat template's text around the system, user and assistant contents. */
export function chatWrap(tok: HfTokenizer): ChatWrap {
  return userFacing(() => coreChatWrap(tok));
}

/** The model's tokenizer where the pipeline expects ours (see chatWrap.ts). */
export function chatTokenizer(tok: HfTokenizer, stopIds: readonly number[]): Tokenizer {
  return userFacing(() => coreChatTokenizer(tok, stopIds));
}

/** Every template of a set inside the model's chat format. */
export function wrapTemplates(set: Readonly<Record<string, PromptTemplate>>, w: ChatWrap): Record<string, PromptTemplate> {
  return userFacing(() => coreWrapTemplates(set, w));
}
