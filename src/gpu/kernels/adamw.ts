// Launcher for shaders/adamw.wgsl: the optimizer step over the flat parameter / gradient / m / v
// buffers — Σ g² in two deterministic stages, then the AdamW update, which reads the clip factor
// from the GPU (no CPU round trip). The host writes the step's (step, lr) with setStep before
// submitting; the gradient norm stays readable for logging.
import code from '../../../shaders/adamw.wgsl?raw';
import step from '../../../shaders/adamw_step.wgsl?raw';
import type { AdamWConfig } from '../../core/model/optim.ts';
import { buildDecayMask, type DecaySegment } from '../../reference/adamw.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, grid, GRID_INCLUDE, needWords, ParamWords } from './common.ts';
import { ADAMW_CHUNK, ADAMW_CONSTS } from './tiles.ts';

/** shaders/adamw.wgsl as the launcher composes it (exported for the tests). */
export const ADAMW_SHADER = wgsl('adamw.wgsl', code, { ...GRID_INCLUDE, ...ADAMW_CONSTS, 'adamw_step.wgsl': step });

/** The settings (defaults: ADAMW_DEFAULTS in src/core/model/optim.ts, which GpuTrainer fills in) and the buffer's shape. */
export interface AdamWShape extends AdamWConfig {
  /** Elements of each flat buffer (params, grads, m, v); with shards, their sum. */
  size: number;
  /** Which tensors get weight decay (matrices, typically; norms, biases and embeddings as configured). */
  segments: DecaySegment[];
  /**
   * Parameters held in several buffers (src/model/shards.ts): each shard's size and decay
   * segments (relative to the shard). encode then takes one binding per shard for each of
   * params, grads, m and v. Default: one shard of `size` with `segments`.
   */
  shards?: { size: number; segments: DecaySegment[] }[];
  /** Clear each gradient after reading it, so the next step needs no separate clear. Default false. */
  zeroGrads?: boolean;
  /** Use the scalar update even when size is a multiple of 4 (tests). */
  forceScalar?: boolean;
}

/** One shard's uniform, decay mask, partials and pipelines. */
interface Part {
  size: number;
  words: ParamWords;
  params: GPUBuffer;
  mask: GPUBuffer;
  partial: GPUComputePipeline;
  update: GPUComputePipeline;
  vec4: boolean;
  numPartials: number;
}

/**
 * setStep(step, lr) then encode(pass, params, grads, m, v): 2 dispatches per shard and one
 * more. params, m and v are updated in place; grads are read (and cleared when zeroGrads).
 * gradNorm (4 floats) then holds (‖g‖ before clipping, clip factor, 1 − β1^t, 1 − β2^t).
 */
