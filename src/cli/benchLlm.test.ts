// The `llm` bench suite's pure half (bench/llm-shape.ts): the SmolLM2-135M shape and its cut-down
// variants, the command-line options, and the records and table it reports (with the ratios
// bench.mjs derives from them).
import { describe, expect, it } from 'vitest';
import { BLOCK_SCALE, greedyAgreement, LLM_DEFAULTS, llmParams, llmRecords, llmShape, llmTable, parseLlmOptions } from '../../bench/llm-shape.ts';
import { initParams } from '../model/init.ts';
import { paramLayout } from '../core/model/params.ts';
import { speedupRecords } from '../../scripts/bench-records.mjs';
import { headSize, kvHeads, mlpHidden } from '../core/model/config.ts';

describe('llm bench: the model', () => {
  it('defaults to SmolLM2-135M: Llama, 576 wide, 30 layers, 9 heads over 3 KV heads, tied, 134.5M parameters', () => {
    const s = llmShape(parseLlmOptions({}));
    const c = s.config;
    expect([c.dModel, c.layers, c.heads, kvHeads(c), headSize(c), mlpHidden(c), c.vocabSize]).toEqual([576, 30, 9, 3, 64, 1536, 49152]);
    expect([c.norm, c.positions, c.mlp, c.tiedEmbeddings, c.normEps, c.ropeBase]).toEqual(['rmsnorm', 'rope', 'swiglu', true, 1e-5, 100000]);
    expect([c.qkvBias, c.projBias, c.mlpBias, c.qkNorm]).toEqual([false, false, false, false]);
    // SmolLM2-135M's published count: 134,515,008 (embedding 28.3M, 30 blocks of 3.54M, final norm).
    expect(s.parameters).toBe(134_515_008);
    expect(s.caseName).toBe('smollm2-135m p128 n32');
    expect(s.description).toContain('SmolLM2-135M shape (Llama, hidden 576, 30 layers, 9 heads, 3 KV heads');
  });

  it('--layers cuts the depth and says so in the case and the description', () => {
    const s = llmShape(parseLlmOptions({ layers: '2', 'prompt-tokens': '16', 'decode-tokens': '8' }));
    expect(s.config.layers).toBe(2);
    expect(s.hfConfig.num_hidden_layers).toBe(2);
    expect(s.parameters).toBe(49152 * 576 + 576 + 2 * (576 * (576 + 2 * 192) + 576 * 576 + 3 * 576 * 1536 + 2 * 576));
    expect(s.caseName).toBe('smollm2-135m-L2of30 p16 n8');
    expect(s.description).toContain('cut to 2 of 30 layers');
  });

  it("weights: initParams with the blocks' matrices scaled, the embedding and the norms as drawn", () => {
    const { config } = llmShape(parseLlmOptions({ layers: '1' }));
    const p = llmParams(config);
    const base = initParams(config, 0);
    const layout = paramLayout(config);
    const at = (name: string) => layout.tensors.find((t) => t.name === name)!;
    const wte = at('wte');
    let firstChanged = -1;
    for (let i = wte.offset; i < wte.offset + wte.size && firstChanged < 0; i++) if (p[i] !== base[i]) firstChanged = i;
    expect(firstChanged).toBe(-1);
    const blockMatrices = layout.tensors.filter((t) => t.kind !== 'norm' && t.kind !== 'bias' && t.name !== 'wte');
    expect(blockMatrices.length).toBeGreaterThanOrEqual(4);
    for (const t of blockMatrices) for (const i of [t.offset, t.offset + t.size - 1]) expect(p[i]).toBe(Math.fround(base[i] * BLOCK_SCALE));
    for (const t of layout.tensors.filter((x) => x.kind === 'norm')) expect(p[t.offset]).toBe(1);
  });

  it('options: defaults, and an error naming the flag for a bad value', () => {
    expect(parseLlmOptions({})).toEqual(LLM_DEFAULTS);
    expect(parseLlmOptions({ reps: '5', 'lora-rank': '16', 'train-tokens': '64' })).toMatchObject({ reps: 5, loraRank: 16, trainTokens: 64 });
    expect(() => parseLlmOptions({ layers: '0' })).toThrow(/--layers: must be a positive whole number, got '0'/);
    expect(() => parseLlmOptions({ 'prompt-tokens': '1.5' })).toThrow(/--prompt-tokens: must be a positive whole number/);
    expect(() => parseLlmOptions({ layers: '31' })).toThrow(/--layers: SmolLM2-135M has 30 layers, got 31/);
    expect(() => parseLlmOptions({ 'decode-tokens': '1' })).toThrow(/--decode-tokens: at least 2/);
    expect(() => parseLlmOptions({ 'prompt-tokens': '8190', 'decode-tokens': '4' })).toThrow(/at most 8192/);
  });
});

