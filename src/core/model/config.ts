// The shape of a GPT: everything needed to lay out its parameters and run it. Presets go from a
// model small enough for a CPU-emulated GPU in CI up to one that fills a laptop GPU.

export type NormKind = 'layernorm' | 'rmsnorm';
export type PositionKind = 'learned' | 'rope';
/** GPT-2's MLP (up, tanh-GELU, down) or Llama's gated one (silu(gate)·up, down). */
export type MlpKind = 'gelu' | 'swiglu';
/** How RoPE's frequencies are rescaled for a longer context (Hugging Face's rope_type). */
export type RopeScalingKind = 'none' | 'linear' | 'llama3';

export interface ModelConfig {
  /** Token ids are 0..vocabSize-1. */
  vocabSize: number;
  /** Longest sequence the model sees; sizes `wpe` for learned positions and the KV cache. */
  contextLength: number;
  layers: number;
  heads: number;
  dModel: number;
  /** MLP hidden width = mlpRatio · dModel (GPT-2: 4). Must give an integer width. */
  mlpRatio: number;
  /** LayerNorm has weight and bias; RMSNorm has a weight only. */
  norm: NormKind;
  /** Learned absolute position embeddings (`wpe`) or rotary embeddings applied to q and k. */
  positions: PositionKind;
  /** Logits use `wte` transposed; otherwise a separate `lm_head.weight`. */
  tiedEmbeddings: boolean;
  /** Added to the variance (LayerNorm) or mean square (RMSNorm) before the square root. */
  normEps: number;
  /** RoPE frequency base: pair i of a head rotates by position · ropeBase^(-2i/headSize). */
  ropeBase: number;
  // The fields below are optional: absent, they give GPT-2's choices (and a GPT-2 checkpoint's
  // config is unchanged). Llama, Qwen2 and Qwen3 set them (src/model/hf/config.ts maps a Hugging
  // Face config.json onto them).
  /** Key/value heads of grouped-query attention (heads must be a multiple). Default: heads. */
  kvHeads?: number;
  /** Width of one head; default dModel / heads (Qwen3 chooses its own, so heads·headDim may differ from dModel). */
  headDim?: number;
  /** Default 'gelu'. */
  mlp?: MlpKind;
  /** MLP hidden width (Llama's intermediate_size) when set; otherwise mlpRatio · dModel. */
  mlpWidth?: number;
  /** Biases on the q, k, v projections (GPT-2, Qwen2). Default true. */
  qkvBias?: boolean;
  /** Bias on the attention's output projection (GPT-2). Default true. */
  projBias?: boolean;
  /** Biases on the MLP's projections (GPT-2). Default true. */
  mlpBias?: boolean;
  /** RMSNorm over each head of q and k before RoPE, one gain [headDim] each (Qwen3). Default false. */
  qkNorm?: boolean;
  /** Default 'none'. 'linear' divides every frequency by ropeFactor; 'llama3' also needs the three below. */
  ropeScaling?: RopeScalingKind;
  ropeFactor?: number;
  ropeLowFreqFactor?: number;
  ropeHighFreqFactor?: number;
  /** The context the frequencies were trained for (Hugging Face's original_max_position_embeddings). */
  ropeOriginalContext?: number;
}

/** The attention kernel keeps one head's q, k, v rows in workgroup memory; 128 is its limit. */
const MAX_HEAD_SIZE = 128;

export class ModelConfigError extends Error {
  constructor(
    readonly field: keyof ModelConfig | 'config',
    message: string,
  ) {
    super(`model config: ${field}: ${message}`);
    this.name = 'ModelConfigError';
  }
}

export const CONFIG_FIELDS: readonly (keyof ModelConfig)[] = [
  'vocabSize',
  'contextLength',
  'layers',
  'heads',
  'dModel',
  'mlpRatio',
  'norm',
  'positions',
  'tiedEmbeddings',
  'normEps',
  'ropeBase',
  'kvHeads',
  'headDim',
  'mlp',
  'mlpWidth',
  'qkvBias',
  'projBias',
  'mlpBias',
  'qkNorm',
  'ropeScaling',
  'ropeFactor',
  'ropeLowFreqFactor',
  'ropeHighFreqFactor',
  'ropeOriginalContext',
];

