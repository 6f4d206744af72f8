// loadHfModel on the tiny Llama with a trained tokenizer (src/model/fixtures/hf/llama-chat,
// scripts/fixtures/hf_tiny_models.py): transformers' prompt and chat ids, its stop ids, its greedy
// generate() continuation through the reference model, and a refusal before any tensor is read.
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { gptForward } from '../../reference/gpt.ts';
import type { ModelFiles } from './files.ts';
import { HfMemoryError, limitsFromReport, loadHfModel } from './load.ts';
import { nodeFolder } from './node.ts';

const DIR = fileURLToPath(new URL('../fixtures/hf/llama-chat', import.meta.url));
const BIG = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 27, memoryBudget: 2 ** 30 };

interface Case {
  input: string;
  prompt_ids: number[];
  ids: number[];
}

async function expected(): Promise<{ eos_token_id: number[]; prompt: Case; chat: Case }> {
  const { readFile } = await import('node:fs/promises');
  return JSON.parse(await readFile(`${DIR}/generate.json`, 'utf8'));
}

/** The folder, recording which byte ranges of the weights are read. */
async function recorded(): Promise<{ files: ModelFiles; weightBytes: () => number }> {
  const inner = await nodeFolder(DIR);
  let bytes = 0;
  const files: ModelFiles = {
    ...inner,
    read: async (path, start = 0, end) => {
      const out = await inner.read(path, start, end);
      if (path === 'model.safetensors' && start >= 8 + 1024) bytes += out.length;
      return out;
    },
  };
  return { files, weightBytes: () => bytes };
}

describe('loadHfModel', () => {
  it('loads a folder: tokenizer with its chat template, generation_config stop ids, our layout', async () => {
    const want = await expected();
    const m = await loadHfModel(await nodeFolder(DIR), { limits: BIG });
    expect(m.name).toBe('llama-chat');
    expect(m.hasChatTemplate).toBe(true);
    expect(m.stopIds).toEqual(want.eos_token_id);
    const tok = m.tokenizer!;
    expect(tok.encode(want.prompt.input)).toEqual(want.prompt.prompt_ids);
    expect(tok.encodeChat([{ role: 'user', content: want.chat.input }], { addGenerationPrompt: true })).toEqual(want.chat.prompt_ids);
    // transformers' greedy generate() through the reference model (the GPU is held to it).
    const c = m.config;
    for (const k of ['prompt', 'chat'] as const) {
      const seq = [...want[k].prompt_ids];
      const out: number[] = [];
      while (out.length < want[k].ids.length) {
        const { logits } = gptForward(m.params, c, seq, 1, seq.length);
        let best = 0;
        const row = (seq.length - 1) * c.vocabSize;
        for (let v = 1; v < c.vocabSize; v++) if (logits[row + v] > logits[row + best]) best = v;
        out.push(best);
        seq.push(best);
        if (m.stopIds.includes(best)) break;
      }
      expect(out, k).toEqual(want[k].ids);
    }
  });

  it('refuses a model over the budget before reading any tensor, naming what would fit', async () => {
    const { files, weightBytes } = await recorded();
    const limits = limitsFromReport({ limits: { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 27 } }, 4 * 2 ** 20);
    const err = await loadHfModel(files, { limits, context: 4096 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HfMemoryError);
    expect((err as Error).message).toMatch(/more than the .* budget\. Would fit instead: context \d+/);
    expect(weightBytes()).toBe(0);
    // The context may be counted from the tokenizer.
    let seen: unknown;
    await loadHfModel(files, { limits: BIG, context: (tok) => ((seen = tok), 32) });
    expect(seen).not.toBeNull();
    expect(weightBytes()).toBeGreaterThan(200_000);
  });
});
