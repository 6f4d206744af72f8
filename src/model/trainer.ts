// Training on the GPU: a GpuModel (gpt.ts) and what training adds to it — the gradient, AdamW's
// moments and step, the backward's scratch, the GSPO path — with forward, backward and AdamW as
// one command submission per step, every operation one of our WGSL kernels (src/gpu/kernels).
// Gradients and Adam state are flat buffers in the layout of params.ts (shards.ts); with LoRA
// they are the adapter's and the model's weights stay frozen. The parity test holds this to the
// loss curve of src/reference/gpt.ts, its plain-TypeScript twin.
//
//   forward (GpuModel) ─ weighted cross-entropy, dlogits ─ backward ─ gradient-norm clipping and AdamW
import { AttentionBackwardKernel } from '../gpu/kernels/attention.ts';
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
import { flatPlan, ParamBuffers, shardSegments } from './shards.ts';
import type { Checkpoint } from '../core/model/checkpoint.ts';
import { allocBlockGradBuffers, type AllocF32, type BlockAttention, type BlockGradBuffers } from './block.ts';
import { blockPlan } from '../core/model/plan.ts';
import { checkFlat, GpuModel, type GpuModelOptions, type ModelBatch } from './gpt.ts';

export interface GpuTrainerOptions extends GpuModelOptions {
  adamw?: Partial<AdamWConfig>;
  /**
   * Build the GSPO path too: responses of at most `Lmax` tokens, clip range (docs/method.md §6), and the
   * sampling temperature τ of the rollouts (default 1): every log-prob of this path, old and new,
   * is that of the tempered distribution softmax(logits/τ) the responses were drawn from.
   */
  rl?: { Lmax: number; epsLow?: number; epsHigh?: number; temperature?: number };
}

/** The GSPO path's kernels and buffers (built only when options.rl is given). */
interface RlPath {
  Lmax: number;
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

/** What the trainer adds to the model's kernels: the attention with its backward, the loss with its gradient, AdamW. */
interface TrainKernels {
  attention: BlockAttention;
  xent: XentKernel;
  adamw: AdamWKernel;
}

export class GpuTrainer {
  /** Optimizer steps taken (the next step's 0-based index). */
  step = 0;
  /** Dispatches in one training step (for the benchmark's report). */
  readonly dispatchesPerStep: number;

  private constructor(
    /** The model trained: its weights, forward kernels and activations. */
    readonly model: GpuModel,
    readonly options: GpuTrainerOptions,
    /** What AdamW updates: the model's params, or with LoRA its adapter (one shard). */
    readonly trainParams: ParamBuffers,
    /** Elements of trainParams, grads, m and v. */
    readonly trainSize: number,
    /** The gradient and Adam's moments, in trainParams' shards. */
    readonly grads: ParamBuffers,
    readonly m: ParamBuffers,
    readonly v: ParamBuffers,
    private readonly k: TrainKernels,
    /** The embedding backward's token → rows index of the batch. */
    private readonly csr: GPUBuffer,
    /** The backward's gradient scratch. */
    private readonly d: BlockGradBuffers,
    private readonly rl: RlPath | null,
    /** The trainer's own buffers and kernels, released by dispose (with the model). */
    private readonly owned: GPUBuffer[],
    private readonly disposables: { dispose(): void }[],
  ) {
    this.dispatchesPerStep = this.countDispatches();
  }