export class AdamWKernel {
  private readonly binds: BindGroupCache;
  private readonly finalWords = new ParamWords();
  readonly numPartials: number;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly size: number,
    readonly config: AdamWConfig,
    private readonly parts: Part[],
    private readonly final: GPUComputePipeline,
    private readonly finalParams: GPUBuffer,
    private readonly partials: GPUBuffer,
    readonly gradNorm: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'adamw', 8 + 2 * parts.length);
    this.numPartials = parts.reduce((n, q) => n + q.numPartials, 0);
    const c = config;
    let base = 0;
    for (const q of [...parts, { words: this.finalWords, size, numPartials: this.numPartials }]) {
      q.words.u32.set([q.size, 0, q.numPartials, base]);
      q.words.f32.set([0, c.beta1, c.beta2, c.eps, c.weightDecay, c.maxGradNorm], 4);
      base += q.numPartials;
    }
  }

  /** Whether the update of every shard runs on vec4s. */
  get vec4(): boolean {
    return this.parts.every((q) => q.vec4);
  }

  static async create(rt: GpuRuntime, shape: AdamWShape): Promise<AdamWKernel> {
    const shards = shape.shards ?? [{ size: shape.size, segments: shape.segments }];
    for (const sh of [shape, ...shards]) {
      if (!Number.isInteger(sh.size) || sh.size < 1) throw new RangeError(`adamw: size must be a positive integer, got ${sh.size}`);
    }
    const total = shards.reduce((n, sh) => n + sh.size, 0);
    if (total !== shape.size) throw new RangeError(`adamw: the shards hold ${total} elements, the size is ${shape.size}`);
    const { beta1, beta2, eps, weightDecay, maxGradNorm } = shape;
    const config: AdamWConfig = { beta1, beta2, eps, weightDecay, maxGradNorm };
    const parts = await Promise.all(shards.map((sh) => AdamWKernel.part(rt, sh, shape)));
    const final = await rt.pipeline(ADAMW_SHADER, 'sumsq_final');
    const numPartials = parts.reduce((n, q) => n + q.numPartials, 0);
    const partials = rt.storage('adamw.partials', numPartials * 4);
    const gradNorm = rt.storage('adamw.gradnorm', 16);
    const k = new AdamWKernel(rt, shape.size, config, parts, final, rt.uniform('adamw.params', new Uint32Array(16)), partials, gradNorm);
    k.setStep(0, 0);
    return k;
  }

  private static async part(rt: GpuRuntime, sh: { size: number; segments: DecaySegment[] }, shape: AdamWShape): Promise<Part> {
    const vec4 = !shape.forceScalar && sh.size % 4 === 0;
    const [partial, update] = await Promise.all([
      rt.pipeline(ADAMW_SHADER, vec4 ? 'sumsq_partial_vec4' : 'sumsq_partial'),
      rt.pipeline(ADAMW_SHADER, vec4 ? 'adamw_update_vec4' : 'adamw_update', { ZERO_GRAD: shape.zeroGrads ? 1 : 0 }),
    ]);
    const mask = rt.storage('adamw.mask', buildDecayMask(sh.segments, sh.size));
    const params = rt.uniform('adamw.params', new Uint32Array(16));
    return { size: sh.size, words: new ParamWords(), params, mask, partial, update, vec4, numPartials: Math.ceil(sh.size / ADAMW_CHUNK) * 64 };
  }

  /** The 0-based index of the coming step and its learning rate (e.g. lrAt(step, …) of src/core/model/optim.ts). */
  setStep(step: number, lr: number): void {
    if (!Number.isInteger(step) || step < 0) throw new RangeError(`adamw: step must be a non-negative integer, got ${step}`);
    for (const [words, buffer] of [...this.parts.map((q) => [q.words, q.params] as const), [this.finalWords, this.finalParams] as const]) {
      words.u32[1] = step;
      words.f32[4] = lr;
      this.rt.write(buffer, words.u32);
    }
  }

  /** One binding per shard for each of params, grads, m and v (a single binding when there is one shard). */
  encode(pass: GPUComputePassEncoder, params: Shards, grads: Shards, m: Shards, v: Shards): void {
    const [P, G, M, V] = [params, grads, m, v].map((b) => (Array.isArray(b) ? b : [b]) as BufferBinding[]);
    for (const [what, list] of [
      ['params', P],
      ['grads', G],
      ['m', M],
      ['v', V],
    ] as const) {
      if (list.length !== this.parts.length) throw new RangeError(`adamw: ${list.length} ${what} buffers for ${this.parts.length} shards`);
      this.parts.forEach((q, i) => needWords('adamw', `${what} (shard ${i})`, list[i], q.size));
    }
    this.parts.forEach((q, i) => this.binds.dispatch(pass, q.partial, [q.params, G[i], this.partials], grid(this.rt, q.numPartials / 64)));
    this.binds.dispatch(pass, this.final, [this.finalParams, this.partials, this.gradNorm], [1]);
    this.parts.forEach((q, i) => {
      this.binds.dispatch(pass, q.update, [q.params, P[i], G[i], M[i], V[i], this.gradNorm, q.mask], grid(this.rt, Math.ceil(q.size / (q.vec4 ? 1024 : 256))));
    });
  }

  /** (‖g‖ before clipping, clip factor) of the last encoded step. */
  async readGradNorm(): Promise<{ norm: number; scale: number }> {
    const [norm, scale] = await this.rt.readF32(this.gradNorm, 2);
    return { norm, scale };
  }

  dispose(): void {
    this.rt.release(this.finalParams, this.partials, this.gradNorm, ...this.parts.flatMap((q) => [q.params, q.mask]));
    this.binds.clear();
  }
}

/** A buffer per shard (or the one buffer of an unsharded model). */
export type Shards = BufferBinding | readonly BufferBinding[];
