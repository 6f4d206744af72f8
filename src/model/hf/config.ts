// A Hugging Face `config.json` of a Llama, Qwen2 or Qwen3 causal LM, mapped onto our ModelConfig
// (src/core/model/config.ts; the block it chooses is src/core/model/plan.ts). Two spellings exist and both
// are read: the one most Hub folders have (top-level `rope_theta`, `rope_scaling`, `torch_dtype`)
// and the one transformers 5 writes (`rope_parameters` holding rope_theta and the scaling,
// `dtype`). Anything this engine cannot run exactly — another architecture, an activation other
// than SiLU, sliding-window attention, a RoPE scaling other than linear / llama3 — is refused
// with an error naming the field, never approximated.
import { ModelConfigError, validateConfig, type ModelConfig, type RopeScalingKind } from '../../core/model/config.ts';

export const HF_ARCHITECTURES = ['LlamaForCausalLM', 'Qwen2ForCausalLM', 'Qwen3ForCausalLM'] as const;
export type HfArchitecture = (typeof HF_ARCHITECTURES)[number];

export class HfConfigError extends Error {
  constructor(
    /** The config.json field at fault ('config' for the whole file). */
    readonly field: string,
    message: string,
  ) {
    super(`config.json: ${field}: ${message}`);
    this.name = 'HfConfigError';
  }
}

export interface HfModelConfig {
  config: ModelConfig;
  architecture: HfArchitecture;
  /** The dtype the weights were saved in ('float32', 'bfloat16', …), when the file says. */
  dtype?: string;
  bosTokenId?: number;
  /** End-of-sequence ids of config.json (generation_config.json's, when given, take precedence). */
  eosTokenIds: number[];
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function int(j: Json, field: string, fallback?: number): number {
  const v = j[field] ?? fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new HfConfigError(field, `must be a positive integer, got ${JSON.stringify(j[field])}`);
  return v;
}

function num(j: Json, field: string, where = field, fallback?: number): number {
  const v = j[field] ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || !(v > 0)) throw new HfConfigError(where, `must be a positive number, got ${JSON.stringify(j[field])}`);
  return v;
}

function bool(j: Json, field: string, fallback: boolean): boolean {
  const v = j[field] ?? fallback;
  if (typeof v !== 'boolean') throw new HfConfigError(field, `must be true or false, got ${JSON.stringify(j[field])}`);
  return v;
}

function tokenIds(v: unknown, field: string): number[] {
  if (v === undefined || v === null) return [];
  const ids = Array.isArray(v) ? v : [v];
  for (const id of ids)
    if (!Number.isInteger(id) || (id as number) < 0) throw new HfConfigError(field, `must be a token id or a list of them, got ${JSON.stringify(v)}`);
  return ids as number[];
}

/** RoPE's base and scaling from either spelling. */
function ropeFields(
  j: Json,
): Pick<ModelConfig, 'ropeBase' | 'ropeScaling' | 'ropeFactor' | 'ropeLowFreqFactor' | 'ropeHighFreqFactor' | 'ropeOriginalContext'> {
  let params: Json | undefined;
  let where: string;
  let base: number;
  if (j.rope_parameters !== undefined && j.rope_parameters !== null) {
    if (!isObject(j.rope_parameters)) throw new HfConfigError('rope_parameters', 'must be an object');
    params = j.rope_parameters;
    where = 'rope_parameters';
    if (params.rope_theta === undefined) {
      // Per-layer-type parameters ({"full_attention": {...}, "sliding_attention": {...}}) belong to other architectures.
      throw new HfConfigError('rope_parameters.rope_theta', `is missing (keys: ${Object.keys(params).join(', ')})`);
    }
    base = num(params, 'rope_theta', 'rope_parameters.rope_theta');
  } else {
    base = num(j, 'rope_theta', 'rope_theta', 10000);
    if (j.rope_scaling !== undefined && j.rope_scaling !== null && !isObject(j.rope_scaling))
      throw new HfConfigError('rope_scaling', 'must be an object or null');
    params = (j.rope_scaling as Json | null | undefined) ?? undefined;
    where = 'rope_scaling';
  }
  const type = params ? (params.rope_type ?? params.type ?? 'default') : 'default';
  const at = (f: string) => `${where}.${f}`;
  if (type === 'default') return { ropeBase: base };
  if (type === 'linear') return { ropeBase: base, ropeScaling: 'linear' as RopeScalingKind, ropeFactor: num(params!, 'factor', at('factor')) };
  if (type === 'llama3') {
    return {
      ropeBase: base,
      ropeScaling: 'llama3',
      ropeFactor: num(params!, 'factor', at('factor')),
      ropeLowFreqFactor: num(params!, 'low_freq_factor', at('low_freq_factor')),
      ropeHighFreqFactor: num(params!, 'high_freq_factor', at('high_freq_factor')),
      ropeOriginalContext: num(params!, 'original_max_position_embeddings', at('original_max_position_embeddings')),
    };
  }
  throw new HfConfigError(
    at(params!.rope_type !== undefined ? 'rope_type' : 'type'),
    `RoPE scaling ${JSON.stringify(type)} is not supported (supported: default, linear, llama3)`,
  );
}

