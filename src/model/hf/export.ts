// One of our checkpoints as a Hugging Face GPT-2 folder (`lwm export CKPT --to hf -o DIR`):
//
//   config.json             GPT2LMHeadModel with our sizes (n_inner = mlpRatio·d, our norm eps,
//                           tied or untied head, tanh GELU = gelu_new, no dropout)
//   model.safetensors       F32, GPT-2's names: transformer.wte.weight, transformer.wpe.weight,
//                           transformer.h.N.attn.c_attn.weight [d, 3d] (Conv1D: [in, out], which
//                           is already our layout), …, transformer.ln_f.*, lm_head.weight (untied)
//   tokenizer.json          our byte-level BPE (src/core/tokenizer/hfExport.ts)
//   tokenizer_config.json   PreTrainedTokenizerFast with our bos/eos/pad tokens
//   generation_config.json  bos / eos / pad ids
//
// Only what transformers' GPT-2 computes exactly is written: LayerNorm and learned positions. A
// checkpoint with RMSNorm or RoPE is refused by name rather than written as a GPT-2 that would
// load and give other logits. scripts/fixtures/hf_export_check.py loads such a folder in
// transformers; src/model/hf/export.test.ts holds our logits and ids to what it recorded.
import { hfTokenizerJson } from '../../core/tokenizer/hfExport.ts';
import type { Tokenizer } from '../../core/tokenizer/tokenizer.ts';
import type { Checkpoint } from '../../core/model/checkpoint.ts';
import { mlpHidden, type ModelConfig } from '../../core/model/config.ts';
import { paramLayout } from '../../core/model/params.ts';
import { writeSafetensors, type TensorToWrite } from '../../core/model/safetensors.ts';
import type { PromptTemplate } from '../../core/templates/index.ts';
import { TEMPLATE_FILE, templateFileBytes } from '../templateFile.ts';
import type { HfBase } from './base.ts';
import { configFromHf } from './config.ts';
import { paramsToHf } from './weights.ts';

export class HfExportRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HfExportRefused';
  }
}

/** Why transformers' GPT-2 cannot run this config exactly; null when it can. */
export function gpt2Mismatch(c: ModelConfig): string | null {
  const why: string[] = [];
  if (c.norm !== 'layernorm') why.push(`it uses ${c.norm === 'rmsnorm' ? 'RMSNorm' : c.norm} where GPT-2 has LayerNorm with a bias`);
  if (c.positions !== 'learned')
    why.push(`it uses ${c.positions === 'rope' ? 'rotary (RoPE)' : c.positions} positions where GPT-2 adds learned position embeddings`);
  return why.length ? why.join(', and ') : null;
}

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

function gpt2ConfigJson(c: ModelConfig, tok: Tokenizer): Record<string, unknown> {
  return {
    architectures: ['GPT2LMHeadModel'],
    model_type: 'gpt2',
    vocab_size: c.vocabSize,
    n_positions: c.contextLength,
    n_embd: c.dModel,
    n_layer: c.layers,
    n_head: c.heads,
    n_inner: mlpHidden(c),
    activation_function: 'gelu_new',
    layer_norm_epsilon: c.normEps,
    tie_word_embeddings: c.tiedEmbeddings,
    resid_pdrop: 0,
    embd_pdrop: 0,
    attn_pdrop: 0,
    summary_first_dropout: 0,
    scale_attn_weights: true,
    scale_attn_by_inverse_layer_idx: false,
    reorder_and_upcast_attn: false,
    initializer_range: 0.02,
    bos_token_id: tok.special.bos ?? null,
    eos_token_id: tok.special.eos ?? null,
    pad_token_id: tok.special.pad ?? null,
    torch_dtype: 'float32',
    use_cache: true,
  };
}

export function tokenizerConfigJson(c: ModelConfig, tok: Tokenizer): Record<string, unknown> {
  const decoder: Record<string, unknown> = {};
  tok.specialTokens.forEach((content, i) => {
    decoder[String(256 + i)] = { content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true };
  });
  const name = (id: number | undefined) => (id === undefined ? null : tok.specialTokens[id - 256]);
  return {
    tokenizer_class: 'PreTrainedTokenizerFast',
    added_tokens_decoder: decoder,
    bos_token: name(tok.special.bos),
    eos_token: name(tok.special.eos),
    pad_token: name(tok.special.pad),
    unk_token: null,
    add_bos_token: false,
    add_eos_token: false,
    clean_up_tokenization_spaces: false,
    model_max_length: c.contextLength,
  };
}

