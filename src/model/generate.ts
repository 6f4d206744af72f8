// Generation on the GPU with a KV cache: prefill a prompt in one pass, then one submission per
// new token (decode), sampling on the GPU so only the chosen token ids come back. A group of G
// samples for one prompt (a GSPO rollout) prefills the prompt ONCE into a shared prefix cache
// and decodes the G continuations against it (docs/method.md §10).
//
// A "graph" is the set of kernels for one (S sequences × Tn new rows) shape: prefill of a P-token
// prompt is (1 × P), a decode step is (S × 1). Its blocks are block.ts's encoder (shared with
// training), with attention against the KV cache. Graphs are built on first use and kept; their
// per-step values (positions, cache lengths) are uniforms written before each submission.
import { AttentionDecodeKernel, KvAppendKernel } from '../gpu/kernels/attention.ts';
import { NormKernel } from '../gpu/kernels/norm.ts';
import { SamplingKernel, type SamplingSettings } from '../gpu/kernels/sampling.ts';
import { submit } from '../gpu/kernels/common.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { allocBlockBuffers, GpuBlocks, type BlockAttention, type BlockBuffers } from './block.ts';
import type { LoraLayout } from './lora.ts';
import { GpuLora } from './loraGpu.ts';
import type { ModelConfig } from '../core/model/config.ts';
import { paramLayout, type ParamLayout, type ParamTensor } from '../core/model/params.ts';
import { ParamBuffers, placeOf, type ShardPlan } from './shards.ts';
import { GpuEmbedding, GpuHead } from './ends.ts';
import { blockPlan } from '../core/model/plan.ts';

export interface SamplingOptions {
  /** 0 = greedy. */
  temperature: number;
  topK?: number;
  topP?: number;
  seed?: number;
}

export interface GenerateOptions {
  maxNewTokens: number;
  sampling: SamplingOptions;
  /** Token ids that end a sequence (kept in the output). */
  stop?: number[];
  /** false: recompute the whole sequence for every token (the baseline the cache is measured against). */
  useCache?: boolean;
  /** false: prefill the whole prompt even where a kept prompt shares its start (see GpuGenerator's prefixSlots). */
  reusePrefix?: boolean;
  signal?: AbortSignal;
}

interface Caches {
  k: GPUBuffer[];
  v: GPUBuffer[];
}

/**
 * A kept prompt: a one-sequence KV cache and the tokens whose rows it holds (the prompt, then
 * the generated tokens fed back so far). `promptLen` of them came from the prompt.
 */
interface PrefixSlot {
  caches: Caches | null;
  ids: number[];
  promptLen: number;
  used: number;
  busy: boolean;
}

/** Counters of generate() since the generator was made: what was prefilled, reused and decoded, and how long it took. */
export interface GenerateStats {
  prompts: number;
  promptTokens: number;
  /** Prompt tokens whose K/V rows were taken from a kept prompt instead of computed. */
  reusedTokens: number;
  prefillMs: number;
  decodeTokens: number;
  decodeMs: number;
}

