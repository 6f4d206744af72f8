// The transformer block on the GPU, written once for training and generation: the kernels of
// every layer (norms, projections, biases, GELU or SwiGLU, residual adds, q/k head norms, RoPE) and the order they are
// encoded in, forward and backward, following the config's BlockPlan (plan.ts). How attention
// itself runs is the caller's: training attends over the whole causal batch and keeps the
// log-sum-exp rows for the backward; generation appends to a KV cache and attends over it
// (prefill and decode alike), so the same encoder serves GpuModel (and its GpuTrainer) and GpuGenerator.
//
//   x ─ norm1 ─ ·Wqkv+b ─ [head norm] ─ RoPE ─ attention ─ ·Wproj+b ─(+x)─ xMid ─ norm2 ─ ·Wfc+b ─ GELU | SwiGLU ─ ·Wmlp+b ─(+xMid)─ x_out
// (each bias only where the plan has one; the head norm only for Qwen3).
import { AddKernel, BiasActKernel, BiasGradKernel, GeluBackwardKernel } from '../gpu/kernels/elementwise.ts';
import { HeadNormKernel } from '../gpu/kernels/headnorm.ts';
import { SwigluKernel } from '../gpu/kernels/swiglu.ts';
import type { Disposable } from '../gpu/kernels/common.ts';
import { NormKernel } from '../gpu/kernels/norm.ts';
import { RopeKernel } from '../gpu/kernels/rope.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import type { ModelConfig } from '../core/model/config.ts';
import type { BlockParams, ParamLayout, ParamTensor } from '../core/model/params.ts';
import { placeOf, wholePlan, type ParamBuffers, type ShardPlan } from './shards.ts';
import { PieceMatmul, type PieceOp } from './pieceMatmul.ts';
import { blockPlan, type BlockPlan } from '../core/model/plan.ts';
import type { GpuLora } from './loraGpu.ts';
import type { LoraSite } from './lora.ts';

/** The activations of one block. Training keeps one set per layer; generation shares one set (ln2 = ln1). */
export interface BlockBuffers {
  /** The block's input (the residual stream). */
  x: GPUBuffer;
  ln1: GPUBuffer;
  ln1Stats: GPUBuffer;
  /** The q/k head norm's saved inputs [rows, (heads + kvHeads)·headSize] and rstd [rows, heads + kvHeads] (qkNorm only). */
  qkRaw?: GPUBuffer;
  qkStats?: GPUBuffer;
  /** q | k | v after RoPE ([rows, plan.qkvDim]). */
  qkv: GPUBuffer;
  att: GPUBuffer;
  /** Attention's log-sum-exp rows (training only: the backward recomputes scores from them). */
  lse?: GPUBuffer;
  xMid: GPUBuffer;
  ln2: GPUBuffer;
  ln2Stats: GPUBuffer;
  /** The MLP's pre-activation (bias added; [rows, plan.upDim]) and its GELU or SwiGLU ([rows, F]). */
  fcH: GPUBuffer;
  fcA: GPUBuffer;
}

/** How attention runs for one submission: training (causal over the batch) or against a KV cache. */
export interface BlockAttention {
  /** Position of each sequence's first row in these buffers (RoPE). */
  position: number;
  /** att = attention(qkv) of layer `layer` (qkv already rotated); training also writes lse. */
  forward(pass: GPUComputePassEncoder, layer: number, b: BlockBuffers): void;
  /** dqkv from datt (training only). */
  backward?(pass: GPUComputePassEncoder, b: BlockBuffers, dAtt: GPUBuffer, dQkv: GPUBuffer): void;
}

/** Gradient scratch of the backward: dX enters as d x_out and leaves as d x (the block's input). */
export interface BlockGradBuffers {
  dX: GPUBuffer;
  /** [rows, max(C, plan.qDim)] scratch. */
  dT: GPUBuffer;
  /** [rows, plan.qkvDim] */
  dQkv: GPUBuffer;
  /** [rows, plan.upDim] */
  dFc: GPUBuffer;
  /** [rows, F]: d of the SwiGLU's output (SwiGLU only). */
  dAct?: GPUBuffer;
}

