/**
 * Checkpoints: a model's weights, its config, the tokenizer it was trained with and the training
 * step in one safetensors file; the AdamW state, when kept, in a second file beside it
 * (`X.safetensors` + `X.optim.safetensors`), so the weights file holds only what a model loads.
 *
 * Weights file tensors (all F32, row-major, in the flat layout's order; see params.ts for shapes):
 *
 *   wte.weight                            [vocab, d]
 *   wpe.weight                            [context, d]      learned positions only
 *   h.{i}.ln_1.weight, h.{i}.ln_1.bias    [d]               bias: LayerNorm only
 *   h.{i}.attn.c_attn.weight              [d, 3d]           input-major (y = x·W), q|k|v
 *   h.{i}.attn.c_attn.bias                [3d]
 *   h.{i}.attn.c_proj.weight / .bias      [d, d] / [d]
 *   h.{i}.ln_2.weight, h.{i}.ln_2.bias    [d]
 *   h.{i}.mlp.c_fc.weight / .bias         [d, f] / [f]      f = mlpRatio·d
 *   h.{i}.mlp.c_proj.weight / .bias       [f, d] / [d]
 *   ln_f.weight, ln_f.bias                [d]
 *   lm_head.weight                        [vocab, d]        untied only
 *
 * These are the names and shapes of Hugging Face's GPT2Model state dict (the matrices in GPT-2's
 * Conv1D [in, out] convention). A model with GPT-2's choices — LayerNorm, learned positions, tied
 * embeddings, tanh GELU, mlpRatio 4 — IS a GPT-2: the file loads into transformers' GPT2 models
 * (which add their `transformer.` prefix themselves) given a matching GPT2Config. Other choices
 * (RMSNorm: no `.bias` norms; RoPE: no `wpe.weight`; another mlpRatio) keep the same names but
 * are not a GPT-2 architecture; Python tools read their tensors, only our model code runs them.
 * Files written before these names (format "lwm-studio-checkpoint/1": `wte`, `wpe`) still load, and
 * so does transformers' own GPT2LMHeadModel.save_pretrained file (`transformer.` prefix).
 *
 * Optimizer file tensors: optimizer.m.<name>, optimizer.v.<name> (same shapes as the weights) and
 * optimizer.step (I32 [], AdamW's step count t for the bias correction).
 *
 * `__metadata__` (all strings, as safetensors requires):
 *   format          "pt" (what transformers requires of a safetensors file it loads)
 *   lwm_format      "lwm-studio-checkpoint/2" (optimizer file: "lwm-studio-optimizer/2")
 *   config          the ModelConfig as JSON (fields in CONFIG_FIELDS order)
 *   step            training steps taken, decimal (both files: they must agree)
 *   tokenizer_id    optional: which tokenizer produced the token ids
 *   tokenizer_hash  optional: a hash of its vocabulary and merges
 *   anything else   kept as given, sorted by key; training writes `stage`, `tokenizer` (JSON),
 *                   `spec` (the resolved TrainSpec as JSON) and, for SFT, `mask_config` (the loss
 *                   mask's settings in the file format of docs/masking.md)
 *
 * In a process (training, the browser's run storage) a checkpoint travels as ONE buffer from
 * saveCheckpoint: the weights file's tensors followed by the optimizer's. checkpointFiles splits it
 * into the two files users get; joinCheckpointFiles puts them back together to resume.
 *
 * save → load → save gives identical bytes. Loading into a model whose config differs names
 * the first differing field; a tensor missing, extra or of the wrong shape is named with both
 * shapes.
 */
import { CONFIG_FIELDS, validateConfig, type ModelConfig } from './config.ts';
import { paramLayout, type ParamLayout } from './params.ts';
import {
  readSafetensors,
  SafetensorsError,
  tensorToF32,
  tensorToInts,
  writeSafetensors,
  type SafetensorsFile,
  type StoredTensor,
  type TensorToWrite,
} from './safetensors.ts';

const CHECKPOINT_FORMAT = 'lwm-studio-checkpoint/2';
export const OPTIMIZER_FORMAT = 'lwm-studio-optimizer/2';
/** The format of files written before the GPT-2 embedding names (`wte`, `wpe`); still read. */
const LEGACY_FORMAT = 'lwm-studio-checkpoint/1';
const RESERVED_META = ['format', 'lwm_format', 'config', 'step', 'tokenizer_id', 'tokenizer_hash'];

