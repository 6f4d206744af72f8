// Launcher for shaders/sampling.wgsl: one token per row of logits, chosen on the GPU (greedy,
// temperature, top-k, top-p) from a counter-based hash of (seed, step, row). Only the chosen
// ids ever need to come back to the CPU, and only to stream them out.
import code from '../../../shaders/sampling.wgsl?raw';
import { checkSampleOptions, type SampleOptions } from '../../reference/sampling.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, checkGridFits, ParamWords } from './common.ts';

const SAMPLING_SHADER = wgsl('sampling.wgsl', code);

export interface SamplingShape {
  /** rows to sample (one token each) */
  N: number;
  V: number;
  /** logits row r starts at element rowOffset + r · rowStride (default 0 and V): e.g. the last
   * position of each sequence in [S, T, V] logits is rowOffset (T−1)·V, rowStride T·V. */
  rowStride?: number;
  rowOffset?: number;
  /** token of row r goes to element outOffset + r · outStride (default 0 and 1) */
  outOffset?: number;
  outStride?: number;
}

export type SamplingSettings = Omit<SampleOptions, 'step'>;

/**
 * encode(pass, logits, tokens, step) overwrites one u32 per row in `tokens`. Settings
 * (temperature, top-k, top-p, seed) come from create() or setSettings(); step is given per
 * encode. Both are uniforms written with queue.writeBuffer, which takes effect at the next
 * submit: one sampling step per submission.
 */
export class SamplingKernel {
  private readonly binds: BindGroupCache;
  private step = 0;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: Required<SamplingShape>,
    private settings: SamplingSettings,
    private readonly pipeline: GPUComputePipeline,
    private readonly params: GPUBuffer,
    private readonly scratch: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'sampling');
  }

  static async create(rt: GpuRuntime, shape: SamplingShape, settings: SamplingSettings): Promise<SamplingKernel> {
    const s: Required<SamplingShape> = { rowStride: shape.V, rowOffset: 0, outOffset: 0, outStride: 1, ...shape };
    checkSampleOptions(s.N, s.V, { ...settings, step: 0 });
    checkGridFits(rt, `sampling (${s.N} rows)`, [s.N]);
    const pipeline = await rt.pipeline(SAMPLING_SHADER, 'sample_tokens');
    const params = rt.uniform('sampling.params', SamplingKernel.bytes(s, settings, 0));
    const scratch = rt.storage('sampling.scratch', s.N * s.V * 4);
    return new SamplingKernel(rt, s, settings, pipeline, params, scratch);
  }

  private static bytes(s: Required<SamplingShape>, o: SamplingSettings, step: number): Uint32Array {
    const w = new ParamWords(12);
    const topK = o.topK ?? 0;
    const greedy = o.temperature === 0 || topK === 1;
    w.u32.set([s.N, s.V, topK, o.seed >>> 0, step >>> 0, s.rowStride, s.rowOffset, s.outOffset, s.outStride]);
    w.f32.set([greedy ? 0 : 1 / o.temperature, o.topP ?? 1], 9);
    w.u32[11] = greedy ? 1 : 0;
    return w.u32;
  }

  setSettings(settings: SamplingSettings): void {
    checkSampleOptions(this.shape.N, this.shape.V, { ...settings, step: this.step });
    this.settings = settings;
    this.rt.write(this.params, SamplingKernel.bytes(this.shape, settings, this.step));
  }

  encode(pass: GPUComputePassEncoder, logits: BufferBinding, tokens: BufferBinding, step: number): void {
    if (step !== this.step) {
      if (!Number.isInteger(step) || step < 0 || step > 0xffffffff) throw new RangeError(`sampling: step must be a 32-bit unsigned integer, got ${step}`);
      this.step = step;
      this.rt.write(this.params, SamplingKernel.bytes(this.shape, this.settings, step));
    }
    this.binds.dispatch(pass, this.pipeline, [this.params, logits, this.scratch, tokens], [this.shape.N]);
  }

  dispose(): void {
    this.rt.release(this.params, this.scratch);
    this.binds.clear();
  }
}
