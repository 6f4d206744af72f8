// Hugging Face tokenizers and chat templates, for pretrained models' folders: `tokenizer.json`
// runs through @huggingface/tokenizers (the same normalizers, pre-tokenizers, BPE and
// post-processors as the Rust library), `tokenizer_config.json`'s chat template through
// @huggingface/jinja (a Jinja made for chat templates, with transformers' trim_blocks and
// lstrip_blocks). Both are pure JavaScript, so this runs in Node (the CLI) and in the browser.
//
// What "Hugging Face's ids" means here is what transformers' AutoTokenizer gives:
//   encode(text)        = tokenizer(text).input_ids: the post-processor's special tokens included
//                         (a BOS for Llama 3-style tokenizers, nothing for SmolLM2 / Qwen)
//   encode(text, {addSpecialTokens: false}) = tokenizer(text, add_special_tokens=False)
//   renderChat(messages, {addGenerationPrompt}) = apply_chat_template(..., tokenize=False)
//   encodeChat(...)     = apply_chat_template(..., tokenize=True): the rendered text encoded
//                         WITHOUT special tokens (the template writes its own BOS), except that
//                         the messages' contents are text (below)
//   encodeText(text)    = encode(text, {addSpecialTokens: false}) for text holding no added
//                         token's string; one that does is encoded as the characters it is
// Text is never a control token: a message's content, an observation or an action that holds
// `<|im_start|>` or `<think>` is data, so only the template's own text gives added tokens' ids
// (hfText.ts). For data without such strings every id is transformers'.
//   decode(ids)         = tokenizer.decode(ids); with skipSpecialTokens like skip_special_tokens.
// scripts/fixtures/hf_tokenizers.py records transformers' outputs; hf.test.ts holds us to them.
// The reference is transformers 5: tokenizer.json's post-processor alone decides the special
// tokens (tokenizer_config.json's add_bos_token / add_eos_token are not applied; 4.x's
// LlamaTokenizerFast rebuilt the post-processor from them), and clean_up_tokenization_spaces is
// ignored for BPE models.
import { Template } from '@huggingface/jinja';
import { Tokenizer as HfTokenizerImpl } from '@huggingface/tokenizers';
import { PartEncoder } from './hfText.ts';
import type { TextPart } from './tokenizer.ts';

export class HfTokenizerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HfTokenizerError';
  }
}

/** One chat message as chat templates take it (`role`, `content`; other fields pass through). */
export interface ChatMessage {
  role: string;
  content: string;
  [field: string]: unknown;
}

export interface ChatOptions {
  /** Ends the text with the opening of an assistant turn (transformers' add_generation_prompt). */
  addGenerationPrompt?: boolean;
  /** A named template of the config (`tool_use`, ...) or a template's text; default: the config's. */
  template?: string;
  /** Further variables for the template (e.g. `enable_thinking: false` for Qwen3's). */
  variables?: Record<string, unknown>;
}

/** The special tokens tokenizer_config.json names, as strings (null when unset). */
const SPECIAL_TOKEN_KEYS = ['bos_token', 'eos_token', 'unk_token', 'pad_token', 'sep_token', 'cls_token', 'mask_token'] as const;

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A special token in tokenizer_config.json: a string, or (older files) an AddedToken object. */
function tokenText(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (isObject(v) && typeof v.content === 'string') return v.content;
  return null;
}

/** tokenizer_config.json's chat_template: one string, or a list of {name, template} (the `default` one first). */
function chatTemplates(config: Json, source: string): Map<string, string> {
  const out = new Map<string, string>();
  const t = config.chat_template;
  if (t === undefined || t === null) return out;
  if (typeof t === 'string') out.set('default', t);
  else if (Array.isArray(t)) {
    for (const e of t) {
      if (!isObject(e) || typeof e.name !== 'string' || typeof e.template !== 'string') {
        throw new HfTokenizerError(`${source}: chat_template entries must be {"name": ..., "template": ...}`);
      }
      out.set(e.name, e.template);
    }
  } else throw new HfTokenizerError(`${source}: chat_template must be a string or a list of named templates`);
  return out;
}

export interface HfTokenizerSources {
  /** Names tokenizer.json in errors (default 'tokenizer.json'). */
  tokenizer?: string;
  /** Names tokenizer_config.json in errors (default 'tokenizer_config.json'). */
  config?: string;
}

