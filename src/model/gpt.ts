// The GPT on the GPU: forward, backward and AdamW as one command submission per training step,
// every operation one of our WGSL kernels (src/gpu/kernels), parameters, gradients and Adam
// state in four flat buffers with the layout of params.ts. The blocks are block.ts's encoder
// (shared with generation), with attention over the whole causal batch. The plain-TypeScript
// twin of this whole model is src/reference/gpt.ts; the parity test holds the two to the same
// loss curve.
//
// Activations are row-major [N = B·T rows, width]. Per layer the forward keeps what the
// backward needs (norm inputs and statistics, qkv after RoPE, attention output and its
// log-sum-exp rows, the MLP's pre-activation), so the backward recomputes nothing but the
// attention scores (flash-style, from the saved row statistics).
//
//   tokens ─ embedding ─ x_0 ─ block_0 ─ … ─ block_{L−1} ─ x_L ─ normF ─ ·wteᵀ (or lm_head) ─ weighted cross-entropy
import { AttentionBackwardKernel, AttentionForwardKernel } from '../gpu/kernels/attention.ts';
import { NormKernel } from '../gpu/kernels/norm.ts';
import { XentKernel } from '../gpu/kernels/xent.ts';
import { submit } from '../gpu/kernels/common.ts';
import { AdamWKernel } from '../gpu/kernels/adamw.ts';
import { GspoKernel, type GspoStats } from '../gpu/kernels/gspo.ts';
import { LogprobKernel } from '../gpu/kernels/logprob.ts';
import { SeqGatherKernel } from '../gpu/kernels/seqgather.ts';
import type { SeqSpan } from '../reference/seqgather.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { ADAMW_DEFAULTS, type AdamWConfig } from '../core/model/optim.ts';
import type { ModelConfig } from '../core/model/config.ts';
import { paramLayout, type ParamLayout } from '../core/model/params.ts';
import { flatPlan, ParamBuffers, placeOf, planFor, shardSegments, type ShardPlan } from './shards.ts';
import type { WeightStorage } from './halfWeights.ts';
import { GpuEmbedding, GpuHead } from './ends.ts';
import type { Checkpoint } from '../core/model/checkpoint.ts';
import { GpuBlocks, headNormSizes, type BlockAttention, type BlockBuffers } from './block.ts';
import { blockPlan } from '../core/model/plan.ts';
import type { LoraLayout } from './lora.ts';
import { GpuLora } from './loraGpu.ts';

/** What a training or evaluation batch gives the model (src/train/data.ts makes these). */
export interface ModelBatch {
  B: number;
  T: number;
  inputs: ArrayLike<number>;
  targets: ArrayLike<number>;
  /** Per-token loss weights (all 1 when absent). */
  weights?: ArrayLike<number>;
  /** trainStep's gradient is that of Σ w·ℓ / lossNorm. Default: the batch's target tokens (weight > 0). */
  lossNorm?: number;
}

export interface GpuGptOptions {
  /** Sequences per step. */
  batch: number;
  /** Tokens per sequence (≤ contextLength). */
  T: number;
  adamw?: Partial<AdamWConfig>;
  /**
   * Build the GSPO path too: responses of at most `Lmax` tokens, clip range (docs/method.md §6), and the
   * sampling temperature τ of the rollouts (default 1): every log-prob of this path, old and new,
   * is that of the tempered distribution softmax(logits/τ) the responses were drawn from.
   */
  rl?: { Lmax: number; epsLow?: number; epsHigh?: number; temperature?: number };
  /**
   * LoRA (lora.ts): the weights in `params` are frozen and only this adapter trains; `grads`,
   * `m` and `v` then have the adapter's layout, and there is no gradient or Adam state of the base.
   */
  lora?: LoraLayout;
  /**
   * How the weights are held (default f32). 'f16' (halfWeights.ts: the matrices packed two f16 per
   * u32 word, f32 accumulation) is for frozen weights, so it needs `lora`: the adapter trains on an
   * f16 base. getParams then gives the matrices as the f16 values they hold.
   */
  weights?: WeightStorage;
}

