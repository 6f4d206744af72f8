// The toolkit every kernel launcher in this folder shares: one bind-group cache, the workgroup
// grid maths, uniform parameter packing, binding-size checks, and submit() for one compute pass
// in one submission. A launcher is built once per shape (pipelines and uniforms made in create())
// and encoded into any pass as often as needed, so a training step stays one submission.
import gridWgsl from '../../../shaders/grid.wgsl?raw';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';

// ---- submission ------------------------------------------------------------------------------

/**
 * Encodes one compute pass, labelled for GPU debuggers, and submits it. Returns without
 * waiting: a later read-back (or rt.sync()) waits for it.
 */
export function submit(rt: GpuRuntime, label: string, encode: (pass: GPUComputePassEncoder) => void): void {
  const enc = rt.device.createCommandEncoder({ label });
  const pass = enc.beginComputePass({ label });
  encode(pass);
  pass.end();
  rt.device.queue.submit([enc.finish()]);
}

// ---- bind groups -----------------------------------------------------------------------------

/**
 * What a dispatch binds to group 0, by binding number: an array for bindings 0..n−1, or an
 * object for entry points that use a sparse subset of their file's bindings ({ 0: params, 4: x }).
 */
export type Bindings = readonly BufferBinding[] | Readonly<Record<number, BufferBinding>>;

/** The WebGPU entry for one binding: a whole buffer, or a byte range of one. */
export function bindingEntry(binding: number, b: BufferBinding): GPUBindGroupEntry {
  return { binding, resource: 'buffer' in b ? { buffer: b.buffer, offset: b.offset, size: b.size } : { buffer: b } };
}

function entriesOf(bindings: Bindings): [number, BufferBinding][] {
  return Object.entries(bindings).map(([k, b]) => [Number(k), b]);
}

/** A bind group for `pipeline`'s group 0. Range offsets must be multiples of 256 bytes. */
export function makeBindGroup(rt: GpuRuntime, pipeline: GPUComputePipeline, bindings: Bindings, label?: string): GPUBindGroup {
  return rt.device.createBindGroup({
    label,
    layout: pipeline.getBindGroupLayout(0),
    entries: entriesOf(bindings).map(([binding, b]) => bindingEntry(binding, b)),
  });
}

const objectIds = new WeakMap<object, number>();
let nextObjectId = 1;
function objectId(o: object): number {
  let id = objectIds.get(o);
  if (id === undefined) {
    id = nextObjectId++;
    objectIds.set(o, id);
  }
  return id;
}

function bindingKey(pipeline: GPUComputePipeline, bindings: Bindings): string {
  const parts = entriesOf(bindings).map(([n, b]) => ('buffer' in b ? `${n}:${objectId(b.buffer)}@${b.offset}+${b.size}` : `${n}:${objectId(b)}`));
  return `${objectId(pipeline)}|${parts.join(',')}`;
}

/**
 * Bind groups keyed by pipeline and bound buffers (or byte ranges), so a kernel encoded every
 * step with the same buffers builds each group once; a kernel object used for several layers
 * (binding different ranges or buffers) keeps one group per set. Bounded: cleared past `limit`.
 */
export class BindGroupCache {
  private readonly groups = new Map<string, GPUBindGroup>();
  constructor(
    private readonly rt: GpuRuntime,
    private readonly label: string,
    private readonly limit = 64,
  ) {}

  get(pipeline: GPUComputePipeline, bindings: Bindings): GPUBindGroup {
    const key = bindingKey(pipeline, bindings);
    let g = this.groups.get(key);
    if (!g) {
      if (this.groups.size >= this.limit) this.groups.clear();
      g = makeBindGroup(this.rt, pipeline, bindings, this.label);
      this.groups.set(key, g);
    }
    return g;
  }

  /** setPipeline, setBindGroup(0, cached group), dispatchWorkgroups(...grid). */
  dispatch(pass: GPUComputePassEncoder, pipeline: GPUComputePipeline, bindings: Bindings, grid: readonly number[]): void {
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, this.get(pipeline, bindings));
    pass.dispatchWorkgroups(grid[0], grid[1] ?? 1, grid[2] ?? 1);
  }

  clear(): void {
    this.groups.clear();
  }
}

// ---- grids -----------------------------------------------------------------------------------

/**
 * Workgroup grid for `count` workgroups: one dimension holds at most
 * maxComputeWorkgroupsPerDimension, so large counts spill into y. Shaders take the flat id back
 * with flat_group (shaders/grid.wgsl, GRID_INCLUDE) and return past the end.
 */
export function grid(rt: GpuRuntime, count: number): [number, number] {
  const max = rt.report.limits.maxComputeWorkgroupsPerDimension;
  if (count <= max) return [Math.max(1, count), 1];
  const y = Math.ceil(count / max);
  if (y > max) throw new RangeError(`${count} workgroups do not fit a ${max}×${max} grid`);
  return [Math.ceil(count / y), y];
}

/** The shader side of grid(): shaders/grid.wgsl (flat_group, flat_thread), for wgsl()'s includes. */
export const GRID_INCLUDE: Readonly<Record<'grid.wgsl', string>> = { 'grid.wgsl': gridWgsl };

/** Throws unless every dimension of a fixed (non-spilling) grid fits the device's limit. */
export function checkGridFits(rt: GpuRuntime, what: string, dims: readonly number[]): void {
  const lim = rt.report.limits.maxComputeWorkgroupsPerDimension;
  if (dims.some((d) => d > lim)) throw new RangeError(`${what} exceeds ${lim} workgroups per dimension`);
}

/** Dispatch size of an element-wise kernel: 256 floats per workgroup (scalar) or 1024 (vec4). */
export function elementwiseGrid(rt: GpuRuntime, n: number, vec4: boolean): [number, number] {
  return grid(rt, Math.ceil(n / (vec4 ? 1024 : 256)));
}

// ---- parameters --------------------------------------------------------------------------------

/**
 * A uniform block seen as u32 and f32 words (default 16 words = 64 bytes; every Params struct
 * in shaders/ fits). Write fields by word index, then rt.uniform(label, words.u32).
 */
export class ParamWords {
  readonly bytes: ArrayBuffer;
  readonly u32: Uint32Array;
  readonly f32: Float32Array;
  constructor(words = 16) {
    this.bytes = new ArrayBuffer(words * 4);
    this.u32 = new Uint32Array(this.bytes);
    this.f32 = new Float32Array(this.bytes);
  }
}

/**
 * Throws unless `b` holds at least `elems` 32-bit words. A short binding would not fail on the
 * GPU (out-of-bounds accesses are clamped or dropped) but silently compute garbage.
 */
export function needWords(kernel: string, what: string, b: BufferBinding, elems: number): void {
  if (b.size < elems * 4) throw new RangeError(`${kernel}: ${what} holds ${Math.floor(b.size / 4)} elements, needs ${elems}`);
}

/** Checks an element offset into a parameter buffer. */
export function checkOffset(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer element offset, got ${value}`);
}

/** Checks that every named dimension is a positive integer. */
export function checkDims(what: string, dims: Record<string, number>): void {
  for (const [k, v] of Object.entries(dims)) {
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`${what}: ${k} must be a positive integer, got ${v}`);
  }
}

/** Objects a launcher or model owns and must release. */
export interface Disposable {
  dispose(): void;
}
