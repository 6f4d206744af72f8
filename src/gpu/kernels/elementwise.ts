// Launchers for shaders/elementwise.wgsl (GELU, residual adds, bias add, bias gradient). Like
// every launcher, each class is built once per shape and encoded into any compute pass as often
// as needed (the shared toolkit is ./common.ts).
import code from '../../../shaders/elementwise.wgsl?raw';
import gelu from '../../../shaders/gelu.wgsl?raw';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, checkDims, checkOffset, elementwiseGrid, GRID_INCLUDE, needWords, ParamWords } from './common.ts';

const ELEMENTWISE_SHADER = wgsl('elementwise.wgsl', code, { ...GRID_INCLUDE, 'gelu.wgsl': gelu });

/** Rows per stage-1 block of a column sum: enough blocks to spread over cores, few enough to keep stage 2 short. */
function rowsPerBlockFor(rows: number): number {
  return Math.max(16, Math.ceil(rows / 64));
}

// ---- residual adds -----------------------------------------------------------------------

/** out = a + b, or (inPlace) a += b, over n elements. */
export class AddKernel {
  private readonly binds: BindGroupCache;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly n: number,
    readonly inPlace: boolean,
    readonly vec4: boolean,
    private readonly pipeline: GPUComputePipeline,
    private readonly params: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'add');
  }

  /** vec4 loads when n is a multiple of 4 (forceScalar: for tests). */
  static async create(rt: GpuRuntime, shape: { n: number; inPlace?: boolean; forceScalar?: boolean }): Promise<AddKernel> {
    checkDims('add', { n: shape.n });
    const inPlace = shape.inPlace ?? false;
    const vec4 = !shape.forceScalar && shape.n % 4 === 0;
    const pipeline = await rt.pipeline(ELEMENTWISE_SHADER, (inPlace ? 'add_inplace' : 'add') + (vec4 ? '_vec4' : ''));
    const w = new ParamWords();
    w.u32[0] = shape.n;
    w.u32[1] = 1;
    return new AddKernel(rt, shape.n, inPlace, vec4, pipeline, rt.uniform('add.params', w.u32));
  }

  /** inPlace: encode(pass, acc, b) does acc += b. Otherwise encode(pass, a, b, out). */
  encode(pass: GPUComputePassEncoder, a: BufferBinding, b: BufferBinding, out?: BufferBinding): void {
    const bindings = this.inPlace ? [this.params, a, b] : [this.params, a, b, out ?? fail('add: out is required')];
    for (const [i, x] of bindings.slice(1).entries()) needWords('add', ['a', 'b', 'out'][i], x, this.n);
    this.binds.dispatch(pass, this.pipeline, bindings, elementwiseGrid(this.rt, this.n, this.vec4));
  }

  dispose(): void {
    this.rt.release(this.params);
    this.binds.clear();
  }
}

function fail(message: string): never {
  throw new Error(message);
}

// ---- bias add and bias + GELU ----------------------------------------------------------------

export interface BiasActShape {
  rows: number;
  C: number;
  /** Element offset of the bias in the weights binding; null = no bias (GELU only). */
  biasOffset: number | null;
  /** 'none': x += bias in place. 'gelu': h += bias in place, out = gelu(h). */
  activation: 'none' | 'gelu';
  /** Use the scalar kernel even where vec4 applies (tests). */
  forceScalar?: boolean;
}

/**
 * Forward of "+ bias" and of "+ bias, then GELU" over row-major [rows, C].
 * - activation 'none': encode(pass, x, weights): x += bias (in place).
 * - activation 'gelu': encode(pass, h, weights, out): h += bias (in place; h is what
 *   GeluBackward/BiasGrad need later), out = gelu(h). Without a bias, h is left as is and
 *   `weights` may be any buffer.
 */
export class BiasActKernel {
  private readonly binds: BindGroupCache;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: BiasActShape,
    readonly vec4: boolean,
    private readonly pipeline: GPUComputePipeline,
    private readonly params: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'biasact');
  }

  static async create(rt: GpuRuntime, shape: BiasActShape): Promise<BiasActKernel> {
    checkDims('bias', { rows: shape.rows, C: shape.C });
    if (shape.biasOffset !== null) checkOffset('biasOffset', shape.biasOffset);
    if (shape.activation === 'none' && shape.biasOffset === null) throw new RangeError('bias add needs a biasOffset');
    const vec4 = !shape.forceScalar && shape.C % 4 === 0 && (shape.biasOffset ?? 0) % 4 === 0;
    const suffix = vec4 ? '_vec4' : '';
    const pipeline =
      shape.activation === 'gelu'
        ? await rt.pipeline(ELEMENTWISE_SHADER, 'bias_gelu' + suffix, { HAS_BIAS: shape.biasOffset === null ? 0 : 1 })
        : await rt.pipeline(ELEMENTWISE_SHADER, 'bias_add' + suffix);
    const w = new ParamWords();
    w.u32.set([shape.rows * shape.C, shape.C, shape.rows, shape.biasOffset ?? 0]);
    return new BiasActKernel(rt, shape, vec4, pipeline, rt.uniform('biasact.params', w.u32));
  }

  encode(pass: GPUComputePassEncoder, x: BufferBinding, weights: BufferBinding, out?: BufferBinding): void {
    const { rows, C, biasOffset } = this.shape;
    const bindings = this.shape.activation === 'gelu' ? [this.params, x, weights, out ?? fail('bias_gelu: out is required')] : [this.params, x, weights];
    needWords('bias', 'x', x, rows * C);
    if (biasOffset !== null) needWords('bias', 'weights', weights, biasOffset + C);
    if (out) needWords('bias', 'out', out, rows * C);
    this.binds.dispatch(pass, this.pipeline, bindings, elementwiseGrid(this.rt, rows * C, this.vec4));
  }

  dispose(): void {
    this.rt.release(this.params);
    this.binds.clear();
  }
}

