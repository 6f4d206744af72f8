// Where every parameter lives. All parameters of a model sit in ONE flat Float32Array; the GPU
// mirrors it in one buffer, and the gradient and Adam's m and v use the same layout, so the
// optimizer and the gradient-norm reduction are single passes over one buffer.
//
// Each tensor starts at an element offset that is a multiple of 64 (256 bytes: WebGPU's
// minimum storage-buffer binding offset alignment), so any tensor can be bound on its own.
// The padding between tensors is zero, gets zero gradient and so stays zero under AdamW.
//
// Matrices are stored input-major, [in, out], so a layer is y = x·W with row-major
// activations x [tokens, in]: exactly the matmul kernel's A·B. The exceptions are `wte` and
// `lm_head`, stored [vocab, dModel]: a row per token for the lookup, and logits = x·wteᵀ
// (the kernel's A·Bᵀ), the same for tied and untied heads.
//
// Order: first every tensor without weight decay (embeddings, norms, biases), then every
// matrix. The decayed tensors then form one contiguous range, so the AdamW kernel needs one
// [start, end) pair rather than a mask. Names follow GPT-2 (Hugging Face) so exported
// weights are recognisable:
//
//   wte                      [vocab, d]        token embedding (also the output head when tied)
//   wpe                      [context, d]      learned positions only
//   h.{i}.ln_1.weight        [d]               norm before attention
//   h.{i}.ln_1.bias          [d]               LayerNorm only
//   h.{i}.attn.c_attn.bias   [3d]
//   h.{i}.attn.c_proj.bias   [d]
//   h.{i}.ln_2.weight/bias   [d]               norm before the MLP
//   h.{i}.mlp.c_fc.bias      [f]
//   h.{i}.mlp.c_proj.bias    [d]
//   ln_f.weight/bias         [d]               final norm
//   h.{i}.attn.c_attn.weight [d, 3d]           fused q|k|v; head h uses columns h·hs..(h+1)·hs of each third
//   h.{i}.attn.c_proj.weight [d, d]
//   h.{i}.mlp.c_fc.weight    [d, f]
//   h.{i}.mlp.c_proj.weight  [f, d]
//   lm_head.weight           [vocab, d]        untied only
//
// Other architectures (plan.ts) keep these names with their own shapes: with grouped-query
// attention c_attn is [d, qkv] with qkv = (heads + 2·kvHeads)·headSize and c_proj [heads·headSize, d];
// a SwiGLU MLP's c_fc is [d, 2f] (gate | up); a bias exists only where the config has one; Qwen3
// adds h.{i}.attn.q_norm.weight and h.{i}.attn.k_norm.weight [headSize] (norms, no decay).
// src/model/hf/weights.ts maps these onto Hugging Face's Llama / Qwen names.
//
// Weight decay applies to the matrices only (GPT-2 / nanoGPT practice): decaying biases and
// norm gains pulls them toward 0 for no regularising benefit, and decaying embeddings
// shrinks rare tokens' rows, which get few gradient updates to push back. lm_head is a matrix
// and is decayed; a tied wte is not (it is an embedding first).
import { validateConfig, type ModelConfig } from './config.ts';
import { blockPlan } from './plan.ts';

/** Element alignment of every tensor's offset: 64 f32 = 256 bytes. */
export const PARAM_ALIGN = 64;

export type ParamKind = 'embedding' | 'norm' | 'bias' | 'matrix';

export interface ParamTensor {
  name: string;
  shape: number[];
  /** Element offset into the flat buffer (multiple of PARAM_ALIGN). */
  offset: number;
  /** Elements (product of shape). */
  size: number;
  kind: ParamKind;
  /** Whether AdamW's decoupled weight decay applies (matrices only). */
  decay: boolean;
}

export interface ParamSegment {
  /** Element offset. */
  offset: number;
  /** Elements. */
  size: number;
}

/**
 * The tensors of one transformer block; `ln*Bias` exist only for LayerNorm, the biases only where
 * the plan has them (GPT-2: all), `qNorm`/`kNorm` only with per-head q/k norms.
 */
export interface BlockParams {
  ln1Weight: ParamTensor;
  ln1Bias?: ParamTensor;
  attnWeight: ParamTensor;
  attnBias?: ParamTensor;
  qNorm?: ParamTensor;
  kNorm?: ParamTensor;
  attnProjWeight: ParamTensor;
  attnProjBias?: ParamTensor;
  ln2Weight: ParamTensor;
  ln2Bias?: ParamTensor;
  fcWeight: ParamTensor;
  fcBias?: ParamTensor;
  mlpProjWeight: ParamTensor;
  mlpProjBias?: ParamTensor;
}

export interface ParamLayout {
  config: ModelConfig;
  tensors: ParamTensor[];
  /** Length of the flat buffer, padding included (a multiple of PARAM_ALIGN). */
  totalSize: number;
  /** Real parameters, padding excluded (= paramCount(config)). */
  paramCount: number;
  /**
   * Contiguous ranges AdamW decays, merged across padding (which stays 0 either way). With the
   * layout's ordering this is a single range.
   */
  decaySegments: ParamSegment[];
  wte: ParamTensor;
  wpe?: ParamTensor;
  lnFWeight: ParamTensor;
  lnFBias?: ParamTensor;
  /** Untied models only. */
  lmHead?: ParamTensor;
  blocks: BlockParams[];
  byName: ReadonlyMap<string, ParamTensor>;
}