/** Checks every field; throws a ModelConfigError naming the first bad one. Returns the config. */
export function validateConfig(c: ModelConfig): ModelConfig {
  if (typeof c !== 'object' || c === null) throw new ModelConfigError('config', 'must be an object');
  const posInt = (f: 'vocabSize' | 'contextLength' | 'layers' | 'heads' | 'dModel') => {
    const v = c[f];
    if (!Number.isInteger(v) || v < 1) throw new ModelConfigError(f, `must be a positive integer, got ${String(v)}`);
  };
  posInt('vocabSize');
  posInt('contextLength');
  posInt('layers');
  posInt('heads');
  posInt('dModel');
  // Token ids travel as u32 on the GPU but as f32-exact integers in some places (one-hot maths).
  if (c.vocabSize > 1 << 24) throw new ModelConfigError('vocabSize', `must be at most ${1 << 24}, got ${c.vocabSize}`);
  if (c.headDim === undefined && c.dModel % c.heads !== 0) {
    throw new ModelConfigError('dModel', `must be divisible by heads (${c.heads}), got ${c.dModel}`);
  }
  if (c.headDim !== undefined && (!Number.isInteger(c.headDim) || c.headDim < 1)) {
    throw new ModelConfigError('headDim', `must be a positive integer, got ${String(c.headDim)}`);
  }
  const hs = headSize(c);
  if (hs > MAX_HEAD_SIZE) {
    throw new ModelConfigError(
      c.headDim === undefined ? 'heads' : 'headDim',
      c.headDim === undefined
        ? `head size dModel/heads = ${hs} exceeds ${MAX_HEAD_SIZE}; use at least ${Math.ceil(c.dModel / MAX_HEAD_SIZE)} heads`
        : `head size ${hs} exceeds ${MAX_HEAD_SIZE}`,
    );
  }
  if (c.headDim !== undefined && c.headDim % 4 !== 0) {
    throw new ModelConfigError('headDim', `must be a multiple of 4 (the attention kernel reads heads as vec4), got ${c.headDim}`);
  }
  if (c.kvHeads !== undefined && (!Number.isInteger(c.kvHeads) || c.kvHeads < 1 || c.heads % c.kvHeads !== 0)) {
    throw new ModelConfigError('kvHeads', `must be a positive integer dividing heads (${c.heads}), got ${String(c.kvHeads)}`);
  }
  if (c.mlp !== undefined && c.mlp !== 'gelu' && c.mlp !== 'swiglu') {
    throw new ModelConfigError('mlp', `must be 'gelu' or 'swiglu', got ${JSON.stringify(c.mlp)}`);
  }
  if (c.mlpWidth !== undefined && (!Number.isInteger(c.mlpWidth) || c.mlpWidth < 1)) {
    throw new ModelConfigError('mlpWidth', `must be a positive integer, got ${String(c.mlpWidth)}`);
  }
  for (const f of ['qkvBias', 'projBias', 'mlpBias', 'qkNorm'] as const) {
    if (c[f] !== undefined && typeof c[f] !== 'boolean') throw new ModelConfigError(f, `must be true or false, got ${JSON.stringify(c[f])}`);
  }
  validateRopeScaling(c);
  if (c.mlpWidth === undefined && (typeof c.mlpRatio !== 'number' || !(c.mlpRatio > 0) || !Number.isInteger(c.mlpRatio * c.dModel))) {
    throw new ModelConfigError('mlpRatio', `must be positive with mlpRatio·dModel an integer, got ${String(c.mlpRatio)}`);
  }
  if (c.norm !== 'layernorm' && c.norm !== 'rmsnorm') {
    throw new ModelConfigError('norm', `must be 'layernorm' or 'rmsnorm', got ${JSON.stringify(c.norm)}`);
  }
  if (c.positions !== 'learned' && c.positions !== 'rope') {
    throw new ModelConfigError('positions', `must be 'learned' or 'rope', got ${JSON.stringify(c.positions)}`);
  }
  // Rotate-half pairs element i with i + headSize/2, so the head size must be even.
  if (c.positions === 'rope' && hs % 2 !== 0) {
    throw new ModelConfigError('heads', `RoPE needs an even head size, got dModel/heads = ${hs}`);
  }
  if (typeof c.tiedEmbeddings !== 'boolean') {
    throw new ModelConfigError('tiedEmbeddings', `must be true or false, got ${JSON.stringify(c.tiedEmbeddings)}`);
  }
  if (typeof c.normEps !== 'number' || !(c.normEps > 0) || !Number.isFinite(c.normEps)) {
    throw new ModelConfigError('normEps', `must be a positive number, got ${String(c.normEps)}`);
  }
  if (typeof c.ropeBase !== 'number' || !(c.ropeBase > 1) || !Number.isFinite(c.ropeBase)) {
    throw new ModelConfigError('ropeBase', `must be a number above 1, got ${String(c.ropeBase)}`);
  }
  return c;
}