export interface BlockShape {
  /** Rows of the activation buffers (sequences × tokens per sequence). */
  rows: number;
  /** Tokens per sequence in the buffers (RoPE's position = row mod T). */
  T: number;
  /** Positions RoPE's table covers. */
  maxPositions: number;
  /** Build the backward kernels too (training). */
  backward: boolean;
  /**
   * Frozen weights (LoRA): the backward carries the gradient through the block to the adapter
   * (loraGpu.ts) and writes no gradient of the block's own weights, norms or biases.
   */
  frozen?: boolean;
}

/** The adapter a block runs with (GpuBlocks.encodeForward / encodeBackward call it at each projection). */
export interface BlockLora {
  lora: GpuLora;
  params: GPUBuffer;
  /** The adapter's gradient (training). */
  grads?: GPUBuffer;
}

interface LayerKernels {
  norm1: NormKernel;
  qkv: PieceMatmul;
  qkvBias?: BiasActKernel;
  headNorm?: HeadNormKernel;
  proj: PieceMatmul;
  projBias?: BiasActKernel;
  norm2: NormKernel;
  fc: PieceMatmul;
  /** GELU: bias (if any) + GELU into fcA. SwiGLU: the bias (if any) on fcH. */
  fcBiasAct?: BiasActKernel;
  mlp: PieceMatmul;
  mlpBias?: BiasActKernel;
}

interface LayerGradKernels {
  mlpBiasGrad?: BiasGradKernel;
  /** Absent when the weights are frozen. */
  dMlpW?: PieceMatmul;
  dFc: PieceMatmul;
  /** GELU with a bias: the fused GELU backward + bias gradient; SwiGLU: the bias gradient of dh. */
  fcBiasGrad?: BiasGradKernel;
  /** GELU without a bias: the GELU backward alone. */
  geluBackward?: GeluBackwardKernel;
  /** Absent when the weights are frozen. */
  dFcW?: PieceMatmul;
  dLn2: PieceMatmul;
  projBiasGrad?: BiasGradKernel;
  /** Absent when the weights are frozen. */
  dProjW?: PieceMatmul;
  dAtt: PieceMatmul;
  qkvBiasGrad?: BiasGradKernel;
  /** Absent when the weights are frozen. */
  dQkvW?: PieceMatmul;
  dLn1: PieceMatmul;
}