/** The GSPO path's kernels and buffers (built only when options.rl is given). */
interface RlPath {
  logprob: LogprobKernel;
  gather: SeqGatherKernel;
  gspo: GspoKernel;
  logp: GPUBuffer;
  lse: GPUBuffer;
  packed: GPUBuffer;
  old: GPUBuffer;
  lengths: GPUBuffer;
  advantages: GPUBuffer;
  gradPacked: GPUBuffer;
  seqStats: GPUBuffer;
  stats: GPUBuffer;
  gRows: GPUBuffer;
  dlogits: GPUBuffer;
}

/** A GSPO batch: B sequences (prompt + response) laid out as a model batch, and where each response is. */
export interface RlBatch {
  B: number;
  T: number;
  /** [B·T] tokens; targets[i] = inputs[i + 1] within a sequence. */
  inputs: ArrayLike<number>;
  targets: ArrayLike<number>;
  /** Per sequence: the first position whose target is a response token, and the response length. */
  spans: SeqSpan[];
}

export interface StepResult {
  /** Weighted-mean loss of the batch (before the update), when read. */
  loss?: number;
  /** ‖g‖ before clipping, when read. */
  gradNorm?: number;
}

export class GpuGpt {
  readonly layout: ParamLayout;
  readonly N: number;
  /** Where the parameters live on the GPU: buffers no larger than one storage binding (shards.ts). */
  readonly shards: ShardPlan;
  /** The params.ts layout in the shards' buffers. */
  readonly params: ParamBuffers;
  /** What AdamW updates: `params` itself, or with LoRA the adapter's flat buffer (one shard). */
  readonly trainParams: ParamBuffers;
  /** Elements of trainParams, grads, m and v. */
  readonly trainSize: number;
  /** The gradient and Adam's moments, in trainParams' shards. */
  readonly grads: ParamBuffers;
  readonly m: ParamBuffers;
  readonly v: ParamBuffers;
  private readonly owned: GPUBuffer[] = [];
  private readonly disposables: { dispose(): void }[] = [];
  private blocks!: GpuBlocks;
  private acts: BlockBuffers[] = [];
  private xFinal!: GPUBuffer;
  private lnf!: GPUBuffer;
  private lnfStats!: GPUBuffer;
  private logits!: GPUBuffer;
  private tokens!: GPUBuffer;
  private csr!: GPUBuffer;
  private targets!: GPUBuffer;
  private weights!: GPUBuffer;
  private nll!: GPUBuffer;
  private loss!: GPUBuffer;
  private dX!: GPUBuffer;
  private dT!: GPUBuffer;
  private dQkv!: GPUBuffer;
  private dFcBuf!: GPUBuffer;
  private dActBuf?: GPUBuffer;
  private embed!: GpuEmbedding;
  private attention!: BlockAttention;
  private normF!: NormKernel;
  private head!: GpuHead;
  private xent!: XentKernel;
  private xentEval!: XentKernel;
  private adamw!: AdamWKernel;
  private rl: RlPath | null = null;
  private lora: GpuLora | null = null;
  /** Optimiser steps taken (the next step's 0-based index). */
  step = 0;
  /** Dispatches in one training step (for the benchmark's report). */
  dispatchesPerStep = 0;

  private constructor(
    readonly rt: GpuRuntime,
    readonly config: ModelConfig,
    readonly options: GpuGptOptions,
  ) {
    this.layout = paramLayout(config);
    if (options.T > config.contextLength) throw new RangeError(`GpuGpt: T = ${options.T} exceeds the model's context of ${config.contextLength}`);
    if (!Number.isInteger(options.batch) || options.batch < 1) throw new RangeError(`GpuGpt: batch must be a positive integer, got ${options.batch}`);
    this.N = options.batch * options.T;
    if (options.weights === 'f16' && !options.lora)
      throw new RangeError('GpuGpt: f16 weights are frozen, for a LoRA base (pass lora) or inference (GpuGenerator); full training keeps f32 weights');
    this.shards = planFor(rt, this.layout, options.weights);
    const sets = (plan: ShardPlan, label: string) => {
      const p = ParamBuffers.create(rt, plan, label);
      this.paramSets.push(p);
      return p;
    };
    this.params = sets(this.shards, 'gpt.params');
    this.trainSize = options.lora ? options.lora.totalSize : this.layout.totalSize;
    const trainPlan = options.lora ? flatPlan(this.trainSize) : this.shards;
    this.trainParams = options.lora ? sets(trainPlan, 'gpt.lora') : this.params;
    this.grads = sets(trainPlan, 'gpt.grads');
    this.m = sets(trainPlan, 'gpt.adam_m');
    this.v = sets(trainPlan, 'gpt.adam_v');
  }

