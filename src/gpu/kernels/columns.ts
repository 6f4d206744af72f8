// Launcher for shaders/columns.wgsl: a scaled block of columns from one row-major matrix written or
// added into another (LoRA's updates of the fused q|k|v and gate|up projections, and their gradients).
import code from '../../../shaders/columns.wgsl?raw';
import { checkColumnsShape, type ColumnsShape } from '../../reference/columns.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, grid, GRID_INCLUDE, needWords, ParamWords } from './common.ts';

const COLUMNS_SHADER = wgsl('columns.wgsl', code, GRID_INCLUDE);

/** encode(pass, src, dst): dst's columns (+)= alpha · src's columns, per columns.ts's shape. */
export class ColumnsKernel {
  private readonly binds: BindGroupCache;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: ColumnsShape,
    private readonly pipeline: GPUComputePipeline,
    private readonly params: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'columns');
  }

  static async create(rt: GpuRuntime, shape: ColumnsShape): Promise<ColumnsKernel> {
    checkColumnsShape(shape);
    const pipeline = await rt.pipeline(COLUMNS_SHADER, 'columns', { ACCUMULATE: shape.accumulate ? 1 : 0 });
    const w = new ParamWords(8);
    w.u32.set([shape.rows, shape.width, shape.srcWidth, shape.srcOffset, shape.dstWidth, shape.dstOffset]);
    w.f32[6] = shape.alpha ?? 1;
    return new ColumnsKernel(rt, shape, pipeline, rt.uniform('columns.params', w.u32));
  }

  encode(pass: GPUComputePassEncoder, src: BufferBinding, dst: BufferBinding): void {
    const { rows, srcWidth, dstWidth } = this.shape;
    needWords('columns', 'src', src, rows * srcWidth);
    needWords('columns', 'dst', dst, rows * dstWidth);
    this.binds.dispatch(pass, this.pipeline, { 0: this.params, 1: src, 2: dst }, grid(this.rt, Math.ceil((rows * this.shape.width) / 256)));
  }

  dispose(): void {
    this.rt.release(this.params);
    this.binds.clear();
  }
}