function validateRopeScaling(c: ModelConfig): void {
  const kind = c.ropeScaling ?? 'none';
  if (kind !== 'none' && kind !== 'linear' && kind !== 'llama3') {
    throw new ModelConfigError('ropeScaling', `must be 'none', 'linear' or 'llama3', got ${JSON.stringify(kind)}`);
  }
  if (kind !== 'none' && c.positions !== 'rope') throw new ModelConfigError('ropeScaling', `applies to rotary positions only (positions is '${c.positions}')`);
  const need =
    kind === 'linear'
      ? (['ropeFactor'] as const)
      : kind === 'llama3'
        ? (['ropeFactor', 'ropeLowFreqFactor', 'ropeHighFreqFactor', 'ropeOriginalContext'] as const)
        : [];
  for (const f of need) {
    const v = c[f];
    if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v))
      throw new ModelConfigError(f, `must be a positive number for ropeScaling '${kind}', got ${String(v)}`);
  }
  if (kind === 'llama3' && !(c.ropeHighFreqFactor! > c.ropeLowFreqFactor!)) {
    throw new ModelConfigError('ropeHighFreqFactor', `must exceed ropeLowFreqFactor (${c.ropeLowFreqFactor}), got ${c.ropeHighFreqFactor}`);
  }
}

export function headSize(c: ModelConfig): number {
  return c.headDim ?? c.dModel / c.heads;
}

export function kvHeads(c: ModelConfig): number {
  return c.kvHeads ?? c.heads;
}

export function mlpHidden(c: ModelConfig): number {
  return c.mlpWidth ?? Math.round(c.mlpRatio * c.dModel);
}

/**
 * RoPE's angle per position for each pair i < headSize/2 (θ = position · freq[i]): base^(−2i/D),
 * rescaled as the config's ropeScaling says, exactly as Hugging Face's rope init functions do.
 */
export function ropeFrequencies(
  c: Pick<ModelConfig, 'ropeBase' | 'ropeScaling' | 'ropeFactor' | 'ropeLowFreqFactor' | 'ropeHighFreqFactor' | 'ropeOriginalContext'>,
  D: number,
): Float64Array {
  const freq = new Float64Array(D / 2);
  for (let i = 0; i < D / 2; i++) freq[i] = c.ropeBase ** ((-2 * i) / D);
  const kind = c.ropeScaling ?? 'none';
  if (kind === 'linear') return freq.map((f) => f / c.ropeFactor!);
  if (kind === 'llama3') {
    const factor = c.ropeFactor!;
    const lo = c.ropeLowFreqFactor!;
    const hi = c.ropeHighFreqFactor!;
    const old = c.ropeOriginalContext!;
    const lowFreqWavelen = old / lo;
    const highFreqWavelen = old / hi;
    return freq.map((f) => {
      const wavelen = (2 * Math.PI) / f;
      if (wavelen < highFreqWavelen) return f; // high frequencies: unchanged
      if (wavelen > lowFreqWavelen) return f / factor; // low frequencies: scaled like 'linear'
      const smooth = (old / wavelen - lo) / (hi - lo); // in between: interpolated
      return (1 - smooth) * (f / factor) + smooth * f;
    });
  }
  return freq;
}

/** GPT-2's defaults for everything a preset does not choose. */
const GPT2_DEFAULTS = {
  mlpRatio: 4,
  norm: 'layernorm',
  tiedEmbeddings: true, // halves the embedding parameters; GPT-2 ties them too
  normEps: 1e-5, // PyTorch's LayerNorm default, so exported weights behave the same there
  ropeBase: 10000, // the RoFormer / LLaMA value
} as const;