/** Kernel factories for one shape; every kernel made is kept for dispose(). Offsets are within each tensor's shard. */
class Maker {
  readonly made: Disposable[] = [];
  constructor(
    readonly rt: GpuRuntime,
    readonly c: ModelConfig,
    readonly plan: BlockPlan,
    readonly s: BlockShape,
    readonly shards: ShardPlan,
  ) {}
  /** Element offset of `t` within its shard. */
  at(t: ParamTensor): number {
    return placeOf(this.shards, t).offset;
  }
  private keep<T extends Disposable>(p: Promise<T>): Promise<T> {
    return p.then((k) => (this.made.push(k), k));
  }
  /** A product with weight `w` (pieceMatmul.ts): 'mul' x·W, 'mulT' dy·Wᵀ, 'gradT' dW += xᵀ·dy. */
  mm(w: ParamTensor, op: PieceOp): Promise<PieceMatmul> {
    return this.keep(PieceMatmul.create(this.rt, this.shards, w, op, this.s.rows));
  }
  norm(w: ParamTensor, b?: ParamTensor): Promise<NormKernel> {
    const shape = { rows: this.s.rows, C: this.plan.C, kind: this.plan.norm, eps: this.c.normEps, gammaOffset: this.at(w), betaOffset: b ? this.at(b) : 0 };
    return this.keep(NormKernel.create(this.rt, shape, { accumulateDx: this.s.backward }));
  }
  /** Bias add (or bias + GELU); none when there is neither a bias nor an activation. */
  bias(t: ParamTensor | undefined, width: number, activation: 'none' | 'gelu'): Promise<BiasActKernel | undefined> {
    if (!t && activation === 'none') return Promise.resolve(undefined);
    return this.keep(BiasActKernel.create(this.rt, { rows: this.s.rows, C: width, biasOffset: t ? this.at(t) : null, activation }));
  }
  biasGrad(t: ParamTensor | undefined, width: number, gelu = false): Promise<BiasGradKernel | undefined> {
    if (!t) return Promise.resolve(undefined);
    return this.keep(BiasGradKernel.create(this.rt, { rows: this.s.rows, C: width, gradOffset: this.at(t), gelu }));
  }
  geluBackward(): Promise<GeluBackwardKernel> {
    return this.keep(GeluBackwardKernel.create(this.rt, { n: this.s.rows * this.plan.F }));
  }
  headNorm(p: BlockParams): Promise<HeadNormKernel | undefined> {
    if (!this.plan.qkNorm) return Promise.resolve(undefined);
    const { heads: H, kvHeads: kvH, headSize: D } = this.plan;
    return this.keep(
      HeadNormKernel.create(this.rt, { rows: this.s.rows, H, kvH, D, eps: this.c.normEps, qOffset: this.at(p.qNorm!), kOffset: this.at(p.kNorm!) }),
    );
  }
  swiglu(): Promise<SwigluKernel | null> {
    if (this.plan.mlp !== 'swiglu') return Promise.resolve(null);
    return this.keep(SwigluKernel.create(this.rt, { rows: this.s.rows, F: this.plan.F }));
  }
  add(): Promise<AddKernel> {
    return this.keep(AddKernel.create(this.rt, { n: this.s.rows * this.plan.C, inPlace: true }));
  }
  rope(): Promise<RopeKernel | null> {
    if (!this.plan.rope) return Promise.resolve(null);
    const { rows, T, maxPositions } = this.s;
    const { heads: H, kvHeads: kvH, headSize: D, ropeFreqs: freqs } = this.plan;
    return this.keep(RopeKernel.create(this.rt, { rows, T, H, kvH, D, base: this.c.ropeBase, freqs }, { maxPositions }));
  }
}

async function forwardKernels(k: Maker, p: BlockParams): Promise<LayerKernels> {
  const { C, qkvDim, upDim } = k.plan;
  const [norm1, qkv, qkvBias, headNorm, proj, projBias, norm2, fc, fcBiasAct, mlp, mlpBias] = await Promise.all([
    k.norm(p.ln1Weight, p.ln1Bias),
    k.mm(p.attnWeight, 'mul'),
    k.bias(p.attnBias, qkvDim, 'none'),
    k.headNorm(p),
    k.mm(p.attnProjWeight, 'mul'),
    k.bias(p.attnProjBias, C, 'none'),
    k.norm(p.ln2Weight, p.ln2Bias),
    k.mm(p.fcWeight, 'mul'),
    k.bias(p.fcBias, upDim, k.plan.mlp === 'gelu' ? 'gelu' : 'none'),
    k.mm(p.mlpProjWeight, 'mul'),
    k.bias(p.mlpProjBias, C, 'none'),
  ]);
  return { norm1, qkv, qkvBias, headNorm, proj, projBias, norm2, fc, fcBiasAct, mlp, mlpBias };
}

