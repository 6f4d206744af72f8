// Our byte-level BPE (tokenizer.ts) as a Hugging Face `tokenizer.json`, so that transformers'
// AutoTokenizer, the tokenizers library and @huggingface/tokenizers give exactly our ids:
//
//   pre-tokenizer   Split on our pattern (Isolated), then ByteLevel without its own regex: the
//                   same pieces as our encodeOrdinary, each piece's UTF-8 bytes written in GPT-2's
//                   byte-to-character alphabet
//   model           BPE, id b = byte b (its character in that alphabet), the special tokens at
//                   256…, then one id per merge; merges listed in rank order, so the lowest-rank
//                   pair merges first, as in our bpe(); ignore_merges false (a whole piece that is
//                   in the vocabulary still goes through the merges, as ours does)
//   added_tokens    our special tokens (special, not normalized, no strip): text is cut at them
//                   before pre-tokenizing, as our encode() does; decode(skip_special_tokens) drops them
//   post-processor  ByteLevel (adds no token: our encode() adds none either)
//   decoder         ByteLevel (characters back to bytes, bytes to UTF-8)
//
// The pattern is rewritten for the regex engine of the Rust library (Oniguruma), whose classes
// differ from JavaScript's: there \s is Unicode White_Space (with U+0085, without U+FEFF, which
// JavaScript's \s has) and \d, \w are Unicode-wide (JavaScript's are ASCII). portablePattern
// spells each such class out as the characters JavaScript gives it, which both engines read alike.
//
// Hugging Face's vocabulary maps each token's string to one id, so a tokenizer of ours in which two
// ids spell the same bytes (two merges joining different pairs into the same bytes, or a merge
// spelling a special token) has no exact tokenizer.json; hfTokenizerJson refuses it by name.
import type { Tokenizer } from './tokenizer.ts';

export class HfExportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HfExportError';
  }
}

/** GPT-2's reversible byte → printable character map (what ByteLevel pre-tokenizers write). */
export function byteToUnicode(): string[] {
  const keep: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) keep.push(b);
  for (let b = 0xa1; b <= 0xac; b++) keep.push(b);
  for (let b = 0xae; b <= 0xff; b++) keep.push(b);
  const out: string[] = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCodePoint(keep.includes(b) ? b : 256 + n++);
  return out;
}

/** What JavaScript's \s matches (ECMAScript WhiteSpace + LineTerminator), as class contents. */
const JS_SPACE = '\\t\\n\\v\\f\\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff';
const CLASS_OF: Record<string, string> = { s: JS_SPACE, d: '0-9', w: 'A-Za-z0-9_' };

/**
 * `pattern` with \s \S \d \D \w \W written as explicit classes holding what JavaScript's 'u'
 * regexes give them, so that Oniguruma (transformers, tokenizers) cuts text as our tokenizer does.
 * Throws on what has no such spelling (a negated class inside a class, word boundaries).
 */
export function portablePattern(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      i++;
      const lower = next.toLowerCase();
      if (lower in CLASS_OF) {
        const negated = next !== lower;
        if (inClass && negated) throw new HfExportError(`tokenizer pattern: \\${next} inside a character class has no portable spelling`);
        out += inClass ? CLASS_OF[lower] : `[${negated ? '^' : ''}${CLASS_OF[lower]}]`;
      } else if ((next === 'b' && !inClass) || next === 'B') {
        throw new HfExportError(`tokenizer pattern: \\${next} (a word boundary) means different things in JavaScript and in Hugging Face's regex engine`);
      } else out += ch + next;
      continue;
    }
    if (ch === '[' && !inClass) inClass = true;
    else if (ch === ']' && inClass) inClass = false;
    out += ch;
  }
  return out;
}

/** The `tokenizer.json` object (key order fixed, so the same tokenizer always gives the same file). */
export function hfTokenizerJson(tok: Tokenizer): Record<string, unknown> {
  const alphabet = byteToUnicode();
  const base = 256 + tok.specialTokens.length;
  const str: string[] = [];
  for (let b = 0; b < 256; b++) str.push(alphabet[b]);
  for (const s of tok.specialTokens) str.push(s);
  for (let i = 0; i < tok.merges.length; i++) {
    const [a, b] = tok.merges[i];
    str.push(str[a] + str[b]);
  }
  const vocab: Record<string, number> = {};
  const seen = new Map<string, number>();
  str.forEach((s, id) => {
    const other = seen.get(s);
    if (other !== undefined) {
      const what = (i: number) => (i < 256 ? `byte ${i}` : i < base ? `special token ${JSON.stringify(tok.specialTokens[i - 256])}` : `merge ${i - base}`);
      throw new HfExportError(
        `tokenizer: ids ${other} (${what(other)}) and ${id} (${what(id)}) spell the same bytes ${JSON.stringify(new TextDecoder().decode(tok.tokenBytes(id)))}; ` +
          `a Hugging Face tokenizer.json maps each token string to one id, so this tokenizer has no exact export`,
      );
    }
    seen.set(s, id);
    vocab[s] = id;
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: tok.specialTokens.map((content, i) => ({
      id: 256 + i,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: portablePattern(tok.pattern) }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: tok.merges.map(([a, b]) => [str[a], str[b]]),
    },
  };
}
