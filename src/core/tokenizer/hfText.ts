// A Hugging Face tokenizer's encoding where added tokens come only from a template's own text:
// transformers' tokenizer(text, add_special_tokens=...) cuts the text at every added token's
// string (`<|im_start|>`, `<think>`, ...) and encodes the pieces between; here a cut is made only
// where the string lies in a template part, and a data part (an observation, an action, a message's
// content) is encoded as the characters it is. The steps are @huggingface/tokenizers' own
// (Tokenizer.encode_text: the cuts, an added token's lstrip / rstrip, the normalizer, the cuts at
// normalized added tokens, the pre-tokenizer with each section's index, the model, the
// post-processor), run on its parts, so for text whose data holds no added token's string the ids
// are exactly transformers'.
import type { Tokenizer as HfTokenizerImpl } from '@huggingface/tokenizers';
import { literalRuns, type TextPart } from './tokenizer.ts';

interface AddedTokenLike {
  content: string;
  id: number;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
}

/** The members of @huggingface/tokenizers' Tokenizer (0.2.0) the steps read. */
interface Internals {
  normalizer: ((s: string) => string) | null;
  pre_tokenizer: ((s: string, options: { section_index: number }) => string[]) | null;
  model: ((tokens: string[]) => string[]) & { tokens_to_ids: Map<string, number>; unk_token_id?: number };
  post_processor: ((tokens: string[], pair: null, addSpecialTokens: boolean) => { tokens: string[] }) | null;
  added_tokens: AddedTokenLike[];
  added_tokens_map: Map<string, AddedTokenLike>;
  remove_space?: boolean;
  do_lowercase_and_remove_accent?: boolean;
}

interface Trie {
  [ch: string]: Trie | AddedTokenLike | undefined;
}
const END = '\u0000end';

function trieOf(tokens: { key: string; token: AddedTokenLike }[]): Trie {
  const root: Trie = Object.create(null);
  for (const { key, token } of tokens) {
    let node = root;
    // UTF-16 units, as the text is walked.
    for (let i = 0; i < key.length; i++) node = (node[key[i]] as Trie | undefined) ?? (node[key[i]] = Object.create(null) as Trie);
    node[END] = token;
  }
  return root;
}

/** The longest added token starting at `i` and ending by `end` (as DictionarySplitter matches, within the bound). */
function longest(trie: Trie, text: string, i: number, end: number): { token: AddedTokenLike; length: number } | null {
  let node: Trie | undefined = trie;
  let best: { token: AddedTokenLike; length: number } | null = null;
  for (let j = i; j < end && (node = node[text[j]] as Trie | undefined); j++) {
    const t = node[END] as AddedTokenLike | undefined;
    if (t) best = { token: t, length: j + 1 - i };
  }
  return best;
}

interface Section {
  text: string;
  token: AddedTokenLike | null;
  /** Holds data (some of a data part). */
  data: boolean;
}

/** lstrip / rstrip: an added token eats the whitespace of the text beside it. */
function stripAround(sections: Section[]) {
  sections.forEach((s, i) => {
    if (!s.token) return;
    if (s.token.lstrip && i > 0 && !sections[i - 1].token) sections[i - 1].text = sections[i - 1].text.trimEnd();
    if (s.token.rstrip && i < sections.length - 1 && !sections[i + 1].token) sections[i + 1].text = sections[i + 1].text.trimStart();
  });
}

/** Encodes text parts with one tokenizer: the template's added tokens, the data as text. */
export class PartEncoder {
  private readonly t: Internals;
  private readonly plain: Trie;
  private readonly normalized: Trie;
  private readonly normalizedTokens: { key: string; token: AddedTokenLike }[];

  constructor(impl: HfTokenizerImpl) {
    const t = impl as unknown as Internals;
    if (typeof t.model !== 'function' || !Array.isArray(t.added_tokens) || !(t.added_tokens_map instanceof Map) || !(t.model.tokens_to_ids instanceof Map)) {
      throw new Error('@huggingface/tokenizers: its Tokenizer no longer has the members text encoding reads (model, added_tokens, added_tokens_map)');
    }
    this.t = t;
    const byNormalizer = (a: AddedTokenLike) => a.normalized && t.normalizer !== null;
    this.plain = trieOf(t.added_tokens.filter((a) => !byNormalizer(a)).map((token) => ({ key: token.content, token })));
    this.normalizedTokens = t.added_tokens.filter(byNormalizer).map((token) => ({ key: t.normalizer!(token.content), token }));
    this.normalized = trieOf(this.normalizedTokens);
  }