  private readonly paramSets: ParamBuffers[] = [];

  private buf(label: string, bytes: number): GPUBuffer {
    const b = this.rt.storage(label, bytes);
    this.owned.push(b);
    return b;
  }

  private keep<T extends { dispose(): void }>(k: T): T {
    this.disposables.push(k);
    return k;
  }

  static async create(rt: GpuRuntime, config: ModelConfig, options: GpuGptOptions): Promise<GpuGpt> {
    const g = new GpuGpt(rt, config, options);
    await g.build();
    return g;
  }

  private async build() {
    this.allocate();
    const { rt, config: c, layout: L, N, shards } = this;
    const { batch: B, T } = this.options;
    const { heads: H, kvHeads: kvH, headSize: D } = blockPlan(c);
    const frozen = !!this.options.lora;
    const lora = this.options.lora;
    const trainShards = lora
      ? [{ size: lora.totalSize, segments: lora.tensors.map((t) => ({ start: t.offset, end: t.offset + t.size, decay: t.decay })) }]
      : shardSegments(shards, L);
    const normShape = {
      rows: N,
      C: c.dModel,
      kind: blockPlan(c).norm,
      eps: c.normEps,
      gammaOffset: placeOf(shards, L.lnFWeight).offset,
      betaOffset: L.lnFBias ? placeOf(shards, L.lnFBias).offset : 0,
    };
    const [embed, attnF, attnB, normF, head, xent, xentEval, adamw, blocks] = await Promise.all([
      GpuEmbedding.create(rt, c, L, shards, { rows: N, T }),
      AttentionForwardKernel.create(rt, { B, T, H, D, kvH }),
      AttentionBackwardKernel.create(rt, { B, T, H, D, kvH }),
      NormKernel.create(rt, normShape, { accumulateDx: false }),
      GpuHead.create(rt, c, L, shards, { rows: N, backward: true, frozen }),
      XentKernel.create(rt, { N, V: c.vocabSize, grad: true }),
      XentKernel.create(rt, { N, V: c.vocabSize, grad: false }),
      AdamWKernel.create(rt, {
        size: trainShards.reduce((n, t) => n + t.size, 0),
        segments: [],
        shards: trainShards,
        zeroGrads: true,
        ...ADAMW_DEFAULTS,
        ...this.options.adamw,
      }),
      GpuBlocks.create(rt, c, L, { rows: N, T, maxPositions: Math.max(1024, c.contextLength), backward: true, frozen }, shards),
    ]);
    for (const k of [embed, attnF, attnB, normF, head, xent, xentEval, adamw, blocks]) this.keep(k);
    Object.assign(this, { embed, normF, head, xent, xentEval, adamw, blocks });
    if (lora) {
      this.lora = this.keep(await GpuLora.create(rt, lora, { rows: N, backward: true }));
      blocks.lora = { lora: this.lora, params: this.trainParams.only, grads: this.grads.only };
    }
    // Training attention: causal over the whole batch, keeping the lse rows for the backward.
    this.attention = {
      position: 0,
      forward: (pass, _l, b) => attnF.encode(pass, b.qkv, b.att, b.lse!),
      backward: (pass, b, dAtt, dQkv) => attnB.encode(pass, b.qkv, b.att, b.lse!, dAtt, dQkv),
    };
    this.csr = this.buf('gpt.csr', embed.csrBytes);
    if (this.options.rl) await this.buildRl(this.options.rl);
    this.dispatchesPerStep = this.countDispatches();
  }

