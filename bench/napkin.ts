// Napkin maths of the kernels the `kernels` bench suite measures (bench/kernels.ts): FLOPs and
// bytes of global-memory traffic per launcher call, llm.c style. Each formula is written once
// more, as a `napkin(<kernel>): flops = …; bytes = …` line, in the header of the kernel's shader
// (shaders/<family>.wgsl); src/gpu/kernelNapkin.test.ts evaluates those lines and checks them
// against these functions, so the two cannot drift.
//
// Conventions: f32 is 4 bytes; `bytes` counts every input read once and every output written
// once (the least traffic a kernel can have; re-reads that hit cache are free, scratch buffers
// of O(rows) or O(blocks) are left out unless named); `flops` counts adds, multiplies and
// transcendental calls alike, one each. The bound says which ceiling a kernel is held against:
// 'compute' → the best matmul's GFLOP/s, 'memory' → the plain add kernel's GB/s.

export type Bound = 'compute' | 'memory';

export interface Napkin {
  flops: number;
  bytes: number;
}

export interface NapkinEntry<S> {
  /** Name in the shader header's `napkin(<name>)` line. */
  name: string;
  /** The shader file (in shaders/) whose header carries the formulas. */
  shader: string;
  bound: Bound;
  count: (s: S) => Napkin;
}

export interface MatmulDims {
  M: number;
  N: number;
  K: number;
  batch: number;
}
export interface AttentionDims {
  B: number;
  T: number;
  H: number;
  D: number;
  C: number;
}
export interface RowsDims {
  rows: number;
  C: number;
}
export interface XentDims {
  N: number;
  V: number;
}
export interface SizeDims {
  n: number;
}
export interface RopeDims {
  rows: number;
  T: number;
  H: number;
  KVH: number;
  D: number;
}
export interface GatedDims {
  rows: number;
  F: number;
}
export interface HeadNormDims {
  rows: number;
  H: number;
  KVH: number;
  D: number;
}
export interface PrefixAttentionDims {
  G: number;
  Tc: number;
  P: number;
  H: number;
  KVH: number;
  D: number;
}

/** C = alpha·A·B (beta = 0: C is written, never read). */
export const matmulNapkin: NapkinEntry<MatmulDims> = {
  name: 'matmul',
  shader: 'matmul.wgsl',
  bound: 'compute',
  count: ({ M, N, K, batch }) => ({ flops: 2 * M * N * K * batch, bytes: 4 * (M * K + K * N + M * N) * batch }),
};

/** The same product with B held as f16 (two bytes an element: the weights of inference, shaders/matmul.wgsl "f16 weights"). */
export const matmulF16bNapkin: NapkinEntry<MatmulDims> = {
  name: 'matmul_f16b',
  shader: 'matmul.wgsl',
  bound: 'compute',
  count: ({ M, N, K, batch }) => ({ flops: 2 * M * N * K * batch, bytes: (4 * M * K + 2 * K * N + 4 * M * N) * batch }),
};

/** Causal: T(T+1)/2 (query, key) pairs per (b, h); q·k and p·v are 2·D FLOPs each per pair. */
export const attentionForwardNapkin: NapkinEntry<AttentionDims> = {
  name: 'attn_forward',
  shader: 'attention.wgsl',
  bound: 'compute',
  count: ({ B, T, H, D, C }) => ({ flops: 2 * B * H * D * T * (T + 1), bytes: 4 * B * T * (4 * C + H) }),
};

/** dq pass: s, dO·v, dq (6·D per pair); dkv pass: s, dO·v, dv, dk (8·D per pair). */
export const attentionBackwardNapkin: NapkinEntry<AttentionDims> = {
  name: 'attn_backward',
  shader: 'attention.wgsl',
  bound: 'compute',
  count: ({ B, T, H, D, C }) => ({ flops: 7 * B * H * D * T * (T + 1), bytes: 4 * B * T * (8 * C + 3 * H) }),
};

/** LayerNorm forward: mean, variance, normalise·gamma + beta ≈ 8 FLOPs per element. */
export const normForwardNapkin: NapkinEntry<RowsDims> = {
  name: 'norm_forward',
  shader: 'norm.wgsl',
  bound: 'memory',
  count: ({ rows, C }) => ({ flops: 8 * rows * C, bytes: 4 * (2 * rows * C + 2 * C + 2 * rows) }),
};

/** LayerNorm backward: dx (10 per element) and the dgamma/dbeta column sums (5 per element). */
export const normBackwardNapkin: NapkinEntry<RowsDims> = {
  name: 'norm_backward',
  shader: 'norm.wgsl',
  bound: 'memory',
  count: ({ rows, C }) => ({ flops: 15 * rows * C, bytes: 4 * (3 * rows * C + 2 * rows + 3 * C) }),
};

/** Softmax cross-entropy with the gradient written over the logits (no loss reduction). */
export const xentNapkin: NapkinEntry<XentDims> = {
  name: 'xent',
  shader: 'xent.wgsl',
  bound: 'memory',
  count: ({ N, V }) => ({ flops: 8 * N * V, bytes: 4 * (2 * N * V + 3 * N) }),
};

/** Σ g² (2 per element) plus the update (≈ 16 per element); reads g twice, p, m, v once, writes p, m, v. */
export const adamwNapkin: NapkinEntry<SizeDims> = {
  name: 'adamw',
  shader: 'adamw.wgsl',
  bound: 'memory',
  count: ({ n }) => ({ flops: 18 * n, bytes: 4 * 8 * n }),
};

