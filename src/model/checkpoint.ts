/**
 * Checkpoints: a model's weights, its config, the tokenizer it was trained with, the training
 * step and (optionally) the AdamW state, in one safetensors file.
 *
 * Tensors (all F32, row-major, in the flat layout's order; see params.ts for shapes):
 *
 *   wte                                   [vocab, d]
 *   wpe                                   [context, d]      learned positions only
 *   h.{i}.ln_1.weight, h.{i}.ln_1.bias    [d]               bias: LayerNorm only
 *   h.{i}.attn.c_attn.weight              [d, 3d]           input-major (y = x·W), q|k|v
 *   h.{i}.attn.c_attn.bias                [3d]
 *   h.{i}.attn.c_proj.weight / .bias      [d, d] / [d]
 *   h.{i}.ln_2.weight, h.{i}.ln_2.bias    [d]
 *   h.{i}.mlp.c_fc.weight / .bias         [d, f] / [f]      f = mlpRatio·d
 *   h.{i}.mlp.c_proj.weight / .bias       [f, d] / [d]
 *   ln_f.weight, ln_f.bias                [d]
 *   lm_head.weight                        [vocab, d]        untied only
 *   optimizer.m.<name>, optimizer.v.<name>  same shape as <name>   AdamW moments (optional)
 *   optimizer.step                        I32 []            AdamW's step count t (bias correction)
 *
 * The matrices follow GPT-2's Conv1D convention ([in, out]), so `h.*` tensors load into
 * Hugging Face GPT-2 after prefixing `transformer.`; `lm_head.weight` is [vocab, d] like an
 * nn.Linear's weight.
 *
 * `__metadata__` (all strings, as safetensors requires):
 *   format          "lwm-studio-checkpoint/1"
 *   config          the ModelConfig as JSON (fields in CONFIG_FIELDS order)
 *   step            training steps taken, decimal
 *   tokenizer_id    optional: which tokenizer produced the token ids
 *   tokenizer_hash  optional: a hash of its vocabulary and merges
 *   anything else   kept as given, sorted by key; training writes `stage`, `tokenizer` (JSON),
 *                   `spec` (the resolved TrainSpec as JSON) and, for SFT, `mask_config` (the loss
 *                   mask's settings in the file format of docs/masking.md)
 *
 * save → load → save gives identical bytes. Loading into a model whose config differs names
 * the first differing field; a tensor missing, extra or of the wrong shape is named with both
 * shapes.
 */
import { CONFIG_FIELDS, validateConfig, type ModelConfig } from './config.ts';
import { paramLayout, type ParamLayout } from './params.ts';
import { readSafetensors, tensorToF32, tensorToInts, writeSafetensors, type TensorToWrite } from './safetensors.ts';

export const CHECKPOINT_FORMAT = 'lwm-studio-checkpoint/1';
const RESERVED_META = ['format', 'config', 'step', 'tokenizer_id', 'tokenizer_hash'];

export interface TokenizerRef {
  id: string;
  hash: string;
}

export interface OptimizerState {
  /** Adam first moment, flat layout. */
  m: Float32Array;
  /** Adam second moment, flat layout. */
  v: Float32Array;
  /** Optimiser steps taken (t in the bias correction 1 - β^t). */
  step: number;
}

export interface Checkpoint {
  config: ModelConfig;
  /** All weights in the flat layout of paramLayout(config). */
  params: Float32Array;
  step: number;
  tokenizer?: TokenizerRef;
  optimizer?: OptimizerState;
  /** Further string metadata carried along unchanged (e.g. stage, dataset name). */
  extraMetadata?: Record<string, string>;
}

export class CheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointError';
  }
}

/** Config as JSON with a fixed field order, so the same config always gives the same bytes. */
export function configToJson(c: ModelConfig): string {
  const ordered: Record<string, unknown> = {};
  for (const f of CONFIG_FIELDS) ordered[f] = c[f];
  return JSON.stringify(ordered);
}