  /** The activation and gradient buffers of one step. */
  private allocate() {
    const { config: c, N } = this;
    const { batch: B, T } = this.options;
    const C = c.dModel;
    const plan = blockPlan(c);
    const F = plan.F;
    const V = c.vocabSize;
    const f32 = (label: string, n: number) => this.buf(label, n * 4);
    const hn = headNormSizes(plan, N);
    for (let l = 0; l < c.layers; l++) {
      this.acts.push({
        x: f32(`gpt.x${l}`, N * C),
        ln1: f32(`gpt.ln1.${l}`, N * C),
        ln1Stats: f32(`gpt.ln1s.${l}`, N * 2),
        ...(plan.qkNorm && { qkRaw: f32(`gpt.qkraw.${l}`, hn.raw), qkStats: f32(`gpt.qks.${l}`, hn.stats) }),
        qkv: f32(`gpt.qkv.${l}`, N * plan.qkvDim),
        att: f32(`gpt.att.${l}`, N * plan.qDim),
        lse: f32(`gpt.lse.${l}`, B * c.heads * T),
        xMid: f32(`gpt.xmid.${l}`, N * C),
        ln2: f32(`gpt.ln2.${l}`, N * C),
        ln2Stats: f32(`gpt.ln2s.${l}`, N * 2),
        fcH: f32(`gpt.fch.${l}`, N * plan.upDim),
        fcA: f32(`gpt.fca.${l}`, N * F),
      });
    }
    this.xFinal = f32(`gpt.x${c.layers}`, N * C);
    this.lnf = f32('gpt.lnf', N * C);
    this.lnfStats = f32('gpt.lnfs', N * 2);
    this.logits = f32('gpt.logits', N * V);
    this.tokens = f32('gpt.tokens', N);
    this.targets = f32('gpt.targets', N);
    this.weights = f32('gpt.weights', N);
    this.nll = f32('gpt.nll', N);
    this.loss = f32('gpt.loss', 2);
    this.dX = f32('gpt.dx', N * C);
    this.dT = f32('gpt.dt', N * Math.max(C, plan.qDim));
    this.dQkv = f32('gpt.dqkv', N * plan.qkvDim);
    this.dFcBuf = f32('gpt.dfc', N * plan.upDim);
    if (plan.mlp === 'swiglu') this.dActBuf = f32('gpt.dact', N * F);
  }

  private async buildRl(o: NonNullable<GpuGptOptions['rl']>) {
    const { rt, N } = this;
    const B = this.options.batch;
    const L = o.Lmax;
    const V = this.config.vocabSize;
    const [logprob, gather, gspo] = await Promise.all([
      LogprobKernel.create(rt, { N, V, ...(o.temperature !== undefined && { temperature: o.temperature }) }),
      SeqGatherKernel.create(rt, { S: B, T: this.options.T, L }),
      GspoKernel.create(rt, {
        numSeqs: B,
        Lmax: L,
        ...(o.epsLow !== undefined && { epsLow: o.epsLow }),
        ...(o.epsHigh !== undefined && { epsHigh: o.epsHigh }),
      }),
    ]);
    for (const k of [logprob, gather, gspo]) this.keep(k);
    const f32 = (label: string, n: number) => this.buf(label, n * 4);
    this.rl = {
      logprob,
      gather,
      gspo,
      logp: f32('gpt.rl.logp', N),
      lse: f32('gpt.rl.lse', N),
      packed: f32('gpt.rl.logp_new', B * L),
      old: f32('gpt.rl.logp_old', B * L),
      lengths: f32('gpt.rl.lengths', B),
      advantages: f32('gpt.rl.advantages', B),
      gradPacked: f32('gpt.rl.grad', B * L),
      seqStats: f32('gpt.rl.seqstats', B * 4),
      stats: f32('gpt.rl.stats', 4),
      gRows: f32('gpt.rl.grows', N),
      dlogits: f32('gpt.rl.dlogits', N * V),
    };
  }