  /** Token ids of the parts joined: as tokenizer(joined) gives them, added tokens found only in the template parts. */
  encode(parts: readonly TextPart[], addSpecialTokens = false): number[] {
    const t = this.t;
    let tokens = this.tokens(parts);
    if (t.post_processor) tokens = t.post_processor(tokens, null, addSpecialTokens).tokens;
    return tokens.map((x) => t.added_tokens_map.get(x)?.id ?? t.model.tokens_to_ids.get(x) ?? t.model.unk_token_id ?? 0);
  }

  private tokens(parts: readonly TextPart[]): string[] {
    const runs = literalRuns(parts);
    const data = runs.filter((r) => r.data).map((r) => r.text);
    const sections = this.cut(runs);
    stripAround(sections);
    return sections.flatMap((s, index) => this.sectionTokens(s, index, data));
  }

  /** The text cut at the added tokens that lie in template runs. */
  private cut(runs: { text: string; data: boolean }[]): Section[] {
    const sections: Section[] = [];
    let text = '';
    let hasData = false;
    const flush = () => {
      if (text) sections.push({ text, token: null, data: hasData });
      text = '';
      hasData = false;
    };
    for (const run of runs) {
      if (run.data) {
        text += run.text;
        hasData = true;
        continue;
      }
      let last = 0;
      for (let i = 0; i < run.text.length; ) {
        const m = longest(this.plain, run.text, i, run.text.length);
        if (!m) {
          i++;
          continue;
        }
        text += run.text.slice(last, i);
        flush();
        sections.push({ text: m.token.content, token: m.token, data: false });
        i += m.length;
        last = i;
      }
      text += run.text.slice(last);
    }
    flush();
    return sections;
  }

  private sectionTokens(s: Section, index: number, data: string[]): string[] {
    const t = this.t;
    if (s.token) return [s.token.content];
    let text = s.text;
    if (!text) return [];
    if (!s.data && t.added_tokens_map.has(text)) return [text];
    if (t.remove_space === true) text = text.trim().split(/\s+/).join(' ');
    if (t.do_lowercase_and_remove_accent) text = text.toLowerCase().replace(/\p{M}/gu, '');
    if (t.normalizer) text = t.normalizer(text);
    if (!text) return [];
    const subsections = this.cutNormalized(text, s.data ? data : null);
    stripAround(subsections);
    return subsections.flatMap((sub) => {
      if (!sub.text) return [];
      if (sub.token || (!s.data && t.added_tokens_map.has(sub.text))) return [sub.text];
      return t.model(t.pre_tokenizer ? t.pre_tokenizer(sub.text, { section_index: index }) : [sub.text]);
    });
  }

  /**
   * A normalized section cut at normalized added tokens. In a section holding data, where the
   * normalizer has blurred which characters came from where, a token is found only when no data
   * part holds its string.
   */
  private cutNormalized(text: string, data: string[] | null): Section[] {
    if (!this.normalizedTokens.length) return [{ text, token: null, data: false }];
    const t = this.t;
    const inData = new Set<AddedTokenLike>();
    if (data) {
      const normalizedData = data.map((d) => t.normalizer!(d));
      for (const { key, token } of this.normalizedTokens)
        if (data.some((d) => d.includes(token.content)) || normalizedData.some((d) => d.includes(key))) inData.add(token);
    }
    const out: Section[] = [];
    let last = 0;
    for (let i = 0; i < text.length; ) {
      const m = longest(this.normalized, text, i, text.length);
      if (!m || inData.has(m.token)) {
        i++;
        continue;
      }
      if (i > last) out.push({ text: text.slice(last, i), token: null, data: false });
      out.push({ text: text.slice(i, i + m.length), token: m.token, data: false });
      i += m.length;
      last = i;
    }
    if (last < text.length) out.push({ text: text.slice(last), token: null, data: false });
    return out;
  }
}