export const PRESETS = {
  /**
   * For CI on SwiftShader (a CPU-emulated GPU, well under 1 GFLOP/s): ~36K parameters, so a
   * training step of 4×64 tokens is a few MFLOP. Byte-level vocab (256) needs no tokenizer.
   */
  micro: {
    ...GPT2_DEFAULTS,
    vocabSize: 256,
    contextLength: 64,
    layers: 2,
    heads: 2,
    dModel: 32,
    positions: 'learned',
  },
  /**
   * The benchmark model of the engine issue (2 layers, d_model 64, 4 heads, context 64, vocab
   * 256; ~121K parameters). Plain GPT-2 choices so the tfjs peers can build the same network.
   */
  bench: {
    ...GPT2_DEFAULTS,
    vocabSize: 256,
    contextLength: 64,
    layers: 2,
    heads: 4,
    dModel: 64,
    positions: 'learned',
  },
  /**
   * ~1.1M parameters: trains a small BPE model on a toy environment in minutes on an
   * integrated GPU. RoPE because LWM prompts are long and vary in length. Context 512: with the
   * compact template it holds the initial state of every default-dataset row and the newest
   * turn of most (the Train view's default; see form.test.ts), where 256 kept the newest turn in
   * under half the web and os rows.
   */
  mini: {
    ...GPT2_DEFAULTS,
    vocabSize: 2048,
    contextLength: 512,
    layers: 4,
    heads: 4,
    dModel: 128,
    positions: 'rope',
  },
  /**
   * The quick recipe's model (src/train/recipe.ts): GPT-2 blocks, 4 layers of width 128, ~0.92M
   * parameters. A 1,024-token BPE vocabulary and a context of 256: with the compact template a
   * terminal row then holds the whole initial state and the newest turn in 95% of rows, where
   * bytes at a context of 384 kept the newest turn in a quarter of them (docs/fidelity.md).
   * RoPE, not learned positions: a training row's prompt ends where its target's length puts it,
   * a generator's where its output budget does, and with learned positions the same prompt at
   * another offset was read as another prompt (docs/fidelity.md).
   */
  quick: {
    ...GPT2_DEFAULTS,
    vocabSize: 1024,
    contextLength: 256,
    layers: 4,
    heads: 4,
    dModel: 128,
    positions: 'rope',
  },
  /**
   * ~13.8M parameters for a laptop GPU: head size 64 (the attention kernel's sweet spot),
   * context 512 to hold a system prompt plus a few turns, an 8K BPE vocabulary.
   */
  small: {
    ...GPT2_DEFAULTS,
    vocabSize: 8192,
    contextLength: 512,
    layers: 6,
    heads: 6,
    dModel: 384,
    positions: 'rope',
  },
} as const satisfies Record<string, ModelConfig>;

export type PresetName = keyof typeof PRESETS;

/** A fresh, mutable copy of a preset with optional overrides, validated. */
export function presetConfig(name: PresetName, overrides: Partial<ModelConfig> = {}): ModelConfig {
  const base = PRESETS[name];
  if (!base) throw new ModelConfigError('config', `unknown preset ${JSON.stringify(name)}; known: ${Object.keys(PRESETS).join(', ')}`);
  return validateConfig({ ...base, ...overrides });
}

/** Number of real parameters (the flat buffer is a little larger: see params.ts padding). */
export function paramCount(c: ModelConfig): number {
  const d = c.dModel;
  const f = mlpHidden(c);
  const normParams = c.norm === 'layernorm' ? 2 * d : d;
  const D = headSize(c);
  const q = c.heads * D;
  const qkv = q + 2 * kvHeads(c) * D;
  const up = c.mlp === 'swiglu' ? 2 * f : f; // gate | up
  const perLayer =
    2 * normParams + // ln_1, ln_2
    d * qkv +
    (c.qkvBias === false ? 0 : qkv) + // c_attn
    (c.qkNorm ? 2 * D : 0) + // q_norm, k_norm
    q * d +
    (c.projBias === false ? 0 : d) + // attn.c_proj
    d * up +
    (c.mlpBias === false ? 0 : up) + // c_fc
    f * d +
    (c.mlpBias === false ? 0 : d); // mlp.c_proj
  return (
    c.vocabSize * d + // wte
    (c.positions === 'learned' ? c.contextLength * d : 0) + // wpe
    c.layers * perLayer +
    normParams + // ln_f
    (c.tiedEmbeddings ? 0 : c.vocabSize * d) // lm_head
  );
}

/**
 * Floating-point operations of one forward pass over `batch` sequences of `tokens` tokens,
 * counting a multiply-add as 2. Matmuls: 2·(input × output) per token for every matrix,
 * including the logits; attention: q·kᵀ and p·v over the causal prefix, which averages
 * (tokens + 1)/2 keys per query. Norms, GELU, softmax and the embedding lookup are left out
 * (they are O(d) per token, a few percent at these sizes).
 */
export function forwardFlops(c: ModelConfig, batch: number, tokens: number): number {
  const d = c.dModel;
  const f = mlpHidden(c);
  const q = c.heads * headSize(c);
  const qkv = q + 2 * kvHeads(c) * headSize(c);
  const up = c.mlp === 'swiglu' ? 2 * f : f;
  const matmulPerToken = c.layers * 2 * (d * qkv + q * d + d * up + f * d) + 2 * d * c.vocabSize;
  const attnPerToken = c.layers * 2 * 2 * q * ((tokens + 1) / 2);
  return batch * tokens * (matmulPerToken + attnPerToken);
}

/**
 * FLOPs of one training step (forward + backward; AdamW's O(params) is left out): the backward
 * computes two products per forward matmul (gradient wrt input and wrt weight), hence 3×.
 * This is the "6·N·tokens" rule of thumb with attention added.
 */
export function trainStepFlops(c: ModelConfig, batch: number, tokens: number): number {
  return 3 * forwardFlops(c, batch, tokens);
}
