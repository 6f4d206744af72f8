// Launcher for shaders/seqgather.wgsl (row layout [S, T] ↔ packed responses [S, L]).
import code from '../../../shaders/seqgather.wgsl?raw';
import { checkSpans, type SeqSpan } from '../../reference/seqgather.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, checkDims, grid, GRID_INCLUDE } from './common.ts';

const SEQGATHER_SHADER = wgsl('seqgather.wgsl', code, GRID_INCLUDE);

/**
 * setSpans(spans) uploads where each sequence's response sits (a write: takes effect at the
 * next submit). encodeGather(pass, src [S,T], dst [S,L]); encodeScatter(pass, src [S,L], dst [S,T]).
 * Both overwrite every element of dst.
 */
export class SeqGatherKernel {
  private readonly binds: BindGroupCache;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly S: number,
    readonly T: number,
    readonly L: number,
    private readonly gather: GPUComputePipeline,
    private readonly scatter: GPUComputePipeline,
    private readonly params: GPUBuffer,
    readonly spans: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'seqgather');
  }

  static async create(rt: GpuRuntime, shape: { S: number; T: number; L: number }): Promise<SeqGatherKernel> {
    checkDims('seqgather', shape);
    const [gather, scatter] = await Promise.all([rt.pipeline(SEQGATHER_SHADER, 'seq_gather'), rt.pipeline(SEQGATHER_SHADER, 'seq_scatter')]);
    const params = rt.uniform('seqgather.params', new Uint32Array([shape.S, shape.T, shape.L, 0]));
    const spans = rt.storage('seqgather.spans', shape.S * 8);
    return new SeqGatherKernel(rt, shape.S, shape.T, shape.L, gather, scatter, params, spans);
  }

  setSpans(spans: SeqSpan[]): void {
    if (spans.length !== this.S) throw new RangeError(`seqgather: ${spans.length} spans for ${this.S} sequences`);
    checkSpans(spans, this.T, this.L);
    this.rt.write(this.spans, Uint32Array.from(spans.flatMap((s) => [s.start, s.len])));
  }

  encodeGather(pass: GPUComputePassEncoder, src: BufferBinding, dst: BufferBinding): void {
    this.binds.dispatch(pass, this.gather, [this.params, this.spans, src, dst], grid(this.rt, Math.ceil((this.S * this.L) / 256)));
  }

  encodeScatter(pass: GPUComputePassEncoder, src: BufferBinding, dst: BufferBinding): void {
    this.binds.dispatch(pass, this.scatter, [this.params, this.spans, src, dst], grid(this.rt, Math.ceil((this.S * this.T) / 256)));
  }

  dispose(): void {
    this.rt.release(this.params, this.spans);
    this.binds.clear();
  }
}
