// A Hugging Face folder as a backend on the GPU: a later turn of a session prefills only what its
// chat prompt adds to the previous turn's (the KV rows of recent prompts are kept), and gives the
// same text as a backend that prefills everything.
import { describe, expect, it } from 'vitest';
import { generateText, type TurnRequest } from '../core/backend.ts';
import { emptySystemPrompt } from '../core/schema/types.ts';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { filesFolder } from '../model/hf/files.ts';
import { loadHfModel } from '../model/hf/load.ts';
import { fixtureBytes } from '../gpu/testing/fixture.ts';
import { openHfBackend } from './hf.ts';

const fixture = (file: string) => fixtureBytes(new URL(`../model/fixtures/hf/llama-chat/${file}`, import.meta.url));

const turn = (actions: string[], observations: string[]): TurnRequest => ({
  sample: { domain: 'terminal', systemPrompt: emptySystemPrompt(), history: [], action: actions.at(-1)! },
  awb: { system: 'You are a terminal.', actions, observations },
});

describe('a Hugging Face folder as a backend', () => {
  it("reuses the previous turn's KV rows and gives the same text as a full prefill", async () => {
    const rt = await gpuRuntime();
    const names = ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
    const files = filesFolder(await Promise.all(names.map(async (n) => ({ path: `chat/${n}`, file: new Blob([await fixture(n)]) }))));
    const model = await loadHfModel(files, { limits: { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 27, memoryBudget: 2 ** 30 } });
    const kept = openHfBackend(rt, model, { context: 128 });
    const fresh = openHfBackend(rt, model, { context: 128, prefixSlots: 0 });
    const o = { maxTokens: 6, temperature: 0 };
    try {
      const first = await generateText(kept.backend, turn(['ls'], []), o);
      const second = turn(['ls', 'pwd'], [first]);
      const before = kept.stats.reusedTokens;
      const again = await generateText(kept.backend, second, o);
      expect(kept.stats.reusedTokens - before).toBeGreaterThan(10);
      expect(again).toBe(await generateText(fresh.backend, second, o));
      expect(fresh.stats.reusedTokens).toBe(0);
    } finally {
      kept.dispose();
      fresh.dispose();
    }
  });
});
