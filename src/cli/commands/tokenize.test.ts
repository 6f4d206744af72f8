// `lwm tokenize` prints transformers' ids (recorded by scripts/fixtures/hf_tokenizers.py) for a
// text and for one chat message with the generation prompt.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from '../main.ts';
import { captureIO } from '../testing.ts';

const DIR = new URL('../../core/tokenizer/fixtures/hf/', import.meta.url).pathname;
const expected = (kind: string) => JSON.parse(readFileSync(`${DIR}${kind}/expected.json`, 'utf8'));

async function run(...argv: string[]) {
  const io = captureIO();
  const code = await main(['tokenize', ...argv], io);
  return { code, out: io.stdout, err: io.stderr };
}

describe('lwm tokenize', () => {
  it('prints the ids of a text with the BOS the post-processor adds, or without it', async () => {
    const e = expected('llama3').encodings[0];
    const r = await run('--model', `${DIR}llama3`, '--text', e.text);
    expect(r.code).toBe(0);
    expect(r.out).toBe(e.ids.join(' ') + '\n');
    const bare = await run('--model', `${DIR}llama3`, '--text', e.text, '--no-special', '--json');
    expect(JSON.parse(bare.out)).toEqual({ ids: e.ids_no_special, tokens: e.ids_no_special.length, text: e.text });
  });

  it('renders one user message with the chat template and the generation prompt', async () => {
    for (const kind of ['smollm2', 'qwen']) {
      const chat = expected(kind).chats.find(
        (c: { template: string; add_generation_prompt: boolean; messages: unknown[] }) =>
          c.template === 'default' && c.add_generation_prompt && c.messages.length === 1,
      );
      const r = await run('--model', `${DIR}${kind}`, '--chat', chat.messages[0].content, '--json');
      expect(r.code, r.err).toBe(0);
      expect(JSON.parse(r.out)).toEqual({ ids: chat.ids, tokens: chat.ids.length, text: chat.text });
    }
  });

  it('says what is wrong: usage (exit 2), a folder without a tokenizer (exit 1)', async () => {
    expect((await run('--text', 'x')).code).toBe(2);
    expect((await run('--model', `${DIR}qwen`)).err).toMatch(/give one of --text and --chat/);
    expect((await run('--model', `${DIR}qwen`, '--chat', 'x', '--no-special')).code).toBe(2);
    const r = await run('--model', DIR, '--text', 'x');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/has no tokenizer\.json \(found: llama3\/expected\.json/);
    expect((await run('--model', `${DIR}missing`, '--text', 'x')).err).toMatch(/cannot be opened \(ENOENT\)/);
  });
});