  /** Builds the model with its backward kernels, then the trainer's kernels, then its buffers. */
  static async create(rt: GpuRuntime, config: ModelConfig, options: GpuTrainerOptions): Promise<GpuTrainer> {
    if (options.weights === 'f16' && !options.lora)
      throw new RangeError(
        'GpuTrainer: f16 weights are frozen, for a LoRA base (pass lora) or inference (GpuModel, GpuGenerator); full training keeps f32 weights',
      );
    const model = await GpuModel.create(rt, config, options, { backward: true });
    const { N, layout: L, shards } = model;
    const { batch: B, T, lora } = options;
    const plan = blockPlan(config);
    const { heads: H, kvHeads: kvH, headSize: D } = plan;
    const trainShards = lora
      ? [{ size: lora.totalSize, segments: lora.tensors.map((t) => ({ start: t.offset, end: t.offset + t.size, decay: t.decay })) }]
      : shardSegments(shards, L);
    const [attnB, xent, adamw, rlK] = await Promise.all([
      AttentionBackwardKernel.create(rt, { B, T, H, D, kvH }),
      XentKernel.create(rt, { N, V: config.vocabSize, grad: true }),
      AdamWKernel.create(rt, {
        size: trainShards.reduce((n, t) => n + t.size, 0),
        segments: [],
        shards: trainShards,
        zeroGrads: true,
        ...ADAMW_DEFAULTS,
        ...options.adamw,
      }),
      options.rl ? buildRl(rt, options.rl, B, T, N, config.vocabSize) : null,
    ]);
    const trainSize = lora ? lora.totalSize : L.totalSize;
    const trainPlan = lora ? flatPlan(trainSize) : shards;
    const trainParams = model.adapter ?? model.params;
    const grads = ParamBuffers.create(rt, trainPlan, 'gpt.grads');
    const m = ParamBuffers.create(rt, trainPlan, 'gpt.adam_m');
    const v = ParamBuffers.create(rt, trainPlan, 'gpt.adam_v');
    const owned: GPUBuffer[] = [];
    const buf = (label: string, bytes: number) => {
      const b = rt.storage(`gpt.${label}`, bytes);
      owned.push(b);
      return b;
    };
    const f32: AllocF32 = (label, n) => buf(label, n * 4);
    const csr = buf('csr', model.kernels.embed.csrBytes);
    const d = allocBlockGradBuffers(f32, plan, N);
    const rl = rlK && rlBuffers(f32, rlK, B, N, config.vocabSize);
    // The adapter's gradient: the blocks carry the backward through the frozen weights to it.
    const blocks = model.kernels.blocks;
    if (blocks.lora) blocks.lora = { ...blocks.lora, grads: grads.only };
    // Training attention: causal over the whole batch, the backward from the forward's lse rows.
    const attention: BlockAttention = {
      ...model.kernels.attention,
      backward: (pass, b, dAtt, dQkv) => attnB.encode(pass, b.qkv, b.att, b.lse!, dAtt, dQkv),
    };
    const made = [attnB, xent, adamw, ...(rlK ? [rlK.logprob, rlK.gather, rlK.gspo] : [])];
    return new GpuTrainer(model, options, trainParams, trainSize, grads, m, v, { attention, xent, adamw }, csr, d, rl, owned, made);
  }

  get rt(): GpuRuntime {
    return this.model.rt;
  }

  get config(): ModelConfig {
    return this.model.config;
  }

  // ---- parameters and optimizer state ----------------------------------------------------

  /** Uploads weights (flat layout); optionally Adam state and the step counter. */
  setParams(params: Float32Array, optimizer?: { m: Float32Array; v: Float32Array; step: number }): void {
    this.model.setParams(params);
    this.setOptimizer(optimizer);
  }

  /** Clears the gradient; sets Adam's moments and the step counter (without `optimizer`: zeros and step 0). */
  setOptimizer(optimizer?: { m: Float32Array; v: Float32Array; step: number }): void {
    this.grads.clear();
    if (optimizer) {
      checkFlat(optimizer.m, 'GpuTrainer: optimizer m', this.trainSize);
      checkFlat(optimizer.v, 'GpuTrainer: optimizer v', this.trainSize);
      this.m.write(optimizer.m);
      this.v.write(optimizer.v);
      this.step = optimizer.step;
    } else {
      this.m.clear();
      this.v.clear();
      this.step = 0;
    }
  }

  async getOptimizerState(): Promise<{ m: Float32Array; v: Float32Array; step: number }> {
    return { m: await this.m.read(), v: await this.v.read(), step: this.step };
  }

  /** The training state as a checkpoint (weights, config, optimizer state, step). */
  async toCheckpoint(extra: Pick<Checkpoint, 'tokenizer' | 'extraMetadata'> = {}): Promise<Checkpoint> {
    return { config: this.config, params: await this.model.getParams(), step: this.step, optimizer: await this.getOptimizerState(), ...extra };
  }

  /** Restores a checkpoint (from loadCheckpoint, which has checked it against this config): weights, Adam state, step. */
  loadCheckpoint(ck: Checkpoint): void {
    this.model.loadCheckpoint(ck);
    this.setOptimizer(ck.optimizer ? { ...ck.optimizer, step: ck.optimizer.step } : undefined);
    if (!ck.optimizer) this.step = ck.step;
  }

  // ---- encoding --------------------------------------------------------------------------

  /** From dlogits (in the logits buffer) to every parameter gradient (accumulated into grads). */
  private encodeBackward(pass: GPUComputePassEncoder, dlogits: GPUBuffer = this.model.acts.logits): void {
    const { params: P, layout, kernels, acts: a } = this.model;
    const d = this.d;
    // Frozen weights (LoRA): no gradient of the head, norms or embeddings; the blocks carry it to the adapter.
    const G = kernels.lora ? null : this.grads;
    kernels.head.encodeBackward(pass, dlogits, a.lnf, P, G, d.dT);
    const lnF = layout.lnFWeight;
    kernels.normF.encodeBackward(pass, d.dT, a.xFinal, P.buffer(lnF), a.lnfStats, d.dX, G ? G.buffer(lnF) : null);
    for (let l = a.blocks.length - 1; l >= 0; l--) kernels.blocks.encodeBackward(pass, P, G, l, a.blocks[l], d, this.k.attention);
    if (G) kernels.embed.encodeBackward(pass, this.csr, d.dX, G);
  }