/** dW += xᵀ·dy ([K, N] from [rows, K] and [rows, N]) and dx = dy·Wᵀ, for each weight w. */
async function backwardKernels(k: Maker, p: BlockParams): Promise<LayerGradKernels> {
  const { C, qkvDim, upDim } = k.plan;
  const gelu = k.plan.mlp === 'gelu';
  const frozen = !!k.s.frozen;
  const none = Promise.resolve(undefined);
  const dW = (w: ParamTensor) => (frozen ? none : k.mm(w, 'gradT'));
  const biasGrad = (t: ParamTensor | undefined, width: number, g = false) => (frozen ? none : k.biasGrad(t, width, g));
  const dx = (w: ParamTensor) => k.mm(w, 'mulT');
  const [mlpBiasGrad, dMlpW, dFc, fcBiasGrad, geluBackward, dFcW, dLn2, projBiasGrad, dProjW, dAtt, qkvBiasGrad, dQkvW, dLn1] = await Promise.all([
    biasGrad(p.mlpProjBias, C),
    dW(p.mlpProjWeight),
    dx(p.mlpProjWeight),
    biasGrad(p.fcBias, upDim, gelu),
    gelu && (frozen || !p.fcBias) ? k.geluBackward() : none,
    dW(p.fcWeight),
    dx(p.fcWeight),
    biasGrad(p.attnProjBias, C),
    dW(p.attnProjWeight),
    dx(p.attnProjWeight),
    biasGrad(p.attnBias, qkvDim),
    dW(p.attnWeight),
    dx(p.attnWeight),
  ]);
  return { mlpBiasGrad, dMlpW, dFc, fcBiasGrad, geluBackward, dFcW, dLn2, projBiasGrad, dProjW, dAtt, qkvBiasGrad, dQkvW, dLn1 };
}

/** Every block of a model at one shape: encodeForward / encodeBackward one layer at a time. */
export class GpuBlocks {
  /** The adapter the blocks run with (LoRA), set by the model that owns it (its gradient by the trainer); null: none. */
  lora: BlockLora | null = null;

  private constructor(
    readonly plan: BlockPlan,
    /** Each layer's tensors (to find the shard each kernel binds). */
    private readonly params: BlockParams[],
    private readonly fwd: LayerKernels[],
    private readonly bwd: LayerGradKernels[],
    private readonly add: AddKernel,
    private readonly rope: RopeKernel | null,
    private readonly swiglu: SwigluKernel | null,
    private readonly made: Disposable[],
  ) {}

  get layers(): number {
    return this.fwd.length;
  }

  /** `shards`: where the parameters live (default: one flat buffer). */
  static async create(rt: GpuRuntime, config: ModelConfig, layout: ParamLayout, shape: BlockShape, shards: ShardPlan = wholePlan(layout)): Promise<GpuBlocks> {
    const k = new Maker(rt, config, blockPlan(config), shape, shards);
    const [add, rope, swiglu] = await Promise.all([k.add(), k.rope(), k.swiglu()]);
    const layers: LayerKernels[] = [];
    const grads: LayerGradKernels[] = [];
    for (const p of layout.blocks) {
      layers.push(await forwardKernels(k, p));
      if (shape.backward) grads.push(await backwardKernels(k, p));
    }
    return new GpuBlocks(k.plan, layout.blocks, layers, grads, add, rope, swiglu, k.made);
  }

  /** Layer `l` from b.x to xOut (which may be b.x itself: generation overwrites its input). */
  encodeForward(pass: GPUComputePassEncoder, P: ParamBuffers, l: number, b: BlockBuffers, xOut: GPUBuffer, attention: BlockAttention): void {
    const k = this.fwd[l];
    const p = this.params[l];
    const at = (t: ParamTensor | undefined) => P.buffer(t!);
    const lora = this.lora;
    k.norm1.encodeForward(pass, b.x, at(p.ln1Weight), b.ln1, b.ln1Stats);
    k.qkv.encode(pass, b.ln1, P, b.qkv);
    lora?.lora.encodeForward(pass, lora.params, l, 'qkv', b.ln1, b.qkv);
    k.qkvBias?.encode(pass, b.qkv, at(p.attnBias));
    k.headNorm?.encodeForward(pass, b.qkv, at(p.qNorm), need(b.qkRaw, 'qkRaw'), need(b.qkStats, 'qkStats'));
    this.rope?.encode(pass, b.qkv, attention.position);
    attention.forward(pass, l, b);
    k.proj.encode(pass, b.att, P, b.xMid);
    lora?.lora.encodeForward(pass, lora.params, l, 'o', b.att, b.xMid);
    k.projBias?.encode(pass, b.xMid, at(p.attnProjBias));
    this.add.encode(pass, b.xMid, b.x);
    k.norm2.encodeForward(pass, b.xMid, at(p.ln2Weight), b.ln2, b.ln2Stats);
    k.fc.encode(pass, b.ln2, P, b.fcH);
    lora?.lora.encodeForward(pass, lora.params, l, 'fc', b.ln2, b.fcH);
    if (this.swiglu) {
      k.fcBiasAct?.encode(pass, b.fcH, at(p.fcBias));
      this.swiglu.encodeForward(pass, b.fcH, b.fcA);
    } else {
      // GELU with or without a bias (without one the bias binding is unused: any buffer does).
      k.fcBiasAct!.encode(pass, b.fcH, at(p.fcBias ?? p.fcWeight), b.fcA);
    }
    k.mlp.encode(pass, b.fcA, P, xOut);
    lora?.lora.encodeForward(pass, lora.params, l, 'down', b.fcA, xOut);
    k.mlpBias?.encode(pass, xOut, at(p.mlpProjBias));
    this.add.encode(pass, xOut, b.xMid);
  }