/** The folder's files in writing order; throws HfExportRefused (or the tokenizer's HfExportError). */
export function hfExportFiles(ck: Pick<Checkpoint, 'config' | 'params'>, tok: Tokenizer, source = 'checkpoint'): { name: string; bytes: Uint8Array }[] {
  const c = ck.config;
  const mismatch = gpt2Mismatch(c);
  if (mismatch) {
    throw new HfExportRefused(`${source}: cannot export as a Hugging Face GPT-2: ${mismatch}; transformers would load it and compute other logits`);
  }
  if (tok.vocabSize > c.vocabSize) {
    throw new HfExportRefused(`${source}: the tokenizer has ${tok.vocabSize} tokens but the model only ${c.vocabSize}`);
  }
  const tokenizer = hfTokenizerJson(tok);
  const layout = paramLayout(c);
  const tensors: TensorToWrite[] = layout.tensors.map((t) => ({
    name: t.name === 'lm_head.weight' ? t.name : `transformer.${t.name === 'wte' || t.name === 'wpe' ? `${t.name}.weight` : t.name}`,
    dtype: 'F32',
    shape: t.shape,
    data: ck.params.subarray(t.offset, t.offset + t.size),
  }));
  const enc = new TextEncoder();
  const generation: Record<string, unknown> = {
    bos_token_id: tok.special.bos ?? null,
    eos_token_id: tok.special.eos ?? null,
    pad_token_id: tok.special.pad ?? null,
  };
  return [
    { name: 'config.json', bytes: enc.encode(json(gpt2ConfigJson(c, tok))) },
    { name: 'generation_config.json', bytes: enc.encode(json(generation)) },
    { name: 'model.safetensors', bytes: writeSafetensors(tensors, { format: 'pt' }) },
    { name: 'tokenizer.json', bytes: enc.encode(json(tokenizer)) },
    { name: 'tokenizer_config.json', bytes: enc.encode(json(tokenizerConfigJson(c, tok))) },
  ];
}

/**
 * A fine-tuned Llama / Qwen2 / Qwen3 (a run started from a Hugging Face folder, its LoRA adapter
 * merged or not) as a Hugging Face folder: the base's config.json (dtype float32, as written),
 * tokenizer and generation files unchanged, and our weights under the standard names
 * (weights.ts's paramsToHf; a tied head writes no lm_head.weight), and the template the run
 * trained with as written (lwm_template.json, when given), so the folder is served in the layout
 * it learned (our template inside the model's chat format) rather than as a plain instruct model.
 */
export function hfLlamaExportFiles(
  config: ModelConfig,
  params: Float32Array,
  base: HfBase,
  template?: PromptTemplate | null,
): { name: string; bytes: Uint8Array }[] {
  const raw = JSON.parse(base.files['config.json'] ?? 'null') as Record<string, unknown>;
  const opened = configFromHf(raw).config;
  const same = (Object.keys(opened) as (keyof ModelConfig)[]).every((k) => k === 'contextLength' || JSON.stringify(opened[k]) === JSON.stringify(config[k]));
  if (!same) throw new HfExportRefused(`the weights are not those of ${base.name}'s architecture (config.json describes another model)`);
  const cfg: Record<string, unknown> = { ...raw };
  if ('dtype' in cfg) cfg.dtype = 'float32';
  else cfg.torch_dtype = 'float32';
  const tensors: TensorToWrite[] = [...paramsToHf(config, params)].map(([name, t]) => ({ name, dtype: 'F32', shape: [...t.shape], data: t.data }));
  const enc = new TextEncoder();
  const files = [
    { name: 'config.json', bytes: enc.encode(json(cfg)) },
    { name: 'model.safetensors', bytes: writeSafetensors(tensors, { format: 'pt' }) },
  ];
  for (const [name, text] of Object.entries(base.files)) if (name !== 'config.json') files.push({ name, bytes: enc.encode(text) });
  if (template) files.push({ name: TEMPLATE_FILE, bytes: templateFileBytes(template) });
  return files;
}