  /** The loss of the batch written last and its gradient into the logits buffer. */
  private encodeLoss(pass: GPUComputePassEncoder): void {
    const a = this.model.acts;
    this.k.xent.encode(pass, a.logits, a.targets, a.weights, a.nll, a.loss);
  }

  private encodeAdamW(pass: GPUComputePassEncoder): void {
    this.k.adamw.encode(pass, this.trainParams.buffers, this.grads.buffers, this.m.buffers, this.v.buffers);
  }

  /** A whole training step's dispatches (forward, loss and dlogits, backward, AdamW) into `pass`. */
  encodeTrainStep(pass: GPUComputePassEncoder): void {
    this.model.encodeForward(pass);
    this.encodeLoss(pass);
    this.encodeBackward(pass);
    this.encodeAdamW(pass);
  }

  private countDispatches(): number {
    let n = 0;
    const counter = new Proxy({} as GPUComputePassEncoder, {
      get: (_t, prop) => (prop === 'dispatchWorkgroups' ? () => void n++ : () => undefined),
    });
    this.encodeTrainStep(counter);
    return n;
  }

  // ---- supervised steps ------------------------------------------------------------------

  /**
   * One optimizer step on `batch` with learning rate `lr`, in one submission: forward, loss
   * and dlogits, backward, gradient-norm clipping and AdamW. Reading the loss or the gradient
   * norm costs a small read-back after the step; skip it on steps you don't log.
   */
  async trainStep(batch: ModelBatch, lr: number, read: { loss?: boolean; gradNorm?: boolean } = { loss: true }): Promise<StepResult> {
    // The gradient is that of Σ w·ℓ / norm with norm independent of the weights (never Σ w), so a
    // token's gradient follows its own mask weight whatever else the batch holds; the loss read
    // back is rescaled to the weighted mean Σ w·ℓ / Σ w, the measure evalLoss reports.
    const { weightSum, targets } = this.model.writeBatch(batch, this.csr);
    const norm = batch.lossNorm ?? targets;
    this.k.xent.setWeightSum(norm);
    this.k.adamw.setStep(this.step, lr);
    submit(this.rt, 'gpt.train_step', (pass) => this.encodeTrainStep(pass));
    this.step++;
    const out: StepResult = {};
    if (read.loss) out.loss = weightSum > 0 ? ((await this.rt.readF32(this.model.acts.loss, 1))[0] * norm) / weightSum : 0;
    if (read.gradNorm) out.gradNorm = (await this.k.adamw.readGradNorm()).norm;
    if (!read.loss && !read.gradNorm) await this.rt.sync();
    return out;
  }

  /**
   * The weighted-mean loss of `batch` and the gradient trainStep would apply (that of
   * Σ w·ℓ / lossNorm), without an update; the gradient buffer is cleared after.
   */
  async lossAndGradient(batch: ModelBatch): Promise<{ loss: number; grad: Float32Array }> {
    const { weightSum, targets } = this.model.writeBatch(batch, this.csr);
    const norm = batch.lossNorm ?? targets;
    this.k.xent.setWeightSum(norm);
    submit(this.rt, 'gpt.gradient', (pass) => {
      this.model.encodeForward(pass);
      this.encodeLoss(pass);
      this.encodeBackward(pass);
    });
    const loss = weightSum > 0 ? ((await this.rt.readF32(this.model.acts.loss, 1))[0] * norm) / weightSum : 0;
    const grad = await this.grads.read();
    this.grads.clear();
    return { loss, grad };
  }

  // ---- GSPO ------------------------------------------------------------------------------

  private rlPath(): RlPath {
    if (!this.rl) throw new Error('GpuTrainer: built without the GSPO path (pass options.rl)');
    return this.rl;
  }

  private writeRlBatch(batch: RlBatch): RlPath {
    const rl = this.rlPath();
    this.model.writeBatch({ B: batch.B, T: batch.T, inputs: batch.inputs, targets: batch.targets }, this.csr);
    rl.gather.setSpans(batch.spans);
    this.rt.write(rl.lengths, Uint32Array.from(batch.spans.map((s) => s.len)));
    return rl;
  }

