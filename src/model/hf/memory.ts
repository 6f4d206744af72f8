// How much GPU memory a pretrained model needs, computed before anything is loaded (from
// config.json's sizes and the safetensors headers), against what the adapter allows: its
// largest buffer (maxBufferSize), its largest storage binding (maxStorageBufferBindingSize) and
// a device-memory budget (WebGPU reports no device memory, so the budget is the caller's: a
// setting, or what the System view measured). A model that does not fit is refused with what
// would fit instead: LoRA instead of full fine-tuning, a shorter context, a smaller batch, f16
// weights, inference only. f16 weights (src/model/halfWeights.ts: matrices packed two f16 per
// u32 word, read with a core WGSL builtin, so no shader-f16 is needed) halve the matrices'
// bytes; norm gains and biases stay f32. They are for frozen weights: inference and a LoRA base.
//
// The figures follow our engine's buffers (src/model/gpt.ts allocate(): per layer and token the
// block input, both norms' outputs, q|k|v, the attention output, the MLP's hidden activations and
// one log-sum-exp per head are kept for the backward; attention is tiled, never T×T), in f32.
// They are estimates for planning, within the few buffers (uniforms, stats) they leave out.
//
// A tensor larger than one storage binding cannot be bound whole: splitPlan cuts it into
// binding-sized pieces of whole rows (so a matmul, an embedding lookup or the LM head runs piece
// by piece), placed in buffers no larger than maxBufferSize at aligned offsets. (The engine's own
// placement is src/model/shards.ts: tensors packed into buffers of at most one binding, matrices cut
// by rows.) Activations are not split: the largest (training's [tokens, vocab] logits, most
// often) must fit one binding, or the run is refused with one that fits (largestActivation).

/** The sizes of a Llama / Qwen-family model that memory depends on. */
export interface ModelDims {
  layers: number;
  hidden: number;
  /** The MLP's hidden size (SwiGLU: gate and up are [intermediate, hidden]). */
  intermediate: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  vocab: number;
  /** Every weight tensor's shape (the safetensors headers', or the engine's layout). */
  tensors: readonly { name: string; shape: readonly number[] }[];
}

export interface AdapterLimits {
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
  /** WebGPU's minStorageBufferOffsetAlignment (256 unless the adapter says otherwise). */
  minStorageBufferOffsetAlignment?: number;
  /** Bytes the model may take on the device. */
  memoryBudget: number;
  /** Whether the adapter has shader-f16. Informational: f16 weight storage (weightBytes 2) does not need it. */
  shaderF16?: boolean;
}

export type RunMode = { kind: 'inference' } | { kind: 'full' } | { kind: 'lora'; rank: number };

export interface RunShape {
  mode: RunMode;
  /** Tokens per sequence (training rows, or prompt + generated tokens). */
  context: number;
  /** Sequences at once (training batch, or sequences generated together). */
  batch: number;
  /** Bytes per stored matrix element: 4 (f32, the default) or 2 (f16 storage, f32 accumulation; frozen weights only, not full fine-tuning). Vectors stay f32. */
  weightBytes?: 4 | 2;
  /** Training that also generates (GSPO rollouts) keeps a KV cache beside its activations. */
  generates?: boolean;
}

/** Bytes, by what holds them. */
export interface MemoryEstimate {
  weights: number;
  /** LoRA's A and B matrices (trainable; the base weights are frozen). */
  adapters: number;
  gradients: number;
  /** AdamW's m and v for every trainable parameter. */
  optimizer: number;
  kvCache: number;
  activations: number;
  total: number;
}

const F32 = 4;

/**
 * The sizes memory depends on, from config.json's standard fields (the same in Llama, Qwen2 and
 * Qwen3 configs; `num_key_value_heads` defaults to the heads, `head_dim` to hidden / heads) and the
 * weights' shapes (the safetensors headers). Architecture support is config.ts's question; this
 * only sizes the run, so an estimate can be given for any such folder before it is loaded.
 */
