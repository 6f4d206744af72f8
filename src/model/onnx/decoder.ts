// One of our models as an ONNX decoder with a KV cache, in the layout Hugging Face's ONNX exports
// use (optimum, transformers.js), so onnxruntime, onnxruntime-web and transformers.js run it:
//
//   inputs   input_ids                  int64 [batch_size, sequence_length]
//            attention_mask             int64 [batch_size, total_sequence_length]  (past + new; 0 = padding)
//            position_ids               int64 [batch_size, sequence_length]
//            past_key_values.N.key      float [batch_size, kv_heads, past_sequence_length, head_dim]
//            past_key_values.N.value    (the same)
//   outputs  logits                     float [batch_size, sequence_length, vocab]
//            present.N.key / .value     float [batch_size, kv_heads, total_sequence_length, head_dim]
//
// Standard opset-17 operators only. The block follows src/core/model/plan.ts like the GPU and the
// reference blocks: LayerNormalization or a decomposed RMSNorm (x / sqrt(mean(x²) + eps) · g),
// learned positions gathered by position_ids or RoPE (rotate-half, angles = position_ids ·
// inverse frequencies computed in the graph, as transformers does), q/k head RMSNorm (Qwen3),
// grouped-query attention by expanding each kv head over its query heads, tanh-GELU or SwiGLU
// (Sigmoid for SiLU). The causal mask: query s (absolute position past + s) sees key j when
// j ≤ past + s and attention_mask[j] = 1; a masked score is set to float32's lowest value, so a
// fully masked row (a padding query) stays finite. The head is a Gemm with transB over the [vocab,
// d] embedding (tied) or lm_head, so the tied matrix is stored once.
import type { ModelConfig } from '../../core/model/config.ts';
import { paramLayout, type ParamLayout, type ParamTensor } from '../../core/model/params.ts';
import { blockPlan, type BlockPlan } from '../../core/model/plan.ts';
import { DataType, GraphBuilder, serializeModel, valueInfo, type ModelBytes, type SerializeOptions } from './graph.ts';

/** float32's lowest finite value: what a masked attention score becomes (transformers uses torch.finfo(dtype).min). */
const MASKED = -3.4028234663852886e38;

/** The rows×cols block of a row-major [rows, width] tensor starting at column `col`. */
function columns(params: Float32Array, t: ParamTensor, col: number, count: number): Float32Array {
  const [rows, width] = t.shape;
  const out = new Float32Array(rows * count);
  for (let r = 0; r < rows; r++) out.set(params.subarray(t.offset + r * width + col, t.offset + r * width + col + count), r * count);
  return out;
}

const vector = (params: Float32Array, t: ParamTensor, start = 0, count = t.size) => params.slice(t.offset + start, t.offset + start + count);

interface Ctx {
  g: GraphBuilder;
  c: ModelConfig;
  plan: BlockPlan;
  params: Float32Array;
  layout: ParamLayout;
  /** [batch, 1, seq, total] bool: which key each query may see. */
  allowed: string;
  /** [batch, 1, seq, headSize] RoPE tables (RoPE models only). */
  cos?: string;
  sin?: string;
}

function norm(x: Ctx, input: string, weight: ParamTensor, bias: ParamTensor | undefined, name: string): string {
  const { g } = x;
  const width = x.c.dModel;
  const w = g.float(`${name}.weight`, [width], vector(x.params, weight));
  if (x.plan.norm === 'layer') {
    const b = g.float(`${name}.bias`, [width], vector(x.params, bias!));
    return g.node('LayerNormalization', [input, w, b], { axis: { int: -1 }, epsilon: { float: x.c.normEps } }, undefined, `${name}/LayerNorm`);
  }
  return rmsNorm(x, input, w, name);
}

