// Launcher for shaders/swiglu.wgsl: out = silu(gate)·up from the fused [gate | up] rows, and its
// gradient into [dgate | dup].
import code from '../../../shaders/swiglu.wgsl?raw';
import { checkSwigluShape, type SwigluShape } from '../../reference/swiglu.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, grid, GRID_INCLUDE, needWords, ParamWords } from './common.ts';

const SWIGLU_SHADER = wgsl('swiglu.wgsl', code, GRID_INCLUDE);

/** encodeForward(pass, h [rows, 2F], out [rows, F]); encodeBackward(pass, h, dout [rows, F], dh [rows, 2F]). */
export class SwigluKernel {
  private readonly binds: BindGroupCache;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: SwigluShape,
    private readonly forward: GPUComputePipeline,
    private readonly backward: GPUComputePipeline,
    private readonly params: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'swiglu');
  }

  static async create(rt: GpuRuntime, shape: SwigluShape): Promise<SwigluKernel> {
    checkSwigluShape(shape);
    const [forward, backward] = await Promise.all([rt.pipeline(SWIGLU_SHADER, 'swiglu_forward'), rt.pipeline(SWIGLU_SHADER, 'swiglu_backward')]);
    const w = new ParamWords(4);
    w.u32.set([shape.rows * shape.F, shape.F]);
    return new SwigluKernel(rt, shape, forward, backward, rt.uniform('swiglu.params', w.u32));
  }

  private get grid(): [number, number] {
    return grid(this.rt, Math.ceil((this.shape.rows * this.shape.F) / 256));
  }

  encodeForward(pass: GPUComputePassEncoder, h: BufferBinding, out: BufferBinding): void {
    const n = this.shape.rows * this.shape.F;
    needWords('swiglu', 'h', h, 2 * n);
    needWords('swiglu', 'out', out, n);
    this.binds.dispatch(pass, this.forward, { 0: this.params, 1: h, 2: out }, this.grid);
  }

  encodeBackward(pass: GPUComputePassEncoder, h: BufferBinding, dout: BufferBinding, dh: BufferBinding): void {
    const n = this.shape.rows * this.shape.F;
    needWords('swiglu backward', 'h', h, 2 * n);
    needWords('swiglu backward', 'dout', dout, n);
    needWords('swiglu backward', 'dh', dh, 2 * n);
    this.binds.dispatch(pass, this.backward, { 0: this.params, 1: h, 3: dout, 4: dh }, this.grid);
  }

  dispose(): void {
    this.rt.release(this.params);
    this.binds.clear();
  }
}
