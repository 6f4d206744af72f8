// GSPO update passes with the group's prompt processed once (docs/method.md §10). A group is one prompt
// and G sampled responses; the unshared path (GpuTrainer.gspoStep) lays it out as G full rows of
// prompt + response and so runs the prompt's forward and backward G times. Here the prompt's
// forward runs once over one prefix sequence, its per-layer K/V are kept, and the G completion
// rows attend to those K/V plus their own causal K/V (prefix attention,
// src/gpu/kernels/prefixAttention.ts); in the backward the gradients flowing into the prefix K/V
// are summed over the G rows (and, with grouped-query attention, over the query heads sharing
// each K/V head) and the prompt's backward runs once.
//
//   prefix   prompt[0 .. P−2] at positions 0 .. P−2 (no logits: nothing is predicted there)
//   row i    prompt[P−1], r_i[0], r_i[1], …  at positions P−1, P, …; targets r_i[0], r_i[1], …
//
// The last prompt token opens every completion row (its logits predict r_i[0]), so the G rows
// carry the whole response log-probabilities and the prefix needs no LM head: one token of the
// prompt is recomputed per row, the other P − 2 are shared. The weights, gradients and AdamW
// state are the GpuTrainer's own buffers, so a step here and a step there move the same model.
import { AttentionBackwardKernel, AttentionForwardKernel } from '../gpu/kernels/attention.ts';
import { submit } from '../gpu/kernels/common.ts';
import { AddKernel } from '../gpu/kernels/elementwise.ts';
import { GspoKernel, type GspoStats } from '../gpu/kernels/gspo.ts';
import { LogprobKernel } from '../gpu/kernels/logprob.ts';
import { NormKernel } from '../gpu/kernels/norm.ts';
import { PrefixAttentionKernel } from '../gpu/kernels/prefixAttention.ts';
import { SeqGatherKernel } from '../gpu/kernels/seqgather.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { allocBlockBuffers, allocBlockGradBuffers, GpuBlocks, type BlockAttention, type BlockBuffers, type BlockGradBuffers } from './block.ts';
import type { ModelConfig } from '../core/model/config.ts';
import type { GpuModel } from './gpt.ts';
import type { GpuTrainer } from './trainer.ts';
import { blockPlan } from '../core/model/plan.ts';
import { GpuEmbedding, GpuHead } from './ends.ts';
import { placeOf } from './shards.ts';

/** One GSPO group: the prompt its responses continue, and its G responses. */
export interface SharedGroup {
  /** P ≥ 1 tokens, P ≤ promptMax. */
  prompt: ArrayLike<number>;
  /** G responses; the first Lmax tokens of each are trained on. */
  responses: ArrayLike<number>[];
}

export interface SharedPrefixOptions {
  /** Responses per group. */
  G: number;
  /** Response tokens trained on (the unshared path's rl.Lmax). */
  Lmax: number;
  /** The longest prompt in tokens; promptMax + Lmax − 1 positions must fit the model's context. */
  promptMax: number;
  epsLow?: number;
  epsHigh?: number;
  /** Sampling temperature τ of the rollouts: log-probs are those of softmax(logits/τ) (default 1). */
  temperature?: number;
}

/** One row set (the prefix, or the G completions) of the pass: embedding, blocks and buffers. */
interface Part {
  embed: GpuEmbedding;
  blocks: GpuBlocks;
  acts: BlockBuffers[];
  /** The last block's output. */
  xOut: GPUBuffer;
  tokens: GPUBuffer;
  csr: GPUBuffer;
  d: BlockGradBuffers;
  attention: BlockAttention;
}

interface Head {
  normF: NormKernel;
  head: GpuHead;
  logprob: LogprobKernel;
  gather: SeqGatherKernel;
  gspo: GspoKernel;
}

const BUFFERS = [
  'lnf',
  'lnfStats',
  'logits',
  'targets',
  'logp',
  'lse',
  'packed',
  'old',
  'lengths',
  'advantages',
  'gradPacked',
  'seqStats',
  'stats',
  'gRows',
  'dlogits',
] as const;
type HeadBuffers = Record<(typeof BUFFERS)[number], GPUBuffer>;