/** A Hugging Face tokenizer with its config: ids, text and chat templates as transformers gives them. */
export class HfTokenizer {
  private readonly impl: HfTokenizerImpl;
  private readonly parts: PartEncoder;
  private readonly templates: Map<string, string>;
  private readonly compiled = new Map<string, Template>();
  private readonly specials: Record<string, string | null>;
  /** transformers (5.x) ignores clean_up_tokenization_spaces for BPE models: it would eat spaces before punctuation. */
  private readonly cleanUp: boolean;
  readonly bosTokenId: number | null;
  readonly eosTokenId: number | null;
  /** Vocabulary size with the added tokens (transformers' len(tokenizer)). */
  readonly vocabSize: number;

  private constructor(impl: HfTokenizerImpl, config: Json, templates: Map<string, string>) {
    this.impl = impl;
    this.parts = new PartEncoder(impl);
    this.templates = templates;
    this.specials = Object.fromEntries(SPECIAL_TOKEN_KEYS.map((k) => [k, tokenText(config[k])]));
    const idOf = (t: string | null) => (t === null ? null : (impl.token_to_id(t) ?? null));
    this.bosTokenId = idOf(this.specials.bos_token);
    this.eosTokenId = idOf(this.specials.eos_token);
    this.vocabSize = impl.get_vocab(true).size;
    const modelType = (impl as unknown as { tokenizer?: { model?: { type?: string } } }).tokenizer?.model?.type;
    this.cleanUp = config.clean_up_tokenization_spaces === true && modelType !== 'BPE';
  }

  /**
   * From the parsed tokenizer.json and tokenizer_config.json (`{}` when the folder has none).
   * `chatTemplate` overrides the config's (a folder's chat_template.jinja file).
   */
  static fromJSON(tokenizerJson: unknown, tokenizerConfig: unknown = {}, options: { chatTemplate?: string; sources?: HfTokenizerSources } = {}): HfTokenizer {
    const src = { tokenizer: options.sources?.tokenizer ?? 'tokenizer.json', config: options.sources?.config ?? 'tokenizer_config.json' };
    if (!isObject(tokenizerJson)) throw new HfTokenizerError(`${src.tokenizer}: must be a JSON object`);
    if (!isObject(tokenizerJson.model)) throw new HfTokenizerError(`${src.tokenizer}: has no "model" object (not a Hugging Face tokenizer.json?)`);
    if (!Array.isArray(tokenizerJson.added_tokens)) throw new HfTokenizerError(`${src.tokenizer}: has no "added_tokens" list`);
    if (!isObject(tokenizerConfig)) throw new HfTokenizerError(`${src.config}: must be a JSON object`);
    let impl: HfTokenizerImpl;
    try {
      impl = new HfTokenizerImpl(tokenizerJson, tokenizerConfig);
    } catch (e) {
      throw new HfTokenizerError(`${src.tokenizer}: cannot be read (${(e as Error).message})`);
    }
    const templates = chatTemplates(tokenizerConfig, src.config);
    if (options.chatTemplate !== undefined) templates.set('default', options.chatTemplate);
    return new HfTokenizer(impl, tokenizerConfig, templates);
  }

  /** Token ids as transformers' tokenizer(text) gives them (special tokens added by default). */
  encode(text: string, options: { addSpecialTokens?: boolean } = {}): number[] {
    return this.impl.encode(text, { add_special_tokens: options.addSpecialTokens ?? true }).ids;
  }

  /**
   * The ids of data text (an observation, an action, a label): as encode(text, {addSpecialTokens:
   * false}), except that an added token's string in it (`<|im_end|>`, `<think>`) is encoded as the
   * characters it is, never as that token.
   */
  encodeText(text: string): number[] {
    return this.parts.encode([{ text, data: true }]);
  }

  /**
   * The ids of template text and data joined (no special tokens added): as encode(joined,
   * {addSpecialTokens: false}), except that added tokens are found only in the template's parts.
   */
  encodeParts(parts: readonly TextPart[]): number[] {
    return this.parts.encode(parts);
  }

