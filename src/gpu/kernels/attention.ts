// Launchers for shaders/attention.wgsl: causal attention forward and backward over a fused QKV
// buffer (training), and KV-cache decode attention plus the cache append (inference). Each
// class is built once per shape (pipelines and uniforms reused) and encoded into any compute
// pass, so a training step or a decode step stays one submission.
import code from '../../../shaders/attention.wgsl?raw';
import common from '../../../shaders/attention_common.wgsl?raw';
import { checkAttentionShape, checkDecode, type AttentionShape, type DecodeShape, type DecodeStep } from '../../reference/attention.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, checkGridFits, ParamWords } from './common.ts';
import { ATTENTION_CONSTS, ATTENTION_MAX_BC, ATTENTION_TILE_VEC4 } from './tiles.ts';

/** shaders/attention.wgsl as the launcher composes it (exported for the tests). */
export const ATTENTION_SHADER = wgsl('attention.wgsl', code, { ...ATTENTION_CONSTS, 'attention_common.wgsl': common });

// Binding numbers of shaders/attention.wgsl (fixed across its entry points).
const B_PARAMS = 0,
  B_QKV = 1,
  B_OUT = 2,
  B_LSE = 3,
  B_DOUT = 4,
  B_DVEC = 5,
  B_DQKV = 6,
  B_KC = 7,
  B_VC = 8,
  B_PK = 9,
  B_PV = 10;

// Workgroup tiles hold ATTENTION_TILE_VEC4 vec4 each (shaders/attention.wgsl); a tile is as
// many rows of one head as fit, at most ATTENTION_MAX_BC.

function paramsBytes(s: { H: number; D: number; kvH?: number }, T: number, Tmax = 0, pastLen = 0, prefixLen = 0): Uint32Array {
  const w = new ParamWords(12);
  const { H, D } = s;
  const kvH = s.kvH ?? H;
  const D4 = D / 4;
  w.u32.set([T, H, (H * D) / 4, 0, Tmax, pastLen, prefixLen, D4, Math.min(ATTENTION_MAX_BC, Math.floor(ATTENTION_TILE_VEC4 / D4)), (kvH * D) / 4, H / kvH]);
  w.f32[3] = 1 / Math.sqrt(D);
  return w.u32;
}

export interface AttentionOptions {
  /** rows (threads) per workgroup; default 32 */
  rowsPerWorkgroup?: number;
  /**
   * Compile the head size into the pipeline (loops unrolled, per-row arrays in registers).
   * Default: yes on real GPUs, and on a fallback (CPU) adapter for D ≤ 32, where it runs about
   * 1.3–1.5× faster; larger heads there use one generic pipeline, because unrolling them took
   * SwiftShader tens of seconds per pipeline to compile.
   */
  specialise?: boolean;
}

function constants(rt: GpuRuntime, D: number, options: AttentionOptions, br?: number): Record<string, number> {
  const specialise = options.specialise ?? (!rt.report.isFallbackAdapter || D <= 32);
  const c: Record<string, number> = { FIXED_D4: specialise ? D / 4 : 0 };
  if (br !== undefined) c.BR = br;
  return c;
}

function checkGrid(rt: GpuRuntime, s: AttentionShape, br: number) {
  checkGridFits(rt, `attention ${JSON.stringify(s)}`, [s.B, s.H, Math.ceil(s.T / br)]);
}

/**
 * Causal attention forward. encode(pass, qkv [B,T,C+2KV], out [B,T,C], lse [B,H,T]) overwrites
 * out and lse.
 */
export class AttentionForwardKernel {
  private readonly binds: BindGroupCache;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: AttentionShape,
    private readonly pipeline: GPUComputePipeline,
    private readonly params: GPUBuffer,
    private readonly br: number,
  ) {
    this.binds = new BindGroupCache(rt, 'attention.forward');
  }

  static async create(rt: GpuRuntime, shape: AttentionShape, options: AttentionOptions = {}): Promise<AttentionForwardKernel> {
    checkAttentionShape(shape);
    const br = options.rowsPerWorkgroup ?? 32;
    checkGrid(rt, shape, br);
    const pipeline = await rt.pipeline(ATTENTION_SHADER, 'attn_forward', constants(rt, shape.D, options, br));
    const params = rt.uniform('attention.params', paramsBytes(shape, shape.T));
    return new AttentionForwardKernel(rt, shape, pipeline, params, br);
  }

  encode(pass: GPUComputePassEncoder, qkv: BufferBinding, out: BufferBinding, lse: BufferBinding): void {
    const bindings = { [B_PARAMS]: this.params, [B_QKV]: qkv, [B_OUT]: out, [B_LSE]: lse };
    this.binds.dispatch(pass, this.pipeline, bindings, [Math.ceil(this.shape.T / this.br), this.shape.H, this.shape.B]);
  }

  dispose(): void {
    this.rt.release(this.params);
    this.binds.clear();
  }
}