/** A layout tensor's name in files: the embeddings get GPT-2's `.weight` suffix. */
export function fileTensorName(layoutName: string): string {
  return layoutName === 'wte' || layoutName === 'wpe' ? `${layoutName}.weight` : layoutName;
}

/** `X.safetensors` → `X.optim.safetensors`: where the optimizer state of a weights file lives. */
export function optimizerFileName(weightsPath: string): string {
  return weightsPath.replace(/(\.safetensors)?$/, '.optim.safetensors');
}

export interface TokenizerRef {
  id: string;
  hash: string;
}

export interface OptimizerState {
  /** Adam first moment, flat layout. */
  m: Float32Array;
  /** Adam second moment, flat layout. */
  v: Float32Array;
  /** Optimizer steps taken (t in the bias correction 1 - β^t). */
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
/** The config as stored in a checkpoint's metadata (fields in a fixed order). */
export function configToJson(c: ModelConfig): string {
  const ordered: Record<string, unknown> = {};
  for (const f of CONFIG_FIELDS) ordered[f] = c[f];
  return JSON.stringify(ordered);
}

/** A config stored by configToJson, checked as loadCheckpoint checks it. */
export function configFromJson(text: string, source = 'checkpoint'): ModelConfig {
  return checkpointConfig({ config: text }, undefined, (msg) => {
    throw new CheckpointError(`${source}: ${msg}`);
  });
}

export function saveCheckpoint(ck: Checkpoint): Uint8Array {
  const layout = paramLayout(ck.config);
  if (ck.params.length !== layout.totalSize) {
    throw new CheckpointError(`params hold ${ck.params.length} elements; this config's layout needs ${layout.totalSize}`);
  }
  if (!Number.isSafeInteger(ck.step) || ck.step < 0) throw new CheckpointError(`step must be a non-negative integer, got ${ck.step}`);
  const metadata: Record<string, string> = {
    format: 'pt',
    lwm_format: CHECKPOINT_FORMAT,
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
    name: fileTensorName(t.name),
    dtype: 'F32',
    shape: t.shape,
    data: ck.params.subarray(t.offset, t.offset + t.size),
  }));
  const opt = ck.optimizer;
  if (opt) {
    for (const [which, flat] of [
      ['m', opt.m],
      ['v', opt.v],
    ] as const) {
      if (flat.length !== layout.totalSize) {
        throw new CheckpointError(`optimizer ${which} holds ${flat.length} elements; this config's layout needs ${layout.totalSize}`);
      }
      for (const t of layout.tensors) {
        tensors.push({ name: `optimizer.${which}.${fileTensorName(t.name)}`, dtype: 'F32', shape: t.shape, data: flat.subarray(t.offset, t.offset + t.size) });
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

type Fail = (msg: string) => never;

/** Our tag is `lwm_format` (files before it: `format`); files of other tools carry none and are read by tensor names. Only another version of ours is refused. */
function checkFormat(meta: Record<string, string>, fail: Fail): void {
  const tag = meta.lwm_format ?? (meta.format?.startsWith('lwm-studio-') ? meta.format : undefined);
  if (tag === OPTIMIZER_FORMAT) fail(`is an optimizer state file (${OPTIMIZER_FORMAT}), not a checkpoint; load the weights file beside it`);
  if (tag !== undefined && tag !== CHECKPOINT_FORMAT && tag !== LEGACY_FORMAT) {
    fail(`format '${tag}' is not '${CHECKPOINT_FORMAT}' (written by a newer version of LWM Studio?)`);
  }
}

/** The file's config (checked against the model's when both are known), or the model's when the file has none. */
function checkpointConfig(meta: Record<string, string>, wanted: ModelConfig | undefined, fail: Fail): ModelConfig {
  if (meta.config === undefined) {
    if (wanted) return validateConfig(wanted);
    return fail('has no config in __metadata__; pass the model config to load its weights');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(meta.config);
  } catch (e) {
    return fail(`__metadata__.config is not valid JSON: ${(e as Error).message}`);
  }
  let config: ModelConfig;
  try {
    config = validateConfig(parsed as ModelConfig);
  } catch (e) {
    return fail(`__metadata__.config is invalid: ${(e as Error).message}`);
  }
  const unknown = Object.keys(parsed as object).filter((k) => !(CONFIG_FIELDS as readonly string[]).includes(k));
  if (unknown.length) fail(`__metadata__.config has unknown fields: ${unknown.join(', ')}`);
  if (wanted) {
    for (const f of CONFIG_FIELDS) {
      if (config[f] !== wanted[f]) {
        fail(`does not fit this model: ${f} is ${JSON.stringify(config[f])} in the checkpoint but ${JSON.stringify(wanted[f])} in the model`);
      }
    }
  }
  return config;
}

function checkpointTokenizer(meta: Record<string, string>, wanted: TokenizerRef | undefined, fail: Fail): TokenizerRef | undefined {
  let tokenizer: TokenizerRef | undefined;
  if (meta.tokenizer_id !== undefined || meta.tokenizer_hash !== undefined) {
    tokenizer = { id: meta.tokenizer_id ?? '', hash: meta.tokenizer_hash ?? '' };
  }
  if (wanted && tokenizer && tokenizer.hash !== wanted.hash) {
    fail(`was trained with tokenizer '${tokenizer.id}' (hash ${tokenizer.hash}), not '${wanted.id}' (hash ${wanted.hash})`);
  }
  return tokenizer;
}

function checkpointStep(meta: Record<string, string>, fail: Fail): number {
  if (meta.step === undefined) return 0;
  if (!/^(0|[1-9][0-9]*)$/.test(meta.step) || !Number.isSafeInteger(Number(meta.step))) {
    fail(`__metadata__.step must be a non-negative integer, got ${JSON.stringify(meta.step)}`);
  }
  return Number(meta.step);
}

/** The tensors under `prefix` in the flat layout; records the names it used in `found`. */
function readFlat(file: SafetensorsFile, layout: ParamLayout, prefix: string, found: Set<string>, fail: Fail): Float32Array {
  const flat = new Float32Array(layout.totalSize);
  for (const t of layout.tensors) {
    // GPT-2's names first; files written before them call the embeddings `wte` / `wpe`;
    // transformers' GPT2LMHeadModel.save_pretrained prefixes the body with `transformer.`.
    const name = prefix + fileTensorName(t.name);
    const legacy = prefix + t.name;
    const hf = prefix || t.name === 'lm_head.weight' ? undefined : `transformer.${name}`;
    const stored = file.byName.get(name) ?? file.byName.get(legacy) ?? (hf !== undefined ? file.byName.get(hf) : undefined);
    if (!stored) return fail(`tensor '${name}' [${t.shape.join(', ')}] is missing`);
    found.add(stored.name);
    if (stored.shape.length !== t.shape.length || stored.shape.some((s, i) => s !== t.shape[i])) {
      fail(`tensor '${stored.name}' has shape [${stored.shape.join(', ')}] in the checkpoint, the model expects [${t.shape.join(', ')}]`);
    }
    flat.set(tensorToF32(stored), t.offset);
  }
  return flat;
}

function readOptimizer(file: SafetensorsFile, layout: ParamLayout, found: Set<string>, fail: Fail): OptimizerState | undefined {
  if (!file.tensors.some((t) => t.name.startsWith('optimizer.'))) return undefined;
  const stepTensor = file.byName.get('optimizer.step');
  if (!stepTensor) return fail(`has optimizer moments but no 'optimizer.step'`);
  const ints = tensorToInts(stepTensor);
  if (ints.length !== 1 || ints[0] < 0) fail(`'optimizer.step' must be one non-negative integer, got [${ints.join(', ')}]`);
  const optimizer = { m: readFlat(file, layout, 'optimizer.m.', found, fail), v: readFlat(file, layout, 'optimizer.v.', found, fail), step: ints[0] };
  found.add('optimizer.step');
  return optimizer;
}

/** Parses and checks a checkpoint; throws a CheckpointError (or SafetensorsError) naming the problem. */
export function loadCheckpoint(bytes: Uint8Array, options: LoadOptions = {}): Checkpoint {
  const source = options.source ?? 'checkpoint';
  const fail = (msg: string): never => {
    throw new CheckpointError(`${source}: ${msg}`);
  };
  const file = readSafetensors(bytes, source);
  const meta = file.metadata;
  checkFormat(meta, fail);
  const config = checkpointConfig(meta, options.config, fail);
  const tokenizer = checkpointTokenizer(meta, options.tokenizer, fail);
  const step = checkpointStep(meta, fail);

  const layout = paramLayout(config);
  const found = new Set<string>();
  const params = readFlat(file, layout, '', found, fail);
  const optimizer = readOptimizer(file, layout, found, fail);
  // Older transformers GPT-2 files also store each block's causal mask buffers; they hold no weights.
  const hfBuffer = /^(transformer\.)?h\.\d+\.attn\.(bias|masked_bias)$/;
  for (const t of file.tensors) {
    if (!found.has(t.name) && !hfBuffer.test(t.name)) fail(`tensor '${t.name}' [${t.shape.join(', ')}] is not part of this model (${describe(layout)})`);
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

/** The two files of a checkpoint: the weights (what a model loads) and the optimizer state. */
export interface CheckpointFiles {
  weights: Uint8Array;
  optimizer?: Uint8Array;
}

function rewritable(t: StoredTensor, source: string): TensorToWrite {
  if (t.dtype === 'F32') return { name: t.name, dtype: 'F32', shape: t.shape, data: tensorToF32(t) };
  if (t.dtype === 'I32' || t.dtype === 'U32') {
    const ints = tensorToInts(t);
    return { name: t.name, dtype: t.dtype, shape: t.shape, data: t.dtype === 'I32' ? Int32Array.from(ints) : Uint32Array.from(ints) };
  }
  throw new SafetensorsError(`${source}: tensor '${t.name}' is ${t.dtype}; checkpoints hold F32, I32 and U32 tensors`);
}

/**
 * Splits saveCheckpoint's buffer into the weights file (its metadata and model tensors, byte for
 * byte what saveCheckpoint writes without optimizer state) and, when it holds optimizer state,
 * the optimizer file (`optimizer.*` tensors; metadata: format, lwm_format, config, step).
 */
export function checkpointFiles(bytes: Uint8Array, source = 'checkpoint'): CheckpointFiles {
  const file = readSafetensors(bytes, source);
  const opt = file.tensors.filter((t) => t.name.startsWith('optimizer.'));
  if (!opt.length) return { weights: bytes };
  const weights = writeSafetensors(
    file.tensors.filter((t) => !t.name.startsWith('optimizer.')).map((t) => rewritable(t, source)),
    file.metadata,
  );
  const meta = file.metadata;
  const optimizer = writeSafetensors(
    opt.map((t) => rewritable(t, source)),
    { format: 'pt', lwm_format: OPTIMIZER_FORMAT, ...(meta.config !== undefined ? { config: meta.config } : {}), step: meta.step ?? '0' },
  );
  return { weights, optimizer };
}

/**
 * The one buffer loadCheckpoint and training take, from a weights file and (to resume) the
 * optimizer file written beside it. Refuses an optimizer file of another step or config: a stale
 * one would resume the wrong moments.
 */
export function joinCheckpointFiles(files: CheckpointFiles, source = 'checkpoint'): Uint8Array {
  if (!files.optimizer) return files.weights;
  const optSource = `${source} (optimizer state)`;
  const w = readSafetensors(files.weights, source);
  const o = readSafetensors(files.optimizer, optSource);
  const fail = (msg: string): never => {
    throw new CheckpointError(`${optSource}: ${msg}`);
  };
  if (o.metadata.lwm_format !== OPTIMIZER_FORMAT) fail(`lwm_format is ${JSON.stringify(o.metadata.lwm_format ?? null)}, not '${OPTIMIZER_FORMAT}'`);
  if ((o.metadata.step ?? '0') !== (w.metadata.step ?? '0')) {
    fail(`is for step ${o.metadata.step} but the weights are at step ${w.metadata.step ?? 0}; a stale file? remove it to start from the weights alone`);
  }
  if (o.metadata.config !== undefined && w.metadata.config !== undefined && o.metadata.config !== w.metadata.config)
    fail('was written for another model config');
  const bad = o.tensors.find((t) => !t.name.startsWith('optimizer.'));
  if (bad) fail(`tensor '${bad.name}' is not optimizer state`);
  if (w.tensors.some((t) => t.name.startsWith('optimizer.'))) throw new CheckpointError(`${source}: already holds optimizer state`);
  return writeSafetensors(
    [...w.tensors, ...o.tensors].map((t) => rewritable(t, source)),
    w.metadata,
  );
}

function describe(layout: ParamLayout): string {
  const c = layout.config;
  return `${c.layers} layers, d_model ${c.dModel}, ${c.norm}, ${c.positions} positions, ${c.tiedEmbeddings ? 'tied' : 'untied'} embeddings`;
}
