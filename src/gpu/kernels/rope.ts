// Launcher for shaders/rope.wgsl: rotary position embedding on the q and k parts of a fused
// QKV buffer, in place, forward (+θ) and backward (−θ on dqkv).
import code from '../../../shaders/rope.wgsl?raw';
import { checkRopeShape, ropeTable, type RopeShape } from '../../reference/rope.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindCache } from './attention.ts';

export const ROPE_SHADER = wgsl('rope.wgsl', code);

export interface RopeOptions {
  /** positions the table covers: offset + T must stay below it; default 1024 */
  maxPositions?: number;
}

/**
 * RoPE for one shape. encode(pass, qkv, offset) rotates q and k of qkv [rows, 3C] in place;
 * encodeBackward(pass, dqkv, offset) rotates dq and dk back (dv untouched). Forward and backward
 * keep separate uniforms, so both can sit in one training submission. The offset is written
 * with queue.writeBuffer when it changes, which takes effect at the next submit: one decode
 * step per submission.
 */
export class RopeKernel {
  private readonly binds = [new BindCache(), new BindCache()];
  private readonly lastOffset = [0, 0];
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: RopeShape,
    readonly maxPositions: number,
    private readonly pipeline: GPUComputePipeline,
    private readonly params: [GPUBuffer, GPUBuffer],
    private readonly table: GPUBuffer,
  ) {}

  static async create(rt: GpuRuntime, shape: RopeShape, options: RopeOptions = {}): Promise<RopeKernel> {
    checkRopeShape(shape);
    const maxPositions = options.maxPositions ?? 1024;
    if (shape.T > maxPositions) throw new RangeError(`rope: T = ${shape.T} exceeds the table's ${maxPositions} positions`);
    const lim = rt.report.limits.maxComputeWorkgroupsPerDimension;
    if (shape.rows > lim) throw new RangeError(`rope: ${shape.rows} rows exceed ${lim} workgroups per dimension`);
    const pipeline = await rt.pipeline(ROPE_SHADER, 'rope_apply');
    const table = rt.storage('rope.table', new Float32Array(ropeTable(shape.D, maxPositions, shape.base ?? 10000)));
    const params: [GPUBuffer, GPUBuffer] = [
      rt.uniform('rope.params', RopeKernel.bytes(shape, 0, 1)),
      rt.uniform('rope.params', RopeKernel.bytes(shape, 0, -1)),
    ];
    return new RopeKernel(rt, shape, maxPositions, pipeline, params, table);
  }

  private static bytes(s: RopeShape, offset: number, sign: 1 | -1): Uint8Array {
    const u = new ArrayBuffer(32);
    new Uint32Array(u).set([s.rows, s.T, s.H, s.D, offset]);
    new Float32Array(u, 20, 1)[0] = sign;
    return new Uint8Array(u);
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
    const params = this.params[dir];
    const group = this.binds[dir].get([x], () => this.rt.bindGroup(this.pipeline, [params, x, this.table], 'rope'));
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(Math.ceil((this.shape.H * this.shape.D) / 64), this.shape.rows);
  }

  dispose(): void {
    this.rt.release(...this.params, this.table);
    for (const b of this.binds) b.clear();
  }
}