  // ---- parameters ------------------------------------------------------------------------

  /** Uploads weights (flat layout); optionally Adam state and the step counter. */
  setParams(params: Float32Array, optimizer?: { m: Float32Array; v: Float32Array; step: number }): void {
    this.checkFlat(params, 'params');
    this.params.write(params);
    this.grads.clear();
    if (optimizer) {
      this.checkFlat(optimizer.m, 'optimizer m', this.trainSize);
      this.checkFlat(optimizer.v, 'optimizer v', this.trainSize);
      this.m.write(optimizer.m);
      this.v.write(optimizer.v);
      this.step = optimizer.step;
    } else {
      this.m.clear();
      this.v.clear();
      this.step = 0;
    }
  }

  private checkFlat(a: Float32Array, what: string, size = this.layout.totalSize) {
    if (a.length !== size) throw new RangeError(`GpuGpt: ${what} has ${a.length} elements, the layout needs ${size}`);
  }

  /** Uploads the adapter's weights (LoRA models only; call after setParams, which clears the Adam state). */
  setLora(lora: Float32Array): void {
    if (!this.options.lora) throw new Error('GpuGpt: built without LoRA');
    this.checkFlat(lora, 'LoRA adapter', this.trainSize);
    this.trainParams.write(lora);
  }

  /** The adapter's weights (LoRA models only). */
  async getLora(): Promise<Float32Array> {
    if (!this.options.lora) throw new Error('GpuGpt: built without LoRA');
    return this.trainParams.read();
  }

  async getParams(): Promise<Float32Array> {
    return this.params.read();
  }

  async getOptimizerState(): Promise<{ m: Float32Array; v: Float32Array; step: number }> {
    return { m: await this.m.read(), v: await this.v.read(), step: this.step };
  }

  /** The model's state as a checkpoint (weights, config, optimiser state, step). */
  async toCheckpoint(extra: Pick<Checkpoint, 'tokenizer' | 'extraMetadata'> = {}): Promise<Checkpoint> {
    return { config: this.config, params: await this.getParams(), step: this.step, optimizer: await this.getOptimizerState(), ...extra };
  }

  /** Restores a checkpoint (from loadCheckpoint, which has checked it against this config). */
  loadCheckpoint(ck: Checkpoint): void {
    const mismatch = (
      [
        'vocabSize',
        'contextLength',
        'layers',
        'heads',
        'dModel',
        'mlpRatio',
        'norm',
        'positions',
        'tiedEmbeddings',
        'kvHeads',
        'headDim',
        'mlp',
        'mlpWidth',
        'qkvBias',
        'projBias',
        'mlpBias',
        'qkNorm',
      ] as const
    ).find((k) => ck.config[k] !== this.config[k]);
    if (mismatch) throw new RangeError(`checkpoint: ${mismatch} is ${ck.config[mismatch]} in the checkpoint but ${this.config[mismatch]} in this model`);
    this.setParams(ck.params, ck.optimizer ? { ...ck.optimizer, step: ck.optimizer.step } : undefined);
    if (!ck.optimizer) this.step = ck.step;
  }

  // ---- batches ---------------------------------------------------------------------------

  private writeBatch(batch: ModelBatch): { weightSum: number; targets: number } {
    const { batch: B, T } = this.options;
    if (batch.B !== B || batch.T !== T) throw new RangeError(`GpuGpt: batch is ${batch.B}×${batch.T}, the model was built for ${B}×${T}`);
    const V = this.config.vocabSize;
    for (let i = 0; i < this.N; i++) {
      if (!(batch.inputs[i] >= 0 && batch.inputs[i] < V))
        throw new RangeError(`GpuGpt: input token ${batch.inputs[i]} at ${i} is outside the vocabulary (0..${V - 1})`);
    }
    const weights = Float32Array.from(batch.weights ?? new Float32Array(this.N).fill(1));
    let W = 0;
    let targets = 0;
    for (let i = 0; i < this.N; i++) {
      // Padding targets (≥ V) carry no loss whatever their weight says.
      if (batch.targets[i] >= V) weights[i] = 0;
      W += weights[i];
      if (weights[i] > 0) targets++;
    }
    this.embed.writeBatch(this.tokens, batch.inputs, this.csr);
    this.rt.write(this.targets, Uint32Array.from(batch.targets));
    this.rt.write(this.weights, weights);
    return { weightSum: W, targets };
  }