/** h += bias, out = gelu(h) (tanh form, ≈ 10 FLOPs per element). */
export const biasGeluNapkin: NapkinEntry<RowsDims> = {
  name: 'bias_gelu',
  shader: 'elementwise.wgsl',
  bound: 'memory',
  count: ({ rows, C }) => ({ flops: 10 * rows * C, bytes: 4 * (3 * rows * C + C) }),
};

/** g *= gelu'(h) in place (≈ 14 FLOPs per element). */
export const geluBackwardNapkin: NapkinEntry<SizeDims> = {
  name: 'gelu_backward',
  shader: 'elementwise.wgsl',
  bound: 'memory',
  count: ({ n }) => ({ flops: 14 * n, bytes: 4 * 3 * n }),
};

/** out = a + b: the memory ceiling (1 FLOP, 12 bytes per element). */
export const addNapkin: NapkinEntry<SizeDims> = {
  name: 'add',
  shader: 'elementwise.wgsl',
  bound: 'memory',
  count: ({ n }) => ({ flops: n, bytes: 4 * 3 * n }),
};

/** Each (q or k head, pair) of a row: 4 multiplies and 2 adds; the table's rows for T positions read once. */
export const ropeNapkin: NapkinEntry<RopeDims> = {
  name: 'rope',
  shader: 'rope.wgsl',
  bound: 'memory',
  count: ({ rows, T, H, KVH, D }) => ({ flops: 3 * rows * (H + KVH) * D, bytes: 4 * (2 * rows * (H + KVH) * D + T * D) }),
};

/** out = g·σ(g)·u: σ is 4 (negate, exp, add, divide), then 2 multiplies. */
export const swigluForwardNapkin: NapkinEntry<GatedDims> = {
  name: 'swiglu_forward',
  shader: 'swiglu.wgsl',
  bound: 'memory',
  count: ({ rows, F }) => ({ flops: 6 * rows * F, bytes: 4 * 3 * rows * F }),
};

/** dgate and dup from σ(g) (4) and 8 more per element; reads [gate | up] and dout, writes [dgate | dup]. */
export const swigluBackwardNapkin: NapkinEntry<GatedDims> = {
  name: 'swiglu_backward',
  shader: 'swiglu.wgsl',
  bound: 'memory',
  count: ({ rows, F }) => ({ flops: 12 * rows * F, bytes: 4 * 5 * rows * F }),
};

/** Per q or k head of a row: Σx² (2·D), rstd (4), x·rstd·gain (2·D); writes x, raw and the rstd. */
export const headNormForwardNapkin: NapkinEntry<HeadNormDims> = {
  name: 'headnorm_forward',
  shader: 'headnorm.wgsl',
  bound: 'memory',
  count: ({ rows, H, KVH, D }) => ({ flops: rows * (H + KVH) * (4 * D + 4), bytes: 4 * (3 * rows * (H + KVH) * D + rows * (H + KVH) + 2 * D) }),
};

/** G·(P·Tc + Tc(Tc+1)/2) (query, key) pairs at 4·D FLOPs; the prefix's k and v read once, not once per completion. */
export const prefixAttentionForwardNapkin: NapkinEntry<PrefixAttentionDims> = {
  name: 'prefix_attn_forward',
  shader: 'prefix_attention.wgsl',
  bound: 'compute',
  count: ({ G, Tc, P, H, KVH, D }) => ({ flops: 2 * G * H * D * Tc * (2 * P + Tc + 1), bytes: 4 * (2 * KVH * D * P + G * Tc * (2 * H * D + 2 * KVH * D + H)) }),
};

/** The same pairs at 14·D FLOPs; the completions' qkv, out, dout, lse, dvec and dqkv, the prefix's k/v and dpkv. */
export const prefixAttentionBackwardNapkin: NapkinEntry<PrefixAttentionDims> = {
  name: 'prefix_attn_backward',
  shader: 'prefix_attention.wgsl',
  bound: 'compute',
  count: ({ G, Tc, P, H, KVH, D }) => ({
    flops: 7 * G * H * D * Tc * (2 * P + Tc + 1),
    bytes: 4 * (G * Tc * (4 * H * D + 4 * KVH * D + 3 * H) + P * (H * D + 4 * KVH * D)),
  }),
};

// biome-ignore lint/suspicious/noExplicitAny: entries of every launch-argument type in one list
export const NAPKINS: NapkinEntry<any>[] = [
  matmulNapkin,
  matmulF16bNapkin,
  attentionForwardNapkin,
  attentionBackwardNapkin,
  normForwardNapkin,
  normBackwardNapkin,
  xentNapkin,
  adamwNapkin,
  biasGeluNapkin,
  geluBackwardNapkin,
  addNapkin,
  ropeNapkin,
  swigluForwardNapkin,
  swigluBackwardNapkin,
  headNormForwardNapkin,
  prefixAttentionForwardNapkin,
  prefixAttentionBackwardNapkin,
];

/** GFLOP/s and GB/s of one call taking `ms`, and its share of the ceiling its bound names. */
export function throughput(n: Napkin, ms: number, bound: Bound, ceiling: { gflops: number; gbps: number }) {
  const gflops = n.flops / (ms * 1e6);
  const gbps = n.bytes / (ms * 1e6);
  const share = bound === 'compute' ? gflops / ceiling.gflops : gbps / ceiling.gbps;
  return { gflops, gbps, share };
}