/**
 * Causal attention backward: two dispatches (dq, then dk/dv), recomputing the scores from qkv
 * and the forward's lse. encode(pass, qkv, out, lse, dout [B,T,C], dqkv [B,T,C+2KV]) overwrites
 * every element of dqkv. Owns a [B,H,T] scratch for rowsum(dO ∘ O).
 */
export class AttentionBackwardKernel {
  private readonly binds: BindGroupCache;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: AttentionShape,
    private readonly dqPipeline: GPUComputePipeline,
    private readonly dkvPipeline: GPUComputePipeline,
    private readonly params: GPUBuffer,
    private readonly dvec: GPUBuffer,
    private readonly br: number,
  ) {
    this.binds = new BindGroupCache(rt, 'attention.backward');
  }

  static async create(rt: GpuRuntime, shape: AttentionShape, options: AttentionOptions = {}): Promise<AttentionBackwardKernel> {
    checkAttentionShape(shape);
    const br = options.rowsPerWorkgroup ?? 32;
    checkGrid(rt, shape, br);
    const [dq, dkv] = await Promise.all([
      rt.pipeline(ATTENTION_SHADER, 'attn_backward_dq', constants(rt, shape.D, options, br)),
      rt.pipeline(ATTENTION_SHADER, 'attn_backward_dkv', constants(rt, shape.D, options, br)),
    ]);
    const params = rt.uniform('attention.params', paramsBytes(shape, shape.T));
    const dvec = rt.storage('attention.dvec', shape.B * shape.H * shape.T * 4);
    return new AttentionBackwardKernel(rt, shape, dq, dkv, params, dvec, br);
  }

  encode(pass: GPUComputePassEncoder, qkv: BufferBinding, out: BufferBinding, lse: BufferBinding, dout: BufferBinding, dqkv: BufferBinding): void {
    const dkv = { [B_PARAMS]: this.params, [B_QKV]: qkv, [B_LSE]: lse, [B_DOUT]: dout, [B_DVEC]: this.dvec, [B_DQKV]: dqkv };
    const rowBlocks = Math.ceil(this.shape.T / this.br);
    this.binds.dispatch(pass, this.dqPipeline, { ...dkv, [B_OUT]: out }, [rowBlocks, this.shape.H, this.shape.B]);
    // dk and dv: one workgroup per key/value head (it sums over the query heads of its group).
    this.binds.dispatch(pass, this.dkvPipeline, dkv, [rowBlocks, this.shape.kvH ?? this.shape.H, this.shape.B]);
  }

  dispose(): void {
    this.rt.release(this.params, this.dvec);
    this.binds.clear();
  }
}

/** Where one step's new rows sit: in every step-dependent kernel below. */
function checkDecodeGrid(rt: GpuRuntime, s: DecodeShape) {
  checkGridFits(rt, `decode ${JSON.stringify(s)}`, [s.S, s.Tn, s.H, Math.ceil((s.Tn * s.H * s.D) / 4 / 64)]);
}

/**
 * The step-dependent uniform (pastLen, prefixLen) is written with queue.writeBuffer when it
 * changes, which takes effect at the next queue.submit: encode one decode step per submission
 * (each step ends in a token read-back anyway), or build one kernel per step.
 */
abstract class StepKernel {
  protected last = '';
  protected readonly binds: BindGroupCache;
  constructor(
    protected readonly rt: GpuRuntime,
    readonly shape: DecodeShape,
    protected readonly params: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'attention.decode');
  }
  protected setStep(step: DecodeStep): void {
    checkDecode(this.shape, step);
    const key = `${step.pastLen}/${step.prefixLen}`;
    if (key === this.last) return;
    const s = this.shape;
    this.rt.write(this.params, paramsBytes(s, s.Tn, s.Tmax, step.pastLen, step.prefixLen));
    this.last = key;
  }
}

