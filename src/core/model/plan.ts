// What one transformer block computes, chosen from the config: the GPU block (block.ts, for
// training and generation) and the reference block (src/reference/gpt.ts) both follow this plan,
// so a new architecture is a new choice here plus the kernels it needs, not a copy of the block.
//
//   x ─ norm1 ─ qkv projection (+bias) ─ [q/k head norm] ─ [RoPE] ─ attention ─ out projection (+bias) ─(+x)─ xMid
//   xMid ─ norm2 ─ MLP ─(+xMid)─ x_next
//
// GPT-2: LayerNorm, learned positions, GELU MLP, every projection biased, heads = kvHeads.
// Llama: RMSNorm, RoPE (maybe rescaled), SwiGLU MLP, no biases, grouped-query attention.
// Qwen2: Llama with q/k/v biases. Qwen3: Llama with an RMSNorm over each q and k head.
//
// The fused qkv row is [q (heads·headSize) | k (kvHeads·headSize) | v (kvHeads·headSize)]; query
// head h reads key/value head h / (heads / kvHeads). The SwiGLU up-projection is fused the same
// way: [gate (F) | up (F)].
import { headSize, kvHeads, mlpHidden, ropeFrequencies, type ModelConfig } from './config.ts';

export interface BlockPlan {
  /** 'layer' (GPT-2: gain and bias) or 'rms' (Llama, Qwen: gain only): the norm kernel's NormKind (src/reference/norm.ts). */
  norm: 'layer' | 'rms';
  /** Rotary positions on q and k (otherwise the model adds learned positions before block 0). */
  rope: boolean;
  /**
   * The MLP: 'gelu' is up-projection (+bias), tanh-GELU, down-projection (+bias) — GPT-2's;
   * 'swiglu' is [gate | up] = x·W (+bias), silu(gate)·up, down-projection (+bias) — Llama's.
   */
  mlp: 'gelu' | 'swiglu';
  /** Query heads, and the heads K and V have (equal: multi-head attention; fewer: grouped-query). */
  heads: number;
  kvHeads: number;
  headSize: number;
  /** Model width and MLP hidden width. */
  C: number;
  F: number;
  /** Widths of q (= the attention output), of k and of v, and of the fused qkv row. */
  qDim: number;
  kvDim: number;
  qkvDim: number;
  /** Width of the MLP's up-projection output: F (GELU) or 2F (SwiGLU's gate | up). */
  upDim: number;
  /** Which projections carry a bias. */
  qkvBias: boolean;
  projBias: boolean;
  mlpBias: boolean;
  /** Per-head RMSNorm of q and k before RoPE (Qwen3). */
  qkNorm: boolean;
  /** RoPE's frequency of each pair (headSize/2 values), scaling applied; empty without RoPE. */
  ropeFreqs: Float64Array;
}

export function blockPlan(c: ModelConfig): BlockPlan {
  const D = headSize(c);
  const F = mlpHidden(c);
  const mlp = c.mlp ?? 'gelu';
  const kvH = kvHeads(c);
  const rope = c.positions === 'rope';
  return {
    norm: c.norm === 'layernorm' ? 'layer' : 'rms',
    rope,
    mlp,
    heads: c.heads,
    kvHeads: kvH,
    headSize: D,
    C: c.dModel,
    F,
    qDim: c.heads * D,
    kvDim: kvH * D,
    qkvDim: (c.heads + 2 * kvH) * D,
    upDim: mlp === 'swiglu' ? 2 * F : F,
    qkvBias: c.qkvBias ?? true,
    projBias: c.projBias ?? true,
    mlpBias: c.mlpBias ?? true,
    qkNorm: c.qkNorm ?? false,
    ropeFreqs: rope ? ropeFrequencies(c, D) : new Float64Array(0),
  };
}
