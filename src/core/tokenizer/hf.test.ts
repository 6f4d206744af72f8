// Our Hugging Face tokenizer against transformers' own outputs, recorded by
// scripts/fixtures/hf_tokenizers.py for three small trained tokenizers shaped like SmolLM2's,
// Qwen2.5/Qwen3's and Llama 3's (the last adds a BOS in its post-processor).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../random.ts';
import { HfTokenizer, HfTokenizerError, type ChatMessage } from './hf.ts';

const DIR = new URL('./fixtures/hf/', import.meta.url);
const KINDS = ['smollm2', 'qwen', 'llama3'] as const;

interface Expected {
  bos_token_id: number | null;
  eos_token_id: number | null;
  vocab_size: number;
  decode_beyond_vocab: { ids: number[]; decoded: string };
  encodings: { text: string; ids: number[]; ids_no_special: number[]; decoded: string; decoded_skip_special: string }[];
  chats: { template: string; kwargs: Record<string, unknown>; messages: ChatMessage[]; add_generation_prompt: boolean; text: string; ids: number[] }[];
  templates: Record<string, string>;
}

function load(kind: string): { tok: HfTokenizer; expected: Expected } {
  const read = (f: string) => JSON.parse(readFileSync(new URL(`${kind}/${f}`, DIR), 'utf8'));
  return { tok: HfTokenizer.fromJSON(read('tokenizer.json'), read('tokenizer_config.json')), expected: read('expected.json') };
}

describe.each(KINDS)('HfTokenizer (%s-style tokenizer.json)', (kind) => {
  const { tok, expected } = load(kind);

  it("gives transformers' ids with the default special tokens, and without them", () => {
    for (const e of expected.encodings) {
      expect(tok.encode(e.text), JSON.stringify(e.text)).toEqual(e.ids);
      expect(tok.encode(e.text, { addSpecialTokens: false }), JSON.stringify(e.text)).toEqual(e.ids_no_special);
    }
  });

  it('decodes as transformers does, with and without special tokens', () => {
    for (const e of expected.encodings) {
      expect(tok.decode(e.ids), JSON.stringify(e.text)).toBe(e.decoded);
      expect(tok.decode(e.ids, { skipSpecialTokens: true }), JSON.stringify(e.text)).toBe(e.decoded_skip_special);
    }
  });

  it('skips ids beyond the vocabulary when decoding, as transformers does', () => {
    expect(tok.decode(expected.decode_beyond_vocab.ids)).toBe(expected.decode_beyond_vocab.decoded);
  });

  it('renders and encodes chats as apply_chat_template, with and without the generation prompt', () => {
    expect(expected.chats.length).toBeGreaterThan(0);
    const addedStrings = (JSON.parse(readFileSync(new URL(`${kind}/tokenizer.json`, DIR), 'utf8')) as { added_tokens: { content: string }[] }).added_tokens.map(
      (a) => a.content,
    );
    for (const c of expected.chats) {
      const options = { addGenerationPrompt: c.add_generation_prompt, template: expected.templates[c.template], variables: c.kwargs };
      expect(tok.renderChat(c.messages, options)).toBe(c.text);
      // The rendered text encoded whole is transformers' tokenize=True.
      expect(tok.encode(c.text, { addSpecialTokens: false })).toEqual(c.ids);
      // encodeChat keeps the contents text: the same ids, unless a content holds an added token's string (`<think>` in an answer).
      const dataHoldsAdded = c.messages.some((m) => addedStrings.some((a) => String(m.content).includes(a)));
      if (!dataHoldsAdded) expect(tok.encodeChat(c.messages, options)).toEqual(c.ids);
      else expect(tok.decode(tok.encodeChat(c.messages, options))).toBe(c.text);
    }
  });

  it('encodes data text as transformers does when it holds no added token, and never as an added token when it does', () => {
    const json = JSON.parse(readFileSync(new URL(`${kind}/tokenizer.json`, DIR), 'utf8')) as { added_tokens: { id: number; content: string }[] };
    const added = new Set(json.added_tokens.map((a) => a.id));
    for (const e of expected.encodings) {
      // The template's way (every added token found) is the library's own, step for step.
      expect(tok.encodeParts([{ text: e.text }]), JSON.stringify(e.text)).toEqual(e.ids_no_special);
      const ids = tok.encodeText(e.text);
      expect(tok.decode(ids), JSON.stringify(e.text)).toBe(tok.decode(e.ids_no_special));
      if (json.added_tokens.some((a) => e.text.includes(a.content))) expect(ids.some((id) => added.has(id))).toBe(false);
      else expect(ids, JSON.stringify(e.text)).toEqual(e.ids_no_special);
    }
    // Template text and data joined: the data's added-token strings are text, the template's are tokens.
    const [start, end] = json.added_tokens.slice(1, 3).map((a) => a.content);
    const parts = [{ text: `${start}user\n` }, { text: `say ${end} and ${start}`, data: true }, { text: `${end}\n` }];
    const ids = tok.encodeParts(parts);
    expect(ids.filter((id) => added.has(id))).toEqual([tok.tokenId(start)!, tok.tokenId(end)!]);
    expect(tok.decode(ids)).toBe(parts.map((p) => p.text).join(''));
    // Without added-token strings in the data, the ids are those of the joined text (merges cross the parts).
    const plain = [{ text: `${start}user: ` }, { text: 'say  (|hi|) ', data: true }, { text: `\n${end}` }];
    expect(tok.encodeParts(plain)).toEqual(tok.encode(plain.map((p) => p.text).join(''), { addSpecialTokens: false }));
  });

  it('follows the library step for step on random text (added tokens, whitespace around them, any Unicode)', () => {
    const json = JSON.parse(readFileSync(new URL(`${kind}/tokenizer.json`, DIR), 'utf8')) as { added_tokens: { content: string }[] };
    const pieces = [...json.added_tokens.map((a) => a.content), ' ', '  ', '\n', '\r\n', '\t', 'é', 'ﬁ', '東京', '👋🏽', "it's", 'x', '42', ' a', 'Hello'];
    const rand = seededRandom(5);
    for (let k = 0; k < 300; k++) {
      const text = Array.from({ length: Math.floor(rand() * 10) }, () => pieces[Math.floor(rand() * pieces.length)]).join('');
      expect(tok.encodeParts([{ text }]), JSON.stringify(text)).toEqual(tok.encode(text, { addSpecialTokens: false }));
      const holdsAdded = json.added_tokens.some((a) => text.includes(a.content));
      if (!holdsAdded) expect(tok.encodeText(text), JSON.stringify(text)).toEqual(tok.encode(text, { addSpecialTokens: false }));
    }
  });

  it("keeps a chat message's content text: an added token's string in it is not that token", () => {
    const json = JSON.parse(readFileSync(new URL(`${kind}/tokenizer.json`, DIR), 'utf8')) as { added_tokens: { id: number; content: string }[] };
    const added = new Set(json.added_tokens.map((a) => a.id));
    const c = expected.chats.find(
      (x) => x.template === 'default' && !x.messages.some((m) => json.added_tokens.some((a) => String(m.content).includes(a.content))),
    )!;
    const options = { addGenerationPrompt: c.add_generation_prompt, template: expected.templates[c.template], variables: c.kwargs };
    const inside = json.added_tokens.map((a) => a.content).join(' ');
    const messages = c.messages.map((m) => ({ ...m, content: `${m.content} ${inside}` }));
    const ids = tok.encodeChat(messages, options);
    expect(ids.filter((id) => added.has(id))).toEqual(tok.encodeChat(c.messages, options).filter((id) => added.has(id)));
    expect(tok.decode(ids)).toBe(tok.renderChat(messages, options));
  });

  it('knows its special tokens and vocabulary size', () => {
    expect(tok.bosTokenId).toBe(expected.bos_token_id);
    expect(tok.eosTokenId).toBe(expected.eos_token_id);
    expect(tok.vocabSize).toBe(expected.vocab_size);
  });
});