export function saveCheckpoint(ck: Checkpoint): Uint8Array {
  const layout = paramLayout(ck.config);
  if (ck.params.length !== layout.totalSize) {
    throw new CheckpointError(`params hold ${ck.params.length} elements; this config's layout needs ${layout.totalSize}`);
  }
  if (!Number.isSafeInteger(ck.step) || ck.step < 0) throw new CheckpointError(`step must be a non-negative integer, got ${ck.step}`);
  const metadata: Record<string, string> = {
    format: CHECKPOINT_FORMAT,
    config: configToJson(ck.config),
    step: String(ck.step),
  };
  if (ck.tokenizer) {
    metadata.tokenizer_id = ck.tokenizer.id;
    metadata.tokenizer_hash = ck.tokenizer.hash;
  }
  for (const k of Object.keys(ck.extraMetadata ?? {}).sort()) {
    if (RESERVED_META.includes(k)) throw new CheckpointError(`extra metadata key '${k}' is reserved`);
    metadata[k] = ck.extraMetadata![k];
  }
  const tensors: TensorToWrite[] = layout.tensors.map((t) => ({
    name: t.name,
    dtype: 'F32',
    shape: t.shape,
    data: ck.params.subarray(t.offset, t.offset + t.size),
  }));
  const opt = ck.optimizer;
  if (opt) {
    for (const [which, flat] of [['m', opt.m], ['v', opt.v]] as const) {
      if (flat.length !== layout.totalSize) {
        throw new CheckpointError(`optimizer ${which} holds ${flat.length} elements; this config's layout needs ${layout.totalSize}`);
      }
      for (const t of layout.tensors) {
        tensors.push({ name: `optimizer.${which}.${t.name}`, dtype: 'F32', shape: t.shape, data: flat.subarray(t.offset, t.offset + t.size) });
      }
    }
    if (!Number.isInteger(opt.step) || opt.step < 0 || opt.step > 0x7fffffff) {
      throw new CheckpointError(`optimizer step must be an integer in [0, 2^31), got ${opt.step}`);
    }
    tensors.push({ name: 'optimizer.step', dtype: 'I32', shape: [], data: new Int32Array([opt.step]) });
  }
  return writeSafetensors(tensors, metadata);
}

export interface LoadOptions {
  /**
   * The model the weights go into. Required when the file carries no config in its metadata
   * (e.g. exported by another tool); otherwise checked field by field against the file's.
   */
  config?: ModelConfig;
  /** When given, a checkpoint trained with another tokenizer (hash differs) is refused. */
  tokenizer?: TokenizerRef;
  /** Names the file in errors. */
  source?: string;
}

