// Hugging Face's Llama / Qwen2 / Qwen3 tensor names onto our flat parameter layout
// (src/core/model/params.ts), and back. Hugging Face stores a Linear's weight [out, in]; ours are
// [in, out] (y = x·W), so every projection is transposed on the way. q, k and v land side by side
// in the fused c_attn [d, q | k | v], gate and up in c_fc [d, gate | up]:
//
//   model.embed_tokens.weight                    wte
//   model.layers.N.input_layernorm.weight        h.N.ln_1.weight
//   model.layers.N.self_attn.{q,k,v}_proj.weight h.N.attn.c_attn.weight   (columns q | k | v)
//   model.layers.N.self_attn.{q,k,v}_proj.bias   h.N.attn.c_attn.bias     (Qwen2; attention_bias)
//   model.layers.N.self_attn.{q,k}_norm.weight   h.N.attn.{q,k}_norm.weight (Qwen3)
//   model.layers.N.self_attn.o_proj.weight/bias  h.N.attn.c_proj.weight/bias
//   model.layers.N.post_attention_layernorm.weight h.N.ln_2.weight
//   model.layers.N.mlp.{gate,up}_proj.weight/bias h.N.mlp.c_fc.weight/bias (columns gate | up)
//   model.layers.N.mlp.down_proj.weight/bias     h.N.mlp.c_proj.weight/bias
//   model.norm.weight                            ln_f.weight
//   lm_head.weight                               lm_head.weight (untied; a tied file may omit it)
import { paramLayout, type ParamLayout, type ParamTensor } from '../../core/model/params.ts';
import type { ModelConfig } from '../../core/model/config.ts';
import { blockPlan } from '../../core/model/plan.ts';

export class HfWeightsError extends Error {
  constructor(message: string) {
    super(`Hugging Face weights: ${message}`);
    this.name = 'HfWeightsError';
  }
}

export interface HfTensor {
  shape: readonly number[];
  /** Row-major elements. */
  data: Float32Array;
}

/** Where one Hugging Face tensor goes: a block of our tensor, transposed or copied. */
interface Placement {
  hf: string;
  /** Its shape in Hugging Face's file. */
  shape: number[];
  target: ParamTensor;
  /** Matrices: the HF [out, in] tensor lands as columns colStart.. of our [in, width] tensor. Vectors: elements colStart.. . */
  colStart: number;
  transpose: boolean;
}

/** Every tensor a Hugging Face checkpoint of this config has, and where it lands. */
export function hfPlacements(config: ModelConfig, layout: ParamLayout = paramLayout(config)): Placement[] {
  const plan = blockPlan(config);
  const d = config.dModel;
  const { qDim, kvDim, F, headSize: D } = plan;
  const out: Placement[] = [];
  const matrix = (hf: string, target: ParamTensor, outDim: number, inDim: number, colStart = 0) =>
    out.push({ hf, shape: [outDim, inDim], target, colStart, transpose: true });
  const vector = (hf: string, target: ParamTensor | undefined, n: number, colStart = 0) => {
    if (target) out.push({ hf, shape: [n], target, colStart, transpose: false });
  };
  out.push({ hf: 'model.embed_tokens.weight', shape: [config.vocabSize, d], target: layout.wte, colStart: 0, transpose: false });
  layout.blocks.forEach((b, i) => {
    const p = `model.layers.${i}.`;
    vector(p + 'input_layernorm.weight', b.ln1Weight, d);
    matrix(p + 'self_attn.q_proj.weight', b.attnWeight, qDim, d, 0);
    matrix(p + 'self_attn.k_proj.weight', b.attnWeight, kvDim, d, qDim);
    matrix(p + 'self_attn.v_proj.weight', b.attnWeight, kvDim, d, qDim + kvDim);
    vector(p + 'self_attn.q_proj.bias', b.attnBias, qDim, 0);
    vector(p + 'self_attn.k_proj.bias', b.attnBias, kvDim, qDim);
    vector(p + 'self_attn.v_proj.bias', b.attnBias, kvDim, qDim + kvDim);
    vector(p + 'self_attn.q_norm.weight', b.qNorm, D);
    vector(p + 'self_attn.k_norm.weight', b.kNorm, D);
    matrix(p + 'self_attn.o_proj.weight', b.attnProjWeight, d, qDim);
    vector(p + 'self_attn.o_proj.bias', b.attnProjBias, d);
    vector(p + 'post_attention_layernorm.weight', b.ln2Weight, d);
    matrix(p + 'mlp.gate_proj.weight', b.fcWeight, F, d, 0);
    matrix(p + 'mlp.up_proj.weight', b.fcWeight, F, d, F);
    vector(p + 'mlp.gate_proj.bias', b.fcBias, F, 0);
    vector(p + 'mlp.up_proj.bias', b.fcBias, F, F);
    matrix(p + 'mlp.down_proj.weight', b.mlpProjWeight, d, F);
    vector(p + 'mlp.down_proj.bias', b.mlpProjBias, d);
  });
  vector('model.norm.weight', layout.lnFWeight, d);
  if (layout.lmHead) out.push({ hf: 'lm_head.weight', shape: [config.vocabSize, d], target: layout.lmHead, colStart: 0, transpose: false });
  return out;
}