  // ---- encoding --------------------------------------------------------------------------

  private encodeForward(pass: GPUComputePassEncoder): void {
    const P = this.params;
    this.embed.encodeForward(pass, this.tokens, P, this.acts[0]?.x ?? this.xFinal);
    this.acts.forEach((a, l) => this.blocks.encodeForward(pass, P, l, a, this.acts[l + 1]?.x ?? this.xFinal, this.attention));
    this.normF.encodeForward(pass, this.xFinal, P.buffer(this.layout.lnFWeight), this.lnf, this.lnfStats);
    this.head.encodeForward(pass, this.lnf, P, this.logits);
  }

  /** From dlogits (in the logits buffer) to every parameter gradient (accumulated into grads). */
  private encodeBackward(pass: GPUComputePassEncoder, dlogits: GPUBuffer = this.logits): void {
    const P = this.params;
    // Frozen weights (LoRA): no gradient of the head, norms or embeddings; the blocks carry it to the adapter.
    const G = this.lora ? null : this.grads;
    this.head.encodeBackward(pass, dlogits, this.lnf, P, G, this.dT);
    const lnF = this.layout.lnFWeight;
    this.normF.encodeBackward(pass, this.dT, this.xFinal, P.buffer(lnF), this.lnfStats, this.dX, G ? G.buffer(lnF) : null);
    const d = { dX: this.dX, dT: this.dT, dQkv: this.dQkv, dFc: this.dFcBuf, dAct: this.dActBuf };
    for (let l = this.acts.length - 1; l >= 0; l--) this.blocks.encodeBackward(pass, P, G, l, this.acts[l], d, this.attention);
    if (G) this.embed.encodeBackward(pass, this.csr, this.dX, G);
  }

  /** A whole training step's dispatches (forward, loss and dlogits, backward, AdamW) into `pass`. */
  encodeTrainStep(pass: GPUComputePassEncoder): void {
    this.encodeForward(pass);
    this.xent.encode(pass, this.logits, this.targets, this.weights, this.nll, this.loss);
    this.encodeBackward(pass);
    this.adamw.encode(pass, this.trainParams.buffers, this.grads.buffers, this.m.buffers, this.v.buffers);
  }

  private countDispatches(): number {
    let n = 0;
    const counter = new Proxy({} as GPUComputePassEncoder, {
      get: (_t, prop) => (prop === 'dispatchWorkgroups' ? () => void n++ : () => undefined),
    });
    this.encodeTrainStep(counter);
    return n;
  }

  /**
   * One optimiser step on `batch` with learning rate `lr`, in one submission: forward, loss
   * and dlogits, backward, gradient-norm clipping and AdamW. Reading the loss or the gradient
   * norm costs a small read-back after the step; skip it on steps you don't log.
   */
  async trainStep(batch: ModelBatch, lr: number, read: { loss?: boolean; gradNorm?: boolean } = { loss: true }): Promise<StepResult> {
    // The gradient is that of Σ w·ℓ / norm with norm independent of the weights (never Σ w), so a
    // token's gradient follows its own mask weight whatever else the batch holds; the loss read
    // back is rescaled to the weighted mean Σ w·ℓ / Σ w, the measure evalLoss reports.
    const { weightSum, targets } = this.writeBatch(batch);
    const norm = batch.lossNorm ?? targets;
    this.xent.setWeightSum(norm);
    this.adamw.setStep(this.step, lr);
    submit(this.rt, 'gpt.train_step', (pass) => this.encodeTrainStep(pass));
    this.step++;
    const out: StepResult = {};
    if (read.loss) out.loss = weightSum > 0 ? ((await this.rt.readF32(this.loss, 1))[0] * norm) / weightSum : 0;
    if (read.gradNorm) out.gradNorm = (await this.adamw.readGradNorm()).norm;
    if (!read.loss && !read.gradNorm) await this.rt.sync();
    return out;
  }