export function dimsFromConfigJson(json: unknown, tensors: ModelDims['tensors'], source = 'config.json'): ModelDims {
  const j = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const int = (key: string, fallback?: number): number => {
    const v = j[key] ?? fallback;
    if (!Number.isInteger(v) || (v as number) <= 0) throw new RangeError(`${source}: ${key} must be a positive integer, got ${JSON.stringify(j[key] ?? null)}`);
    return v as number;
  };
  const hidden = int('hidden_size');
  const heads = int('num_attention_heads');
  return {
    layers: int('num_hidden_layers'),
    hidden,
    intermediate: int('intermediate_size'),
    heads,
    kvHeads: int('num_key_value_heads', heads),
    headDim: int('head_dim', Math.floor(hidden / heads)),
    vocab: int('vocab_size'),
    tensors,
  };
}

function count(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

export function weightCount(dims: ModelDims): number {
  return dims.tensors.reduce((n, t) => n + count(t.shape), 0);
}

/** LoRA's trainable parameters: rank·(in + out) for each attention (q, k, v, o) and MLP (gate, up, down) projection. */
export function loraCount(dims: ModelDims, rank: number): number {
  const q = dims.heads * dims.headDim;
  const kv = dims.kvHeads * dims.headDim;
  const h = dims.hidden;
  const i = dims.intermediate;
  const perLayer = h + q + (h + kv) * 2 + (q + h) + (h + i) * 2 + (i + h);
  return dims.layers * rank * perLayer;
}

/** f32 values kept per token and layer for the backward (the forward's transients at inference). */
function perTokenLayer(d: ModelDims): number {
  const q = d.heads * d.headDim;
  const kv = d.kvHeads * d.headDim;
  // block input, norm 1, q|k|v, attention output, residual, norm 2, gate, up, their product, lse per head
  return 4 * d.hidden + (q + 2 * kv) + q + 3 * d.intermediate + d.heads;
}

export function estimateMemory(dims: ModelDims, run: RunShape): MemoryEstimate {
  const tokens = run.batch * run.context;
  const params = weightCount(dims);
  const weights = dims.tensors.reduce((n, t) => n + count(t.shape) * (t.shape.length >= 2 ? (run.weightBytes ?? F32) : F32), 0);
  const trainable = run.mode.kind === 'full' ? params : run.mode.kind === 'lora' ? loraCount(dims, run.mode.rank) : 0;
  const adapters = run.mode.kind === 'lora' ? trainable * F32 : 0;
  const gradients = trainable * F32;
  const optimizer = 2 * trainable * F32;
  const kvCache = run.mode.kind === 'inference' || run.generates ? 2 * dims.layers * tokens * dims.kvHeads * dims.headDim * F32 : 0;
  let activations: number;
  if (run.mode.kind === 'inference') {
    // One layer's transients over the prefill (reused layer to layer), the residual stream, and
    // the logits of each sequence's last row (src/model/generate.ts computes no others).
    activations = (tokens * (perTokenLayer(dims) + 2 * dims.hidden) + run.batch * dims.vocab) * F32;
  } else {
    // Every layer's saved activations, the final norm, logits and their gradient, and the backward's scratch.
    const q = dims.heads * dims.headDim;
    const scratch = 2 * dims.hidden + q + 2 * dims.kvHeads * dims.headDim + 2 * dims.intermediate;
    activations = tokens * (dims.layers * perTokenLayer(dims) + 2 * dims.hidden + 2 * dims.vocab + scratch) * F32;
  }
  const total = weights + adapters + gradients + optimizer + kvCache + activations;
  return { weights, adapters, gradients, optimizer, kvCache, activations, total };
}

/** How one tensor is cut into binding-sized pieces of whole rows, and the buffers that hold them. */
export interface SplitPlan {
  rows: number;
  rowBytes: number;
  pieces: { rowStart: number; rowEnd: number; buffer: number; offset: number; bytes: number }[];
  /** Each buffer's size in bytes. */
  buffers: number[];
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/**
 * Cuts a tensor of `shape` (rows = the first dimension; a row = the rest) into pieces no larger
 * than one storage binding, packed into buffers no larger than maxBufferSize. Pieces sharing a
 * buffer start at multiples of the offset alignment (so each can be bound at its offset); when a
 * row's size makes that impossible, each piece gets a buffer of its own. A row larger than a
 * binding cannot be split by rows: that is an error.
 */
export function splitPlan(
  shape: readonly number[],
  elementBytes: number,
  limits: Pick<AdapterLimits, 'maxBufferSize' | 'maxStorageBufferBindingSize' | 'minStorageBufferOffsetAlignment'>,
): SplitPlan {
  const rows = shape.length ? shape[0] : 1;
  const rowBytes = count(shape.slice(1)) * elementBytes;
  const total = rows * rowBytes;
  const maxPiece = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  if (total <= maxPiece) return { rows, rowBytes, pieces: [{ rowStart: 0, rowEnd: rows, buffer: 0, offset: 0, bytes: total }], buffers: [total] };
  if (rowBytes > maxPiece) {
    throw new RangeError(`a row of [${shape.join(', ')}] is ${rowBytes} bytes, more than one storage binding (${maxPiece} bytes): it cannot be split by rows`);
  }
  const align = limits.minStorageBufferOffsetAlignment ?? 256;
  const step = align / gcd(rowBytes, align); // rows per piece must be a multiple of this for aligned offsets
  const fit = Math.floor(maxPiece / rowBytes);
  const aligned = Math.floor(fit / step) * step;
  const rowsPerPiece = aligned > 0 ? aligned : fit;
  const shareBuffers = aligned > 0;
  const pieces: SplitPlan['pieces'] = [];
  const buffers: number[] = [];
  for (let r = 0; r < rows; r += rowsPerPiece) {
    const rowEnd = Math.min(rows, r + rowsPerPiece);
    const bytes = (rowEnd - r) * rowBytes;
    const last = buffers.length - 1;
    if (shareBuffers && last >= 0 && buffers[last] + bytes <= limits.maxBufferSize) {
      pieces.push({ rowStart: r, rowEnd, buffer: last, offset: buffers[last], bytes });
      buffers[last] += bytes;
    } else {
      pieces.push({ rowStart: r, rowEnd, buffer: buffers.length, offset: 0, bytes });
      buffers.push(bytes);
    }
  }
  return { rows, rowBytes, pieces, buffers };
}

/** A run that would fit, offered when the asked one does not. */
export interface Alternative {
  /** What changes, in words ("LoRA rank 8", "context 1024", "inference only", ...). */
  change: string;
  run: RunShape;
  total: number;
}

export interface FitReport {
  fits: boolean;
  estimate: MemoryEstimate;
  /** Weight tensors that exceed one binding, and how many pieces each is cut into. */
  splits: { name: string; pieces: number }[];
  /** Why it does not fit (empty when it does). */
  problems: string[];
  alternatives: Alternative[];
  /** One paragraph for the user: the need, the budget, and what would fit instead. */
  message: string;
}

export function formatBytes(n: number): string {
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(2)} GiB`;
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(1)} MiB`;
  if (n >= 2 ** 10) return `${(n / 2 ** 10).toFixed(1)} KiB`;
  return `${n} B`;
}

function describeRun(r: RunShape): string {
  const mode = r.mode.kind === 'inference' ? 'inference' : r.mode.kind === 'full' ? 'full fine-tuning' : `LoRA rank ${r.mode.rank}`;
  return `${mode}, context ${r.context}, batch ${r.batch}, ${r.weightBytes === 2 ? 'f16' : 'f32'} weights`;
}

function breakdown(e: MemoryEstimate): string {
  const parts: [string, number][] = [
    ['weights', e.weights],
    ['LoRA adapters', e.adapters],
    ['gradients', e.gradients],
    ['AdamW m and v', e.optimizer],
    ['KV cache', e.kvCache],
    ['activations', e.activations],
  ];
  return parts
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${formatBytes(n)}`)
    .join(', ');
}

/**
 * The largest activation or cache buffer of a run, in bytes: one buffer must fit one storage
 * binding (parameters are split, shards.ts; activations are not). Training: the logits and their
 * gradient [tokens, vocab], the MLP's [tokens, 2·intermediate]; inference: a layer's K or V cache
 * [batch·context, kv], the prefill's MLP, the last rows' logits [batch, vocab].
 */
export function largestActivation(dims: ModelDims, run: RunShape): { bytes: number; what: string } {
  const tokens = run.batch * run.context;
  const kv = dims.kvHeads * dims.headDim;
  const trains = run.mode.kind !== 'inference';
  const cands: [number, string][] = [
    [tokens * 2 * dims.intermediate, `the MLP activations of ${tokens} rows`],
    [(trains ? tokens : run.batch) * dims.vocab, `the logits of ${trains ? tokens : run.batch} rows × ${dims.vocab} tokens`],
  ];
  if (!trains || run.generates) cands.push([tokens * kv, `one layer's K or V cache of ${tokens} rows`]);
  const [n, what] = cands.reduce((a, b) => (b[0] > a[0] ? b : a));
  return { bytes: n * F32, what };
}

function fitsRun(dims: ModelDims, run: RunShape, limits: AdapterLimits): boolean {
  return (
    estimateMemory(dims, run).total <= limits.memoryBudget &&
    largestActivation(dims, run).bytes <= Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize)
  );
}

