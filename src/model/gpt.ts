// The GPT on the GPU, forward only: the weights (f32, or f16 for a frozen model: halfWeights.ts)
// in the shards of params.ts's layout (shards.ts), an optional LoRA adapter the projections
// apply (loraGpu.ts), and the forward of one batch shape to the logits and the loss, every
// operation one of our WGSL kernels (src/gpu/kernels). The blocks are block.ts's encoder (shared
// with generation), with attention over the whole causal batch. Training is trainer.ts's
// GpuTrainer, which owns a GpuModel and adds gradients, AdamW and the GSPO path; the
// plain-TypeScript twin of both is src/reference/gpt.ts.
//
// Activations are row-major [N = B·T rows, width]. Per layer the forward keeps what a backward
// needs (norm inputs and statistics, qkv after RoPE, attention output and its log-sum-exp rows,
// the MLP's pre-activation), so the trainer's backward recomputes nothing but the attention
// scores (flash-style, from the saved row statistics).
//
//   tokens ─ embedding ─ x_0 ─ block_0 ─ … ─ block_{L−1} ─ x_L ─ normF ─ ·wteᵀ (or lm_head) ─ weighted cross-entropy
import { AttentionForwardKernel } from '../gpu/kernels/attention.ts';
import { NormKernel } from '../gpu/kernels/norm.ts';
import { XentKernel } from '../gpu/kernels/xent.ts';
import { submit } from '../gpu/kernels/common.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import type { ModelConfig } from '../core/model/config.ts';
import { paramLayout, type ParamLayout } from '../core/model/params.ts';
import { flatPlan, ParamBuffers, placeOf, planFor, type ShardPlan } from './shards.ts';
import type { WeightStorage } from './halfWeights.ts';
import { GpuEmbedding, GpuHead } from './ends.ts';
import type { Checkpoint } from '../core/model/checkpoint.ts';
import { allocBlockBuffers, GpuBlocks, type BlockAttention, type BlockBuffers } from './block.ts';
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
  /** The trainer's gradient is that of Σ w·ℓ / lossNorm. Default: the batch's target tokens (weight > 0). */
  lossNorm?: number;
}

export interface GpuModelOptions {
  /** Sequences per batch. */
  batch: number;
  /** Tokens per sequence (≤ contextLength). */
  T: number;
  /**
   * A LoRA adapter (lora.ts) the projections apply: its weights are `adapter` (setLora). In a
   * trainer the base weights are frozen and only the adapter trains.
   */
  lora?: LoraLayout;
  /**
   * How the weights are held (default f32). 'f16' (halfWeights.ts: the matrices packed two f16 per
   * u32 word, f32 accumulation) is for frozen weights: inference, or a LoRA base in a trainer.
   * getParams then gives the matrices as the f16 values they hold.
   */
  weights?: WeightStorage;
}

/** The forward's activations and batch buffers: what the trainer's backward and losses read. */
export interface ForwardBuffers {
  /** One set per layer (block.ts's allocBlockBuffers). */
  blocks: BlockBuffers[];
  /** The last block's output. */
  xFinal: GPUBuffer;
  lnf: GPUBuffer;
  lnfStats: GPUBuffer;
  /** [N, V]; a trainer's cross-entropy writes dlogits over them. */
  logits: GPUBuffer;
  tokens: GPUBuffer;
  targets: GPUBuffer;
  weights: GPUBuffer;
  /** Each position's loss, and the batch's (cross-entropy's outputs). */
  nll: GPUBuffer;
  loss: GPUBuffer;
}

/** The forward's kernels; built with their backward halves when a trainer owns the model. */
export interface ModelKernels {
  embed: GpuEmbedding;
  blocks: GpuBlocks;
  /** Causal attention over the whole batch, keeping the lse rows. */
  attention: BlockAttention;
  normF: NormKernel;
  head: GpuHead;
  /** Cross-entropy without a gradient (the evaluation loss). */
  xentEval: XentKernel;
  /** The adapter's kernels (LoRA only). */
  lora: GpuLora | null;
}

/** How create() builds the kernels: `backward` adds their backward halves (GpuTrainer). */
export interface ModelBuild {
  backward: boolean;
}

export class GpuModel {
  /** Rows of a batch (batch × T). */
  readonly N: number;

