// What one transformer block computes, chosen from the config: the GPU block (block.ts, for
// training and generation) and the reference block (src/reference/gpt.ts) both follow this plan,
// so a new architecture is a new choice here plus the kernels it needs, not a copy of the block.
//
//   x ─ norm1 ─ qkv projection (+bias) ─ [RoPE] ─ attention ─ out projection (+bias) ─(+x)─ xMid
//   xMid ─ norm2 ─ MLP ─(+xMid)─ x_next
import type { NormKind } from '../reference/norm.ts';
import { headSize, mlpHidden, type ModelConfig } from './config.ts';

export interface BlockPlan {
  /** 'layer' (GPT-2: gain and bias) or 'rms' (Llama, Qwen: gain only). */
  norm: NormKind;
  /** Rotary positions on q and k (otherwise the model adds learned positions before block 0). */
  rope: boolean;
  /** The MLP: up-projection (+bias), tanh-GELU, down-projection (+bias) — GPT-2's. */
  mlp: 'gelu';
  /** Query heads, and the heads K and V have (equal: multi-head attention). */
  heads: number;
  kvHeads: number;
  headSize: number;
  /** Model width and MLP hidden width. */
  C: number;
  F: number;
}

export function blockPlan(c: ModelConfig): BlockPlan {
  return {
    norm: c.norm === 'layernorm' ? 'layer' : 'rms',
    rope: c.positions === 'rope',
    mlp: 'gelu',
    heads: c.heads,
    kvHeads: c.heads,
    headSize: headSize(c),
    C: c.dModel,
    F: mlpHidden(c),
  };
}
