// Parameters on the GPU in buffers no larger than one storage binding. The flat layout of
// params.ts stays the host's (checkpoints, exports, the reference model); on the device it is cut
// into shards, each a contiguous range of the flat layout in a buffer of its own, no larger than
// the runtime's binding limit (rt.bindingLimit: the adapter's maxStorageBufferBindingSize and
// maxBufferSize, or less when asked). A kernel then binds the one shard holding its tensor and
// reads it at the tensor's offset within that shard.
//
//   flat:   | wte ............................ | ln_1.w ln_1.b ... | c_attn ... | lm_head ...... |
//   shards: | wte rows 0..k | wte rows k..V  |  packed tensors, each shard ≤ limit  | lm_head rows ..|
//
// Tensors a kernel reads through one binding stay together (a norm's gain and bias, the q and k
// head norms). A matrix larger than the limit alone is split along its rows into pieces of their
// own (the token embedding and LM head of a pretrained model, [vocab, d], are the ones that
// outgrow a real binding): the embedding gather (ends.ts) and every product with a weight
// (pieceMatmul.ts), forward and backward, run piece by piece. Vectors and learned positions
// are never split. Gradients and Adam's m and v use the same shards, so AdamW runs shard by
// shard (one gradient norm over all of them).
//
// The plan of a model whose whole layout fits one binding is one shard: exactly the single flat
// buffer of before.
//
// With f16 weights (halfWeights.ts, inference and a frozen LoRA base) the plan is made the same
// way over the device layout, whose matrices are packed f16 words: shard ranges, offsets and
// sizes then count 4-byte words of that layout (not elements of params.ts's), `half` says so,
// and ParamBuffers packs on write and unpacks on read, so callers still hand it the f32 layout.
import type { GpuRuntime } from '../gpu/runtime.ts';
import { halfDeviceLayout, halfStored, packWeights, unpackWeights, type WeightStorage } from './halfWeights.ts';
import type { ParamLayout, ParamTensor } from '../core/model/params.ts';

/** A contiguous range [start, end) of the flat layout, held by one buffer. */
export interface ShardRange {
  start: number;
  end: number;
}

/** Rows [rowStart, rowEnd) of a tensor, at element `offset` of shard `shard`. */
export interface TensorPiece {
  shard: number;
  offset: number;
  rowStart: number;
  rowEnd: number;
}

export interface ShardPlan {
  /** The binding limit the plan was made for, in bytes. */
  limitBytes: number;
  /** Elements of the flat layout. */
  totalSize: number;
  shards: ShardRange[];
  /** Per tensor name: one piece, or several (rows in order) when the tensor was split. */
  pieces: ReadonlyMap<string, readonly TensorPiece[]>;
  /**
   * f16 weights: the matrices are packed f16 (halfWeights.ts) and the plan is of `device`, the
   * layout in u32 words; `host` is the params.ts layout the parameters are written and read in.
   */
  half?: { host: ParamLayout; device: ParamLayout };
}

/** Whether `t` may be split along its rows: a matrix, other than the learned positions (read whole by the embedding). */
export function splittable(t: ParamTensor): boolean {
  return t.shape.length === 2 && t.name !== 'wpe';
}

/** Tensors kernels read through one binding together: a norm's gain and bias, the q and k head norms. */
function bindingUnits(layout: ParamLayout): ParamTensor[][] {
  const units: ParamTensor[][] = [];
  for (const t of layout.tensors) {
    const unit = units[units.length - 1];
    const prev = unit?.[unit.length - 1];
    const normBias = t.kind === 'norm' && t.name.endsWith('.bias') && prev?.name === t.name.replace(/bias$/, 'weight');
    const headNorms = t.name.endsWith('.k_norm.weight') && prev?.name === t.name.replace(/k_norm/, 'q_norm');
    if (normBias || headNorms) unit.push(t);
    else units.push([t]);
  }
  return units;
}

const describe = (t: ParamTensor) => `'${t.name}' [${t.shape.join(', ')}] (${t.size * 4} bytes)`;