  /**
   * Layer `l`'s backward (training; positions from attention.position): d.dX from d x_out to d x;
   * gradients add into G (none with frozen weights: G may then be null) and the adapter's into its own.
   */
  encodeBackward(
    pass: GPUComputePassEncoder,
    P: ParamBuffers,
    G: ParamBuffers | null,
    l: number,
    b: BlockBuffers,
    d: BlockGradBuffers,
    attention: BlockAttention,
  ): void {
    const k = this.bwd[l];
    const n = this.fwd[l];
    const p = this.params[l];
    if (!k || !attention.backward) throw new Error('GpuBlocks: built without the backward (shape.backward) or given no attention backward');
    const at = (t: ParamTensor | undefined) => P.buffer(t!);
    const gAt = (t: ParamTensor | undefined) => (G ? G.buffer(t!) : null);
    const lora = this.lora;
    const adapt = (site: LoraSite, x: GPUBuffer, dy: GPUBuffer, dx: GPUBuffer) =>
      lora?.lora.encodeBackward(pass, lora.params, need(lora.grads, 'adapter gradient'), l, site, x, dy, dx);
    // dW += xᵀ·dy, unless the weights are frozen.
    const g = (kernel: PieceMatmul | undefined, x: GPUBuffer, dy: GPUBuffer) => G && kernel?.encodeGrad(pass, x, dy, G);
    // MLP branch: dX is d x_out.
    if (k.mlpBiasGrad && G) k.mlpBiasGrad.encode(pass, d.dX, G.buffer(p.mlpProjBias!));
    g(k.dMlpW, b.fcA, d.dX);
    if (this.swiglu) {
      const dAct = need(d.dAct, 'dAct');
      k.dFc.encode(pass, d.dX, P, dAct);
      adapt('down', b.fcA, d.dX, dAct);
      this.swiglu.encodeBackward(pass, b.fcH, dAct, d.dFc);
      if (k.fcBiasGrad && G) k.fcBiasGrad.encode(pass, d.dFc, G.buffer(p.fcBias!));
    } else {
      k.dFc.encode(pass, d.dX, P, d.dFc);
      adapt('down', b.fcA, d.dX, d.dFc);
      if (k.fcBiasGrad && G) k.fcBiasGrad.encode(pass, d.dFc, G.buffer(p.fcBias!), b.fcH);
      else k.geluBackward!.encode(pass, d.dFc, b.fcH);
    }
    g(k.dFcW, b.ln2, d.dFc);
    k.dLn2.encode(pass, d.dFc, P, d.dT);
    adapt('fc', b.ln2, d.dFc, d.dT);
    n.norm2.encodeBackward(pass, d.dT, b.xMid, at(p.ln2Weight), b.ln2Stats, d.dX, gAt(p.ln2Weight));
    // Attention branch: dX is now d xMid.
    if (k.projBiasGrad && G) k.projBiasGrad.encode(pass, d.dX, G.buffer(p.attnProjBias!));
    g(k.dProjW, b.att, d.dX);
    k.dAtt.encode(pass, d.dX, P, d.dT);
    adapt('o', b.att, d.dX, d.dT);
    attention.backward(pass, b, d.dT, d.dQkv);
    this.rope?.encodeBackward(pass, d.dQkv, attention.position);
    n.headNorm?.encodeBackward(pass, d.dQkv, at(p.qNorm), need(b.qkRaw, 'qkRaw'), need(b.qkStats, 'qkStats'), gAt(p.qNorm));
    if (k.qkvBiasGrad && G) k.qkvBiasGrad.encode(pass, d.dQkv, G.buffer(p.attnBias!));
    g(k.dQkvW, b.ln1, d.dQkv);
    k.dLn1.encode(pass, d.dQkv, P, d.dT);
    adapt('qkv', b.ln1, d.dQkv, d.dT);
    n.norm1.encodeBackward(pass, d.dT, b.x, at(p.ln1Weight), b.ln1Stats, d.dX, gAt(p.ln1Weight));
  }

