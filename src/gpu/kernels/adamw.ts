// Launcher for shaders/adamw.wgsl: the optimiser step over the flat parameter / gradient / m / v
// buffers — Σ g² in two deterministic stages, then the AdamW update, which reads the clip factor
// from the GPU (no CPU round trip). The host writes the step's (step, lr) with setStep before
// submitting; the gradient norm stays readable for logging.
import code from '../../../shaders/adamw.wgsl?raw';
import { buildDecayMask, type AdamWConfig, type DecaySegment } from '../../reference/adamw.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, grid, needWords, ParamWords } from './common.ts';

const ADAMW_SHADER = wgsl('adamw.wgsl', code);
const CHUNK = 2048; // elements per sumsq_partial workgroup (64 threads × 32)

/** The settings (defaults: ADAMW_DEFAULTS in src/model/optim.ts, which GpuGpt fills in) and the buffer's shape. */
export interface AdamWShape extends AdamWConfig {
  /** Elements of each flat buffer (params, grads, m, v). */
  size: number;
  /** Which tensors get weight decay (matrices, typically; norms, biases and embeddings as configured). */
  segments: DecaySegment[];
  /** Clear each gradient after reading it, so the next step needs no separate clear. Default false. */
  zeroGrads?: boolean;
  /** Use the scalar update even when size is a multiple of 4 (tests). */
  forceScalar?: boolean;
}

/**
 * setStep(step, lr) then encode(pass, params, grads, m, v): 3 dispatches. params, m and v are
 * updated in place; grads are read (and cleared when zeroGrads). gradNorm (4 floats) then holds
 * (‖g‖ before clipping, clip factor, 1 − β1^t, 1 − β2^t).
 */
export class AdamWKernel {
  private readonly binds: BindGroupCache;
  private readonly words = new ParamWords();
  readonly numPartials: number;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly size: number,
    readonly config: AdamWConfig,
    private readonly partial: GPUComputePipeline,
    private readonly final: GPUComputePipeline,
    private readonly update: GPUComputePipeline,
    private readonly params: GPUBuffer,
    private readonly partials: GPUBuffer,
    readonly gradNorm: GPUBuffer,
    private readonly mask: GPUBuffer,
    readonly vec4: boolean,
  ) {
    this.binds = new BindGroupCache(rt, 'adamw');
    this.numPartials = Math.ceil(size / CHUNK) * 64;
    const c = config;
    this.words.u32.set([size, 0, this.numPartials, 0]);
    this.words.f32.set([0, c.beta1, c.beta2, c.eps, c.weightDecay, c.maxGradNorm], 4);
  }

  static async create(rt: GpuRuntime, shape: AdamWShape): Promise<AdamWKernel> {
    if (!Number.isInteger(shape.size) || shape.size < 1) throw new RangeError(`adamw: size must be a positive integer, got ${shape.size}`);
    const { beta1, beta2, eps, weightDecay, maxGradNorm } = shape;
    const config: AdamWConfig = { beta1, beta2, eps, weightDecay, maxGradNorm };
    const maskWords = buildDecayMask(shape.segments, shape.size);
    const vec4 = !shape.forceScalar && shape.size % 4 === 0;
    const [partial, final, update] = await Promise.all([
      rt.pipeline(ADAMW_SHADER, vec4 ? 'sumsq_partial_vec4' : 'sumsq_partial'),
      rt.pipeline(ADAMW_SHADER, 'sumsq_final'),
      rt.pipeline(ADAMW_SHADER, vec4 ? 'adamw_update_vec4' : 'adamw_update', { ZERO_GRAD: shape.zeroGrads ? 1 : 0 }),
    ]);
    const params = rt.uniform('adamw.params', new Uint32Array(16));
    const partials = rt.storage('adamw.partials', Math.ceil(shape.size / CHUNK) * 64 * 4);
    const gradNorm = rt.storage('adamw.gradnorm', 16);
    const mask = rt.storage('adamw.mask', maskWords);
    const k = new AdamWKernel(rt, shape.size, config, partial, final, update, params, partials, gradNorm, mask, vec4);
    k.setStep(0, 0);
    return k;
  }

  /** The 0-based index of the coming step and its learning rate (e.g. lrAt(step, …) of src/model/optim.ts). */
  setStep(step: number, lr: number): void {
    if (!Number.isInteger(step) || step < 0) throw new RangeError(`adamw: step must be a non-negative integer, got ${step}`);
    this.words.u32[1] = step;
    this.words.f32[4] = lr;
    this.rt.write(this.params, this.words.u32);
  }

  encode(pass: GPUComputePassEncoder, params: BufferBinding, grads: BufferBinding, m: BufferBinding, v: BufferBinding): void {
    for (const [what, b] of [['params', params], ['grads', grads], ['m', m], ['v', v]] as const) needWords('adamw', what, b, this.size);
    this.binds.dispatch(pass, this.partial, [this.params, grads, this.partials], grid(this.rt, this.numPartials / 64));
    this.binds.dispatch(pass, this.final, [this.params, this.partials, this.gradNorm], [1]);
    this.binds.dispatch(pass, this.update, [this.params, params, grads, m, v, this.gradNorm, this.mask], grid(this.rt, Math.ceil(this.size / (this.vec4 ? 1024 : 256))));
  }

  /** (‖g‖ before clipping, clip factor) of the last encoded step. */
  async readGradNorm(): Promise<{ norm: number; scale: number }> {
    const [norm, scale] = await this.rt.readF32(this.gradNorm, 2);
    return { norm, scale };
  }

  dispose(): void {
    this.rt.release(this.params, this.partials, this.gradNorm, this.mask);
    this.binds.clear();
  }
}