/** Rows of `t` in pieces of at most `limit` elements (a multiple of 4 rows where that fits, for aligned loads). */
function splitRows(t: ParamTensor, limit: number, limitBytes: number, shards: ShardRange[]): TensorPiece[] {
  const rows = t.shape[0];
  const cols = t.size / rows;
  let per = Math.floor(limit / cols);
  if (per < 1)
    throw new RangeError(
      `a row of tensor ${describe(t)} is ${cols * 4} bytes, more than one storage binding (${limitBytes} bytes): it cannot be split by rows`,
    );
  if (per >= 4) per -= per % 4;
  const pieces: TensorPiece[] = [];
  for (let r = 0; r < rows; r += per) {
    const end = Math.min(rows, r + per);
    shards.push({ start: t.offset + r * cols, end: t.offset + end * cols });
    pieces.push({ shard: shards.length - 1, offset: 0, rowStart: r, rowEnd: end });
  }
  return pieces;
}

/**
 * Cuts `layout` into shards of at most `limitBytes` each: tensors packed in layout order, a
 * matrix split by rows when it alone is larger. Throws, naming the tensor, when a vector, the
 * learned positions or one row of a matrix is larger than the limit.
 */
export function shardPlan(layout: ParamLayout, limitBytes: number): ShardPlan {
  if (!(Number.isInteger(limitBytes) && limitBytes >= 4))
    throw new RangeError(`shard plan: the binding limit must be an integer of at least 4 bytes, got ${limitBytes}`);
  const limit = Math.floor(limitBytes / 4);
  const shards: ShardRange[] = [];
  const pieces = new Map<string, TensorPiece[]>();
  let open: ShardRange | null = null;
  for (const unit of bindingUnits(layout)) {
    const first = unit[0];
    const end = unit[unit.length - 1].offset + unit[unit.length - 1].size;
    if (end - first.offset > limit) {
      if (unit.length > 1 || !splittable(first)) {
        throw new RangeError(
          `tensor ${describe(first)} is larger than one storage binding (${limitBytes} bytes) and cannot be split (only matrices are, along their rows)`,
        );
      }
      pieces.set(first.name, splitRows(first, limit, limitBytes, shards));
      open = null;
      continue;
    }
    if (!open || end - open.start > limit) {
      open = { start: first.offset, end };
      shards.push(open);
    } else {
      open.end = end;
    }
    for (const t of unit) pieces.set(t.name, [{ shard: shards.length - 1, offset: t.offset - open.start, rowStart: 0, rowEnd: t.shape[0] }]);
  }
  return { limitBytes, totalSize: layout.totalSize, shards, pieces };
}

/** The plan of one buffer holding the whole layout (whatever its size): the unsplit layout of before. */
export function wholePlan(layout: ParamLayout): ShardPlan {
  const pieces = new Map(layout.tensors.map((t) => [t.name, [{ shard: 0, offset: t.offset, rowStart: 0, rowEnd: t.shape[0] }]]));
  return { limitBytes: layout.totalSize * 4, totalSize: layout.totalSize, shards: [{ start: 0, end: layout.totalSize }], pieces };
}

/** One buffer of `size` elements without named tensors (a LoRA adapter's flat layout). */
export function flatPlan(size: number): ShardPlan {
  return { limitBytes: size * 4, totalSize: size, shards: [{ start: 0, end: size }], pieces: new Map() };
}

/** Each shard's size and its tensors' decay segments within it (AdamWShape.shards). */
export function shardSegments(plan: ShardPlan, layout: ParamLayout): { size: number; segments: { start: number; end: number; decay: boolean }[] }[] {
  return plan.shards.map((s) => ({
    size: s.end - s.start,
    segments: layout.tensors
      .filter((t) => t.offset < s.end && t.offset + t.size > s.start)
      .map((t) => ({ start: Math.max(t.offset, s.start) - s.start, end: Math.min(t.offset + t.size, s.end) - s.start, decay: t.decay })),
  }));
}

/** The plan of `layout` at a binding limit: one shard when the layout fits one binding, else shardPlan; f16 weights plan the packed device layout. */
export function planAt(layout: ParamLayout, limitBytes: number, weights: WeightStorage = 'f32'): ShardPlan {
  const device = weights === 'f16' ? halfDeviceLayout(layout) : layout;
  const plan = device.totalSize * 4 <= limitBytes ? wholePlan(device) : shardPlan(device, limitBytes);
  return weights === 'f16' ? { ...plan, half: { host: layout, device } } : plan;
}

/** The plan for `rt`: planAt its binding limit. */
export function planFor(rt: GpuRuntime, layout: ParamLayout, weights: WeightStorage = 'f32'): ShardPlan {
  return planAt(layout, rt.bindingLimit, weights);
}

