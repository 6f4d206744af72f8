// Launcher for shaders/prefix_attention.wgsl: causal attention of a group's G completions over
// one shared prompt prefix, forward and backward (docs/method.md §10: the prompt of a GSPO group is
// processed once; its K/V serve every completion and their gradients are summed over the group).
// Twin: src/reference/prefixAttention.ts.
import code from '../../../shaders/prefix_attention.wgsl?raw';
import common from '../../../shaders/attention_common.wgsl?raw';
import { checkPrefixAttentionShape, checkPrefixLength, type PrefixAttentionShape } from '../../reference/prefixAttention.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, checkGridFits, ParamWords } from './common.ts';
import { ATTENTION_CONSTS, ATTENTION_MAX_BC, ATTENTION_TILE_VEC4 } from './tiles.ts';

/** shaders/prefix_attention.wgsl as the launcher composes it (exported for the tests). */
export const PREFIX_ATTENTION_SHADER = wgsl('prefix_attention.wgsl', code, { ...ATTENTION_CONSTS, 'attention_common.wgsl': common });

// Binding numbers of shaders/prefix_attention.wgsl.
const B_PARAMS = 0,
  B_PQKV = 1,
  B_QKV = 2,
  B_OUT = 3,
  B_LSE = 4,
  B_DOUT = 5,
  B_DVEC = 6,
  B_DQKV = 7,
  B_DPKV = 8;

export interface PrefixAttentionOptions {
  /** Rows (threads) per workgroup; default 32. */
  rowsPerWorkgroup?: number;
  /** Compile the head size into the pipelines (as attention.ts: default on real GPUs, and for D ≤ 32 on a fallback adapter). */
  specialise?: boolean;
  /** Build the backward pipelines and their scratch too (training). Default true. */
  backward?: boolean;
}

function paramsBytes(s: PrefixAttentionShape, P: number): Uint32Array {
  const w = new ParamWords(12);
  const D4 = s.D / 4;
  const kvH = s.kvH ?? s.H;
  w.u32.set([s.Tc, s.Tp, P, s.H, (s.H * s.D) / 4, 0, D4, Math.min(ATTENTION_MAX_BC, Math.floor(ATTENTION_TILE_VEC4 / D4)), s.G, (kvH * s.D) / 4, s.H / kvH]);
  w.f32[5] = 1 / Math.sqrt(s.D);
  return w.u32;
}

/**
 * encodeForward(pass, pqkv [Tp,W], qkv [G,Tc,W], out [G,Tc,C], lse [G,H,Tc]) overwrites out and lse
 * (W = C + 2·kvH·D: rows [q | k | v], grouped-query attention when shape.kvH < H);
 * encodeBackward(…, dout [G,Tc,C], dqkv [G,Tc,W], dpkv [Tp,W]) overwrites dqkv and dpkv (the
 * prefix's k/v gradient summed over the group and the query heads of each k/v head; its q part
 * and rows ≥ P are 0). The live prefix
 * length P is a uniform written by setPrefixLength, which takes effect at the next submit: one
 * prefix length per submission.
 */
export class PrefixAttentionKernel {
  private readonly binds: BindGroupCache;
  private P = 0;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: PrefixAttentionShape,
    private readonly pipelines: { forward: GPUComputePipeline; dq?: GPUComputePipeline; dkv?: GPUComputePipeline; dkvPrefix?: GPUComputePipeline },
    private readonly params: GPUBuffer,
    private readonly dvec: GPUBuffer | null,
    private readonly br: number,
  ) {
    this.binds = new BindGroupCache(rt, 'prefix_attention');
  }

  static async create(rt: GpuRuntime, shape: PrefixAttentionShape, options: PrefixAttentionOptions = {}): Promise<PrefixAttentionKernel> {
    checkPrefixAttentionShape(shape);
    const br = options.rowsPerWorkgroup ?? 32;
    checkGridFits(rt, `prefix attention ${JSON.stringify(shape)}`, [Math.ceil(Math.max(shape.Tc, shape.Tp) / br), shape.H, shape.G]);
    const specialise = options.specialise ?? (!rt.report.isFallbackAdapter || shape.D <= 32);
    const constants = { FIXED_D4: specialise ? shape.D / 4 : 0, BR: br };
    const backward = options.backward ?? true;
    const entries = backward ? (['pa_forward', 'pa_backward_dq', 'pa_backward_dkv', 'pa_backward_dkv_prefix'] as const) : (['pa_forward'] as const);
    const [forward, dq, dkv, dkvPrefix] = await Promise.all(entries.map((e) => rt.pipeline(PREFIX_ATTENTION_SHADER, e, constants)));
    const params = rt.uniform('prefix_attention.params', paramsBytes(shape, 0));
    const dvec = backward ? rt.storage('prefix_attention.dvec', shape.G * shape.H * shape.Tc * 4) : null;
    return new PrefixAttentionKernel(rt, shape, { forward, dq, dkv, dkvPrefix }, params, dvec, br);
  }

  /** The live prefix rows (0..Tp) of the next submission. */
  setPrefixLength(P: number): void {
    checkPrefixLength(this.shape, P);
    if (P === this.P) return;
    this.rt.write(this.params, paramsBytes(this.shape, P));
    this.P = P;
  }

  encodeForward(pass: GPUComputePassEncoder, pqkv: BufferBinding, qkv: BufferBinding, out: BufferBinding, lse: BufferBinding): void {
    const s = this.shape;
    const bindings = { [B_PARAMS]: this.params, [B_PQKV]: pqkv, [B_QKV]: qkv, [B_OUT]: out, [B_LSE]: lse };
    this.binds.dispatch(pass, this.pipelines.forward, bindings, [Math.ceil(s.Tc / this.br), s.H, s.G]);
  }

  encodeBackward(
    pass: GPUComputePassEncoder,
    b: { pqkv: BufferBinding; qkv: BufferBinding; out: BufferBinding; lse: BufferBinding; dout: BufferBinding; dqkv: BufferBinding; dpkv: BufferBinding },
  ): void {
    const { dq, dkv, dkvPrefix } = this.pipelines;
    if (!dq || !dkv || !dkvPrefix || !this.dvec) throw new Error('prefix attention: built without the backward (options.backward)');
    const s = this.shape;
    const common = { [B_PARAMS]: this.params, [B_QKV]: b.qkv, [B_LSE]: b.lse, [B_DOUT]: b.dout, [B_DVEC]: this.dvec };
    const kvH = s.kvH ?? s.H;
    this.binds.dispatch(pass, dq, { ...common, [B_PQKV]: b.pqkv, [B_OUT]: b.out, [B_DQKV]: b.dqkv }, [Math.ceil(s.Tc / this.br), s.H, s.G]);
    // dk and dv: one workgroup per key/value head (it sums over the query heads of its group).
    this.binds.dispatch(pass, dkv, { ...common, [B_DQKV]: b.dqkv }, [Math.ceil(s.Tc / this.br), kvH, s.G]);
    this.binds.dispatch(pass, dkvPrefix, { ...common, [B_PQKV]: b.pqkv, [B_DPKV]: b.dpkv }, [Math.ceil(s.Tp / this.br), kvH, 1]);
  }

  dispose(): void {
    this.rt.release(this.params, ...(this.dvec ? [this.dvec] : []));
    this.binds.clear();
  }
}
