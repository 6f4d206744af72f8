// The config.json an ONNX export of one of our checkpoints carries: a Llama / Qwen2 / Qwen3 config
// that maps back onto exactly the same network where one exists, otherwise model_type "lwm" with
// our config (LayerNorm with RoPE, which no transformers class computes).
import { describe, expect, it } from 'vitest';
import { trainBpe } from '../../core/tokenizer/train.ts';
import { presetConfig } from '../../core/model/config.ts';
import { configFromHf } from '../hf/config.ts';
import { loadTinyModel, TINY_ARCHS } from '../hf/tinyFixtures.ts';
import { initParams } from '../init.ts';
import { blockPlan } from '../../core/model/plan.ts';
import { checkpointSideFiles, llamaFamilyConfigJson, onnxExportFiles } from './export.ts';

const json = (files: { name: string; bytes: Uint8Array }[], name: string) =>
  JSON.parse(new TextDecoder().decode(files.find((f) => f.name === name)!.bytes)) as Record<string, unknown>;

describe('config.json of an ONNX export', () => {
  it.each(TINY_ARCHS)('%s: the architecture transformers would build, mapping back onto the same network', async (arch) => {
    const m = await loadTinyModel(arch);
    const out = llamaFamilyConfigJson(m.hf.config, { bos: 1, eos: 2 })!;
    expect(out.architectures).toEqual([m.hf.architecture]);
    const back = configFromHf(out).config;
    expect(JSON.stringify(blockPlan(back))).toBe(JSON.stringify(blockPlan(m.hf.config)));
    expect(Array.from(blockPlan(back).ropeFreqs)).toEqual(Array.from(blockPlan(m.hf.config).ropeFreqs));
    expect(back.tiedEmbeddings).toBe(m.hf.config.tiedEmbeddings);
  });

  it('a LayerNorm + RoPE checkpoint (the mini / small presets) is model_type "lwm" with our config; the folder has every file', () => {
    const tok = trainBpe(['ls -la', 'cat a.txt', 'hello world'], { vocabSize: 280 });
    const config = presetConfig('micro', { positions: 'rope', vocabSize: tok.vocabSize });
    expect(llamaFamilyConfigJson(config, {})).toBeNull();
    const params = initParams(config, 1);
    const files = onnxExportFiles({ config, params }, checkpointSideFiles({ config, params }, tok));
    expect(files.map((f) => f.name)).toEqual(['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx']);
    const c = json(files, 'config.json');
    expect(c).toMatchObject({
      model_type: 'lwm',
      num_hidden_layers: 2,
      num_key_value_heads: 2,
      head_dim: 16,
      eos_token_id: tok.special.eos,
      lwm_config: config,
    });
    expect(json(files, 'generation_config.json')).toEqual({ bos_token_id: tok.special.bos, eos_token_id: tok.special.eos, pad_token_id: tok.special.pad });
  });
});