  /**
   * The weighted-mean loss of `batch` and the gradient trainStep would apply (that of
   * Σ w·ℓ / lossNorm), without an update; the gradient buffer is cleared after.
   */
  async lossAndGradient(batch: ModelBatch): Promise<{ loss: number; grad: Float32Array }> {
    const { weightSum, targets } = this.writeBatch(batch);
    const norm = batch.lossNorm ?? targets;
    this.xent.setWeightSum(norm);
    submit(this.rt, 'gpt.gradient', (pass) => {
      this.encodeForward(pass);
      this.xent.encode(pass, this.logits, this.targets, this.weights, this.nll, this.loss);
      this.encodeBackward(pass);
    });
    const loss = weightSum > 0 ? ((await this.rt.readF32(this.loss, 1))[0] * norm) / weightSum : 0;
    const grad = await this.grads.read();
    this.grads.clear();
    return { loss, grad };
  }

  /** Weighted-mean loss of `batch` under the current weights (no update). */
  async evalLoss(batch: ModelBatch): Promise<number> {
    this.xentEval.setWeightSum(this.writeBatch(batch).weightSum);
    submit(this.rt, 'gpt.eval', (pass) => {
      this.encodeForward(pass);
      this.xentEval.encode(pass, this.logits, this.targets, this.weights, this.nll, this.loss);
    });
    return (await this.rt.readF32(this.loss, 1))[0];
  }

  /**
   * evalLoss and each position's unweighted loss, nll[b·T + t] (0 at padding targets): what the
   * loss of a part of the batch (its rows of one domain) is computed from.
   */
  async evalTokenLosses(batch: ModelBatch): Promise<{ loss: number; nll: Float32Array }> {
    const loss = await this.evalLoss(batch);
    return { loss, nll: await this.rt.readF32(this.nll, batch.B * batch.T) };
  }

  /** Logits [B·T, V] of `batch.inputs` under the current weights. */
  async logitsOf(batch: Pick<ModelBatch, 'B' | 'T' | 'inputs'>): Promise<Float32Array> {
    const N = this.N;
    this.writeBatch({ ...batch, targets: new Uint32Array(N), weights: new Float32Array(N) });
    submit(this.rt, 'gpt.logits', (pass) => {
      this.encodeForward(pass);
    });
    return this.rt.readF32(this.logits, N * this.config.vocabSize);
  }

  // ---- GSPO ------------------------------------------------------------------------------

  private rlPath(): RlPath {
    if (!this.rl) throw new Error('GpuGpt: built without the GSPO path (pass options.rl)');
    return this.rl;
  }

  private writeRlBatch(batch: RlBatch): RlPath {
    const rl = this.rlPath();
    this.writeBatch({ B: batch.B, T: batch.T, inputs: batch.inputs, targets: batch.targets });
    rl.gather.setSpans(batch.spans);
    this.rt.write(rl.lengths, Uint32Array.from(batch.spans.map((s) => s.len)));
    return rl;
  }

  /** Per-token log-probabilities of each response under the current weights, packed [B, Lmax]. */
  async responseLogprobs(batch: RlBatch): Promise<Float32Array> {
    const rl = this.writeRlBatch(batch);
    submit(this.rt, 'gpt.logprobs', (pass) => {
      this.encodeForward(pass);
      rl.logprob.encode(pass, this.logits, this.targets, rl.logp, rl.lse);
      rl.gather.encodeGather(pass, rl.logp, rl.packed);
    });
    return this.rt.readF32(rl.packed, batch.B * this.options.rl!.Lmax);
  }