/** x / sqrt(mean(x², last axis) + eps) · w, as transformers' LlamaRMSNorm computes it in float32. */
function rmsNorm(x: Ctx, input: string, w: string, name: string): string {
  const { g } = x;
  const sq = g.node('Mul', [input, input], {}, undefined, `${name}/Square`);
  const mean = g.node('ReduceMean', [sq], { axes: { ints: [-1] }, keepdims: { int: 1 } }, undefined, `${name}/ReduceMean`);
  const eps = g.node('Add', [mean, g.scalar(`${name}.eps`, x.c.normEps)], {}, undefined, `${name}/AddEps`);
  const normed = g.node('Div', [input, g.node('Sqrt', [eps], {}, undefined, `${name}/Sqrt`)], {}, undefined, `${name}/Div`);
  return g.node('Mul', [normed, w], {}, undefined, `${name}/Gain`);
}

/** x·W (+b) with W [in, out] taken from columns col.. of one of our matrices. */
function linear(x: Ctx, input: string, weight: ParamTensor, bias: ParamTensor | undefined, col: number, count: number, name: string): string {
  const { g } = x;
  const w = g.float(`${name}.weight`, [weight.shape[0], count], columns(x.params, weight, col, count));
  const y = g.node('MatMul', [input, w], {}, undefined, `${name}/MatMul`);
  if (!bias) return y;
  return g.node('Add', [y, g.float(`${name}.bias`, [count], vector(x.params, bias, col, count))], {}, undefined, `${name}/Add`);
}

/** x·cos + rotate_half(x)·sin over the last axis (pairs i, i + D/2). */
function rope(x: Ctx, input: string, name: string): string {
  const { g } = x;
  const D = x.plan.headSize;
  const axis = g.int64(`${name}.axis`, [3]);
  const lo = g.node('Slice', [input, g.int64(`${name}.lo0`, [0]), g.int64(`${name}.lo1`, [D / 2]), axis], {}, undefined, `${name}/SliceLo`);
  const hi = g.node('Slice', [input, g.int64(`${name}.hi0`, [D / 2]), g.int64(`${name}.hi1`, [D]), axis], {}, undefined, `${name}/SliceHi`);
  const rotated = g.node('Concat', [g.node('Neg', [hi], {}, undefined, `${name}/Neg`), lo], { axis: { int: 3 } }, undefined, `${name}/RotateHalf`);
  const a = g.node('Mul', [input, x.cos!], {}, undefined, `${name}/MulCos`);
  const b = g.node('Mul', [rotated, x.sin!], {}, undefined, `${name}/MulSin`);
  return g.node('Add', [a, b], {}, undefined, `${name}/Add`);
}

/** [batch, seq, heads·D] → [batch, heads, seq, D] (with Qwen3's head norm and RoPE where the plan has them). */
function heads(x: Ctx, input: string, n: number, name: string, headNorm?: ParamTensor): string {
  const { g } = x;
  let h = g.node('Reshape', [input, g.int64(`${name}.shape`, [0, 0, n, x.plan.headSize])], {}, undefined, `${name}/Reshape`);
  if (headNorm) h = rmsNorm(x, h, g.float(`${name}_norm.weight`, [x.plan.headSize], vector(x.params, headNorm)), `${name}_norm`);
  return g.node('Transpose', [h], { perm: { ints: [0, 2, 1, 3] } }, undefined, `${name}/Transpose`);
}

/** [batch, kvHeads, T, D] → [batch, heads, T, D]: kv head i serves query heads i·rep … (i+1)·rep − 1. */
function expandKv(x: Ctx, kv: string, name: string): string {
  const { g, plan } = x;
  const rep = plan.heads / plan.kvHeads;
  if (rep === 1) return kv;
  const u = g.node('Unsqueeze', [kv, g.int64(`${name}.axis`, [2])], {}, undefined, `${name}/Unsqueeze`);
  const e = g.node('Expand', [u, g.int64(`${name}.rep`, [1, 1, rep, 1, 1])], {}, undefined, `${name}/Expand`);
  return g.node('Reshape', [e, g.int64(`${name}.shape`, [0, plan.heads, -1, plan.headSize])], {}, undefined, `${name}/Reshape`);
}

