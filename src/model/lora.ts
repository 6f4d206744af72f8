// LoRA (Hu et al. 2021) on a model's projections, in PEFT's conventions so adapters go both ways.
//
// A targeted projection y = x·W (W stored [in, out] in our layout, a block of columns of a fused
// matrix for q, k, v, gate and up) becomes y = x·W + s·(x·A)·B with s = alpha / r, A [in, r] and
// B [r, out]; W stays frozen and only A and B train. PEFT stores lora_A.weight [r, in] and
// lora_B.weight [out, r] (nn.Linear's [out, in]), so both are transposed on the way in and out.
// Initialisation as PEFT's default: A kaiming-uniform with a = √5 (uniform ±1/√in), B = 0, so the
// adapted model starts equal to the base.
//
// The adapter's own parameters sit in one flat buffer laid out like params.ts (every tensor at a
// multiple of 64 elements), A then B per projection, layer by layer; they get no weight decay.
// The GPU side is loraGpu.ts; tensor names and adapter_config.json are PEFT's:
//   base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight   [r, in]
//   base_model.model.model.layers.N.mlp.down_proj.lora_B.weight      [out, r]
import { seededRandom } from '../core/random.ts';
import type { ModelConfig } from '../core/model/config.ts';
import { PARAM_ALIGN, paramLayout, type ParamLayout, type ParamTensor } from '../core/model/params.ts';
import { blockPlan } from '../core/model/plan.ts';

export const LORA_TARGETS = ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] as const;
export type LoraTarget = (typeof LORA_TARGETS)[number];

/** Where a target sits in the block (loraGpu.ts encodes one site at a time). */
export type LoraSite = 'qkv' | 'o' | 'fc' | 'down';

/** PEFT's module name of each target (Llama / Qwen naming). */
export const LORA_MODULES: Record<LoraTarget, string> = {
  q: 'self_attn.q_proj',
  k: 'self_attn.k_proj',
  v: 'self_attn.v_proj',
  o: 'self_attn.o_proj',
  gate: 'mlp.gate_proj',
  up: 'mlp.up_proj',
  down: 'mlp.down_proj',
};

export class LoraError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoraError';
  }
}

export interface LoraSettings {
  rank: number;
  alpha: number;
  targets: LoraTarget[];
}

/** One adapted projection. */
export interface LoraPair {
  layer: number;
  target: LoraTarget;
  site: LoraSite;
  inDim: number;
  outDim: number;
  /** In the adapter's flat buffer: A [in, r], B [r, out]. */
  A: ParamTensor;
  B: ParamTensor;
  /** The frozen weight it adapts (in the model's layout), the first column it adds into, and that weight's width. */
  base: ParamTensor;
  col: number;
  baseWidth: number;
}

export interface LoraLayout {
  settings: LoraSettings;
  /** alpha / rank. */
  scale: number;
  tensors: ParamTensor[];
  totalSize: number;
  pairs: LoraPair[];
}

/** Settings from the CLI's words: rank, alpha (default 2·rank), targets (default all seven). */
export function loraSettings(rank: number, alpha?: number, targets: readonly string[] = LORA_TARGETS): LoraSettings {
  if (!Number.isInteger(rank) || rank < 1) throw new LoraError(`LoRA rank must be a positive integer, got ${rank}`);
  const a = alpha ?? 2 * rank;
  if (!(a > 0 && Number.isFinite(a))) throw new LoraError(`LoRA alpha must be a positive number, got ${alpha}`);
  const bad = targets.filter((t) => !(LORA_TARGETS as readonly string[]).includes(t));
  if (bad.length) throw new LoraError(`unknown LoRA target ${bad.map((b) => `'${b}'`).join(', ')}; targets are ${LORA_TARGETS.join(', ')}`);
  if (!targets.length) throw new LoraError('LoRA needs at least one target projection');
  return { rank, alpha: a, targets: LORA_TARGETS.filter((t) => targets.includes(t)) };
}

