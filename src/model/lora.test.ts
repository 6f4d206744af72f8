import { describe, expect, it } from 'vitest';
import { randomArray } from '../core/random.ts';
import { loadLoraCheckpoint, peftFolderFiles, readPeftAdapter, saveLoraCheckpoint } from './hf/adapter.ts';
import type { ModelConfig } from '../core/model/config.ts';
import { adapterConfigJson, initLora, loraFromPeft, loraLayout, loraSettings, loraToPeft, mergeLora, settingsFromAdapterConfig } from './lora.ts';
import { paramLayout } from '../core/model/params.ts';
import { loraLinearForward } from '../reference/lora.ts';

const LLAMA: ModelConfig = {
  vocabSize: 23,
  contextLength: 16,
  layers: 2,
  heads: 4,
  dModel: 16,
  mlpRatio: 1,
  norm: 'rmsnorm',
  positions: 'rope',
  tiedEmbeddings: false,
  normEps: 1e-6,
  ropeBase: 10000,
  kvHeads: 2,
  headDim: 4,
  mlp: 'swiglu',
  mlpWidth: 12,
  qkvBias: false,
  projBias: false,
  mlpBias: false,
};

describe('LoRA layout and PEFT conventions', () => {
  it('lays out A [in, r] and B [r, out] per targeted projection, aligned, with PEFT names', () => {
    const layout = loraLayout(LLAMA, loraSettings(3));
    expect(layout.scale).toBe(2);
    expect(layout.pairs).toHaveLength(2 * 7);
    const k = layout.pairs.find((p) => p.layer === 1 && p.target === 'k')!;
    expect(k).toMatchObject({ inDim: 16, outDim: 8, col: 16, baseWidth: 32, site: 'qkv' });
    expect(k.A.name).toBe('base_model.model.model.layers.1.self_attn.k_proj.lora_A');
    expect(layout.tensors.every((t) => t.offset % 64 === 0 && !t.decay)).toBe(true);
    const up = layout.pairs.find((p) => p.target === 'up')!;
    expect(up).toMatchObject({ col: 12, outDim: 12, baseWidth: 24, site: 'fc' });
  });

  it('initialises like PEFT: A uniform within ±1/√in, B zero; so the merged model is the base', () => {
    const layout = loraLayout(LLAMA, loraSettings(4));
    const lora = initLora(layout, 3);
    for (const p of layout.pairs) {
      const a = lora.subarray(p.A.offset, p.A.offset + p.A.size);
      expect(Math.max(...a.map(Math.abs))).toBeLessThanOrEqual(1 / Math.sqrt(p.inDim));
      expect(a.some((v) => v !== 0)).toBe(true);
      expect(lora.subarray(p.B.offset, p.B.offset + p.B.size).every((v) => v === 0)).toBe(true);
    }
    const base = randomArray(paramLayout(LLAMA).totalSize, 1);
    expect(Array.from(mergeLora(base, layout, lora))).toEqual(Array.from(base));
  });

  it("merges W + s·A·B into each projection's columns, as the projection computes it", () => {
    const layout = loraLayout(LLAMA, loraSettings(2, 5, ['v', 'down']));
    const lora = randomArray(layout.totalSize, 2);
    const base = randomArray(paramLayout(LLAMA).totalSize, 3);
    const merged = mergeLora(base, layout, lora);
    const p = layout.pairs.find((x) => x.target === 'v')!;
    const x = randomArray(3 * p.inDim, 4);
    const block = (flat: Float32Array) =>
      Float64Array.from({ length: p.inDim * p.outDim }, (_, i) => flat[p.base.offset + Math.floor(i / p.outDim) * p.baseWidth + p.col + (i % p.outDim)]);
    const shape = { rows: 3, inDim: p.inDim, outDim: p.outDim, rank: 2, scale: 2.5 };
    const A = lora.subarray(p.A.offset, p.A.offset + p.A.size);
    const B = lora.subarray(p.B.offset, p.B.offset + p.B.size);
    const want = loraLinearForward(x, block(base), A, B, shape);
    const got = loraLinearForward(x, block(merged), new Float64Array(A.length), new Float64Array(B.length), shape);
    got.forEach((v, i) => expect(v).toBeCloseTo(want[i], 5));
  });

  it('PEFT tensors ([r, in], [out, r]) round-trip, and the adapter folder and checkpoint read back', () => {
    const settings = loraSettings(2, 8, ['q', 'o', 'gate']);
    const layout = loraLayout(LLAMA, settings);
    const lora = randomArray(layout.totalSize, 5);
    for (const t of layout.tensors) lora.fill(0, t.offset + t.size, Math.ceil((t.offset + t.size) / 64) * 64);
    const peft = loraToPeft(layout, lora);
    expect(peft.get('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight')!.shape).toEqual([2, 16]);
    expect(peft.get('base_model.model.model.layers.0.mlp.gate_proj.lora_B.weight')!.shape).toEqual([12, 2]);
    expect(Array.from(loraFromPeft(layout, peft))).toEqual(Array.from(lora));
    const [cfg, st] = peftFolderFiles({ config: LLAMA, settings, baseModel: 'base', lora });
    const read = readPeftAdapter(LLAMA, JSON.parse(new TextDecoder().decode(cfg.bytes)), st.bytes);
    expect(read.settings).toEqual(settings);
    expect(Array.from(read.lora)).toEqual(Array.from(lora));
    const m = randomArray(layout.totalSize, 6).map(Math.abs);
    const ck = loadLoraCheckpoint(
      saveLoraCheckpoint({ config: LLAMA, settings, baseModel: 'base', lora, step: 7, optimizer: { m: lora, v: m, step: 7 }, extraMetadata: { stage: 'sft' } }),
    );
    expect(ck).toMatchObject({ settings, baseModel: 'base', step: 7, extraMetadata: { stage: 'sft' } });
    expect(Array.from(ck.optimizer!.v)).toEqual(
      Array.from(lora.map((_, i) => (layout.tensors.some((t) => i >= t.offset && i < t.offset + t.size) ? m[i] : 0))),
    );
  });

  it("reads PEFT's adapter_config.json and refuses what it cannot run, by name", () => {
    const cfg = adapterConfigJson(loraSettings(4, 16, ['q', 'v']), 'SmolLM2-135M');
    expect(cfg).toMatchObject({
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      r: 4,
      lora_alpha: 16,
      target_modules: ['q_proj', 'v_proj'],
      base_model_name_or_path: 'SmolLM2-135M',
    });
    expect(settingsFromAdapterConfig({ ...cfg, target_modules: ['v_proj', 'q_proj'] }).settings.targets).toEqual(['q', 'v']);
    expect(() => settingsFromAdapterConfig({ ...cfg, peft_type: 'IA3' })).toThrow(/only LORA/);
    expect(() => settingsFromAdapterConfig({ ...cfg, use_rslora: true })).toThrow(/rsLoRA/);
    expect(() => settingsFromAdapterConfig({ ...cfg, target_modules: ['lm_head'] })).toThrow(/target module 'lm_head'/);
    expect(() => settingsFromAdapterConfig({ ...cfg, bias: 'all' })).toThrow(/bias 'all'/);
    expect(() => loraSettings(0)).toThrow(/rank/);
    expect(() => loraSettings(4, undefined, ['qkv'])).toThrow(/unknown LoRA target 'qkv'/);
  });
});