function attention(x: Ctx, input: string, i: number): string {
  const { g, plan } = x;
  const b = x.layout.blocks[i];
  const p = `model.layers.${i}.self_attn`;
  const { qDim, kvDim } = plan;
  let q = heads(x, linear(x, input, b.attnWeight, b.attnBias, 0, qDim, `${p}.q_proj`), plan.heads, `${p}.q`, b.qNorm);
  let k = heads(x, linear(x, input, b.attnWeight, b.attnBias, qDim, kvDim, `${p}.k_proj`), plan.kvHeads, `${p}.k`, b.kNorm);
  const v = heads(x, linear(x, input, b.attnWeight, b.attnBias, qDim + kvDim, kvDim, `${p}.v_proj`), plan.kvHeads, `${p}.v`);
  if (plan.rope) {
    q = rope(x, q, `${p}.q_rope`);
    k = rope(x, k, `${p}.k_rope`);
  }
  const presentK = g.node('Concat', [`past_key_values.${i}.key`, k], { axis: { int: 2 } }, `present.${i}.key`, `${p}/ConcatK`);
  const presentV = g.node('Concat', [`past_key_values.${i}.value`, v], { axis: { int: 2 } }, `present.${i}.value`, `${p}/ConcatV`);
  const kT = g.node('Transpose', [expandKv(x, presentK, `${p}.k_rep`)], { perm: { ints: [0, 1, 3, 2] } }, undefined, `${p}/TransposeK`);
  const raw = g.node('MatMul', [q, kT], {}, undefined, `${p}/QK`);
  const scores = g.node('Mul', [raw, g.scalar(`${p}.scale`, 1 / Math.sqrt(plan.headSize))], {}, undefined, `${p}/Scale`);
  const masked = g.node('Where', [x.allowed, scores, g.scalar(`${p}.masked`, MASKED)], {}, undefined, `${p}/Mask`);
  const probs = g.node('Softmax', [masked], { axis: { int: -1 } }, undefined, `${p}/Softmax`);
  const ctx = g.node('MatMul', [probs, expandKv(x, presentV, `${p}.v_rep`)], {}, undefined, `${p}/PV`);
  const merged = g.node('Transpose', [ctx], { perm: { ints: [0, 2, 1, 3] } }, undefined, `${p}/TransposeOut`);
  const flat = g.node('Reshape', [merged, g.int64(`${p}.merge`, [0, 0, qDim])], {}, undefined, `${p}/Merge`);
  return linear(x, flat, b.attnProjWeight, b.attnProjBias, 0, x.c.dModel, `${p}.o_proj`);
}

function mlp(x: Ctx, input: string, i: number): string {
  const { g, plan } = x;
  const b = x.layout.blocks[i];
  const p = `model.layers.${i}.mlp`;
  const F = plan.F;
  let hidden: string;
  if (plan.mlp === 'swiglu') {
    const gate = linear(x, input, b.fcWeight, b.fcBias, 0, F, `${p}.gate_proj`);
    const up = linear(x, input, b.fcWeight, b.fcBias, F, F, `${p}.up_proj`);
    const silu = g.node('Mul', [gate, g.node('Sigmoid', [gate], {}, undefined, `${p}/Sigmoid`)], {}, undefined, `${p}/SiLU`);
    hidden = g.node('Mul', [silu, up], {}, undefined, `${p}/Gate`);
  } else {
    hidden = geluTanh(x, linear(x, input, b.fcWeight, b.fcBias, 0, F, `${p}.c_fc`), p);
  }
  return linear(x, hidden, b.mlpProjWeight, b.mlpProjBias, 0, x.c.dModel, `${p}.down_proj`);
}

