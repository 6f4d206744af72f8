// A model as an ONNX causal-LM folder (`lwm export CKPT --to onnx -o DIR`), laid out as Hugging
// Face's ONNX exports are (optimum, the transformers.js model repos):
//
//   onnx/model.onnx          the decoder with its KV cache (decoder.ts), weights inside; a model
//                            beyond protobuf's 2 GB keeps them in onnx/model.onnx_data
//   config.json              the model's Hugging Face config: GPT2LMHeadModel for a GPT-2-style
//                            checkpoint, Llama / Qwen2 / Qwen3 for those (an HF folder's own file,
//                            copied), else model_type "lwm" with our config under "lwm_config"
//                            (LayerNorm with RoPE: no transformers class computes it, the graph does)
//   generation_config.json   bos / eos / pad ids
//   tokenizer.json, tokenizer_config.json (and the folder's other tokenizer files, for an HF folder)
//   lwm_template.json        for one of our checkpoints, the prompt template it was trained with
//                            (../templateFile.ts), which the ONNX backend renders turns with when loaded back
import type { Tokenizer } from '../../core/tokenizer/tokenizer.ts';
import { hfTokenizerJson } from '../../core/tokenizer/hfExport.ts';
import type { Checkpoint } from '../../core/model/checkpoint.ts';
import { headSize, kvHeads, mlpHidden, type ModelConfig } from '../../core/model/config.ts';
import { configFromHf } from '../hf/config.ts';
import { gpt2Mismatch, HfExportRefused, hfExportFiles, tokenizerConfigJson } from '../hf/export.ts';
import type { ModelFiles } from '../hf/files.ts';
import { blockPlan } from '../../core/model/plan.ts';
import { decoderModel, type DecoderExportOptions } from './decoder.ts';
import { TEMPLATE_FILE, templateFileBytes } from '../templateFile.ts';
import type { PromptTemplate } from '../../core/templates/index.ts';

export interface ExportFile {
  /** Path inside the folder ('onnx/model.onnx', 'config.json', …). */
  name: string;
  bytes: Uint8Array;
}

const enc = new TextEncoder();
const json = (v: unknown) => enc.encode(JSON.stringify(v, null, 2) + '\n');

/** The folder's files: onnx/model.onnx (and its external data) after the given config and tokenizer files. */
export function onnxExportFiles(
  model: { config: ModelConfig; params: Float32Array },
  side: readonly ExportFile[],
  options: DecoderExportOptions = {},
): ExportFile[] {
  const { model: bytes, externalData } = decoderModel(model.config, model.params, { ...options, fileName: 'model.onnx' });
  return [...side, { name: 'onnx/model.onnx', bytes }, ...(externalData ? [{ name: 'onnx/model.onnx_data', bytes: externalData }] : [])];
}

/** Whether two configs give the same network (the same block plan, sizes, head and norm eps). */
function sameNetwork(a: ModelConfig, b: ModelConfig): boolean {
  const key = (c: ModelConfig) =>
    JSON.stringify([blockPlan(c), Array.from(blockPlan(c).ropeFreqs), c.vocabSize, c.layers, c.tiedEmbeddings, c.normEps, c.contextLength]);
  return key(a) === key(b);
}