/** Length of the common start of a and b. */
export function sharedPrefixLength(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** A LoRA adapter generation runs with (e.g. a LoRA GpuModel's adapter, so it sees the latest one while it trains). */
export interface GeneratorLora {
  layout: LoraLayout;
  params: GPUBuffer;
}

/** Kernels and activations for S sequences × Tn new rows. */
class Graph {
  private constructor(
    readonly S: number,
    readonly Tn: number,
    private readonly kernels: {
      embed: GpuEmbedding;
      append: KvAppendKernel;
      attend: AttentionDecodeKernel;
      blocks: GpuBlocks;
      normF: NormKernel;
      head: GpuHead;
      lora?: GpuLora;
    },
    readonly bufs: { tokens: GPUBuffer; logits: GPUBuffer },
    /** One set of activations for every layer; each layer overwrites x with its output. */
    private readonly acts: BlockBuffers,
    /** Every buffer above (released by dispose). */
    private readonly owned: GPUBuffer[],
    private readonly rt: GpuRuntime,
  ) {}

  static async create(
    rt: GpuRuntime,
    c: ModelConfig,
    L: ParamLayout,
    shards: ShardPlan,
    S: number,
    Tn: number,
    Tmax: number,
    adapter?: GeneratorLora,
  ): Promise<Graph> {
    const rows = S * Tn;
    const C = c.dModel;
    const plan = blockPlan(c);
    const decode = { S, Tn, H: plan.heads, kvH: plan.kvHeads, D: plan.headSize, Tmax };
    const normShape = {
      rows,
      C,
      kind: blockPlan(c).norm,
      eps: c.normEps,
      gammaOffset: placeOf(shards, L.lnFWeight).offset,
      betaOffset: L.lnFBias ? placeOf(shards, L.lnFBias).offset : 0,
    };
    const [embed, append, attend, blocks, normF, head] = await Promise.all([
      GpuEmbedding.create(rt, c, L, shards, { rows, T: Tn }),
      KvAppendKernel.create(rt, decode),
      AttentionDecodeKernel.create(rt, decode),
      GpuBlocks.create(rt, c, L, { rows, T: Tn, maxPositions: Math.max(1024, Tmax), backward: false }, shards),
      NormKernel.create(rt, normShape),
      // Logits of each sequence's last row only: [S, V], whatever the prompt's length.
      GpuHead.create(rt, c, L, shards, { rows, backward: false, lastOf: Tn }),
    ]);
    const lora = adapter && (await GpuLora.create(rt, adapter.layout, { rows, backward: false }));
    if (lora) blocks.lora = { lora, params: adapter!.params };
    const owned: GPUBuffer[] = [];
    const f32 = (label: string, n: number) => {
      const b = rt.storage(`gen.${label}`, n * 4);
      owned.push(b);
      return b;
    };
    const [acts] = allocBlockBuffers(f32, plan, rows, 'shared');
    const bufs = { tokens: f32('tokens', rows), logits: f32('logits', S * c.vocabSize) };
    return new Graph(S, Tn, { embed, append, attend, blocks, normF, head, ...(lora && { lora }) }, bufs, acts, owned, rt);
  }

  /**
   * Encodes the forward of Tn new rows per sequence at cache rows pastLen.. (positions
   * prefixLen + pastLen + n), appending their K/V to `caches`, up to the logits of each
   * sequence's last row (logits [S, V]).
   */
  encode(pass: GPUComputePassEncoder, params: ParamBuffers, lnF: ParamTensor, caches: Caches, pastLen: number, prefix: { len: number; caches?: Caches }): void {
    const { embed, append, attend, blocks, normF, head } = this.kernels;
    const b = this.bufs;
    const acts = this.acts;
    const position = prefix.len + pastLen;
    const attention: BlockAttention = {
      position,
      forward: (p, l, a) => {
        append.encode(p, a.qkv, caches.k[l], caches.v[l], pastLen);
        const kv = { qkv: a.qkv, kCache: caches.k[l], vCache: caches.v[l], out: a.att, prefixK: prefix.caches?.k[l], prefixV: prefix.caches?.v[l] };
        attend.encode(p, kv, { pastLen, prefixLen: prefix.len });
      },
    };
    embed.setPositionOffset(position);
    embed.encodeForward(pass, b.tokens, params, acts.x);
    for (let l = 0; l < this.layers; l++) blocks.encodeForward(pass, params, l, acts, acts.x, attention);
    normF.encodeForward(pass, acts.x, params.buffer(lnF), acts.ln1, acts.ln1Stats);
    head.encodeForward(pass, acts.ln1, params, b.logits);
  }

  private get layers(): number {
    return this.kernels.blocks.layers;
  }

  dispose(): void {
    for (const k of Object.values(this.kernels)) k.dispose();
    this.rt.release(...this.owned);
    this.owned.length = 0;
  }
}

export class GpuGenerator {
  readonly layout: ParamLayout;
  /** The parameters' buffers (one, or the shards of a model larger than one binding). */
  readonly params: ParamBuffers;
  private readonly graphs = new Map<string, Promise<Graph>>();
  private readonly samplers = new Map<string, Promise<SamplingKernel>>();
  private readonly cacheBufs: GPUBuffer[] = [];
  private seqCaches: Caches | null = null;
  private prefixCaches: Caches | null = null;
  private readonly sampled: GPUBuffer;
  private readonly slots: PrefixSlot[] = [];
  private clock = 0;
  /** What generate() has done so far (for tokens/s and reuse figures). */
  readonly stats: GenerateStats = { prompts: 0, promptTokens: 0, reusedTokens: 0, prefillMs: 0, decodeTokens: 0, decodeMs: 0 };

  constructor(
    readonly rt: GpuRuntime,
    readonly config: ModelConfig,
    /**
     * The parameters: a model's (GpuModel.params, so generation sees the latest weights as it trains),
     * shards from ParamBuffers.upload, or one flat buffer holding the params.ts layout.
     */
    params: ParamBuffers | GPUBuffer,
    /**
     * prefixSlots (default 0): prompts whose KV rows generate() keeps, each in a cache of its
     * own; a new prompt that starts like a kept one prefills only from the first differing token.
     * Only for fixed weights: after the weights change, call forgetPrefixes().
     */
    readonly limits: { maxSequences: number; maxLength: number; prefixSlots?: number; lora?: GeneratorLora },
  ) {
    this.layout = paramLayout(config);
    this.params = params instanceof ParamBuffers ? params : ParamBuffers.wrap(rt, params, this.layout);
    if (config.positions === 'learned' && limits.maxLength > config.contextLength) {
      throw new RangeError(`generator: maxLength ${limits.maxLength} exceeds the context of ${config.contextLength} learned positions`);
    }
    this.sampled = rt.storage('gen.sampled', Math.max(4, limits.maxSequences * 4));
  }

  private caches(which: 'seq' | 'prefix'): Caches {
    const existing = which === 'seq' ? this.seqCaches : this.prefixCaches;
    if (existing) return existing;
    const c = this.allocCaches(which, which === 'seq' ? this.limits.maxSequences : 1);
    if (which === 'seq') this.seqCaches = c;
    else this.prefixCaches = c;
    return c;
  }

  /** Bytes of one cache row (one token's K, or its V, in one layer): grouped-query attention caches the key/value heads only. */
  private get cacheRowBytes(): number {
    return blockPlan(this.config).kvDim * 4;
  }

  private allocCaches(name: string, S: number): Caches {
    const bytes = S * this.limits.maxLength * this.cacheRowBytes;
    const c: Caches = { k: [], v: [] };
    for (let l = 0; l < this.config.layers; l++) {
      const k = this.rt.storage(`gen.${name}.k${l}`, bytes);
      const v = this.rt.storage(`gen.${name}.v${l}`, bytes);
      this.cacheBufs.push(k, v);
      c.k.push(k);
      c.v.push(v);
    }
    return c;
  }

  /** Graphs kept at most; prefill shapes vary with prompt length, so the oldest are let go. */
  static readonly MAX_GRAPHS = 8;

  private graph(S: number, Tn: number): Promise<Graph> {
    const key = `${S}x${Tn}`;
    let g = this.graphs.get(key);
    if (g) {
      this.graphs.delete(key); // re-insert: Map order is the recency order
    } else {
      g = Graph.create(this.rt, this.config, this.layout, this.params.plan, S, Tn, this.limits.maxLength, this.limits.lora);
      if (this.graphs.size >= GpuGenerator.MAX_GRAPHS) {
        const [oldKey, old] = this.graphs.entries().next().value!;
        this.graphs.delete(oldKey);
        void old.then((x) => x.dispose());
      }
    }
    this.graphs.set(key, g);
    return g;
  }

  /** Sampler for N rows of the graphs' logits (one row per sequence; shared: all N from the one row). */
  private sampler(N: number, shared: boolean, settings: SamplingSettings): Promise<SamplingKernel> {
    const V = this.config.vocabSize;
    const key = `${N}/${shared}`;
    let s = this.samplers.get(key);
    if (!s) {
      s = SamplingKernel.create(this.rt, { N, V, rowOffset: 0, rowStride: shared ? 0 : V }, settings);
      this.samplers.set(key, s);
    }
    return s.then((k) => (k.setSettings(settings), k));
  }

  private check(prompt: number[], maxNew: number, S: number) {
    if (prompt.length === 0) throw new RangeError('generate: the prompt is empty');
    if (S > this.limits.maxSequences) throw new RangeError(`generate: ${S} sequences exceed the generator's ${this.limits.maxSequences}`);
    if (prompt.length + maxNew > this.limits.maxLength) {
      throw new RangeError(`generate: ${prompt.length} prompt tokens + ${maxNew} new exceed the generator's ${this.limits.maxLength} (the model's context)`);
    }
    const V = this.config.vocabSize;
    for (const t of prompt) if (!(t >= 0 && t < V)) throw new RangeError(`generate: token ${t} is outside the vocabulary (0..${V - 1})`);
  }

  /** One submission: forward of `graph` on `tokens`, then sampling; returns the sampled ids. */
  private async run(
    graph: Graph,
    tokens: ArrayLike<number>,
    caches: Caches,
    pastLen: number,
    prefix: { len: number; caches?: Caches },
    sampler: SamplingKernel,
    step: number,
  ): Promise<Uint32Array> {
    this.rt.write(graph.bufs.tokens, Uint32Array.from(tokens));
    submit(this.rt, 'gen.step', (pass) => {
      graph.encode(pass, this.params, this.layout.lnFWeight, caches, pastLen, prefix);
      sampler.encode(pass, graph.bufs.logits, this.sampled, step);
    });
    return this.rt.readU32(this.sampled, sampler.shape.N);
  }

  private settings(o: SamplingOptions): SamplingSettings {
    return { temperature: o.temperature, topK: o.topK ?? 0, topP: o.topP ?? 1, seed: o.seed ?? 0 };
  }

  /**
   * Streams new token ids for one prompt. With prefix slots, the prompt's rows shared with a
   * kept prompt are taken from its cache and only the rest is prefilled; the tokens are the same.
   */
  async *generate(prompt: number[], o: GenerateOptions): AsyncGenerator<number> {
    this.check(prompt, o.maxNewTokens, 1);
    const settings = this.settings(o.sampling);
    const claim = o.useCache === false || o.reusePrefix === false ? null : this.claimSlot(prompt);
    const caches = claim ? this.slotCaches(claim.slot) : this.caches('seq');
    const reused = claim?.reuse ?? 0;
    const stop = new Set(o.stop ?? []);
    const seq = [...prompt];
    const stats = this.stats;
    stats.prompts++;
    stats.promptTokens += prompt.length;
    stats.reusedTokens += reused;
    try {
      for (let i = 0; i < o.maxNewTokens; i++) {
        if (o.signal?.aborted) return;
        const t0 = performance.now();
        let next: number;
        if (o.useCache === false || i === 0) {
          // Prefill from the first row not cached yet (or, without the cache, re-process everything so far).
          const from = i === 0 ? reused : 0;
          const g = await this.graph(1, seq.length - from);
          next = (await this.run(g, seq.slice(from), caches, from, { len: 0 }, await this.sampler(1, false, settings), i))[0];
          if (claim) Object.assign(claim.slot, { ids: [...prompt], promptLen: prompt.length });
        } else {
          const g = await this.graph(1, 1);
          next = (await this.run(g, [seq[seq.length - 1]], caches, seq.length - 1, { len: 0 }, await this.sampler(1, false, settings), i))[0];
          claim?.slot.ids.push(seq[seq.length - 1]);
        }
        if (i === 0) stats.prefillMs += performance.now() - t0;
        else {
          stats.decodeMs += performance.now() - t0;
          stats.decodeTokens++;
        }
        seq.push(next);
        yield next;
        if (stop.has(next)) return;
      }
    } finally {
      if (claim) claim.slot.busy = false;
    }
  }

  /**
   * The kept prompt to generate `prompt` in, and how many of its rows are reused: the free slot
   * sharing the longest start with it (ties: the least recently used). Where the new prompt
   * leaves that slot's prompt part-way (another trajectory under the same system prompt, a
   * branch), the shared rows are copied into the least recently used other slot, so the kept
   * prompt stays for a later request. The last prompt token is always recomputed: its logits
   * give the first new token. Null without free slots (generate() then uses its plain cache).
   */
  private claimSlot(prompt: readonly number[]): { slot: PrefixSlot; reuse: number } | null {
    while (this.slots.length < (this.limits.prefixSlots ?? 0)) this.slots.push({ caches: null, ids: [], promptLen: 0, used: 0, busy: false });
    const free = this.slots.filter((s) => !s.busy);
    if (free.length === 0) return null;
    const lru = (xs: PrefixSlot[]) => xs.reduce((a, b) => (b.used < a.used ? b : a));
    let best = lru(free);
    let shared = sharedPrefixLength(best.ids, prompt);
    for (const s of free) {
      const m = sharedPrefixLength(s.ids, prompt);
      if (m > shared || (m === shared && s.used < best.used)) [best, shared] = [s, m];
    }
    const reuse = Math.min(shared, prompt.length - 1);
    let slot = best;
    if (reuse > 0 && shared < best.promptLen && free.length > 1) {
      slot = lru(free.filter((s) => s !== best));
      this.copyRows(best, slot, reuse);
    }
    Object.assign(slot, { ids: prompt.slice(0, reuse), promptLen: reuse, busy: true, used: ++this.clock });
    return { slot, reuse };
  }

  private slotCaches(slot: PrefixSlot): Caches {
    return (slot.caches ??= this.allocCaches(`prompt${this.slots.indexOf(slot)}`, 1));
  }

  /** Copies the first `rows` K/V rows of every layer from one slot's cache to another's. */
  private copyRows(from: PrefixSlot, to: PrefixSlot, rows: number): void {
    const a = this.slotCaches(from);
    const b = this.slotCaches(to);
    const bytes = rows * this.cacheRowBytes;
    const enc = this.rt.device.createCommandEncoder({ label: 'gen.prompt.copy' });
    for (let l = 0; l < a.k.length; l++) {
      enc.copyBufferToBuffer(a.k[l], 0, b.k[l], 0, bytes);
      enc.copyBufferToBuffer(a.v[l], 0, b.v[l], 0, bytes);
    }
    this.rt.device.queue.submit([enc.finish()]);
  }

  /** Drops every kept prompt (their rows no longer match the weights, e.g. after a training step). */
  forgetPrefixes(): void {
    for (const s of this.slots) Object.assign(s, { ids: [], promptLen: 0 });
  }

  /**
   * G continuations of one prompt. shared = true prefills the prompt once and decodes all G
   * against that shared prefix; false prefills G copies (the baseline). Sequences stop at a stop
   * token or maxNewTokens; the result has each continuation's ids.
   */
  async generateGroup(
    prompt: number[],
    G: number,
    o: GenerateOptions & { shared?: boolean },
    timing?: { prefillMs: number; decodeMs: number },
  ): Promise<number[][]> {
    this.check(prompt, o.maxNewTokens, G);
    if (o.shared ?? true) return this.decodeRows(G, prompt.length, o, timing, prompt);
    return this.decodeRows(G, prompt.length, o, timing, null, Array.from({ length: G }, () => prompt).flat());
  }

  /**
   * One continuation of each prompt, all in one batch: the prompts have the same length (each
   * its own rows of the cache, prefilled together) and are decoded side by side, each sampled
   * with its own row of the sampler (so two equal prompts may differ when sampled). Episodes of
   * different tasks, or of one task after different turns, are rolled out this way.
   */
  async generateBatch(prompts: readonly number[][], o: GenerateOptions, timing?: { prefillMs: number; decodeMs: number }): Promise<number[][]> {
    if (!prompts.length) return [];
    const P = prompts[0].length;
    for (const [i, p] of prompts.entries()) {
      if (p.length !== P) throw new RangeError(`generateBatch: prompt ${i} has ${p.length} tokens, prompt 0 has ${P}; a batch's prompts have one length`);
      this.check(p, o.maxNewTokens, prompts.length);
    }
    return this.decodeRows(prompts.length, P, o, timing, null, prompts.flat());
  }

  /** Prefill (one shared prompt, or N own prompts of length P laid end to end), then decode N rows to a stop or maxNewTokens. */
  private async decodeRows(
    N: number,
    P: number,
    o: GenerateOptions,
    timing: { prefillMs: number; decodeMs: number } | undefined,
    sharedPrompt: number[] | null,
    ownPrompts?: number[],
  ): Promise<number[][]> {
    const settings = this.settings(o.sampling);
    const seq = this.caches('seq');
    const t0 = performance.now();
    let first: Uint32Array;
    let prefix: { len: number; caches?: Caches };
    if (sharedPrompt) {
      const pc = this.caches('prefix');
      first = await this.run(await this.graph(1, P), sharedPrompt, pc, 0, { len: 0 }, await this.sampler(N, true, settings), 0);
      prefix = { len: P, caches: pc };
    } else {
      first = await this.run(await this.graph(N, P), ownPrompts!, seq, 0, { len: 0 }, await this.sampler(N, false, settings), 0);
      prefix = { len: 0 };
    }
    const t1 = performance.now();
    const out = Array.from(first, (t) => [t]);
    const stop = new Set(o.stop ?? []);
    const done = out.map((s) => stop.has(s[0]));
    const decode = await this.graph(N, 1);
    const sampler = await this.sampler(N, false, settings);
    for (let i = 1; i < o.maxNewTokens && !done.every(Boolean); i++) {
      if (o.signal?.aborted) break;
      const last = out.map((s) => s[s.length - 1]);
      // Own-cache rows so far: the continuation minus the token being fed (plus the prompt when not shared).
      const pastLen = (sharedPrompt ? 0 : P) + i - 1;
      const next = await this.run(decode, last, seq, pastLen, prefix, sampler, i);
      next.forEach((t, g) => {
        if (done[g]) return;
        out[g].push(t);
        if (stop.has(t)) done[g] = true;
      });
    }
    if (timing) {
      timing.prefillMs = t1 - t0;
      timing.decodeMs = performance.now() - t1;
    }
    return out;
  }

  dispose(): void {
    for (const g of this.graphs.values()) void g.then((x) => x.dispose());
    for (const s of this.samplers.values()) void s.then((x) => x.dispose());
    this.graphs.clear();
    this.samplers.clear();
    this.rt.release(...this.cacheBufs, this.sampled);
    this.cacheBufs.length = 0;
    this.seqCaches = this.prefixCaches = null;
    this.slots.length = 0;
  }
}
