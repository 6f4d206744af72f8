// The memory plan of a pretrained model before loading: counts checked by hand on SmolLM2-135M's
// shape (its public parameter count), refusals that offer runs which do fit, and the plan that
// cuts a tensor larger than one storage binding into pieces (checked as a property).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkFolderMemory,
  checkMemory,
  dimsFromConfigJson,
  estimateMemory,
  F16_WEIGHTS,
  largestActivation,
  loraCount,
  splitPlan,
  weightCount,
  type AdapterLimits,
  type ModelDims,
} from './memory.ts';

/** A Llama-family model's tensors as its safetensors file lists them (tied embeddings: no lm_head). */
function llamaDims(d: Omit<ModelDims, 'tensors'>, tied = true): ModelDims {
  const q = d.heads * d.headDim;
  const kv = d.kvHeads * d.headDim;
  const tensors: { name: string; shape: number[] }[] = [{ name: 'model.embed_tokens.weight', shape: [d.vocab, d.hidden] }];
  for (let l = 0; l < d.layers; l++) {
    const p = `model.layers.${l}`;
    tensors.push(
      { name: `${p}.self_attn.q_proj.weight`, shape: [q, d.hidden] },
      { name: `${p}.self_attn.k_proj.weight`, shape: [kv, d.hidden] },
      { name: `${p}.self_attn.v_proj.weight`, shape: [kv, d.hidden] },
      { name: `${p}.self_attn.o_proj.weight`, shape: [d.hidden, q] },
      { name: `${p}.mlp.gate_proj.weight`, shape: [d.intermediate, d.hidden] },
      { name: `${p}.mlp.up_proj.weight`, shape: [d.intermediate, d.hidden] },
      { name: `${p}.mlp.down_proj.weight`, shape: [d.hidden, d.intermediate] },
      { name: `${p}.input_layernorm.weight`, shape: [d.hidden] },
      { name: `${p}.post_attention_layernorm.weight`, shape: [d.hidden] },
    );
  }
  tensors.push({ name: 'model.norm.weight', shape: [d.hidden] });
  if (!tied) tensors.push({ name: 'lm_head.weight', shape: [d.vocab, d.hidden] });
  return { ...d, tensors };
}

const SMOLLM2_135M = llamaDims({ layers: 30, hidden: 576, intermediate: 1536, heads: 9, kvHeads: 3, headDim: 64, vocab: 49152 });
const QWEN25_05B = llamaDims({ layers: 24, hidden: 896, intermediate: 4864, heads: 14, kvHeads: 2, headDim: 64, vocab: 151936 });
const GiB = 2 ** 30;
const WEBGPU_DEFAULTS = { maxBufferSize: 256 * 2 ** 20, maxStorageBufferBindingSize: 128 * 2 ** 20 };

describe('memory estimate', () => {
  it('counts SmolLM2-135M as its public parameter count, its KV cache and its LoRA adapters by hand', () => {
    expect(weightCount(SMOLLM2_135M)).toBe(134_515_008);
    const inf = estimateMemory(SMOLLM2_135M, { mode: { kind: 'inference' }, context: 2048, batch: 1 });
    expect(inf.weights).toBe(134_515_008 * 4);
    expect(inf.kvCache).toBe(2 * 30 * 2048 * 3 * 64 * 4);
    expect(inf.gradients + inf.optimizer + inf.adapters).toBe(0);
    // f16 weights: the matrices at 2 bytes, the 61 norm gains of 576 (35,136 values) at 4.
    expect(estimateMemory(SMOLLM2_135M, { mode: { kind: 'inference' }, context: 2048, batch: 1, weightBytes: 2 }).weights).toBe(
      (134_515_008 - 35_136) * 2 + 35_136 * 4,
    );
    // rank 8: q, o 8·(576+576); k, v 8·(576+192); gate, up, down 8·(576+1536); 30 layers
    expect(loraCount(SMOLLM2_135M, 8)).toBe(30 * 8 * (2 * 1152 + 2 * 768 + 3 * 2112));
  });

  it('full fine-tuning adds gradients and AdamW m and v for every weight; LoRA only for its adapters', () => {
    const run = { context: 512, batch: 4 } as const;
    const full = estimateMemory(SMOLLM2_135M, { ...run, mode: { kind: 'full' } });
    expect(full.gradients).toBe(full.weights);
    expect(full.optimizer).toBe(2 * full.weights);
    expect(full.kvCache).toBe(0);
    const lora = estimateMemory(SMOLLM2_135M, { ...run, mode: { kind: 'lora', rank: 8 } });
    expect(lora.adapters).toBe(loraCount(SMOLLM2_135M, 8) * 4);
    expect(lora.optimizer).toBe(2 * lora.adapters);
    expect(lora.activations).toBe(full.activations);
    expect(lora.total).toBeLessThan(full.total - 1.5 * full.weights);
    // Training keeps every layer's activations: they grow with the context, more than inference's.
    const longer = estimateMemory(SMOLLM2_135M, { ...run, context: 1024, mode: { kind: 'full' } });
    expect(longer.activations).toBe(2 * full.activations);
    expect(estimateMemory(SMOLLM2_135M, { ...run, mode: { kind: 'inference' } }).activations).toBeLessThan(full.activations / 4);
  });
});