  /** Per-token log-probabilities of each response under the current weights, packed [B, Lmax]. */
  async responseLogprobs(batch: RlBatch): Promise<Float32Array> {
    const rl = this.writeRlBatch(batch);
    const a = this.model.acts;
    submit(this.rt, 'gpt.logprobs', (pass) => {
      this.model.encodeForward(pass);
      rl.logprob.encode(pass, a.logits, a.targets, rl.logp, rl.lse);
      rl.gather.encodeGather(pass, rl.logp, rl.packed);
    });
    return this.rt.readF32(rl.packed, batch.B * rl.Lmax);
  }

  /**
   * One GSPO optimizer step (docs/method.md §6) in one submission: forward, per-token log-probs, the
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
    this.k.adamw.setStep(this.step, lr);
    submit(this.rt, 'gpt.gspo_step', (pass) => {
      this.encodeGspo(pass, rl);
      this.encodeAdamW(pass);
    });
    this.step++;
    const stats = await GspoKernel.readStats(this.rt, rl.stats);
    return read.gradNorm ? { ...stats, gradNorm: (await this.k.adamw.readGradNorm()).norm } : stats;
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
    if (logpOld.length !== batch.B * rl.Lmax) throw new RangeError(`gspoStep: logpOld has ${logpOld.length} values, expected ${batch.B}×${rl.Lmax}`);
    this.rt.write(rl.old, logpOld);
    return { ...rl, current: false };
  }

  /** Forward, per-token log-probs, the GSPO objective and its gradient, backward into this.grads. */
  private encodeGspo(pass: GPUComputePassEncoder, rl: RlPath & { current: boolean }): void {
    const a = this.model.acts;
    this.model.encodeForward(pass);
    rl.logprob.encode(pass, a.logits, a.targets, rl.logp, rl.lse);
    if (rl.current) rl.gather.encodeGather(pass, rl.logp, rl.old);
    rl.gather.encodeGather(pass, rl.logp, rl.packed);
    rl.gspo.encode(pass, rl.packed, rl.old, rl.lengths, rl.advantages, rl.gradPacked, rl.seqStats, rl.stats);
    rl.gather.encodeScatter(pass, rl.gradPacked, rl.gRows);
    rl.logprob.encodeBackward(pass, a.logits, a.targets, rl.lse, rl.gRows, rl.dlogits);
    this.encodeBackward(pass, rl.dlogits);
  }

  /** The AdamW kernel over trainParams/grads/m/v, for a training path encoded outside this class (sharedPrefix.ts). */
  get optimizer(): AdamWKernel {
    return this.k.adamw;
  }

  /** Bytes of GPU memory training holds (the model's weights and activations, gradients, optimizer state, scratch). */
  bytes(): number {
    const sets = [this.grads, this.m, this.v].reduce((n, p) => n + p.bytes, 0);
    return this.model.bytes() + this.owned.reduce((n, b) => n + b.size, 0) + sets;
  }

  /** Releases the trainer's buffers and kernels and its model's. */
  dispose(): void {
    for (const k of this.disposables) k.dispose();
    this.rt.release(...this.owned);
    for (const p of [this.grads, this.m, this.v]) p.release();
    this.disposables.length = 0;
    this.owned.length = 0;
    this.model.dispose();
  }
}

type RlKernels = Pick<RlPath, 'Lmax' | 'logprob' | 'gather' | 'gspo'>;

async function buildRl(rt: GpuRuntime, o: NonNullable<GpuTrainerOptions['rl']>, B: number, T: number, N: number, V: number): Promise<RlKernels> {
  const [logprob, gather, gspo] = await Promise.all([
    LogprobKernel.create(rt, { N, V, ...(o.temperature !== undefined && { temperature: o.temperature }) }),
    SeqGatherKernel.create(rt, { S: B, T, L: o.Lmax }),
    GspoKernel.create(rt, {
      numSeqs: B,
      Lmax: o.Lmax,
      ...(o.epsLow !== undefined && { epsLow: o.epsLow }),
      ...(o.epsHigh !== undefined && { epsHigh: o.epsHigh }),
    }),
  ]);
  return { Lmax: o.Lmax, logprob, gather, gspo };
}

function rlBuffers(f32: AllocF32, k: RlKernels, B: number, N: number, V: number): RlPath {
  const L = k.Lmax;
  return {
    ...k,
    logp: f32('rl.logp', N),
    lse: f32('rl.lse', N),
    packed: f32('rl.logp_new', B * L),
    old: f32('rl.logp_old', B * L),
    lengths: f32('rl.lengths', B),
    advantages: f32('rl.advantages', B),
    gradPacked: f32('rl.grad', B * L),
    seqStats: f32('rl.seqstats', B * 4),
    stats: f32('rl.stats', 4),
    gRows: f32('rl.grows', N),
    dlogits: f32('rl.dlogits', N * V),
  };
}