  /**
   * Text of token ids, as transformers' tokenizer.decode: ids without a token (a model's embedding
   * often has more rows than its tokenizer has tokens) are skipped, as there.
   */
  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    for (const id of ids) {
      if (!Number.isSafeInteger(id) || id < 0) throw new HfTokenizerError(`token id ${id} is not a token id (a non-negative integer)`);
    }
    const known = ids.filter((id) => this.impl.id_to_token(id) !== undefined);
    if (known.length === 0) return '';
    return this.impl.decode(known, { skip_special_tokens: options.skipSpecialTokens ?? false, clean_up_tokenization_spaces: this.cleanUp });
  }

  /** The id of a token's text (a special token such as `<|im_end|>`), or null. */
  tokenId(token: string): number | null {
    return this.impl.token_to_id(token) ?? null;
  }

  /** The names of the chat templates the config holds (`default` for a single one). */
  get chatTemplateNames(): string[] {
    return [...this.templates.keys()];
  }

  /** The chat rendered as text, as transformers' apply_chat_template(messages, tokenize=False). */
  renderChat(messages: readonly ChatMessage[], options: ChatOptions = {}): string {
    const name = options.template ?? 'default';
    // A name the config knows, else (when it looks like Jinja) the template's own text.
    const text = this.templates.get(name) ?? (/\{[{%]/.test(name) ? name : undefined);
    if (text === undefined) {
      throw new HfTokenizerError(
        this.templates.size
          ? `no chat template named '${name}' (the config has: ${[...this.templates.keys()].join(', ')})`
          : 'this tokenizer has no chat template (tokenizer_config.json has no chat_template)',
      );
    }
    let template = this.compiled.get(text);
    if (!template) {
      try {
        template = new Template(text);
      } catch (e) {
        throw new HfTokenizerError(`chat template '${name}' does not parse: ${(e as Error).message}`);
      }
      this.compiled.set(text, template);
    }
    try {
      return template.render({
        ...this.specials,
        ...options.variables,
        messages: messages.map((m) => ({ ...m })),
        add_generation_prompt: options.addGenerationPrompt ?? false,
      });
    } catch (e) {
      throw new HfTokenizerError(`chat template '${name}': ${(e as Error).message}`);
    }
  }

  /**
   * The chat's token ids, as apply_chat_template(messages, tokenize=True): the text encoded without
   * added special tokens, the messages' contents as text (an added token's string in a content is
   * not that token).
   */
  encodeChat(messages: readonly ChatMessage[], options: ChatOptions = {}): number[] {
    return this.encodeParts(this.chatParts(messages, options));
  }

  /**
   * The rendered chat as the template's text and the messages' contents. Where each content went is
   * found by rendering markers in its place (as given, then trimmed, for templates that trim it);
   * a template that rewrites a content (Qwen3's reasoning) leaves it to be found as it is in the
   * text, and one found nowhere counts as the template's.
   */
  chatParts(messages: readonly ChatMessage[], options: ChatOptions = {}): TextPart[] {
    const text = this.renderChat(messages, options);
    if (!messages.some((m) => typeof m.content === 'string' && m.content)) return [{ text }];
    const marked = messages.map((m, i) => (typeof m.content === 'string' && m.content ? { ...m, content: String.fromCodePoint(CONTENT_MARK + i) } : m));
    let layout: string | null = null;
    try {
      layout = this.renderChat(marked, options);
    } catch {
      // A template that inspects its contents; found in the text below.
    }
    for (const trim of [false, true]) {
      const parts = layout === null ? null : markedParts(layout, messages, trim);
      if (parts && parts.map((p) => p.text).join('') === text) return parts;
    }
    return foundParts(text, messages);
  }
}

/** Marks a message's content while the chat's layout is found (plane 15's private use area). */
const CONTENT_MARK = 0xf0000;

/** A marked render as template text and contents (trimmed, for templates that trim them); null when a mark is not a message's. */
function markedParts(layout: string, messages: readonly ChatMessage[], trim: boolean): TextPart[] | null {
  const parts: TextPart[] = [];
  let literal = '';
  for (const ch of layout) {
    const i = ch.codePointAt(0)! - CONTENT_MARK;
    if (i < 0 || i >= 0x10000) {
      literal += ch;
      continue;
    }
    const content = messages[i]?.content;
    if (typeof content !== 'string') return null;
    if (literal) parts.push({ text: literal });
    literal = '';
    parts.push({ text: trim ? content.trim() : content, data: true });
  }
  if (literal) parts.push({ text: literal });
  return parts;
}

/** The contents found in the text in order (as given, else trimmed); what lies between is the template's. */
function foundParts(text: string, messages: readonly ChatMessage[]): TextPart[] {
  const parts: TextPart[] = [];
  let pos = 0;
  for (const m of messages) {
    if (typeof m.content !== 'string') continue;
    for (const c of [m.content, m.content.trim()]) {
      const at = c ? text.indexOf(c, pos) : -1;
      if (at < 0) continue;
      parts.push({ text: text.slice(pos, at) }, { text: c, data: true });
      pos = at + c.length;
      break;
    }
  }
  parts.push({ text: text.slice(pos) });
  return parts;
}