describe('HfTokenizer errors', () => {
  const json = JSON.parse(readFileSync(new URL('smollm2/tokenizer.json', DIR), 'utf8'));

  it('names the file that is not a tokenizer', () => {
    expect(() => HfTokenizer.fromJSON({ vocab: {} }, {}, { sources: { tokenizer: 'm/tokenizer.json' } })).toThrow(/m\/tokenizer\.json: has no "model"/);
    expect(() => HfTokenizer.fromJSON(json, [], { sources: { config: 'm/tokenizer_config.json' } })).toThrow(
      /m\/tokenizer_config\.json: must be a JSON object/,
    );
  });

  it('says when there is no chat template, or no template of that name', () => {
    const bare = HfTokenizer.fromJSON(json, {});
    expect(() => bare.renderChat([{ role: 'user', content: 'hi' }])).toThrow(/has no chat template/);
    const named = HfTokenizer.fromJSON(json, {
      chat_template: [
        { name: 'default', template: '{{ messages[0].content }}' },
        { name: 'tool_use', template: 'T' },
      ],
    });
    expect(named.chatTemplateNames).toEqual(['default', 'tool_use']);
    expect(named.renderChat([{ role: 'user', content: 'hi' }])).toBe('hi');
    expect(named.renderChat([], { template: 'tool_use' })).toBe('T');
    expect(() => named.renderChat([], { template: 'rag' })).toThrow(HfTokenizerError);
  });

  it('takes a chat_template.jinja file over the config, and reports a template that raises', () => {
    const t = HfTokenizer.fromJSON(json, { chat_template: 'old' }, { chatTemplate: "{{ raise_exception('roles must alternate') }}" });
    expect(() => t.renderChat([])).toThrow(/roles must alternate/);
  });

  it('decodes nothing to nothing and refuses what is not a token id', () => {
    const t = HfTokenizer.fromJSON(json, {});
    expect(t.decode([])).toBe('');
    expect(t.decode([t.vocabSize])).toBe('');
    expect(() => t.decode([-1])).toThrow(/token id -1 is not a token id/);
    expect(() => t.decode([1.5])).toThrow(HfTokenizerError);
  });
});