/** The longest context (a multiple of 16, at least 16) at which `run` fits (budget and bindings), or 0. */
function longestContext(dims: ModelDims, run: RunShape, limits: AdapterLimits): number {
  let lo = 0;
  let hi = Math.floor(run.context / 16);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fitsRun(dims, { ...run, context: mid * 16 }, limits)) lo = mid;
    else hi = mid - 1;
  }
  return lo * 16;
}

/** How f16 weights are named in a refusal. */
export const F16_WEIGHTS = 'f16 weights (half the memory, f32 accumulation)';

/**
 * The first of: `r` as it is (when `changes` says how it differs from the asked run), batch 1, the
 * longest context at its batch, the longest at batch 1 — that fits; null when none does.
 */
function firstFit(dims: ModelDims, changes: string[], r: RunShape, limits: AdapterLimits): Alternative | null {
  const tries: [string[], RunShape][] = [];
  if (changes.length) tries.push([changes, r]);
  if (r.batch > 1) tries.push([[...changes, 'batch 1'], { ...r, batch: 1 }]);
  const atBatch = longestContext(dims, r, limits);
  if (atBatch > 0) tries.push([[...changes, `context ${atBatch}`], { ...r, context: atBatch }]);
  const atOne = r.batch > 1 ? longestContext(dims, { ...r, batch: 1 }, limits) : 0;
  if (atOne > 0) tries.push([[...changes, 'batch 1', `context ${atOne}`], { ...r, batch: 1, context: atOne }]);
  const first = tries.find(([, t]) => fitsRun(dims, t, limits));
  return first ? { change: first[0].join(', '), run: first[1], total: estimateMemory(dims, first[1]).total } : null;
}