describe('checkMemory', () => {
  const limits: AdapterLimits = { ...WEBGPU_DEFAULTS, memoryBudget: 2 * GiB };

  it('lets inference of SmolLM2-135M through, saying how much of the budget it takes', () => {
    const r = checkMemory(SMOLLM2_135M, { mode: { kind: 'inference' }, context: 2048, batch: 1 }, limits, 'SmolLM2-135M');
    expect(r.fits).toBe(true);
    expect(r.splits).toEqual([]); // its embedding (108 MiB) fits one 128 MiB binding
    expect(r.message).toMatch(/^SmolLM2-135M fits: .* of 2\.00 GiB for inference, context 2048/);
  });

  it('refuses full fine-tuning over the budget and offers runs that fit: LoRA, a shorter context, inference', () => {
    const run = { mode: { kind: 'full' }, context: 2048, batch: 8 } as const;
    const r = checkMemory(SMOLLM2_135M, run, limits, 'SmolLM2-135M');
    expect(r.fits).toBe(false);
    expect(r.message).toMatch(
      /SmolLM2-135M needs .* GiB for full fine-tuning, context 2048, batch 8, f32 weights \(weights 513\.1 MiB, gradients 513\.1 MiB, AdamW m and v 1\.00 GiB, activations .*\), more than the 2\.00 GiB budget; the logits of 16384 rows × 49152 tokens take 3\.00 GiB, more than one storage binding \(128\.0 MiB\) for full fine-tuning, context 2048, batch 8, f32 weights\. Would fit instead: /,
    );
    // Full fine-tuning cannot fit at all (weights, gradients and m, v alone are 2.0 GiB); LoRA fits at a shorter context (its
    // [8·context, 49152] logits within one 128 MiB binding: context 80), inference at batch 1.
    expect(r.alternatives.map((a) => a.change)).toEqual(['LoRA rank 8 instead of full fine-tuning, context 80', 'inference only, batch 1']);
    expect(r.message).toMatch(
      /Would fit instead: LoRA rank 8 instead of full fine-tuning, context 80 \(1\.\d\d GiB\); inference only, batch 1 \(\d+\.\d MiB\)\.$/,
    );
    for (const a of r.alternatives) {
      expect(a.total).toBeLessThanOrEqual(limits.memoryBudget);
      expect(estimateMemory(SMOLLM2_135M, a.run).total).toBe(a.total);
    }
    // The context offered is the longest that fits: 16 tokens more does not.
    const lora = r.alternatives[0].run;
    expect(checkMemory(SMOLLM2_135M, { ...lora, context: lora.context + 16 }, limits).fits).toBe(false);
    // A smaller batch comes before a shorter context; f16 weights are not offered where they change nothing that matters
    // (the logits, not the weights, are what does not fit here).
    const small = checkMemory(SMOLLM2_135M, { mode: { kind: 'lora', rank: 8 }, context: 256, batch: 8 }, limits);
    expect(small.alternatives.map((a) => a.change)).toEqual(['batch 1', 'inference only']);
  });

  it('checks the largest activation buffer against one binding: training logits are [tokens, vocab], inference keeps the last rows only', () => {
    const train = largestActivation(SMOLLM2_135M, { mode: { kind: 'lora', rank: 8 }, context: 80, batch: 8 });
    expect(train).toEqual({ bytes: 640 * 49152 * 4, what: 'the logits of 640 rows × 49152 tokens' });
    const infer = largestActivation(SMOLLM2_135M, { mode: { kind: 'inference' }, context: 8192, batch: 1 });
    expect(infer.bytes).toBeLessThan(limits.maxStorageBufferBindingSize);
    expect(checkMemory(SMOLLM2_135M, { mode: { kind: 'inference' }, context: 8192, batch: 1 }, { ...limits, memoryBudget: 2 ** 34 }).fits).toBe(true);
    const tight = checkMemory(SMOLLM2_135M, { mode: { kind: 'lora', rank: 8 }, context: 256, batch: 4 }, { ...limits, memoryBudget: 2 ** 34 });
    expect(tight.fits).toBe(false);
    expect(tight.problems).toEqual([
      expect.stringMatching(/^the logits of 1024 rows × 49152 tokens take 192\.0 MiB, more than one storage binding \(128\.0 MiB\)/),
    ]);
    expect(tight.alternatives[0].change).toBe('batch 1');
  });

  it("splits a tensor over one binding (Qwen2.5-0.5B's embedding) and says when nothing fits", () => {
    const r = checkMemory(QWEN25_05B, { mode: { kind: 'inference' }, context: 1024, batch: 1 }, { ...limits, memoryBudget: 4 * GiB });
    expect(r.fits).toBe(true);
    expect(r.splits).toEqual([{ name: 'model.embed_tokens.weight', pieces: 5 }]);
    const tiny = checkMemory(QWEN25_05B, { mode: { kind: 'inference' }, context: 1024, batch: 1 }, { ...limits, memoryBudget: 256 * 2 ** 20 }, 'Qwen2.5-0.5B');
    expect(tiny.fits).toBe(false);
    expect(tiny.alternatives).toEqual([]);
    expect(tiny.message).toMatch(/Nothing smaller fits either .*cannot hold Qwen2\.5-0\.5B/);
  });

  it('offers f16 weights for a model whose f32 weights do not fit, and says how much they take', () => {
    const run = { mode: { kind: 'inference' }, context: 1024, batch: 1 } as const;
    const budget = { ...limits, memoryBudget: 1.5 * GiB };
    const f32 = checkMemory(QWEN25_05B, run, budget, 'Qwen2.5-0.5B');
    expect(f32.fits).toBe(false);
    // Its f32 weights alone (1.84 GiB) are over the budget: no shorter context or batch helps, f16 does.
    expect(f32.alternatives.map((a) => a.change)).toEqual([F16_WEIGHTS]);
    expect(f32.message).toMatch(
      /^Qwen2\.5-0\.5B needs 1\.95 GiB for inference, context 1024, batch 1, f32 weights \(weights 1\.84 GiB, .*Would fit instead: f16 weights \(half the memory, f32 accumulation\) \(1\.03 GiB\)\.$/,
    );
    const f16 = checkMemory(QWEN25_05B, { ...run, weightBytes: 2 }, budget, 'Qwen2.5-0.5B');
    expect(f16.fits).toBe(true);
    expect(f16.message).toMatch(/fits: 1\.03 GiB of 1\.50 GiB for inference, context 1024, batch 1, f16 weights \(weights 942\.\d MiB/);
    expect(f16.estimate.weights).toBeLessThan(f32.estimate.weights / 1.99);
    // Where f32 fits only with a smaller batch and f16 as asked, both are offered; full
    // fine-tuning trains the weights, so never in f16.
    const pair = checkMemory(QWEN25_05B, { ...run, batch: 3 }, { ...limits, memoryBudget: 2 * GiB });
    expect(pair.alternatives.map((a) => a.change)).toEqual(['batch 1', F16_WEIGHTS]);
    const full = checkMemory(QWEN25_05B, { mode: { kind: 'full' }, context: 64, batch: 1 }, { ...limits, memoryBudget: 4 * GiB });
    expect(full.alternatives.map((a) => a.change)).not.toContain(F16_WEIGHTS);
  });

  it('refuses a tensor whose single row is larger than one binding', () => {
    const wide = { ...SMOLLM2_135M, tensors: [{ name: 'w', shape: [2, 40 * 2 ** 20] }] };
    const r = checkMemory(wide, { mode: { kind: 'inference' }, context: 16, batch: 1 }, { ...limits, memoryBudget: 8 * GiB });
    expect(r.fits).toBe(false);
    expect(r.problems[0]).toMatch(/tensor 'w': a row of \[2, 41943040\] is 167772160 bytes, more than one storage binding/);
    expect(r.alternatives).toEqual([]);
  });
});

describe('splitPlan', () => {
  it("cuts Qwen2.5-0.5B's f32 embedding into 5 binding-sized pieces in 3 buffers at WebGPU's default limits", () => {
    const p = splitPlan([151936, 896], 4, WEBGPU_DEFAULTS);
    expect(p.rowBytes).toBe(3584);
    expect(p.pieces.map((x) => x.rowEnd - x.rowStart)).toEqual([37449, 37449, 37449, 37449, 2140]);
    expect(p.pieces.map((x) => [x.buffer, x.offset])).toEqual([
      [0, 0],
      [0, 37449 * 3584],
      [1, 0],
      [1, 37449 * 3584],
      [2, 0],
    ]);
    expect(splitPlan([49152, 576], 4, WEBGPU_DEFAULTS).pieces).toHaveLength(1);
  });

  it('gives each piece its own buffer when whole rows cannot start at aligned offsets', () => {
    const p = splitPlan([10, 75], 4, { maxBufferSize: 4096, maxStorageBufferBindingSize: 1000 });
    expect(p.pieces.map((x) => [x.rowStart, x.rowEnd, x.buffer, x.offset])).toEqual([
      [0, 3, 0, 0],
      [3, 6, 1, 0],
      [6, 9, 2, 0],
      [9, 10, 3, 0],
    ]);
  });

  it('covers every row once, in pieces within one binding, at aligned offsets in buffers within the limit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 300 }),
        fc.constantFrom(2, 4),
        fc.integer({ min: 1024, max: 200_000 }),
        fc.integer({ min: 1, max: 4 }),
        (rows, cols, bytes, binding, bufferFactor) => {
          const limits = { maxStorageBufferBindingSize: binding, maxBufferSize: binding * bufferFactor, minStorageBufferOffsetAlignment: 256 };
          if (cols * bytes > binding) return;
          const p = splitPlan([rows, cols], bytes, limits);
          let next = 0;
          const used = p.buffers.map(() => 0);
          const bad: string[] = [];
          for (const piece of p.pieces) {
            if (piece.rowStart !== next) bad.push(`gap before row ${piece.rowStart}`);
            next = piece.rowEnd;
            if (piece.bytes !== (piece.rowEnd - piece.rowStart) * cols * bytes) bad.push('bytes');
            if (piece.bytes > binding) bad.push('over one binding');
            if (piece.offset % 256 !== 0) bad.push('unaligned');
            if (piece.offset !== used[piece.buffer]) bad.push('overlap');
            used[piece.buffer] += piece.bytes;
          }
          expect(bad).toEqual([]);
          expect(next).toBe(rows);
          expect(used).toEqual(p.buffers);
          expect(Math.max(...p.buffers)).toBeLessThanOrEqual(limits.maxBufferSize);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('dimsFromConfigJson', () => {
  it('reads the sizes from config.json, with the defaults transformers uses', () => {
    const smol = {
      hidden_size: 576,
      num_hidden_layers: 30,
      num_attention_heads: 9,
      num_key_value_heads: 3,
      intermediate_size: 1536,
      vocab_size: 49152,
      rope_theta: 100000,
    };
    expect(dimsFromConfigJson(smol, SMOLLM2_135M.tensors)).toEqual(SMOLLM2_135M);
    // Qwen3 sets head_dim apart from hidden / heads; without num_key_value_heads every head has its own K and V.
    const d = dimsFromConfigJson({ ...smol, head_dim: 128, num_key_value_heads: undefined }, []);
    expect([d.headDim, d.kvHeads]).toEqual([128, 9]);
    expect(dimsFromConfigJson({ ...smol, head_dim: undefined }, []).headDim).toBe(64);
    expect(() => dimsFromConfigJson({ ...smol, hidden_size: '576' }, [], 'm/config.json')).toThrow(
      /m\/config\.json: hidden_size must be a positive integer, got "576"/,
    );
  });

  it('sizes an opened folder from its config.json and weight headers, named by the folder', () => {
    const config = { hidden_size: 576, num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3, intermediate_size: 1536, vocab_size: 49152 };
    const folder = { config, files: { label: 'SmolLM2-135M' }, weights: { tensors: SMOLLM2_135M.tensors } };
    const run = { mode: { kind: 'full' }, context: 2048, batch: 8 } as const;
    const limits = { ...WEBGPU_DEFAULTS, memoryBudget: 2 * GiB };
    expect(checkFolderMemory(folder, run, limits)).toEqual(checkMemory(SMOLLM2_135M, run, limits, 'SmolLM2-135M'));
    expect(() => checkFolderMemory({ ...folder, config: {} }, run, limits)).toThrow(/SmolLM2-135M\/config\.json: hidden_size must be a positive integer/);
  });
});