  private constructor(
    readonly rt: GpuRuntime,
    readonly config: ModelConfig,
    readonly options: GpuModelOptions,
    readonly layout: ParamLayout,
    /** Where the parameters live on the GPU: buffers no larger than one storage binding (shards.ts). */
    readonly shards: ShardPlan,
    /** The params.ts layout in the shards' buffers. */
    readonly params: ParamBuffers,
    /** The LoRA adapter's weights (one flat shard; null without options.lora). */
    readonly adapter: ParamBuffers | null,
    readonly kernels: ModelKernels,
    readonly acts: ForwardBuffers,
    /** The activation buffers and the kernels, released by dispose. */
    private readonly owned: GPUBuffer[],
    private readonly disposables: { dispose(): void }[],
  ) {
    this.N = options.batch * options.T;
  }

  /** Builds the kernels of this batch shape, then the weights' and the activations' buffers. */
  static async create(rt: GpuRuntime, config: ModelConfig, options: GpuModelOptions, build: ModelBuild = { backward: false }): Promise<GpuModel> {
    const L = paramLayout(config);
    if (options.T > config.contextLength) throw new RangeError(`GpuModel: T = ${options.T} exceeds the model's context of ${config.contextLength}`);
    if (!Number.isInteger(options.batch) || options.batch < 1) throw new RangeError(`GpuModel: batch must be a positive integer, got ${options.batch}`);
    const { batch: B, T, lora } = options;
    const N = B * T;
    const shards = planFor(rt, L, options.weights);
    const plan = blockPlan(config);
    const { heads: H, kvHeads: kvH, headSize: D } = plan;
    const { backward } = build;
    const frozen = !!lora;
    const normShape = {
      rows: N,
      C: config.dModel,
      kind: plan.norm,
      eps: config.normEps,
      gammaOffset: placeOf(shards, L.lnFWeight).offset,
      betaOffset: L.lnFBias ? placeOf(shards, L.lnFBias).offset : 0,
    };
    const [embed, attnF, normF, head, xentEval, blocks, loraKernels] = await Promise.all([
      GpuEmbedding.create(rt, config, L, shards, { rows: N, T }),
      AttentionForwardKernel.create(rt, { B, T, H, D, kvH }),
      NormKernel.create(rt, normShape, { accumulateDx: false }),
      GpuHead.create(rt, config, L, shards, { rows: N, backward, frozen }),
      XentKernel.create(rt, { N, V: config.vocabSize, grad: false }),
      GpuBlocks.create(rt, config, L, { rows: N, T, maxPositions: Math.max(1024, config.contextLength), backward, frozen }, shards),
      lora ? GpuLora.create(rt, lora, { rows: N, backward }) : null,
    ]);
    const params = ParamBuffers.create(rt, shards, 'gpt.params');
    const adapter = lora ? ParamBuffers.create(rt, flatPlan(lora.totalSize), 'gpt.lora') : null;
    if (loraKernels && adapter) blocks.lora = { lora: loraKernels, params: adapter.only };
    const owned: GPUBuffer[] = [];
    const f32 = (label: string, n: number) => {
      const b = rt.storage(`gpt.${label}`, n * 4);
      owned.push(b);
      return b;
    };
    const acts: ForwardBuffers = {
      blocks: allocBlockBuffers(f32, plan, N, config.layers),
      xFinal: f32(`x.${config.layers}`, N * config.dModel),
      lnf: f32('lnf', N * config.dModel),
      lnfStats: f32('lnfs', N * 2),
      logits: f32('logits', N * config.vocabSize),
      tokens: f32('tokens', N),
      targets: f32('targets', N),
      weights: f32('weights', N),
      nll: f32('nll', N),
      loss: f32('loss', 2),
    };
    const attention: BlockAttention = { position: 0, forward: (pass, _l, b) => attnF.encode(pass, b.qkv, b.att, b.lse!) };
    const kernels: ModelKernels = { embed, blocks, attention, normF, head, xentEval, lora: loraKernels };
    const made = [embed, attnF, normF, head, xentEval, blocks, ...(loraKernels ? [loraKernels] : [])];
    return new GpuModel(rt, config, options, L, shards, params, adapter, kernels, acts, owned, made);
  }

  // ---- weights ---------------------------------------------------------------------------

  /** Uploads weights (flat layout). */
  setParams(params: Float32Array): void {
    checkFlat(params, 'GpuModel: params', this.layout.totalSize);
    this.params.write(params);
  }

  async getParams(): Promise<Float32Array> {
    return this.params.read();
  }

  /** Uploads the adapter's weights (LoRA models only). */
  setLora(lora: Float32Array): void {
    const adapter = this.loraAdapter();
    checkFlat(lora, 'GpuModel: LoRA adapter', adapter.size);
    adapter.buffers.write(lora);
  }

  /** The adapter's weights (LoRA models only). */
  async getLora(): Promise<Float32Array> {
    return this.loraAdapter().buffers.read();
  }