/**
 * Runs that fit, changing as little as possible: the asked mode, then LoRA instead of full
 * fine-tuning, then inference only; for each the first of: as asked, batch 1, the longest context
 * at the asked batch, the longest at batch 1. Where the weights are frozen (inference, LoRA) and
 * f32, f16 weights are offered after that when they fit with no other change, or when nothing in
 * f32 does.
 */
function alternatives(dims: ModelDims, run: RunShape, limits: AdapterLimits): Alternative[] {
  const modes: [string[], RunShape][] = [[[], run]];
  if (run.mode.kind === 'full') modes.push([['LoRA rank 8 instead of full fine-tuning'], { ...run, mode: { kind: 'lora', rank: 8 } }]);
  if (run.mode.kind !== 'inference') modes.push([['inference only'], { ...run, mode: { kind: 'inference' }, generates: false }]);
  const out: Alternative[] = [];
  for (const [changes, r] of modes) {
    const f32 = firstFit(dims, changes, r, limits);
    const halfChanges = [...changes, F16_WEIGHTS];
    const f16 = r.mode.kind !== 'full' && r.weightBytes !== 2 ? firstFit(dims, halfChanges, { ...r, weightBytes: 2 }, limits) : null;
    const f32AsIs = f32 && f32.change === changes.join(', ');
    if (f32) out.push(f32);
    if (f16 && !f32AsIs && (!f32 || f16.change === halfChanges.join(', '))) out.push(f16);
  }
  return out;
}