/** Buffers some exporters add that carry no weights (RoPE's inverse frequencies, recomputed from the config). */
const IGNORED = /^model\.layers\.\d+\.self_attn\.rotary_emb\.inv_freq$|^model\.rotary_emb\.inv_freq$/;

/**
 * Our flat parameters from a Hugging Face checkpoint's tensors (already F32). Every tensor the
 * config needs must be there with its exact shape; a tensor we would not use is an error too
 * (it means the config and the weights disagree), except RoPE buffers and, for a tied head,
 * lm_head.weight.
 */
export function paramsFromHf(config: ModelConfig, tensors: ReadonlyMap<string, HfTensor>, layout: ParamLayout = paramLayout(config)): Float32Array {
  if (config.norm !== 'rmsnorm' || config.positions !== 'rope' || config.mlp !== 'swiglu') {
    throw new HfWeightsError('the config is not a Llama-family one (RMSNorm, RoPE, SwiGLU)');
  }
  const flat = new Float32Array(layout.totalSize);
  const used = new Set<string>();
  for (const pl of hfPlacements(config, layout)) {
    const t = tensors.get(pl.hf);
    if (!t) throw new HfWeightsError(`tensor ${pl.hf} is missing (expected shape [${pl.shape.join(', ')}])`);
    if (t.shape.length !== pl.shape.length || t.shape.some((v, i) => v !== pl.shape[i])) {
      throw new HfWeightsError(`tensor ${pl.hf} has shape [${t.shape.join(', ')}], the config needs [${pl.shape.join(', ')}]`);
    }
    used.add(pl.hf);
    place(flat, pl, t.data);
  }
  const extra = [...tensors.keys()].filter((n) => !used.has(n) && !IGNORED.test(n) && !(n === 'lm_head.weight' && config.tiedEmbeddings));
  if (extra.length)
    throw new HfWeightsError(`tensors this config does not use: ${extra.slice(0, 5).join(', ')}${extra.length > 5 ? `, … (${extra.length})` : ''}`);
  return flat;
}

function place(flat: Float32Array, pl: Placement, data: Float32Array): void {
  const { target, colStart } = pl;
  if (!pl.transpose) {
    flat.set(data, target.offset + colStart);
    return;
  }
  // HF [outDim, inDim] → our [inDim, width] at columns colStart..colStart + outDim.
  const [outDim, inDim] = pl.shape;
  const width = target.shape[1];
  for (let o = 0; o < outDim; o++) {
    for (let i = 0; i < inDim; i++) flat[target.offset + i * width + colStart + o] = data[o * inDim + i];
  }
}

/** The Hugging Face tensors of our flat parameters (the inverse of paramsFromHf; a tied head has no lm_head.weight). */
export function paramsToHf(config: ModelConfig, params: Float32Array, layout: ParamLayout = paramLayout(config)): Map<string, HfTensor> {
  if (params.length !== layout.totalSize) throw new HfWeightsError(`params hold ${params.length} elements, the layout needs ${layout.totalSize}`);
  const out = new Map<string, HfTensor>();
  for (const pl of hfPlacements(config, layout)) {
    const n = pl.shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    if (!pl.transpose) {
      data.set(params.subarray(pl.target.offset + pl.colStart, pl.target.offset + pl.colStart + n));
    } else {
      const [outDim, inDim] = pl.shape;
      const width = pl.target.shape[1];
      for (let o = 0; o < outDim; o++) for (let i = 0; i < inDim; i++) data[o * inDim + i] = params[pl.target.offset + i * width + pl.colStart + o];
    }
    out.set(pl.hf, { shape: pl.shape, data });
  }
  return out;
}