/** The config.json field behind each of ours, for errors. */
const HF_FIELD: Partial<Record<keyof ModelConfig | 'config', string>> = {
  vocabSize: 'vocab_size',
  contextLength: 'max_position_embeddings',
  layers: 'num_hidden_layers',
  heads: 'num_attention_heads',
  kvHeads: 'num_key_value_heads',
  dModel: 'hidden_size',
  headDim: 'head_dim',
  mlpWidth: 'intermediate_size',
  normEps: 'rms_norm_eps',
  ropeBase: 'rope_theta',
};

/**
 * Maps a parsed config.json onto our ModelConfig. `contextLength` overrides
 * max_position_embeddings (it sizes RoPE's table; the KV cache is sized by the generator).
 */
export function configFromHf(json: unknown, options: { contextLength?: number } = {}): HfModelConfig {
  if (!isObject(json)) throw new HfConfigError('config', 'must be a JSON object');
  const archs = json.architectures;
  if (!Array.isArray(archs) || archs.length !== 1 || typeof archs[0] !== 'string') {
    throw new HfConfigError('architectures', `must list one architecture, got ${JSON.stringify(archs)}`);
  }
  const architecture = archs[0] as HfArchitecture;
  if (!HF_ARCHITECTURES.includes(architecture)) {
    throw new HfConfigError('architectures', `${JSON.stringify(archs[0])} is not supported (supported: ${HF_ARCHITECTURES.join(', ')})`);
  }
  const act = json.hidden_act ?? 'silu';
  if (act !== 'silu') throw new HfConfigError('hidden_act', `${JSON.stringify(act)} is not supported (the SwiGLU MLP here uses silu)`);
  if (json.use_sliding_window === true) throw new HfConfigError('use_sliding_window', 'sliding-window attention is not supported');
  if (Array.isArray(json.layer_types) && json.layer_types.some((t) => t !== 'full_attention')) {
    throw new HfConfigError('layer_types', `only full_attention layers are supported, got ${JSON.stringify([...new Set(json.layer_types)])}`);
  }
  const d = int(json, 'hidden_size');
  const heads = int(json, 'num_attention_heads');
  const kvHeads = int(json, 'num_key_value_heads', heads);
  const headDim = json.head_dim === undefined || json.head_dim === null ? undefined : int(json, 'head_dim');
  const F = int(json, 'intermediate_size');
  const isQwen3 = architecture === 'Qwen3ForCausalLM';
  const isQwen2 = architecture === 'Qwen2ForCausalLM';
  // Llama and Qwen3: attention_bias puts a bias on q, k, v and o; Qwen2: q, k, v always, o never.
  const attentionBias = isQwen2 ? true : bool(json, 'attention_bias', false);
  const config: ModelConfig = {
    vocabSize: int(json, 'vocab_size'),
    contextLength: options.contextLength ?? int(json, 'max_position_embeddings'),
    layers: int(json, 'num_hidden_layers'),
    heads,
    dModel: d,
    mlpRatio: F / d,
    norm: 'rmsnorm',
    positions: 'rope',
    tiedEmbeddings: bool(json, 'tie_word_embeddings', false),
    normEps: num(json, 'rms_norm_eps', 'rms_norm_eps', 1e-6),
    ...ropeFields(json),
    kvHeads,
    // head_dim = hidden/heads is the default; only a different one is recorded.
    ...(headDim !== undefined && headDim * heads !== d && { headDim }),
    mlp: 'swiglu',
    mlpWidth: F,
    qkvBias: attentionBias,
    projBias: isQwen2 ? false : attentionBias,
    mlpBias: architecture === 'LlamaForCausalLM' ? bool(json, 'mlp_bias', false) : false,
    qkNorm: isQwen3,
  };
  try {
    validateConfig(config);
  } catch (e) {
    if (e instanceof ModelConfigError) throw new HfConfigError(HF_FIELD[e.field] ?? String(e.field), `gives a model this engine cannot run: ${e.message}`);
    throw e;
  }
  const dtype = json.dtype ?? json.torch_dtype;
  return {
    config,
    architecture,
    ...(typeof dtype === 'string' && { dtype }),
    ...(json.bos_token_id !== undefined && json.bos_token_id !== null && { bosTokenId: tokenIds(json.bos_token_id, 'bos_token_id')[0] }),
    eosTokenIds: tokenIds(json.eos_token_id, 'eos_token_id'),
  };
}

/**
 * What generation_config.json says about stopping and starting: its eos_token_id (one id or a
 * list) and bos_token_id. Generation stops at these ids; config.json's are the fallback.
 */
export function generationConfigFromHf(
  json: unknown,
  fallback?: Pick<HfModelConfig, 'eosTokenIds' | 'bosTokenId'>,
): { eosTokenIds: number[]; bosTokenId?: number } {
  if (!isObject(json)) throw new HfConfigError('config', 'generation_config.json must be a JSON object');
  const eos = tokenIds(json.eos_token_id, 'eos_token_id');
  const bos = tokenIds(json.bos_token_id, 'bos_token_id')[0] ?? fallback?.bosTokenId;
  return { eosTokenIds: eos.length ? eos : (fallback?.eosTokenIds ?? []), ...(bos !== undefined && { bosTokenId: bos }) };
}
