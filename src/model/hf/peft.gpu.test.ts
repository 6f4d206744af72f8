// LoRA adapters in PEFT's layout on our engine: our own adapter (written by our PEFT writer) and
// one PEFT wrote (scripts/fixtures/peft_check.py), each read back by our loader onto the tiny chat
// Llama, give PEFT's logits; the merged weights give them too without the adapter.
import { describe, expect, it } from 'vitest';
import { gpuRuntime } from '../../gpu/testing/runtime.ts';
import { GpuModel } from '../gpt.ts';
import { mergeLora } from '../lora.ts';
import { readPeftAdapter } from './adapter.ts';
import { configFromHf } from './config.ts';
import { filesFolder } from './files.ts';
import { loadHfModel } from './load.ts';

// Every fixture file as a URL vite serves (the browser fetches it; Node reads it from disk).
const FILES = import.meta.glob(['../fixtures/lora/**/*', '../fixtures/hf/llama-chat/*'], { query: '?url', import: 'default', eager: true }) as Record<
  string,
  string
>;

/** A fixture's bytes, by its path under src/model/fixtures/. */
async function bytes(path: string): Promise<Uint8Array<ArrayBuffer>> {
  const key = `../fixtures/${path}`;
  if (FILES[key] === undefined) throw new Error(`no fixture ${path}`);
  if (typeof window === 'undefined') {
    const fs = 'node:fs/promises';
    const { readFile } = (await import(/* @vite-ignore */ fs)) as typeof import('node:fs/promises');
    return new Uint8Array(await readFile(new URL(key, import.meta.url)));
  }
  const res = await fetch(FILES[key]);
  if (!res.ok) throw new Error(`fixture ${path}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}
const json = async (path: string) => JSON.parse(new TextDecoder().decode(await bytes(path)));

interface Expected {
  input_ids: number[];
  columns: number;
  ours: { peft_logits: number[][] };
  peft: { peft_logits: number[][] };
  max_abs_errors: Record<string, number>;
}

async function base() {
  const names = ['config.json', 'generation_config.json', 'model.safetensors'];
  const entries = await Promise.all(names.map(async (n) => ({ path: `llama-chat/${n}`, file: new Blob([await bytes(`hf/llama-chat/${n}`)]) })));
  return loadHfModel(filesFolder(entries), { limits: { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 27, memoryBudget: 2 ** 30 } });
}

describe('PEFT adapters on our engine', () => {
  it.each(['ours', 'peft'] as const)("%s adapter: our loader and engine give PEFT's logits", async (which) => {
    const rt = await gpuRuntime();
    const expected = (await json('lora/expected.json')) as Expected;
    const m = await base();
    expect(configFromHf(m.rawConfig).config).toEqual(m.config);
    const a = readPeftAdapter(m.config, await json(`lora/${which}/adapter_config.json`), await bytes(`lora/${which}/adapter_model.safetensors`), which);
    expect(a.settings.rank).toBe(4);
    expect(a.settings.targets).toEqual(['q', 'k', 'v', 'o', 'gate', 'up', 'down']);
    const ids = expected.input_ids;
    const V = m.config.vocabSize;
    const want = expected[which].peft_logits;
    const worst = (logits: Float32Array) => {
      let w = 0;
      want.forEach((row, t) => row.forEach((v, j) => (w = Math.max(w, Math.abs(logits[t * V + j] - v)))));
      return w;
    };
    const adapted = await GpuModel.create(rt, m.config, { batch: 1, T: ids.length, lora: a.layout });
    const merged = await GpuModel.create(rt, m.config, { batch: 1, T: ids.length });
    try {
      adapted.setParams(m.params);
      adapted.setLora(a.lora);
      merged.setParams(mergeLora(m.params, a.layout, a.lora));
      const got = worst(await adapted.logitsOf({ B: 1, T: ids.length, inputs: ids }));
      const gotMerged = worst(await merged.logitsOf({ B: 1, T: ids.length, inputs: ids }));
      console.log(
        `${which}: max |ours − PEFT| ${got.toExponential(2)} adapted, ${gotMerged.toExponential(2)} merged (script: ${JSON.stringify(expected.max_abs_errors)})`,
      );
      expect(got).toBeLessThan(1e-4);
      expect(gotMerged).toBeLessThan(1e-4);
      // The adapter matters: the base alone is far from PEFT's logits.
      adapted.setLora(new Float32Array(a.lora.length));
      expect(worst(await adapted.logitsOf({ B: 1, T: ids.length, inputs: ids }))).toBeGreaterThan(1e-2);
    } finally {
      adapted.dispose();
      merged.dispose();
    }
  });

  it('refuses an adapter whose tensors do not fit the model', async () => {
    const m = await base();
    const cfg = await json('lora/peft/adapter_config.json');
    const st = await bytes('lora/peft/adapter_model.safetensors');
    expect(() => readPeftAdapter(m.config, { ...cfg, r: 8 }, st, 'peft')).toThrow(/has shape \[8, 32\], expected|has shape \[4, 32\], expected \[8, 32\]/);
    expect(() => readPeftAdapter(m.config, { ...cfg, use_dora: true }, st, 'peft')).toThrow(/DoRA/);
    expect(() => readPeftAdapter(m.config, { ...cfg, target_modules: ['q_proj'] }, st, 'peft')).toThrow(/do not use/);
  });
});