/** Where each target of one block lands: site, the weight, first column, in and out widths. */
function targetPlaces(config: ModelConfig, layout: ParamLayout, layer: number): Record<LoraTarget, Omit<LoraPair, 'A' | 'B' | 'layer' | 'target'> | null> {
  const plan = blockPlan(config);
  const b = layout.blocks[layer];
  const { C, F, qDim, kvDim, upDim } = plan;
  const swiglu = plan.mlp === 'swiglu';
  const at = (site: LoraSite, base: ParamTensor, col: number, inDim: number, outDim: number) => ({ site, base, col, inDim, outDim, baseWidth: base.shape[1] });
  return {
    q: at('qkv', b.attnWeight, 0, C, qDim),
    k: at('qkv', b.attnWeight, qDim, C, kvDim),
    v: at('qkv', b.attnWeight, qDim + kvDim, C, kvDim),
    o: at('o', b.attnProjWeight, 0, qDim, C),
    gate: swiglu ? at('fc', b.fcWeight, 0, C, F) : null,
    up: at('fc', b.fcWeight, swiglu ? F : 0, C, swiglu ? F : upDim),
    down: at('down', b.mlpProjWeight, 0, F, C),
  };
}

export function loraLayout(config: ModelConfig, settings: LoraSettings, base: ParamLayout = paramLayout(config)): LoraLayout {
  const r = settings.rank;
  const tensors: ParamTensor[] = [];
  const pairs: LoraPair[] = [];
  let cursor = 0;
  const add = (name: string, shape: number[]): ParamTensor => {
    const size = shape[0] * shape[1];
    const t: ParamTensor = { name, shape, offset: cursor, size, kind: 'matrix', decay: false };
    cursor = Math.ceil((cursor + size) / PARAM_ALIGN) * PARAM_ALIGN;
    tensors.push(t);
    return t;
  };
  for (let layer = 0; layer < config.layers; layer++) {
    const places = targetPlaces(config, base, layer);
    for (const target of settings.targets) {
      const place = places[target];
      if (!place) throw new LoraError(`this model has no ${target} projection (a GELU MLP has no gate)`);
      const name = peftName(layer, target);
      const A = add(`${name}.lora_A`, [place.inDim, r]);
      const B = add(`${name}.lora_B`, [r, place.outDim]);
      pairs.push({ layer, target, A, B, ...place });
    }
  }
  return { settings, scale: settings.alpha / r, tensors, totalSize: cursor, pairs };
}

/** PEFT's module path of a target (without `.lora_A.weight`). */
export function peftName(layer: number, target: LoraTarget): string {
  return `base_model.model.model.layers.${layer}.${LORA_MODULES[target]}`;
}

/** PEFT's default initialisation: A kaiming-uniform (a = √5 on [r, in]: uniform ±1/√in), B = 0. */
export function initLora(layout: LoraLayout, seed = 0): Float32Array {
  const flat = new Float32Array(layout.totalSize);
  const rand = seededRandom((seed ^ 0x10a4) >>> 0);
  for (const p of layout.pairs) {
    const bound = 1 / Math.sqrt(p.inDim);
    for (let i = 0; i < p.A.size; i++) flat[p.A.offset + i] = (2 * rand() - 1) * bound;
  }
  return flat;
}

/** The base weights with every update merged in: W[:, col..] += s · A·B. */
export function mergeLora(base: Float32Array, layout: LoraLayout, lora: Float32Array): Float32Array {
  const out = Float32Array.from(base);
  const r = layout.settings.rank;
  for (const p of layout.pairs) {
    for (let i = 0; i < p.inDim; i++) {
      const row = p.base.offset + i * p.baseWidth + p.col;
      for (let o = 0; o < p.outDim; o++) {
        let acc = 0;
        for (let k = 0; k < r; k++) acc += lora[p.A.offset + i * r + k] * lora[p.B.offset + k * p.outDim + o];
        out[row + o] += layout.scale * acc;
      }
    }
  }
  return out;
}

export interface PeftTensor {
  shape: readonly number[];
  data: Float32Array;
}

/** PEFT's tensors (lora_A.weight [r, in], lora_B.weight [out, r]) of our flat adapter. */
export function loraToPeft(layout: LoraLayout, lora: Float32Array): Map<string, PeftTensor> {
  const out = new Map<string, PeftTensor>();
  for (const t of layout.tensors) {
    const [rows, cols] = t.shape;
    const data = new Float32Array(t.size);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) data[j * rows + i] = lora[t.offset + i * cols + j];
    out.set(`${t.name}.weight`, { shape: [cols, rows], data });
  }
  return out;
}

