// Launcher for shaders/rope.wgsl: rotary position embedding on the q and k parts of a fused
// QKV buffer, in place, forward (+θ) and backward (−θ on dqkv).
import code from '../../../shaders/rope.wgsl?raw';
import { checkRopeShape, ropeFreqs, ropeTable, type RopeShape } from '../../reference/rope.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, checkGridFits, ParamWords } from './common.ts';

const ROPE_SHADER = wgsl('rope.wgsl', code);

export interface RopeOptions {
  /** positions the table covers: offset + T must stay below it; default 1024 */
  maxPositions?: number;
}

/**
 * RoPE for one shape. encode(pass, qkv, offset) rotates q and k of qkv [rows, (H + 2·KVH)·D] in place;
 * encodeBackward(pass, dqkv, offset) rotates dq and dk back (dv untouched). Forward and backward
 * keep separate uniforms, so both can sit in one training submission. The offset is written
 * with queue.writeBuffer when it changes, which takes effect at the next submit: one decode
 * step per submission.
 */
export class RopeKernel {
  private readonly binds: BindGroupCache;
  private readonly lastOffset = [0, 0];
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: RopeShape,
    readonly maxPositions: number,
    private readonly pipeline: GPUComputePipeline,
    private readonly params: [GPUBuffer, GPUBuffer],
    private readonly table: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'rope');
  }

  static async create(rt: GpuRuntime, shape: RopeShape, options: RopeOptions = {}): Promise<RopeKernel> {
    checkRopeShape(shape);
    const maxPositions = options.maxPositions ?? 1024;
    if (shape.T > maxPositions) throw new RangeError(`rope: T = ${shape.T} exceeds the table's ${maxPositions} positions`);
    checkGridFits(rt, `rope (${shape.rows} rows)`, [shape.rows]);
    const pipeline = await rt.pipeline(ROPE_SHADER, 'rope_apply');
    const table = rt.storage('rope.table', new Float32Array(ropeTable(shape.D, maxPositions, shape.base ?? 10000, ropeFreqs(shape))));
    const params: [GPUBuffer, GPUBuffer] = [
      rt.uniform('rope.params', RopeKernel.bytes(shape, 0, 1)),
      rt.uniform('rope.params', RopeKernel.bytes(shape, 0, -1)),
    ];
    return new RopeKernel(rt, shape, maxPositions, pipeline, params, table);
  }

  private static bytes(s: RopeShape, offset: number, sign: 1 | -1): Uint32Array {
    const w = new ParamWords(8);
    w.u32.set([s.rows, s.T, s.H, s.D, offset]);
    w.f32[5] = sign;
    w.u32[6] = s.kvH ?? s.H;
    return w.u32;
  }

  encode(pass: GPUComputePassEncoder, qkv: BufferBinding, offset = 0): void {
    this.record(pass, qkv, offset, 0);
  }

  encodeBackward(pass: GPUComputePassEncoder, dqkv: BufferBinding, offset = 0): void {
    this.record(pass, dqkv, offset, 1);
  }

  private record(pass: GPUComputePassEncoder, x: BufferBinding, offset: number, dir: 0 | 1): void {
    if (!Number.isInteger(offset) || offset < 0 || offset + this.shape.T > this.maxPositions) {
      throw new RangeError(`rope: positions ${offset}..${offset + this.shape.T - 1} are outside the table (0..${this.maxPositions - 1})`);
    }
    if (offset !== this.lastOffset[dir]) {
      this.rt.write(this.params[dir], RopeKernel.bytes(this.shape, offset, dir === 0 ? 1 : -1));
      this.lastOffset[dir] = offset;
    }
    this.binds.dispatch(
      pass,
      this.pipeline,
      [this.params[dir], x, this.table],
      [Math.ceil(((this.shape.H + (this.shape.kvH ?? this.shape.H)) * this.shape.D) / 2 / 64), this.shape.rows],
    );
  }

  dispose(): void {
    this.rt.release(...this.params, this.table);
    this.binds.clear();
  }
}
