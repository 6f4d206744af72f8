// Hugging Face config.json and weights onto our model, checked against transformers itself: the
// tiny Llama / Qwen2 / Qwen3 fixtures' logits and greedy tokens through the reference model
// (src/reference/gpt.ts, the twin the GPU model is held to).
import { describe, expect, it } from 'vitest';
import { gptForward } from '../../reference/gpt.ts';
import { paramLayout } from '../../core/model/params.ts';
import { forwardFlops, paramCount, presetConfig } from '../../core/model/config.ts';
import { loadCheckpoint, saveCheckpoint } from '../../core/model/checkpoint.ts';
import { configFromHf, generationConfigFromHf, HfConfigError } from './config.ts';
import { loadTinyModel, maxRelError, TINY_ARCHS } from './tinyFixtures.ts';
import { paramsFromHf, paramsToHf, type HfTensor } from './weights.ts';

function argmax(row: ArrayLike<number>, from = 0, n = row.length): number {
  let best = from;
  for (let i = from; i < from + n; i++) if (row[i] > row[best]) best = i;
  return best - from;
}

describe('Hugging Face tiny models through the reference model', () => {
  for (const arch of TINY_ARCHS) {
    it(`${arch}: logits within 1e-4 and the same greedy tokens as transformers`, async () => {
      const m = await loadTinyModel(arch);
      const c = m.hf.config;
      const T = m.inputIds.length;
      const { logits } = gptForward(m.params, c, m.inputIds, 1, T);
      expect(maxRelError(logits, m.logits)).toBeLessThan(1e-4);
      const seq = [...m.inputIds];
      for (let i = 0; i < m.greedy.length; i++) {
        const out = gptForward(m.params, c, seq, 1, seq.length).logits;
        seq.push(argmax(out, (seq.length - 1) * c.vocabSize, c.vocabSize));
      }
      expect(seq.slice(T)).toEqual(m.greedy);
    });
  }

  it('maps each architecture onto the block it needs', async () => {
    const [llama, qwen2, qwen3] = await Promise.all(TINY_ARCHS.map(loadTinyModel));
    // The Hub spelling (top-level rope_theta / rope_scaling, torch_dtype) …
    expect(llama.rawConfig.rope_theta).toBe(10000);
    expect(llama.hf.config).toMatchObject({
      kvHeads: 2,
      mlp: 'swiglu',
      tiedEmbeddings: true,
      qkvBias: false,
      projBias: false,
      ropeScaling: 'llama3',
      ropeFactor: 8,
      ropeOriginalContext: 32,
    });
    expect(llama.hf.dtype).toBe('float32');
    // … and transformers 5's (rope_parameters, dtype).
    expect(qwen2.rawConfig.rope_parameters).toBeDefined();
    expect(qwen2.hf.config).toMatchObject({
      tiedEmbeddings: false,
      qkvBias: true,
      projBias: false,
      mlpBias: false,
      ropeScaling: 'linear',
      ropeFactor: 2,
      ropeBase: 1e6,
    });
    expect(qwen3.hf.config).toMatchObject({ qkNorm: true, headDim: 12, qkvBias: false, tiedEmbeddings: true });
    expect(qwen3.hf.eosTokenIds).toEqual([2]);
  });

  it('writes back the tensors it read (paramsToHf inverts paramsFromHf)', async () => {
    const m = await loadTinyModel('qwen2');
    const back = paramsToHf(m.hf.config, m.params);
    expect(paramsFromHf(m.hf.config, back)).toEqual(m.params);
    expect([...back.keys()]).toContain('model.layers.1.self_attn.k_proj.bias');
    expect(paramLayout(m.hf.config).byName.has('h.0.attn.c_proj.bias')).toBe(false);
  });

  it('counts the parameters transformers has, and a checkpoint keeps the architecture', async () => {
    for (const arch of TINY_ARCHS) {
      const m = await loadTinyModel(arch);
      const c = m.hf.config;
      const hfCount = [...paramsToHf(c, m.params).values()].reduce((n, t) => n + t.data.length, 0);
      expect(paramCount(c)).toBe(hfCount);
      expect(paramLayout(c).paramCount).toBe(hfCount);
      expect(forwardFlops(c, 1, 8)).toBeGreaterThan(2 * 8 * hfCount - 2 * 8 * c.vocabSize * c.dModel);
      const back = loadCheckpoint(saveCheckpoint({ config: c, params: m.params, step: 3 }));
      expect(back.config).toEqual(c);
      expect(back.params).toEqual(m.params);
      // A GPT-2 model's checkpoint does not fit it.
      expect(() => loadCheckpoint(saveCheckpoint({ config: c, params: m.params, step: 0 }), { config: presetConfig('micro') })).toThrow(
        /does not fit this model/,
      );
    }
  });

  it('names a missing, misshapen or unexpected tensor', async () => {
    const m = await loadTinyModel('llama');
    const good = paramsToHf(m.hf.config, m.params);
    const without = new Map(good);
    without.delete('model.layers.1.mlp.up_proj.weight');
    expect(() => paramsFromHf(m.hf.config, without)).toThrow(/model\.layers\.1\.mlp\.up_proj\.weight is missing \(expected shape \[40, 32\]\)/);
    const wrong = new Map(good);
    wrong.set('model.norm.weight', { shape: [31], data: new Float32Array(31) });
    expect(() => paramsFromHf(m.hf.config, wrong)).toThrow(/model\.norm\.weight has shape \[31\], the config needs \[32\]/);
    const extra = new Map<string, HfTensor>(good);
    extra.set('model.layers.0.self_attn.q_proj.bias', { shape: [32], data: new Float32Array(32) });
    expect(() => paramsFromHf(m.hf.config, extra)).toThrow(/does not use: model\.layers\.0\.self_attn\.q_proj\.bias/);
  });
});