/** Our flat adapter from PEFT's tensors; every tensor the layout needs must be there with its shape, and no other. */
export function loraFromPeft(layout: LoraLayout, tensors: ReadonlyMap<string, PeftTensor>, source = 'the adapter'): Float32Array {
  const flat = new Float32Array(layout.totalSize);
  const used = new Set<string>();
  for (const t of layout.tensors) {
    const name = `${t.name}.weight`;
    const got = tensors.get(name) ?? tensors.get(name.replace(/\.weight$/, '.default.weight'));
    const [rows, cols] = t.shape;
    if (!got) throw new LoraError(`${source}: tensor ${name} is missing (expected [${cols}, ${rows}])`);
    if (got.shape.length !== 2 || got.shape[0] !== cols || got.shape[1] !== rows)
      throw new LoraError(`${source}: tensor ${name} has shape [${got.shape.join(', ')}], expected [${cols}, ${rows}]`);
    used.add(tensors.has(name) ? name : name.replace(/\.weight$/, '.default.weight'));
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) flat[t.offset + i * cols + j] = got.data[j * rows + i];
  }
  const extra = [...tensors.keys()].filter((n) => !used.has(n));
  if (extra.length)
    throw new LoraError(`${source}: tensors this adapter's settings do not use: ${extra.slice(0, 4).join(', ')}${extra.length > 4 ? ', …' : ''}`);
  return flat;
}

/** adapter_config.json as PEFT writes it for a causal LM (the fields PEFT needs to load it). */
export function adapterConfigJson(settings: LoraSettings, baseModel: string): Record<string, unknown> {
  return {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModel,
    r: settings.rank,
    lora_alpha: settings.alpha,
    lora_dropout: 0,
    target_modules: settings.targets.map((t) => LORA_MODULES[t].split('.')[1]),
    bias: 'none',
    fan_in_fan_out: false,
    use_rslora: false,
    use_dora: false,
    init_lora_weights: true,
    inference_mode: true,
    modules_to_save: null,
    layers_to_transform: null,
  };
}

/** Settings from an adapter_config.json (ours or PEFT's); what we cannot run is refused by name. */
export function settingsFromAdapterConfig(json: unknown, source = 'adapter_config.json'): { settings: LoraSettings; baseModel: string } {
  const j = (json ?? {}) as Record<string, unknown>;
  const fail = (m: string): never => {
    throw new LoraError(`${source}: ${m}`);
  };
  if (j.peft_type !== 'LORA') fail(`peft_type is ${JSON.stringify(j.peft_type)}; only LORA adapters are supported`);
  if (j.use_dora) fail('DoRA adapters are not supported');
  if (j.use_rslora) fail('rsLoRA scaling (alpha/√r) is not supported');
  if (j.bias && j.bias !== 'none') fail(`bias '${String(j.bias)}' is not supported (only 'none')`);
  if (j.modules_to_save && (j.modules_to_save as unknown[]).length) fail('modules_to_save is not supported');
  if (j.layers_to_transform !== undefined && j.layers_to_transform !== null) fail('layers_to_transform is not supported');
  if (j.rank_pattern && Object.keys(j.rank_pattern as object).length) fail('rank_pattern is not supported');
  if (j.alpha_pattern && Object.keys(j.alpha_pattern as object).length) fail('alpha_pattern is not supported');
  const byModule = new Map(LORA_TARGETS.map((t) => [LORA_MODULES[t].split('.')[1], t]));
  const modules = typeof j.target_modules === 'string' ? [j.target_modules] : ((j.target_modules ?? []) as string[]);
  const targets = modules.map((m) => byModule.get(m) ?? fail(`target module '${m}' is not one of ${[...byModule.keys()].join(', ')}`));
  try {
    return { settings: loraSettings(Number(j.r), Number(j.lora_alpha ?? 8), targets), baseModel: String(j.base_model_name_or_path ?? '') };
  } catch (e) {
    return fail((e as Error).message);
  }
}

/** Weights of the LoRA layout (A and B) and what full fine-tuning of the same model would train. */
export function loraParamCount(layout: LoraLayout): number {
  return layout.tensors.reduce((a, t) => a + t.size, 0);
}