// ---- GELU backward -----------------------------------------------------------------------

/** encode(pass, g, h): g *= gelu'(h) over n elements, in place (dout becomes dh). */
export class GeluBackwardKernel {
  private readonly binds: BindGroupCache;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly n: number,
    readonly vec4: boolean,
    private readonly pipeline: GPUComputePipeline,
    private readonly params: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'gelu_bwd');
  }

  static async create(rt: GpuRuntime, shape: { n: number; forceScalar?: boolean }): Promise<GeluBackwardKernel> {
    checkDims('gelu backward', { n: shape.n });
    const vec4 = !shape.forceScalar && shape.n % 4 === 0;
    const pipeline = await rt.pipeline(ELEMENTWISE_SHADER, vec4 ? 'gelu_backward_vec4' : 'gelu_backward');
    const w = new ParamWords();
    w.u32.set([shape.n, 1]);
    return new GeluBackwardKernel(rt, shape.n, vec4, pipeline, rt.uniform('gelu_bwd.params', w.u32));
  }

  encode(pass: GPUComputePassEncoder, g: BufferBinding, h: BufferBinding): void {
    needWords('gelu backward', 'g', g, this.n);
    needWords('gelu backward', 'h', h, this.n);
    this.binds.dispatch(pass, this.pipeline, [this.params, g, h], elementwiseGrid(this.rt, this.n, this.vec4));
  }

  dispose(): void {
    this.rt.release(this.params);
    this.binds.clear();
  }
}

// ---- bias gradient (optionally fused with the GELU backward) -----------------------------------

export interface BiasGradShape {
  rows: number;
  C: number;
  /** Element offset of the bias gradient in the grads binding. */
  gradOffset: number;
  /** Add into the gradient (default true: the model zeroes gradients once per step) or overwrite it. */
  accumulate?: boolean;
  /** First turn dout into dh = dout·gelu'(h) in place (the bias sat before a GELU). */
  gelu?: boolean;
  /** Use the scalar stage 1 even when C is a multiple of 4 (tests). */
  forceScalar?: boolean;
}

/**
 * dbias[c] (+)= Σ_r dout[r, c], as a deterministic two-stage column sum (2 dispatches).
 * encode(pass, dout, grads) — or, with gelu, encode(pass, dout, grads, h): dout is rewritten in
 * place to dh = dout·gelu'(h) and the bias gradient is the column sum of dh.
 */
export class BiasGradKernel {
  private readonly binds: BindGroupCache;
  readonly rowsPerBlock: number;
  readonly numBlocks: number;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: Required<BiasGradShape>,
    private readonly partialPipeline: GPUComputePipeline,
    private readonly finalPipeline: GPUComputePipeline,
    private readonly params: GPUBuffer,
    private readonly partial: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'biasgrad');
    this.rowsPerBlock = rowsPerBlockFor(shape.rows);
    this.numBlocks = Math.ceil(shape.rows / this.rowsPerBlock);
  }

  static async create(rt: GpuRuntime, shape: BiasGradShape): Promise<BiasGradKernel> {
    checkDims('bias grad', { rows: shape.rows, C: shape.C });
    checkOffset('gradOffset', shape.gradOffset);
    const s: Required<BiasGradShape> = { accumulate: true, gelu: false, forceScalar: false, ...shape };
    const vec4 = !s.forceScalar && s.C % 4 === 0;
    const [partialPipeline, finalPipeline] = await Promise.all([
      rt.pipeline(ELEMENTWISE_SHADER, (s.gelu ? 'gelu_colsum_partial' : 'colsum_partial') + (vec4 ? '_vec4' : '')),
      rt.pipeline(ELEMENTWISE_SHADER, 'colsum_final', { ACCUMULATE: s.accumulate ? 1 : 0 }),
    ]);
    const rowsPerBlock = rowsPerBlockFor(s.rows);
    const numBlocks = Math.ceil(s.rows / rowsPerBlock);
    const w = new ParamWords();
    w.u32.set([s.rows * s.C, s.C, s.rows, 0, s.gradOffset, rowsPerBlock, numBlocks]);
    const params = rt.uniform('biasgrad.params', w.u32);
    const partial = rt.storage('biasgrad.partial', numBlocks * s.C * 4);
    return new BiasGradKernel(rt, s, partialPipeline, finalPipeline, params, partial);
  }

  encode(pass: GPUComputePassEncoder, dout: BufferBinding, grads: BufferBinding, h?: BufferBinding): void {
    const { rows, C, gelu, gradOffset } = this.shape;
    needWords('bias grad', 'dout', dout, rows * C);
    needWords('bias grad', 'grads', grads, gradOffset + C);
    if (h) needWords('bias grad', 'h', h, rows * C);
    const stage1 = gelu ? [this.params, dout, h ?? fail('bias grad with gelu: h is required'), this.partial] : [this.params, dout, this.partial];
    this.binds.dispatch(pass, this.partialPipeline, stage1, [Math.ceil(C / (C % 4 === 0 && !this.shape.forceScalar ? 256 : 64)), this.numBlocks]);
    this.binds.dispatch(pass, this.finalPipeline, [this.params, this.partial, grads], [Math.ceil(C / 64)]);
  }

  dispose(): void {
    this.rt.release(this.params, this.partial);
    this.binds.clear();
  }
}