describe('config.json mapping', () => {
  const base = {
    architectures: ['LlamaForCausalLM'],
    vocab_size: 100,
    hidden_size: 64,
    intermediate_size: 96,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 1,
    max_position_embeddings: 128,
    rms_norm_eps: 1e-5,
    hidden_act: 'silu',
  };

  it('reads both spellings of RoPE the same way', () => {
    const hub = configFromHf({ ...base, rope_theta: 500000, rope_scaling: { rope_type: 'linear', factor: 4 }, torch_dtype: 'bfloat16' });
    const v5 = configFromHf({ ...base, rope_parameters: { rope_type: 'linear', rope_theta: 500000, factor: 4 }, dtype: 'bfloat16' });
    expect(hub).toEqual(v5);
    expect(hub.config).toMatchObject({ ropeBase: 500000, ropeScaling: 'linear', ropeFactor: 4, kvHeads: 1, mlpWidth: 96 });
    expect(hub.dtype).toBe('bfloat16');
    // Older files spell rope_type as type; null rope_scaling means none.
    expect(configFromHf({ ...base, rope_scaling: { type: 'linear', factor: 2 } }).config.ropeFactor).toBe(2);
    expect(configFromHf({ ...base, rope_scaling: null }).config.ropeScaling).toBeUndefined();
  });

  it('accepts the shapes of the small models people use (SmolLM2-135M, Qwen2.5-0.5B, Qwen3-0.6B)', () => {
    const smol = configFromHf({
      architectures: ['LlamaForCausalLM'],
      hidden_size: 576,
      intermediate_size: 1536,
      num_attention_heads: 9,
      num_key_value_heads: 3,
      head_dim: 64,
      num_hidden_layers: 30,
      vocab_size: 49152,
      max_position_embeddings: 8192,
      rms_norm_eps: 1e-5,
      rope_theta: 100000,
      rope_scaling: null,
      tie_word_embeddings: true,
      hidden_act: 'silu',
      attention_bias: false,
      mlp_bias: false,
      pretraining_tp: 1,
      torch_dtype: 'bfloat16',
      bos_token_id: 0,
      eos_token_id: 0,
    });
    expect(smol.config).toMatchObject({ heads: 9, kvHeads: 3, dModel: 576, mlpWidth: 1536, tiedEmbeddings: true, ropeBase: 100000 });
    expect(smol.config.headDim).toBeUndefined(); // 576 / 9 = 64, the default
    const qwen25 = configFromHf({
      architectures: ['Qwen2ForCausalLM'],
      hidden_size: 896,
      intermediate_size: 4864,
      num_attention_heads: 14,
      num_key_value_heads: 2,
      num_hidden_layers: 24,
      vocab_size: 151936,
      max_position_embeddings: 32768,
      rms_norm_eps: 1e-6,
      rope_theta: 1000000,
      tie_word_embeddings: true,
      hidden_act: 'silu',
      use_sliding_window: false,
      sliding_window: 32768,
      max_window_layers: 21,
      torch_dtype: 'bfloat16',
      eos_token_id: 151643,
    });
    expect(qwen25.config).toMatchObject({ qkvBias: true, projBias: false, kvHeads: 2 });
    const qwen3 = configFromHf(
      {
        architectures: ['Qwen3ForCausalLM'],
        hidden_size: 1024,
        intermediate_size: 3072,
        num_attention_heads: 16,
        num_key_value_heads: 8,
        head_dim: 128,
        num_hidden_layers: 28,
        vocab_size: 151936,
        max_position_embeddings: 40960,
        rms_norm_eps: 1e-6,
        rope_theta: 1000000,
        rope_scaling: null,
        tie_word_embeddings: true,
        hidden_act: 'silu',
        attention_bias: false,
        use_sliding_window: false,
        torch_dtype: 'bfloat16',
        eos_token_id: 151645,
      },
      { contextLength: 4096 },
    );
    expect(qwen3.config).toMatchObject({ headDim: 128, qkNorm: true, contextLength: 4096 });
    expect(qwen3.eosTokenIds).toEqual([151645]);
  });

  it('reads generation_config.json stop and start ids, config.json the fallback', () => {
    expect(generationConfigFromHf({ eos_token_id: [151645, 151643], bos_token_id: 151643 })).toEqual({ eosTokenIds: [151645, 151643], bosTokenId: 151643 });
    expect(generationConfigFromHf({}, { eosTokenIds: [2], bosTokenId: 1 })).toEqual({ eosTokenIds: [2], bosTokenId: 1 });
    expect(() => generationConfigFromHf({ eos_token_id: 'x' })).toThrow(/eos_token_id: must be a token id or a list of them/);
  });

  it('refuses what it cannot run, naming the field', () => {
    const err = (j: object) => {
      try {
        configFromHf(j);
      } catch (e) {
        expect(e).toBeInstanceOf(HfConfigError);
        return (e as Error).message;
      }
      throw new Error('no error');
    };
    expect(err({ ...base, architectures: ['MistralForCausalLM'] })).toMatch(
      /architectures: "MistralForCausalLM" is not supported \(supported: LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM\)/,
    );
    expect(err({ ...base, rope_scaling: { rope_type: 'yarn', factor: 4 } })).toMatch(/rope_scaling\.rope_type: RoPE scaling "yarn" is not supported/);
    expect(err({ ...base, rope_parameters: { rope_type: 'dynamic', rope_theta: 1e4, factor: 2 } })).toMatch(/rope_parameters\.rope_type/);
    expect(err({ ...base, rope_scaling: { rope_type: 'llama3', factor: 8 } })).toMatch(/rope_scaling\.low_freq_factor: must be a positive number/);
    expect(err({ ...base, hidden_act: 'gelu' })).toMatch(/hidden_act: "gelu" is not supported/);
    expect(err({ ...base, architectures: ['Qwen2ForCausalLM'], use_sliding_window: true })).toMatch(/use_sliding_window/);
    expect(err({ ...base, num_key_value_heads: 3 })).toMatch(
      /num_key_value_heads: gives a model this engine cannot run: .*kvHeads: must be a positive integer dividing heads \(4\), got 3/,
    );
    expect(err({ ...base, hidden_size: undefined })).toMatch(/hidden_size: must be a positive integer/);
    expect(err({ ...base, head_dim: 6 })).toMatch(/^config\.json: head_dim: .*must be a multiple of 4/);
    expect(err({ ...base, num_attention_heads: 1, num_key_value_heads: 1, hidden_size: 256 })).toMatch(/head size .* exceeds 128/);
  });
});