/**
 * Checks a run against the adapter before loading: the whole estimate against the budget, each
 * weight tensor against the buffer and binding limits (tensors over one binding are split, see
 * splitPlan; only a row over one binding is a problem). When it does not fit, the report lists
 * what would.
 */
export function checkMemory(dims: ModelDims, run: RunShape, limits: AdapterLimits, name = 'this model'): FitReport {
  const estimate = estimateMemory(dims, run);
  const problems: string[] = [];
  const splits: FitReport['splits'] = [];
  for (const t of dims.tensors) {
    try {
      const plan = splitPlan(t.shape, run.weightBytes ?? F32, limits);
      if (plan.pieces.length > 1) splits.push({ name: t.name, pieces: plan.pieces.length });
    } catch (e) {
      problems.push(`tensor '${t.name}': ${(e as Error).message}`);
    }
  }
  const rowProblems = problems.length;
  if (estimate.total > limits.memoryBudget) {
    problems.push(
      `${name} needs ${formatBytes(estimate.total)} for ${describeRun(run)} (${breakdown(estimate)}), more than the ${formatBytes(limits.memoryBudget)} budget`,
    );
  }
  const binding = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  const act = largestActivation(dims, run);
  if (act.bytes > binding)
    problems.push(`${act.what} take ${formatBytes(act.bytes)}, more than one storage binding (${formatBytes(binding)}) for ${describeRun(run)}`);
  // A row over one binding is not a matter of budget: no smaller run helps.
  const alts = problems.length && !rowProblems ? alternatives(dims, run, limits) : [];
  let message: string;
  if (!problems.length)
    message = `${name} fits: ${formatBytes(estimate.total)} of ${formatBytes(limits.memoryBudget)} for ${describeRun(run)} (${breakdown(estimate)})`;
  else if (alts.length) message = `${problems.join('; ')}. Would fit instead: ${alts.map((a) => `${a.change} (${formatBytes(a.total)})`).join('; ')}.`;
  else if (!rowProblems && !alts.length)
    message = `${problems.join('; ')}. Nothing smaller fits either (inference at context 16 included): this device cannot hold ${name}.`;
  else message = `${problems.join('; ')}.`;
  return { fits: !problems.length, estimate, splits, problems, alternatives: alts, message };
}

/** checkMemory for an opened folder (openHfFolder): sizes from its config.json and safetensors headers, named by its label. */
export function checkFolderMemory(
  folder: { config: unknown; files: { label: string }; weights: { tensors: ModelDims['tensors'] } },
  run: RunShape,
  limits: AdapterLimits,
): FitReport {
  return checkMemory(dimsFromConfigJson(folder.config, folder.weights.tensors, `${folder.files.label}/config.json`), run, limits, folder.files.label);
}
