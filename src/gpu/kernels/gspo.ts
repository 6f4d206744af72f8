// Launcher for shaders/gspo.wgsl: the GSPO objective, its statistics and dL/dlogp_new on the
// GPU, so a GSPO update needs no CPU round trip between the log-prob pass and the backward.
import code from '../../../shaders/gspo.wgsl?raw';
import { GSPO_EPS_HIGH, GSPO_EPS_LOW } from '../../reference/gspo.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, ParamWords } from './common.ts';

const GSPO_SHADER = wgsl('gspo.wgsl', code);

export interface GspoShape {
  numSeqs: number;
  Lmax: number;
  /** default 3e-4 (docs/method.md §6) */
  epsLow?: number;
  /** default 4e-4 (docs/method.md §6) */
  epsHigh?: number;
}

export interface GspoStats {
  objective: number;
  clipFraction: number;
  meanRatio: number;
  loss: number;
}

/**
 * encode(pass, logpNew [S,Lmax], logpOld [S,Lmax], lengths u32 [S], advantages [S],
 * grad [S,Lmax], seqStats [S]·vec4, stats vec4) overwrites grad (dL/dlogp_new, L = −J),
 * seqStats (s_i, per-token gradient, clipped, term_i) and stats (J, clip fraction, mean ratio, L).
 * One dispatch of one workgroup.
 */
export class GspoKernel {
  private readonly binds: BindGroupCache;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: Required<GspoShape>,
    private readonly pipeline: GPUComputePipeline,
    private readonly params: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'gspo');
  }

  static async create(rt: GpuRuntime, shape: GspoShape): Promise<GspoKernel> {
    const s = { epsLow: GSPO_EPS_LOW, epsHigh: GSPO_EPS_HIGH, ...shape };
    if (!Number.isInteger(s.numSeqs) || s.numSeqs < 1 || !Number.isInteger(s.Lmax) || s.Lmax < 1) {
      throw new RangeError(`gspo: numSeqs and Lmax must be positive integers, got ${s.numSeqs}, ${s.Lmax}`);
    }
    if (!(s.epsLow >= 0 && s.epsLow < 1) || !(s.epsHigh >= 0)) throw new RangeError(`gspo: need 0 ≤ ε_low < 1 and ε_high ≥ 0`);
    const pipeline = await rt.pipeline(GSPO_SHADER, 'gspo_loss');
    const w = new ParamWords(4);
    w.u32.set([s.numSeqs, s.Lmax]);
    w.f32.set([s.epsLow, s.epsHigh], 2);
    return new GspoKernel(rt, s, pipeline, rt.uniform('gspo.params', w.u32));
  }

  encode(
    pass: GPUComputePassEncoder,
    logpNew: BufferBinding,
    logpOld: BufferBinding,
    lengths: BufferBinding,
    advantages: BufferBinding,
    grad: BufferBinding,
    seqStats: BufferBinding,
    stats: BufferBinding,
  ): void {
    this.binds.dispatch(pass, this.pipeline, [this.params, logpNew, logpOld, lengths, advantages, grad, seqStats, stats], [1]);
  }

  /** Reads a stats buffer written by encode(). */
  static async readStats(rt: GpuRuntime, stats: GPUBuffer): Promise<GspoStats> {
    const [objective, clipFraction, meanRatio, loss] = await rt.readF32(stats, 4);
    return { objective, clipFraction, meanRatio, loss };
  }

  dispose(): void {
    this.rt.release(this.params);
    this.binds.clear();
  }
}