export interface DecodeBuffers {
  /** [S, Tn, C + 2KV] (KV = kvH·D), already rotated for positions prefixLen + pastLen + n */
  qkv: BufferBinding;
  /** [S, Tmax, KV], already holding this step's rows (KvAppendKernel first) */
  kCache: BufferBinding;
  vCache: BufferBinding;
  /** [S, Tn, C], overwritten */
  out: BufferBinding;
  /** [prefixLen, KV]: the group's shared prompt (e.g. a one-sequence cache); omit when prefixLen = 0 */
  prefixK?: BufferBinding;
  prefixV?: BufferBinding;
}

/** KV-cache attention of Tn new rows per sequence over a shared prefix and the sequence's own cache. */
export class AttentionDecodeKernel extends StepKernel {
  private constructor(
    rt: GpuRuntime,
    shape: DecodeShape,
    params: GPUBuffer,
    private readonly pipeline: GPUComputePipeline,
    private readonly empty: GPUBuffer,
  ) {
    super(rt, shape, params);
  }

  static async create(rt: GpuRuntime, shape: DecodeShape, options: Pick<AttentionOptions, 'specialise'> = {}): Promise<AttentionDecodeKernel> {
    checkDecode(shape, { pastLen: 0, prefixLen: 0 });
    checkDecodeGrid(rt, shape);
    const pipeline = await rt.pipeline(ATTENTION_SHADER, 'attn_decode', constants(rt, shape.D, options));
    const params = rt.uniform('attention.decode.params', paramsBytes(shape, shape.Tn, shape.Tmax));
    const empty = rt.storage('attention.noprefix', 16);
    return new AttentionDecodeKernel(rt, shape, params, pipeline, empty);
  }

  encode(pass: GPUComputePassEncoder, bufs: DecodeBuffers, step: DecodeStep): void {
    if (step.prefixLen > 0 && (!bufs.prefixK || !bufs.prefixV)) throw new Error('attention decode: prefixLen > 0 needs prefixK and prefixV');
    this.setStep(step);
    const pk = step.prefixLen > 0 ? bufs.prefixK! : this.empty;
    const pv = step.prefixLen > 0 ? bufs.prefixV! : this.empty;
    const bindings = { [B_PARAMS]: this.params, [B_QKV]: bufs.qkv, [B_OUT]: bufs.out, [B_KC]: bufs.kCache, [B_VC]: bufs.vCache, [B_PK]: pk, [B_PV]: pv };
    this.binds.dispatch(pass, this.pipeline, bindings, [this.shape.Tn, this.shape.H, this.shape.S]);
  }

  dispose(): void {
    this.rt.release(this.params, this.empty);
    this.binds.clear();
  }
}

/** Copies k and v of qkv [S, Tn, C + 2KV] into rows pastLen.. of kCache/vCache [S, Tmax, KV] (overwrite). */
export class KvAppendKernel extends StepKernel {
  private constructor(
    rt: GpuRuntime,
    shape: DecodeShape,
    params: GPUBuffer,
    private readonly pipeline: GPUComputePipeline,
  ) {
    super(rt, shape, params);
  }

  static async create(rt: GpuRuntime, shape: DecodeShape): Promise<KvAppendKernel> {
    checkDecode(shape, { pastLen: 0, prefixLen: 0 });
    checkDecodeGrid(rt, shape);
    const pipeline = await rt.pipeline(ATTENTION_SHADER, 'kv_append');
    const params = rt.uniform('attention.append.params', paramsBytes(shape, shape.Tn, shape.Tmax));
    return new KvAppendKernel(rt, shape, params, pipeline);
  }

  encode(pass: GPUComputePassEncoder, qkv: BufferBinding, kCache: BufferBinding, vCache: BufferBinding, pastLen: number): void {
    this.setStep({ pastLen, prefixLen: 0 });
    const bindings = { [B_PARAMS]: this.params, [B_QKV]: qkv, [B_KC]: kCache, [B_VC]: vCache };
    this.binds.dispatch(pass, this.pipeline, bindings, [Math.ceil((this.shape.Tn * (this.shape.kvH ?? this.shape.H) * this.shape.D) / 4 / 64), this.shape.S]);
  }

  dispose(): void {
    this.rt.release(this.params);
    this.binds.clear();
  }
}