export class SharedPrefixGspo {
  /** Prefix rows (the longest prompt but its last token) and rows per completion. */
  readonly Tp: number;
  readonly Tc: number;
  private readonly owned: GPUBuffer[] = [];
  private readonly kernels: { dispose(): void }[] = [];
  private prefix!: Part;
  private completions!: Part;
  private k!: Head;
  private b!: HeadBuffers;
  /** The prefix's k/v gradient from the completions of the layer being differentiated. */
  private dpkv!: GPUBuffer;
  private prefixAttention!: PrefixAttentionKernel;
  private zeros!: Float32Array;

  private constructor(
    readonly trainer: GpuTrainer,
    readonly options: SharedPrefixOptions,
  ) {
    const { G, Lmax, promptMax } = options;
    const c = trainer.config;
    for (const [k, v] of Object.entries({ G, Lmax, promptMax }))
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`shared prefix: ${k} must be a positive integer, got ${v}`);
    if (promptMax + Lmax - 1 > c.contextLength)
      throw new RangeError(`shared prefix: a ${promptMax}-token prompt and ${Lmax} response tokens exceed the model's context of ${c.contextLength}`);
    this.Tp = Math.max(1, promptMax - 1);
    this.Tc = Lmax;
  }

  /** Whether the prefix attention kernel serves this model's attention (multi-head or grouped-query; head size a multiple of 4, at most 128). */
  static supports(config: ModelConfig): boolean {
    const { heads, kvHeads, headSize: D } = blockPlan(config);
    return heads % kvHeads === 0 && D % 4 === 0 && D <= 128;
  }

  static async create(trainer: GpuTrainer, options: SharedPrefixOptions): Promise<SharedPrefixGspo> {
    const s = new SharedPrefixGspo(trainer, options);
    await s.build();
    return s;
  }

  private get rt(): GpuRuntime {
    return this.trainer.rt;
  }

  /** The trained model (its weights and layout). */
  private get model(): GpuModel {
    return this.trainer.model;
  }

  private f32(label: string, n: number): GPUBuffer {
    const b = this.rt.storage(`shared.${label}`, n * 4);
    this.owned.push(b);
    return b;
  }

  private keep<T extends { dispose(): void }>(k: T): T {
    this.kernels.push(k);
    return k;
  }

  private async build() {
    const { rt, model, Tp, Tc } = this;
    const { G, Lmax } = this.options;
    const c = model.config;
    const L = model.layout;
    const { heads: H, kvHeads: kvH, headSize: D, qkvDim } = blockPlan(c);
    const C = c.dModel;
    const Nc = G * Tc;
    this.dpkv = this.f32('dpkv', Tp * qkvDim);
    this.zeros = new Float32Array(Tp * C);
    const [attnF, attnB, pa, add] = await Promise.all([
      AttentionForwardKernel.create(rt, { B: 1, T: Tp, H, D, kvH }).then((k) => this.keep(k)),
      AttentionBackwardKernel.create(rt, { B: 1, T: Tp, H, D, kvH }).then((k) => this.keep(k)),
      PrefixAttentionKernel.create(rt, { G, Tc, Tp, H, D, kvH }).then((k) => this.keep(k)),
      AddKernel.create(rt, { n: Tp * qkvDim, inPlace: true }).then((k) => this.keep(k)),
    ]);
    // The prefix: causal attention over itself; its dqkv gets the completions' k/v gradient added.
    this.prefix = await this.part('p', 1, Tp, {
      position: 0,
      forward: (pass, _l, b) => attnF.encode(pass, b.qkv, b.att, b.lse!),
      backward: (pass, b, dAtt, dQkv) => {
        attnB.encode(pass, b.qkv, b.att, b.lse!, dAtt, dQkv);
        add.encode(pass, dQkv, this.dpkv);
      },
    });
    // The completions: prefix attention over the same layer's prefix K/V and their own.
    const prefixQkv = (b: BlockBuffers) => this.prefix.acts[this.completions.acts.indexOf(b)].qkv;
    this.completions = await this.part('c', G, Tc, {
      position: 0,
      forward: (pass, l, b) => pa.encodeForward(pass, this.prefix.acts[l].qkv, b.qkv, b.att, b.lse!),
      backward: (pass, b, dAtt, dQkv) =>
        pa.encodeBackward(pass, { pqkv: prefixQkv(b), qkv: b.qkv, out: b.att, lse: b.lse!, dout: dAtt, dqkv: dQkv, dpkv: this.dpkv }),
    });
    this.prefixAttention = pa;
    const V = c.vocabSize;
    const shards = model.shards;
    const normShape = {
      rows: Nc,
      C,
      kind: blockPlan(c).norm,
      eps: c.normEps,
      gammaOffset: placeOf(shards, L.lnFWeight).offset,
      betaOffset: L.lnFBias ? placeOf(shards, L.lnFBias).offset : 0,
    };
    const [normF, head, logprob, gather, gspo] = await Promise.all([
      NormKernel.create(rt, normShape, { accumulateDx: false }).then((k) => this.keep(k)),
      GpuHead.create(rt, c, L, shards, { rows: Nc, backward: true }).then((k) => this.keep(k)),
      LogprobKernel.create(rt, { N: Nc, V, ...(this.options.temperature !== undefined && { temperature: this.options.temperature }) }).then((k) =>
        this.keep(k),
      ),
      SeqGatherKernel.create(rt, { S: G, T: Tc, L: Lmax }).then((k) => this.keep(k)),
      GspoKernel.create(rt, {
        numSeqs: G,
        Lmax,
        ...(this.options.epsLow !== undefined && { epsLow: this.options.epsLow }),
        ...(this.options.epsHigh !== undefined && { epsHigh: this.options.epsHigh }),
      }).then((k) => this.keep(k)),
    ]);
    this.k = { normF, head, logprob, gather, gspo };
    const sizes: Record<(typeof BUFFERS)[number], number> = {
      lnf: Nc * C,
      lnfStats: Nc * 2,
      logits: Nc * V,
      targets: Nc,
      logp: Nc,
      lse: Nc,
      packed: G * Lmax,
      old: G * Lmax,
      lengths: G,
      advantages: G,
      gradPacked: G * Lmax,
      seqStats: G * 4,
      stats: 4,
      gRows: Nc,
      dlogits: Nc * V,
    };
    this.b = Object.fromEntries(BUFFERS.map((k) => [k, this.f32(k, sizes[k])])) as HeadBuffers;
  }

  /** Embedding, blocks, activations and gradient scratch for `S` sequences of `T` rows. */
  private async part(tag: string, S: number, T: number, attention: BlockAttention): Promise<Part> {
    const { rt, model } = this;
    const c = model.config;
    const L = model.layout;
    const C = c.dModel;
    const plan = blockPlan(c);
    const N = S * T;
    const [embed, blocks] = await Promise.all([
      GpuEmbedding.create(rt, c, L, model.shards, { rows: N, T }),
      GpuBlocks.create(rt, c, L, { rows: N, T, maxPositions: Math.max(1024, c.contextLength), backward: true }, model.shards),
    ]);
    this.keep(embed);
    this.keep(blocks);
    const f = (name: string, n: number) => this.f32(`${tag}.${name}`, n);
    // The trainer's activations (block.ts's allocBlockBuffers), one set per layer, and its gradient scratch.
    const acts = allocBlockBuffers(f, plan, N, c.layers);
    const d = allocBlockGradBuffers(f, plan, N);
    return { embed, blocks, acts, xOut: f('xout', N * C), tokens: f('tokens', N), csr: f('csr', embed.csrBytes / 4), d, attention };
  }

  // ---- a group's rows --------------------------------------------------------------------

  /** Response tokens trained on per response (the unshared path's span lengths). */
  lengths(group: SharedGroup): number[] {
    return group.responses.map((r) => Math.min(r.length, this.options.Lmax));
  }

  private writeGroup(group: SharedGroup): void {
    const { G, promptMax } = this.options;
    const { Tp, Tc } = this;
    const V = this.model.config.vocabSize;
    const P = group.prompt.length;
    if (P < 1 || P > promptMax) throw new RangeError(`shared prefix: the prompt has ${P} tokens; 1..${promptMax} fit`);
    if (group.responses.length !== G) throw new RangeError(`shared prefix: ${group.responses.length} responses, built for G = ${G}`);
    const lengths = this.lengths(group);
    const pTokens = new Uint32Array(Tp);
    for (let t = 0; t < P - 1; t++) pTokens[t] = group.prompt[t];
    const cTokens = new Uint32Array(G * Tc);
    const targets = new Uint32Array(G * Tc);
    group.responses.forEach((r, i) => {
      cTokens[i * Tc] = group.prompt[P - 1];
      for (let j = 0; j < lengths[i]; j++) {
        targets[i * Tc + j] = r[j];
        if (j + 1 < Tc) cTokens[i * Tc + j + 1] = r[j];
      }
    });
    for (const x of [pTokens, cTokens, targets]) {
      const bad = x.findIndex((t) => t >= V);
      if (bad >= 0) throw new RangeError(`shared prefix: token ${x[bad]} is outside the vocabulary (0..${V - 1})`);
    }
    this.prefix.embed.writeBatch(this.prefix.tokens, pTokens, this.prefix.csr);
    this.completions.embed.writeBatch(this.completions.tokens, cTokens, this.completions.csr);
    this.rt.write(this.b.targets, targets);
    // The completions start at position P − 1 and see the P − 1 prefix rows.
    this.completions.embed.setPositionOffset(P - 1);
    this.completions.attention.position = P - 1;
    this.prefixAttention.setPrefixLength(P - 1);
    this.k.gather.setSpans(lengths.map((len) => ({ start: 0, len })));
    this.rt.write(this.b.lengths, Uint32Array.from(lengths));
  }

  // ---- encoding --------------------------------------------------------------------------

  private encodeForward(pass: GPUComputePassEncoder): void {
    const P = this.model.params;
    for (const part of [this.prefix, this.completions]) {
      part.embed.encodeForward(pass, part.tokens, P, part.acts[0].x);
      part.acts.forEach((a, l) => part.blocks.encodeForward(pass, P, l, a, part.acts[l + 1]?.x ?? part.xOut, part.attention));
    }
    this.k.normF.encodeForward(pass, this.completions.xOut, P.buffer(this.model.layout.lnFWeight), this.b.lnf, this.b.lnfStats);
    this.k.head.encodeForward(pass, this.b.lnf, P, this.b.logits);
  }

  /** From dlogits to every parameter gradient: each layer's completions, then its prefix (which needs their k/v gradient). */
  private encodeBackward(pass: GPUComputePassEncoder): void {
    const P = this.model.params;
    const G = this.trainer.grads;
    const { k, b, prefix: p, completions: cpl } = this;
    const lnF = this.model.layout.lnFWeight;
    k.head.encodeBackward(pass, b.dlogits, b.lnf, P, G, cpl.d.dT);
    k.normF.encodeBackward(pass, cpl.d.dT, cpl.xOut, P.buffer(lnF), b.lnfStats, cpl.d.dX, G.buffer(lnF));
    for (let l = cpl.acts.length - 1; l >= 0; l--) {
      cpl.blocks.encodeBackward(pass, P, G, l, cpl.acts[l], cpl.d, cpl.attention);
      p.blocks.encodeBackward(pass, P, G, l, p.acts[l], p.d, p.attention);
    }
    cpl.embed.encodeBackward(pass, cpl.csr, cpl.d.dX, G);
    p.embed.encodeBackward(pass, p.csr, p.d.dX, G);
  }

  private encodeGspo(pass: GPUComputePassEncoder, current: boolean): void {
    const { k, b } = this;
    this.encodeForward(pass);
    k.logprob.encode(pass, b.logits, b.targets, b.logp, b.lse);
    if (current) k.gather.encodeGather(pass, b.logp, b.old);
    k.gather.encodeGather(pass, b.logp, b.packed);
    k.gspo.encode(pass, b.packed, b.old, b.lengths, b.advantages, b.gradPacked, b.seqStats, b.stats);
    k.gather.encodeScatter(pass, b.gradPacked, b.gRows);
    k.logprob.encodeBackward(pass, b.logits, b.targets, b.lse, b.gRows, b.dlogits);
    this.encodeBackward(pass);
  }

  private writeGspo(group: SharedGroup, logpOld: Float32Array | 'current', advantages: ArrayLike<number>): boolean {
    const { G, Lmax } = this.options;
    this.writeGroup(group);
    if (advantages.length !== G) throw new RangeError(`shared prefix: ${advantages.length} advantages for ${G} responses`);
    this.rt.write(this.b.advantages, Float32Array.from(advantages));
    // The prefix's output gets no gradient from logits: its d x_out is zero.
    this.rt.write(this.prefix.d.dX, this.zeros);
    if (logpOld === 'current') return true;
    if (logpOld.length !== G * Lmax) throw new RangeError(`shared prefix: logpOld has ${logpOld.length} values, expected ${G}×${Lmax}`);
    this.rt.write(this.b.old, logpOld);
    return false;
  }

  // ---- the GpuTrainer-compatible GSPO calls ----------------------------------------------------

  /** Per-token log-probabilities of each response under the current weights, packed [G, Lmax]. */
  async responseLogprobs(group: SharedGroup): Promise<Float32Array> {
    this.writeGroup(group);
    const { k, b } = this;
    submit(this.rt, 'shared.logprobs', (pass) => {
      this.encodeForward(pass);
      k.logprob.encode(pass, b.logits, b.targets, b.logp, b.lse);
      k.gather.encodeGather(pass, b.logp, b.packed);
    });
    return this.rt.readF32(b.packed, this.options.G * this.options.Lmax);
  }

  /** One GSPO optimizer step on the group (GpuTrainer.gspoStep's contract, the prompt processed once). */
  async gspoStep(
    group: SharedGroup,
    logpOld: Float32Array | 'current',
    advantages: ArrayLike<number>,
    lr: number,
    read: { gradNorm?: boolean } = {},
  ): Promise<GspoStats & { gradNorm?: number }> {
    const current = this.writeGspo(group, logpOld, advantages);
    const { trainer } = this;
    trainer.optimizer.setStep(trainer.step, lr);
    submit(this.rt, 'shared.gspo_step', (pass) => {
      this.encodeGspo(pass, current);
      trainer.optimizer.encode(pass, trainer.trainParams.buffers, trainer.grads.buffers, trainer.m.buffers, trainer.v.buffers);
    });
    trainer.step++;
    const stats = await GspoKernel.readStats(this.rt, this.b.stats);
    return read.gradNorm ? { ...stats, gradNorm: (await trainer.optimizer.readGradNorm()).norm } : stats;
  }

  /** dL/dθ of the GSPO loss that gspoStep would apply (no update; the gradient buffer is cleared after). */
  async gspoGradient(group: SharedGroup, logpOld: Float32Array | 'current', advantages: ArrayLike<number>): Promise<{ grad: Float32Array } & GspoStats> {
    const current = this.writeGspo(group, logpOld, advantages);
    submit(this.rt, 'shared.gspo_grad', (pass) => this.encodeGspo(pass, current));
    const grad = await this.trainer.grads.read();
    this.trainer.grads.clear();
    return { grad, ...(await GspoKernel.readStats(this.rt, this.b.stats)) };
  }

  /** Bytes of GPU memory this path holds (activations; the weights are the model's). */
  bytes(): number {
    return this.owned.reduce((n, b) => n + b.size, 0);
  }

  dispose(): void {
    for (const k of this.kernels) k.dispose();
    this.rt.release(...this.owned);
    this.kernels.length = 0;
    this.owned.length = 0;
  }
}