  private loraAdapter(): { buffers: ParamBuffers; size: number } {
    if (!this.adapter || !this.options.lora) throw new Error('GpuModel: built without LoRA');
    return { buffers: this.adapter, size: this.options.lora.totalSize };
  }

  /** Uploads a checkpoint's weights (from loadCheckpoint, which has checked it against this config). */
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
    this.setParams(ck.params);
  }

  // ---- batches ---------------------------------------------------------------------------

  /**
   * Uploads a batch: its tokens (and, given `csr`, the embedding backward's index of them), targets
   * and loss weights. Returns Σ w and the count of targets with weight > 0.
   */
  writeBatch(batch: ModelBatch, csr?: GPUBuffer): { weightSum: number; targets: number } {
    const { batch: B, T } = this.options;
    if (batch.B !== B || batch.T !== T) throw new RangeError(`GpuModel: batch is ${batch.B}×${batch.T}, the model was built for ${B}×${T}`);
    const V = this.config.vocabSize;
    for (let i = 0; i < this.N; i++) {
      if (!(batch.inputs[i] >= 0 && batch.inputs[i] < V))
        throw new RangeError(`GpuModel: input token ${batch.inputs[i]} at ${i} is outside the vocabulary (0..${V - 1})`);
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
    this.kernels.embed.writeBatch(this.acts.tokens, batch.inputs, csr);
    this.rt.write(this.acts.targets, Uint32Array.from(batch.targets));
    this.rt.write(this.acts.weights, weights);
    return { weightSum: W, targets };
  }

  // ---- encoding --------------------------------------------------------------------------

  /** The forward of the batch written last, from its tokens to the logits. */
  encodeForward(pass: GPUComputePassEncoder): void {
    const P = this.params;
    const { embed, blocks, attention, normF, head } = this.kernels;
    const a = this.acts;
    embed.encodeForward(pass, a.tokens, P, a.blocks[0]?.x ?? a.xFinal);
    a.blocks.forEach((b, l) => blocks.encodeForward(pass, P, l, b, a.blocks[l + 1]?.x ?? a.xFinal, attention));
    normF.encodeForward(pass, a.xFinal, P.buffer(this.layout.lnFWeight), a.lnf, a.lnfStats);
    head.encodeForward(pass, a.lnf, P, a.logits);
  }

  /** Weighted-mean loss of `batch` under the current weights. */
  async evalLoss(batch: ModelBatch): Promise<number> {
    const { xentEval } = this.kernels;
    const a = this.acts;
    xentEval.setWeightSum(this.writeBatch(batch).weightSum);
    submit(this.rt, 'gpt.eval', (pass) => {
      this.encodeForward(pass);
      xentEval.encode(pass, a.logits, a.targets, a.weights, a.nll, a.loss);
    });
    return (await this.rt.readF32(a.loss, 1))[0];
  }

  /**
   * evalLoss and each position's unweighted loss, nll[b·T + t] (0 at padding targets): what the
   * loss of a part of the batch (its rows of one domain) is computed from.
   */
  async evalTokenLosses(batch: ModelBatch): Promise<{ loss: number; nll: Float32Array }> {
    const loss = await this.evalLoss(batch);
    return { loss, nll: await this.rt.readF32(this.acts.nll, batch.B * batch.T) };
  }

  /** Logits [B·T, V] of `batch.inputs` under the current weights. */
  async logitsOf(batch: Pick<ModelBatch, 'B' | 'T' | 'inputs'>): Promise<Float32Array> {
    const N = this.N;
    this.writeBatch({ ...batch, targets: new Uint32Array(N), weights: new Float32Array(N) });
    submit(this.rt, 'gpt.logits', (pass) => {
      this.encodeForward(pass);
    });
    return this.rt.readF32(this.acts.logits, N * this.config.vocabSize);
  }

  /** Bytes of GPU memory the weights (and adapter) and activations take. */
  bytes(): number {
    return this.owned.reduce((n, b) => n + b.size, 0) + this.params.bytes + (this.adapter?.bytes ?? 0);
  }

  dispose(): void {
    for (const k of this.disposables) k.dispose();
    this.rt.release(...this.owned);
    this.params.release();
    this.adapter?.release();
    this.disposables.length = 0;
    this.owned.length = 0;
  }
}

/** Throws unless `a` has `size` elements (`what` names it in the message). */
export function checkFlat(a: Float32Array, what: string, size: number): void {
  if (a.length !== size) throw new RangeError(`${what} has ${a.length} elements, the layout needs ${size}`);
}