/** Parses and checks a checkpoint; throws a CheckpointError (or SafetensorsError) naming the problem. */
export function loadCheckpoint(bytes: Uint8Array, options: LoadOptions = {}): Checkpoint {
  const source = options.source ?? 'checkpoint';
  const fail = (msg: string): never => {
    throw new CheckpointError(`${source}: ${msg}`);
  };
  const file = readSafetensors(bytes, source);
  const meta = file.metadata;
  // Other tools write their own format tag (PyTorch: "pt"); such a file is read by tensor names
  // against options.config. Only another version of ours is refused, since its names may differ.
  if (meta.format?.startsWith('lwm-studio-checkpoint/') && meta.format !== CHECKPOINT_FORMAT) {
    fail(`format '${meta.format}' is not '${CHECKPOINT_FORMAT}' (written by a newer version of LWM Studio?)`);
  }

  let config: ModelConfig;
  if (meta.config !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(meta.config);
    } catch (e) {
      return fail(`__metadata__.config is not valid JSON: ${(e as Error).message}`);
    }
    try {
      config = validateConfig(parsed as ModelConfig);
    } catch (e) {
      return fail(`__metadata__.config is invalid: ${(e as Error).message}`);
    }
    const unknown = Object.keys(parsed as object).filter((k) => !(CONFIG_FIELDS as readonly string[]).includes(k));
    if (unknown.length) fail(`__metadata__.config has unknown fields: ${unknown.join(', ')}`);
    if (options.config) {
      for (const f of CONFIG_FIELDS) {
        if (config[f] !== options.config[f]) {
          fail(
            `does not fit this model: ${f} is ${JSON.stringify(config[f])} in the checkpoint but ${JSON.stringify(options.config[f])} in the model`,
          );
        }
      }
    }
  } else if (options.config) {
    config = validateConfig(options.config);
  } else {
    return fail('has no config in __metadata__; pass the model config to load its weights');
  }

  let tokenizer: TokenizerRef | undefined;
  if (meta.tokenizer_id !== undefined || meta.tokenizer_hash !== undefined) {
    tokenizer = { id: meta.tokenizer_id ?? '', hash: meta.tokenizer_hash ?? '' };
  }
  if (options.tokenizer && tokenizer && tokenizer.hash !== options.tokenizer.hash) {
    fail(
      `was trained with tokenizer '${tokenizer.id}' (hash ${tokenizer.hash}), not '${options.tokenizer.id}' (hash ${options.tokenizer.hash})`,
    );
  }

  let step = 0;
  if (meta.step !== undefined) {
    if (!/^(0|[1-9][0-9]*)$/.test(meta.step) || !Number.isSafeInteger(Number(meta.step))) {
      fail(`__metadata__.step must be a non-negative integer, got ${JSON.stringify(meta.step)}`);
    }
    step = Number(meta.step);
  }

  const layout = paramLayout(config);
  const readFlat = (prefix: string): Float32Array => {
    const flat = new Float32Array(layout.totalSize);
    for (const t of layout.tensors) {
      const name = prefix + t.name;
      const stored = file.byName.get(name);
      if (!stored) return fail(`tensor '${name}' [${t.shape.join(', ')}] is missing`);
      if (stored.shape.length !== t.shape.length || stored.shape.some((s, i) => s !== t.shape[i])) {
        fail(`tensor '${name}' has shape [${stored.shape.join(', ')}] in the checkpoint, the model expects [${t.shape.join(', ')}]`);
      }
      flat.set(tensorToF32(stored), t.offset);
    }
    return flat;
  };
  const params = readFlat('');

  const hasOptimizer = file.tensors.some((t) => t.name.startsWith('optimizer.'));
  let optimizer: OptimizerState | undefined;
  if (hasOptimizer) {
    const stepTensor = file.byName.get('optimizer.step');
    if (!stepTensor) return fail(`has optimizer moments but no 'optimizer.step'`);
    const ints = tensorToInts(stepTensor);
    if (ints.length !== 1 || ints[0] < 0) fail(`'optimizer.step' must be one non-negative integer, got [${ints.join(', ')}]`);
    optimizer = { m: readFlat('optimizer.m.'), v: readFlat('optimizer.v.'), step: ints[0] };
  }

  const expected = new Set(layout.tensors.map((t) => t.name));
  if (optimizer) {
    for (const t of layout.tensors) expected.add(`optimizer.m.${t.name}`).add(`optimizer.v.${t.name}`);
    expected.add('optimizer.step');
  }
  for (const t of file.tensors) {
    if (!expected.has(t.name)) fail(`tensor '${t.name}' [${t.shape.join(', ')}] is not part of this model (${describe(layout)})`);
  }

  const extraMetadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(meta)) if (!RESERVED_META.includes(k)) extraMetadata[k] = v;
  return {
    config,
    params,
    step,
    ...(tokenizer ? { tokenizer } : {}),
    ...(optimizer ? { optimizer } : {}),
    ...(Object.keys(extraMetadata).length ? { extraMetadata } : {}),
  };
}

function describe(layout: ParamLayout): string {
  const c = layout.config;
  return `${c.layers} layers, d_model ${c.dModel}, ${c.norm}, ${c.positions} positions, ${c.tiedEmbeddings ? 'tied' : 'untied'} embeddings`;
}