  /**
   * One GSPO optimiser step (docs/method.md §6) in one submission: forward, per-token log-probs, the
   * sequence ratios against `logpOld` (packed [B, Lmax], from responseLogprobs at rollout
   * time), the clipped objective and its gradient into the logits, backward, AdamW.
   * logpOld 'current': π_old is the current weights (the first update after a rollout), so the
   * step's own forward gives the old log-probs too and no separate responseLogprobs pass is run.
   */
  async gspoStep(
    batch: RlBatch,
    logpOld: Float32Array | 'current',
    advantages: ArrayLike<number>,
    lr: number,
    read: { gradNorm?: boolean } = {},
  ): Promise<GspoStats & { gradNorm?: number }> {
    const rl = this.writeGspo(batch, logpOld, advantages);
    this.adamw.setStep(this.step, lr);
    submit(this.rt, 'gpt.gspo_step', (pass) => {
      this.encodeGspo(pass, rl);
      this.adamw.encode(pass, this.trainParams.buffers, this.grads.buffers, this.m.buffers, this.v.buffers);
    });
    this.step++;
    const stats = await GspoKernel.readStats(this.rt, rl.stats);
    return read.gradNorm ? { ...stats, gradNorm: (await this.adamw.readGradNorm()).norm } : stats;
  }

  /** dL/dθ of the GSPO loss L = −J that gspoStep would apply (no update; the gradient buffer is cleared after). */
  async gspoGradient(batch: RlBatch, logpOld: Float32Array | 'current', advantages: ArrayLike<number>): Promise<{ grad: Float32Array } & GspoStats> {
    const rl = this.writeGspo(batch, logpOld, advantages);
    submit(this.rt, 'gpt.gspo_grad', (pass) => this.encodeGspo(pass, rl));
    const grad = await this.grads.read();
    this.grads.clear();
    return { grad, ...(await GspoKernel.readStats(this.rt, rl.stats)) };
  }

  private writeGspo(batch: RlBatch, logpOld: Float32Array | 'current', advantages: ArrayLike<number>): RlPath & { current: boolean } {
    const rl = this.writeRlBatch(batch);
    if (advantages.length !== batch.B) throw new RangeError(`gspoStep: ${advantages.length} advantages for ${batch.B} sequences`);
    this.rt.write(rl.advantages, Float32Array.from(advantages));
    if (logpOld === 'current') return { ...rl, current: true };
    if (logpOld.length !== batch.B * this.options.rl!.Lmax)
      throw new RangeError(`gspoStep: logpOld has ${logpOld.length} values, expected ${batch.B}×${this.options.rl!.Lmax}`);
    this.rt.write(rl.old, logpOld);
    return { ...rl, current: false };
  }

  /** Forward, per-token log-probs, the GSPO objective and its gradient, backward into this.grads. */
  private encodeGspo(pass: GPUComputePassEncoder, rl: RlPath & { current: boolean }): void {
    this.encodeForward(pass);
    rl.logprob.encode(pass, this.logits, this.targets, rl.logp, rl.lse);
    if (rl.current) rl.gather.encodeGather(pass, rl.logp, rl.old);
    rl.gather.encodeGather(pass, rl.logp, rl.packed);
    rl.gspo.encode(pass, rl.packed, rl.old, rl.lengths, rl.advantages, rl.gradPacked, rl.seqStats, rl.stats);
    rl.gather.encodeScatter(pass, rl.gradPacked, rl.gRows);
    rl.logprob.encodeBackward(pass, this.logits, this.targets, rl.lse, rl.gRows, rl.dlogits);
    this.encodeBackward(pass, rl.dlogits);
  }

  /** The AdamW kernel over params/grads/m/v, for a training path encoded outside this class (sharedPrefix.ts). */
  get optimizer(): AdamWKernel {
    return this.adamw;
  }

  /** Bytes of GPU memory this model holds (parameters, optimiser state, activations). */
  bytes(): number {
    return this.owned.reduce((n, b) => n + b.size, 0) + this.paramSets.reduce((n, p) => n + p.bytes, 0);
  }

  dispose(): void {
    for (const k of this.disposables) k.dispose();
    this.rt.release(...this.owned);
    for (const p of this.paramSets) p.release();
    this.paramSets.length = 0;
    this.disposables.length = 0;
    this.owned.length = 0;
  }
}