/** 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))): GPT-2's gelu_new. */
function geluTanh(x: Ctx, input: string, p: string): string {
  const { g } = x;
  const cube = g.node('Mul', [g.node('Mul', [input, input], {}, undefined, `${p}/Sq`), input], {}, undefined, `${p}/Cube`);
  const inner = g.node('Add', [input, g.node('Mul', [cube, g.scalar(`${p}.c`, 0.044715)], {}, undefined, `${p}/MulC`)], {}, undefined, `${p}/Inner`);
  const t = g.node('Tanh', [g.node('Mul', [inner, g.scalar(`${p}.k`, Math.sqrt(2 / Math.PI))], {}, undefined, `${p}/MulK`)], {}, undefined, `${p}/Tanh`);
  const onePlus = g.node('Add', [t, g.scalar(`${p}.one`, 1)], {}, undefined, `${p}/OnePlus`);
  return g.node('Mul', [g.node('Mul', [input, g.scalar(`${p}.half`, 0.5)], {}, undefined, `${p}/Half`), onePlus], {}, undefined, `${p}/Gelu`);
}

/** The causal-and-padding mask [batch, 1, seq, total] (bool) from the shapes of the inputs and attention_mask. */
function causalMask(g: GraphBuilder): string {
  const scalarAt = (input: string, axis: number, name: string) =>
    g.node('Gather', [g.node('Shape', [input], {}, undefined, `${name}/Shape`), g.int64(`${name}.axis`, [axis], [])], { axis: { int: 0 } }, undefined, name);
  const past = scalarAt('past_key_values.0.key', 2, 'past_length');
  const seq = scalarAt('input_ids', 1, 'seq_length');
  const total = g.node('Add', [past, seq], {}, undefined, 'total_length');
  const one = g.int64('one', [1], []);
  const keys = g.node('Range', [g.int64('zero', [0], []), total, one], {}, undefined, 'key_positions');
  const queries = g.node('Range', [past, total, one], {}, undefined, 'query_positions');
  const row = g.node('Unsqueeze', [keys, g.int64('axis0', [0])], {}, undefined, 'keys_row');
  const col = g.node('Unsqueeze', [queries, g.int64('axis1', [1])], {}, undefined, 'queries_col');
  const causal = g.node('LessOrEqual', [row, col], {}, undefined, 'causal');
  const pad = g.node('Cast', ['attention_mask'], { to: { int: DataType.BOOL } }, undefined, 'mask_bool');
  const pad4 = g.node('Unsqueeze', [pad, g.int64('axes12', [1, 2])], {}, undefined, 'mask_4d');
  return g.node('And', [causal, pad4], {}, undefined, 'allowed');
}

/** cos and sin of position_ids · inverse frequencies, [batch, 1, seq, D] (transformers' rotary embedding, in float32). */
function ropeTables(g: GraphBuilder, plan: BlockPlan): { cos: string; sin: string } {
  const pos = g.node('Cast', ['position_ids'], { to: { int: DataType.FLOAT } }, undefined, 'rope/positions');
  const pos3 = g.node('Unsqueeze', [pos, g.int64('rope.axis2', [2])], {}, undefined, 'rope/Unsqueeze');
  const invFreq = g.float('rope.inv_freq', [plan.headSize / 2], Float32Array.from(plan.ropeFreqs));
  const freqs = g.node('Mul', [pos3, invFreq], {}, undefined, 'rope/freqs');
  const emb = g.node('Concat', [freqs, freqs], { axis: { int: -1 } }, undefined, 'rope/emb');
  const axis1 = g.int64('rope.axis1', [1]);
  const cos = g.node('Unsqueeze', [g.node('Cos', [emb], {}, undefined, 'rope/Cos'), axis1], {}, undefined, 'rope/cos');
  const sin = g.node('Unsqueeze', [g.node('Sin', [emb], {}, undefined, 'rope/Sin'), axis1], {}, undefined, 'rope/sin');
  return { cos, sin };
}