describe('llm bench: records and table', () => {
  const ours = { engine: 'lwm-wgsl', prefillMs: 500, decodeMs: 20, tokens: [5, 6, 7, 8] };
  const gpu = { engine: 'ort-web-webgpu', prefillMs: 250, decodeMs: 40, tokens: [5, 6, 9, 8] };
  const wasm = { engine: 'ort-web-wasm', prefillMs: 1000, decodeMs: 100, tokens: [5, 6, 7, 8] };

  it('greedy agreement counts the tokens equal before the first difference', () => {
    expect(greedyAgreement([1, 2, 3], [1, 2, 3])).toEqual({ same: 3, of: 3, firstDiff: null });
    expect(greedyAgreement([1, 2, 3, 4], [1, 9, 3, 4])).toEqual({ same: 1, of: 4, firstDiff: 1 });
  });

  it('tokens/s per engine, agreement per peer, the LoRA step; bench.mjs derives ours ÷ each peer', () => {
    const records = llmRecords('case', 100, [ours, gpu, wasm], [], { stepMs: 400, tokens: 256 });
    const value = (engine: string, metric: string) => records.find((r) => r.engine === engine && r.metric === metric)?.value;
    expect(value('lwm-wgsl', 'prefill_tokens_per_s')).toBe(200);
    expect(value('lwm-wgsl', 'decode_tokens_per_s')).toBe(50);
    expect(value('ort-web-webgpu', 'greedy_tokens_equal')).toBe(2);
    expect(value('ort-web-wasm', 'greedy_tokens_equal')).toBe(4);
    expect(value('lwm-wgsl', 'greedy_tokens_equal')).toBeUndefined();
    expect(value('lwm-wgsl-lora', 'lora_sft_step_ms')).toBe(400);
    expect(value('lwm-wgsl-lora', 'lora_sft_tokens_per_s')).toBe(640);
    expect(records.every((r) => r.suite === 'llm' && r.case === 'case')).toBe(true);
    const ratios = speedupRecords(records as unknown as Parameters<typeof speedupRecords>[0], 'run');
    const ratio = (peer: string, metric: string) => ratios.find((r) => r.peer === peer && r.metric === `speedup_${metric}`)?.value;
    expect(ratio('ort-web-webgpu', 'decode_tokens_per_s')).toBe(2);
    expect(ratio('ort-web-webgpu', 'prefill_tokens_per_s')).toBe(0.5);
    expect(ratio('ort-web-wasm', 'decode_tokens_per_s')).toBe(5);
    // The agreement and the LoRA step have no peer: no ratio.
    expect(ratios.filter((r) => /greedy|lora/.test(r.metric))).toEqual([]);
  });

  it('the table has a row per engine with ours ÷ it, and a failed engine says why', () => {
    const records = llmRecords('case', 100, [ours, gpu], [{ engine: 'ort-web-wasm', message: 'no wasm' }], null);
    const lines = llmTable(records).split('\n');
    expect(lines[0]).toMatch(
      /^engine\s+prefill tok\/s\s+decode tok\/s\s+decode ms\/token\s+lwm-wgsl ÷ it, prefill\s+lwm-wgsl ÷ it, decode\s+greedy = lwm-wgsl$/,
    );
    expect(lines[2].split(/\s{2,}/)).toEqual(['lwm-wgsl', '200.0', '50.00', '20.0']);
    expect(lines[3].split(/\s{2,}/)).toEqual(['ort-web-webgpu', '400.0', '25.00', '40.0', '0.50×', '2.00×', '2/4']);
    expect(lines[4].split(/\s{2,}/)).toEqual(['ort-web-wasm', 'failed', 'no wasm']); // the reason in the last column
    expect(llmTable(llmRecords('case', 100, [ours], [], { stepMs: 400, tokens: 256 }))).toContain('LoRA SFT step (lwm-wgsl): 400 ms, 640.0 tokens/s');
  });
});