  dispose(): void {
    for (const k of this.made) k.dispose();
    this.made.length = 0;
  }
}

function need<T>(b: T | undefined, what: string): T {
  if (b === undefined) throw new Error(`GpuBlocks: this block's plan needs the ${what} buffer`);
  return b;
}

/** Elements of the q/k head norm's saved inputs and statistics for `rows` rows (0 without it). */
export function headNormSizes(plan: BlockPlan, rows: number): { raw: number; stats: number } {
  if (!plan.qkNorm) return { raw: 0, stats: 0 };
  const heads = plan.heads + plan.kvHeads;
  return { raw: rows * heads * plan.headSize, stats: rows * heads };
}

/** Makes a storage buffer of `n` f32 elements labelled `label`; the caller keeps it to release. */
export type AllocF32 = (label: string, n: number) => GPUBuffer;

/**
 * The activations of a block stack over `rows` rows, the one place their sizes are worked out.
 * A number of layers: one set per layer, attention's log-sum-exp rows included (what a training
 * forward keeps for the backward). 'shared': one set every layer overwrites, ln2 = ln1 and no
 * lse (generation).
 */
export function allocBlockBuffers(f32: AllocF32, plan: BlockPlan, rows: number, layers: number | 'shared'): BlockBuffers[] {
  const hn = headNormSizes(plan, rows);
  const set = (at: string, lse: boolean): BlockBuffers => {
    const ln1 = f32(`ln1${at}`, rows * plan.C);
    const ln1Stats = f32(`ln1s${at}`, rows * 2);
    return {
      x: f32(`x${at}`, rows * plan.C),
      ln1,
      ln1Stats,
      ...(plan.qkNorm && { qkRaw: f32(`qkraw${at}`, hn.raw), qkStats: f32(`qks${at}`, hn.stats) }),
      qkv: f32(`qkv${at}`, rows * plan.qkvDim),
      att: f32(`att${at}`, rows * plan.qDim),
      ...(lse && { lse: f32(`lse${at}`, rows * plan.heads) }),
      xMid: f32(`xmid${at}`, rows * plan.C),
      ln2: lse ? f32(`ln2${at}`, rows * plan.C) : ln1,
      ln2Stats: lse ? f32(`ln2s${at}`, rows * 2) : ln1Stats,
      fcH: f32(`fch${at}`, rows * plan.upDim),
      fcA: f32(`fca${at}`, rows * plan.F),
    };
  };
  if (layers === 'shared') return [set('', false)];
  return Array.from({ length: layers }, (_, l) => set(`.${l}`, true));
}

/** The backward's gradient scratch for `rows` rows (BlockGradBuffers), shared by every layer. */
export function allocBlockGradBuffers(f32: AllocF32, plan: BlockPlan, rows: number): BlockGradBuffers {
  return {
    dX: f32('dx', rows * plan.C),
    dT: f32('dt', rows * Math.max(plan.C, plan.qDim)),
    dQkv: f32('dqkv', rows * plan.qkvDim),
    dFc: f32('dfc', rows * plan.upDim),
    ...(plan.mlp === 'swiglu' && { dAct: f32('dact', rows * plan.F) }),
  };
}