/** The graph's inputs and outputs in Hugging Face's names and dimension names. */
function signature(c: ModelConfig, plan: BlockPlan): Pick<SerializeOptions, 'inputs' | 'outputs'> {
  const kv = (name: string, len: string) => valueInfo(name, DataType.FLOAT, ['batch_size', plan.kvHeads, len, plan.headSize]);
  const inputs = [
    valueInfo('input_ids', DataType.INT64, ['batch_size', 'sequence_length']),
    valueInfo('attention_mask', DataType.INT64, ['batch_size', 'total_sequence_length']),
    valueInfo('position_ids', DataType.INT64, ['batch_size', 'sequence_length']),
  ];
  const outputs = [valueInfo('logits', DataType.FLOAT, ['batch_size', 'sequence_length', c.vocabSize])];
  for (let i = 0; i < c.layers; i++) {
    for (const kind of ['key', 'value']) {
      inputs.push(kv(`past_key_values.${i}.${kind}`, 'past_sequence_length'));
      outputs.push(kv(`present.${i}.${kind}`, 'total_sequence_length'));
    }
  }
  return { inputs, outputs };
}

export interface DecoderExportOptions {
  /** Passed to serializeModel (tests force the external-data path with 0). */
  externalThreshold?: number;
  /** The model file's name ('model.onnx'); the external data, when there is any, is `${name}_data`. */
  fileName?: string;
}

/** The decoder graph of `config` with `params` (our flat layout) as its weights. */
export function decoderModel(c: ModelConfig, params: Float32Array, options: DecoderExportOptions = {}): ModelBytes {
  const layout = paramLayout(c);
  if (params.length !== layout.totalSize) throw new RangeError(`ONNX export: params hold ${params.length} values, the config needs ${layout.totalSize}`);
  const plan = blockPlan(c);
  const g = new GraphBuilder();
  const allowed = causalMask(g);
  const x: Ctx = { g, c, plan, params, layout, allowed, ...(plan.rope ? ropeTables(g, plan) : {}) };
  const wte = g.float('model.embed_tokens.weight', layout.wte.shape, vector(params, layout.wte));
  let h = g.node('Gather', [wte, 'input_ids'], { axis: { int: 0 } }, undefined, 'embed_tokens');
  if (layout.wpe) {
    const wpe = g.float('model.embed_positions.weight', layout.wpe.shape, vector(params, layout.wpe));
    h = g.node('Add', [h, g.node('Gather', [wpe, 'position_ids'], { axis: { int: 0 } }, undefined, 'embed_positions')], {}, undefined, 'embed');
  }
  layout.blocks.forEach((b, i) => {
    const p = `model.layers.${i}`;
    const a = attention(x, norm(x, h, b.ln1Weight, b.ln1Bias, `${p}.input_layernorm`), i);
    h = g.node('Add', [h, a], {}, undefined, `${p}/AttnResidual`);
    const m = mlp(x, norm(x, h, b.ln2Weight, b.ln2Bias, `${p}.post_attention_layernorm`), i);
    h = g.node('Add', [h, m], {}, undefined, `${p}/MlpResidual`);
  });
  h = norm(x, h, layout.lnFWeight, layout.lnFBias, 'model.norm');
  const rows = g.node('Reshape', [h, g.int64('rows.shape', [-1, c.dModel])], {}, undefined, 'rows');
  const head = layout.lmHead ? g.float('lm_head.weight', layout.lmHead.shape, vector(params, layout.lmHead)) : wte;
  const flat = g.node('Gemm', [rows, head], { transB: { int: 1 } }, undefined, 'lm_head');
  const shape = g.node(
    'Concat',
    [g.node('Shape', ['input_ids'], {}, undefined, 'ids_shape'), g.int64('vocab', [c.vocabSize])],
    { axis: { int: 0 } },
    undefined,
    'logits_shape',
  );
  g.node('Reshape', [flat, shape], {}, 'logits', 'logits');
  const fileName = options.fileName ?? 'model.onnx';
  return serializeModel(g, {
    graphName: 'lwm_decoder',
    ...signature(c, plan),
    externalDataName: `${fileName}_data`,
    externalThreshold: options.externalThreshold,
  });
}
