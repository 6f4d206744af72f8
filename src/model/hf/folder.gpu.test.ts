// A Hugging Face folder read in the browser as in Node: picked File objects, the sharded weights,
// the tokenizer (@huggingface/tokenizers) and the chat templates (@huggingface/jinja), against
// transformers' outputs. It uses no GPU; it is a *.gpu.test.ts because the gpu-browser project is
// the one that runs in Chromium (the gpu-node run repeats it on Node, as the unit tests do).
import { describe, expect, it } from 'vitest';
import { HfTokenizer } from '../../core/tokenizer/hf.ts';
import { filesFolder, openHfFolder, readWeights } from './files.ts';

// Every fixture file as a URL vite serves (the browser fetches it; Node reads it from disk).
const FILES = import.meta.glob(['../../core/tokenizer/fixtures/hf/**/*.json', './fixtures/safetensors/**/*'], {
  query: '?url',
  import: 'default',
  eager: true,
}) as Record<string, string>;

/** A fixture's bytes, by its path relative to this file. */
async function bytes(path: string): Promise<Uint8Array<ArrayBuffer>> {
  const url = FILES[path];
  if (url === undefined) throw new Error(`no fixture ${path}`);
  if (typeof window === 'undefined') {
    const fs = 'node:fs/promises';
    const { readFile } = (await import(/* @vite-ignore */ fs)) as typeof import('node:fs/promises');
    return new Uint8Array(await readFile(new URL(path, import.meta.url)));
  }
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

const json = async (path: string) => JSON.parse(new TextDecoder().decode(await bytes(path)));
const TOKENIZERS = '../../core/tokenizer/fixtures/hf/';

describe('Hugging Face folder in this runtime', () => {
  it.each(['smollm2', 'qwen', 'llama3'])("%s: ids, decodes and chat templates equal transformers'", async (kind) => {
    const dir = `${TOKENIZERS}${kind}/`;
    const tok = HfTokenizer.fromJSON(await json(`${dir}tokenizer.json`), await json(`${dir}tokenizer_config.json`));
    const expected = await json(`${dir}expected.json`);
    for (const e of expected.encodings) {
      expect(tok.encode(e.text)).toEqual(e.ids);
      expect(tok.decode(e.ids)).toBe(e.decoded);
    }
    const addedStrings = ((await json(`${dir}tokenizer.json`)) as { added_tokens: { content: string }[] }).added_tokens.map((a) => a.content);
    for (const c of expected.chats) {
      const options = { addGenerationPrompt: c.add_generation_prompt, template: expected.templates[c.template], variables: c.kwargs };
      // The rendered text encoded whole is transformers' tokenize=True; encodeChat keeps the
      // messages' contents text, so it gives the same ids unless a content holds an added token's
      // string (`<think>` in a Qwen answer), which it keeps as text (src/core/tokenizer/hf.test.ts).
      expect(tok.encode(c.text, { addSpecialTokens: false })).toEqual(c.ids);
      const dataHoldsAdded = c.messages.some((m: { content: unknown }) => addedStrings.some((a) => String(m.content).includes(a)));
      if (!dataHoldsAdded) expect(tok.encodeChat(c.messages, options)).toEqual(c.ids);
      else expect(tok.decode(tok.encodeChat(c.messages, options))).toBe(c.text);
    }
  });

  it('opens picked File objects: tokenizer, stop ids and sharded weights', async () => {
    const names = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors', 'model.safetensors.index.json', 'generation_config.json'];
    const picked = await Promise.all(
      names.map(async (n) => ({ path: `Tiny/${n}`, file: new File([await bytes(`./fixtures/safetensors/sharded-f16/${n}`)], n) })),
    );
    for (const n of ['tokenizer.json', 'tokenizer_config.json']) picked.push({ path: `Tiny/${n}`, file: new File([await bytes(`${TOKENIZERS}qwen/${n}`)], n) });
    picked.push({ path: 'Tiny/config.json', file: new File(['{"eos_token_id": 2}'], 'config.json') });
    const folder = await openHfFolder(filesFolder(picked));
    expect(folder.stopTokenIds).toEqual([2, 0]);
    const weights = await readWeights(folder.files, folder.weights);
    const expected = (await json('./fixtures/safetensors/expected.json'))['sharded-f16'] as Record<string, { values: number[] }>;
    for (const [name, w] of Object.entries(expected)) expect(Array.from(weights.get(name)!.data)).toEqual(w.values);
  });
});