/** How `plan` stores the weights. */
export function weightsOf(plan: ShardPlan): WeightStorage {
  return plan.half ? 'f16' : 'f32';
}

/** Whether tensor `t` is f16 (packed words) in `plan`. */
export function isHalf(plan: ShardPlan, t: ParamTensor): boolean {
  return !!plan.half && halfStored(t);
}

/** The pieces of tensor `name` in `plan`; throws naming it when the plan does not know it. */
export function piecesOf(plan: ShardPlan, name: string): readonly TensorPiece[] {
  const p = plan.pieces.get(name);
  if (!p) throw new RangeError(`shard plan: no tensor '${name}'`);
  return p;
}

/** Where an unsplit tensor lives: its shard and its element offset there. */
export function placeOf(plan: ShardPlan, t: ParamTensor): TensorPiece {
  const p = piecesOf(plan, t.name);
  if (p.length !== 1) throw new RangeError(`tensor '${t.name}' is split into ${p.length} pieces; bind it piece by piece`);
  return p[0];
}

/**
 * A flat layout's values on the GPU in the buffers of a shard plan (parameters, or their
 * gradients, or Adam's m or v: the same plan for all four).
 */
export class ParamBuffers {
  private constructor(
    private readonly rt: GpuRuntime,
    readonly plan: ShardPlan,
    readonly buffers: readonly GPUBuffer[],
    private readonly owned: boolean,
  ) {}

  /** Zeroed buffers for `plan`, labelled `label.N`. */
  static create(rt: GpuRuntime, plan: ShardPlan, label: string): ParamBuffers {
    const buffers = plan.shards.map((s, i) => rt.storage(plan.shards.length > 1 ? `${label}.${i}` : label, (s.end - s.start) * 4));
    return new ParamBuffers(rt, plan, buffers, true);
  }

  /** Buffers for `plan` holding `flat` (the params.ts layout). */
  static upload(rt: GpuRuntime, plan: ShardPlan, flat: Float32Array, label: string): ParamBuffers {
    const p = ParamBuffers.create(rt, plan, label);
    p.write(flat);
    return p;
  }

  /** An existing buffer holding a whole flat layout, or `size` elements without named tensors (an adapter); not released by release(). */
  static wrap(rt: GpuRuntime, buffer: GPUBuffer, layout: ParamLayout | number): ParamBuffers {
    const plan = typeof layout === 'number' ? flatPlan(layout) : wholePlan(layout);
    if (buffer.size < plan.totalSize * 4) throw new RangeError(`parameter buffer holds ${buffer.size / 4} elements, the layout needs ${plan.totalSize}`);
    return new ParamBuffers(rt, plan, [buffer], false);
  }

  /** The buffer holding unsplit tensor `t`. */
  buffer(t: ParamTensor): GPUBuffer {
    return this.buffers[placeOf(this.plan, t).shard];
  }

  /** The one buffer of an unsharded layout (an adapter, or a model that fits one binding). */
  get only(): GPUBuffer {
    if (this.buffers.length !== 1) throw new RangeError(`these parameters are in ${this.buffers.length} buffers, not one`);
    return this.buffers[0];
  }

  /** Writes the params.ts layout (f16 plans: packed on the way). */
  write(flat: Float32Array): void {
    const half = this.plan.half;
    const words = half ? packWeights(half.host, half.device, flat) : flat;
    if (words.length !== this.plan.totalSize) throw new RangeError(`parameters hold ${flat.length} elements, the layout needs ${this.plan.totalSize}`);
    this.plan.shards.forEach((s, i) => this.rt.write(this.buffers[i], words.subarray(s.start, s.end)));
  }

  /** The flat layout (padding between shards zero; f16 plans: the matrices as the f32 values they hold). */
  async read(): Promise<Float32Array> {
    const out = new Uint32Array(this.plan.totalSize);
    for (let i = 0; i < this.buffers.length; i++) {
      const s = this.plan.shards[i];
      out.set(await this.rt.readU32(this.buffers[i], s.end - s.start), s.start);
    }
    const half = this.plan.half;
    return half ? unpackWeights(half.host, half.device, out) : new Float32Array(out.buffer);
  }

  clear(): void {
    this.plan.shards.forEach((s, i) => this.rt.write(this.buffers[i], new Float32Array(s.end - s.start)));
  }

  get bytes(): number {
    return this.buffers.reduce((n, b) => n + b.size, 0);
  }

  release(): void {
    if (this.owned) this.rt.release(...this.buffers);
  }
}