const alignUp = (n: number) => Math.ceil(n / PARAM_ALIGN) * PARAM_ALIGN;

export function paramLayout(config: ModelConfig): ParamLayout {
  validateConfig(config);
  const plan = blockPlan(config);
  const d = config.dModel;
  const f = plan.F;
  const ln = config.norm === 'layernorm';
  const tensors: ParamTensor[] = [];
  const byName = new Map<string, ParamTensor>();
  let cursor = 0;
  const add = (name: string, shape: number[], kind: ParamKind): ParamTensor => {
    const size = shape.reduce((a, b) => a * b, 1);
    const t: ParamTensor = { name, shape, offset: cursor, size, kind, decay: kind === 'matrix' };
    cursor = alignUp(cursor + size);
    tensors.push(t);
    byName.set(name, t);
    return t;
  };

  const wte = add('wte', [config.vocabSize, d], 'embedding');
  const wpe = config.positions === 'learned' ? add('wpe', [config.contextLength, d], 'embedding') : undefined;
  const vectors = [];
  for (let i = 0; i < config.layers; i++) {
    const p = `h.${i}.`;
    vectors.push({
      ln1Weight: add(p + 'ln_1.weight', [d], 'norm'),
      ln1Bias: ln ? add(p + 'ln_1.bias', [d], 'norm') : undefined,
      attnBias: plan.qkvBias ? add(p + 'attn.c_attn.bias', [plan.qkvDim], 'bias') : undefined,
      qNorm: plan.qkNorm ? add(p + 'attn.q_norm.weight', [plan.headSize], 'norm') : undefined,
      kNorm: plan.qkNorm ? add(p + 'attn.k_norm.weight', [plan.headSize], 'norm') : undefined,
      attnProjBias: plan.projBias ? add(p + 'attn.c_proj.bias', [d], 'bias') : undefined,
      ln2Weight: add(p + 'ln_2.weight', [d], 'norm'),
      ln2Bias: ln ? add(p + 'ln_2.bias', [d], 'norm') : undefined,
      fcBias: plan.mlpBias ? add(p + 'mlp.c_fc.bias', [plan.upDim], 'bias') : undefined,
      mlpProjBias: plan.mlpBias ? add(p + 'mlp.c_proj.bias', [d], 'bias') : undefined,
    });
  }
  const lnFWeight = add('ln_f.weight', [d], 'norm');
  const lnFBias = ln ? add('ln_f.bias', [d], 'norm') : undefined;
  const blocks: BlockParams[] = [];
  for (let i = 0; i < config.layers; i++) {
    const p = `h.${i}.`;
    blocks.push({
      ...vectors[i],
      attnWeight: add(p + 'attn.c_attn.weight', [d, plan.qkvDim], 'matrix'),
      attnProjWeight: add(p + 'attn.c_proj.weight', [plan.qDim, d], 'matrix'),
      fcWeight: add(p + 'mlp.c_fc.weight', [d, plan.upDim], 'matrix'),
      mlpProjWeight: add(p + 'mlp.c_proj.weight', [f, d], 'matrix'),
    });
  }
  const lmHead = config.tiedEmbeddings ? undefined : add('lm_head.weight', [config.vocabSize, d], 'matrix');

  const decaySegments: ParamSegment[] = [];
  for (const t of tensors) {
    if (!t.decay) continue;
    const last = decaySegments[decaySegments.length - 1];
    // Merge when only padding separates this tensor from the previous decayed one.
    if (last && alignUp(last.offset + last.size) === t.offset) last.size = t.offset + t.size - last.offset;
    else decaySegments.push({ offset: t.offset, size: t.size });
  }

  return {
    config,
    tensors,
    totalSize: cursor,
    paramCount: tensors.reduce((a, t) => a + t.size, 0),
    decaySegments,
    wte,
    wpe,
    lnFWeight,
    lnFBias,
    lmHead,
    blocks,
    byName,
  };
}

/** The tensor called `name`; throws naming the tensor and a few known names when absent. */
export function paramByName(layout: ParamLayout, name: string): ParamTensor {
  const t = layout.byName.get(name);
  if (!t) {
    const known = layout.tensors.slice(0, 6).map((x) => x.name);
    throw new RangeError(`no parameter named '${name}' in this model (known: ${known.join(', ')}, …)`);
  }
  return t;
}

/**
 * Every tensor as [start, end) with its decay flag: the shape src/reference/adamw.ts's
 * buildDecayMask takes (it builds the per-64-block bit mask the AdamW kernel reads).
 */
export function tensorSegments(layout: ParamLayout): { start: number; end: number; decay: boolean }[] {
  return layout.tensors.map((t) => ({ start: t.offset, end: t.offset + t.size, decay: t.decay }));
}

/** Per-element 0/1 decay mask of the flat buffer, for kernels that prefer a mask to segments. */
export function decayMask(layout: ParamLayout): Uint8Array {
  const mask = new Uint8Array(layout.totalSize);
  for (const s of layout.decaySegments) mask.fill(1, s.offset, s.offset + s.size);
  return mask;
}