/** A Llama / Qwen2 / Qwen3 config.json that transformers reads back as exactly this network, or null. */
export function llamaFamilyConfigJson(c: ModelConfig, ids: { bos?: number; eos?: number }): Record<string, unknown> | null {
  if (c.norm !== 'rmsnorm' || c.positions !== 'rope' || c.mlp !== 'swiglu') return null;
  const qkvBias = c.qkvBias ?? true;
  const arch = c.qkNorm ? 'Qwen3ForCausalLM' : qkvBias && !(c.projBias ?? true) ? 'Qwen2ForCausalLM' : 'LlamaForCausalLM';
  const scaling = c.ropeScaling ?? 'none';
  const out: Record<string, unknown> = {
    architectures: [arch],
    model_type: arch === 'LlamaForCausalLM' ? 'llama' : arch === 'Qwen2ForCausalLM' ? 'qwen2' : 'qwen3',
    vocab_size: c.vocabSize,
    hidden_size: c.dModel,
    intermediate_size: mlpHidden(c),
    num_hidden_layers: c.layers,
    num_attention_heads: c.heads,
    num_key_value_heads: kvHeads(c),
    head_dim: headSize(c),
    max_position_embeddings: c.contextLength,
    rms_norm_eps: c.normEps,
    rope_theta: c.ropeBase,
    rope_scaling:
      scaling === 'none'
        ? null
        : scaling === 'linear'
          ? { rope_type: 'linear', factor: c.ropeFactor }
          : {
              rope_type: 'llama3',
              factor: c.ropeFactor,
              low_freq_factor: c.ropeLowFreqFactor,
              high_freq_factor: c.ropeHighFreqFactor,
              original_max_position_embeddings: c.ropeOriginalContext,
            },
    hidden_act: 'silu',
    tie_word_embeddings: c.tiedEmbeddings,
    ...(arch !== 'Qwen2ForCausalLM' && { attention_bias: qkvBias }),
    ...(arch === 'LlamaForCausalLM' && { mlp_bias: c.mlpBias ?? true }),
    bos_token_id: ids.bos ?? null,
    eos_token_id: ids.eos ?? null,
    torch_dtype: 'float32',
    use_cache: true,
  };
  try {
    return sameNetwork(configFromHf(out).config, c) ? out : null;
  } catch {
    return null;
  }
}

/** config.json for a network no transformers class computes: the sizes a runtime needs, and our config. */
function lwmConfigJson(c: ModelConfig, ids: { bos?: number; eos?: number }): Record<string, unknown> {
  return {
    architectures: ['LwmForCausalLM'],
    model_type: 'lwm',
    vocab_size: c.vocabSize,
    hidden_size: c.dModel,
    num_hidden_layers: c.layers,
    num_attention_heads: c.heads,
    num_key_value_heads: kvHeads(c),
    head_dim: headSize(c),
    max_position_embeddings: c.contextLength,
    bos_token_id: ids.bos ?? null,
    eos_token_id: ids.eos ?? null,
    torch_dtype: 'float32',
    use_cache: true,
    lwm_config: c,
  };
}

/** config.json, generation_config.json and the tokenizer files of one of our checkpoints (and its training template, when given). */
export function checkpointSideFiles(ck: Pick<Checkpoint, 'config' | 'params'>, tok: Tokenizer, source = 'checkpoint', template?: PromptTemplate): ExportFile[] {
  const c = ck.config;
  if (tok.vocabSize > c.vocabSize) throw new HfExportRefused(`${source}: the tokenizer has ${tok.vocabSize} tokens but the model only ${c.vocabSize}`);
  const kept = template ? [{ name: TEMPLATE_FILE, bytes: templateFileBytes(template) }] : [];
  // A GPT-2-style checkpoint: exactly the Hugging Face export's files, less its safetensors.
  if (!gpt2Mismatch(c)) return [...hfExportFiles(ck, tok, source).filter((f) => f.name !== 'model.safetensors'), ...kept];
  const ids = { bos: tok.special.bos, eos: tok.special.eos };
  const config = llamaFamilyConfigJson(c, ids) ?? lwmConfigJson(c, ids);
  return [
    { name: 'config.json', bytes: json(config) },
    { name: 'generation_config.json', bytes: json({ bos_token_id: ids.bos ?? null, eos_token_id: ids.eos ?? null, pad_token_id: tok.special.pad ?? null }) },
    { name: 'tokenizer.json', bytes: json(hfTokenizerJson(tok)) },
    { name: 'tokenizer_config.json', bytes: json(tokenizerConfigJson(c, tok)) },
    ...kept,
  ];
}

/** The files of a Hugging Face folder an ONNX folder keeps beside its model (config, generation and tokenizer files). */
export const HF_SIDE_FILES = [
  'config.json',
  'generation_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'added_tokens.json',
  'chat_template.jinja',
  'vocab.json',
  'merges.txt',
  'tokenizer.model',
  // A fine-tune's training template (an export of ours), so its ONNX folder is prompted as it trained.
  TEMPLATE_FILE,
];

/** Those of HF_SIDE_FILES a folder has, read. */
export async function hfFolderSideFiles(files: ModelFiles): Promise<ExportFile[]> {
  const list = new Set(files.list());
  const out: ExportFile[] = [];
  for (const name of HF_SIDE_FILES) if (list.has(name)) out.push({ name, bytes: await files.read(name) });
  return out;
}
