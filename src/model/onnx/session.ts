// A causal-LM decoder in Hugging Face's ONNX layout (layout.ts) run by onnxruntime-web: a forward
// pass over new tokens with the KV cache of the earlier ones, and token-by-token generation with
// the same sampling as our engine (src/reference/sampling.ts is the twin of the GPU sampler, so a
// seed draws the same tokens from the same logits). onnxruntime-web is imported on first use
// only: nothing loads it (or its wasm) unless an ONNX model is opened. The execution provider is
// WebGPU where the page has it, else WASM; in Node, WASM on one thread.
//
// On WebGPU the KV cache stays on the GPU between passes, as transformers.js keeps it: the
// session leaves its outputs in GPU buffers (preferredOutputLocation 'gpu-buffer'), present.N.*
// are fed back as the next pass's past_key_values.N.* as they are, and only the logits are read
// back. A cache's GPU buffers are freed when the caller releases it (releaseCache; generate()
// does it after each step and when it ends, is stopped or aborted) and, for any still alive, on
// dispose(). On WASM the same bookkeeping runs over CPU tensors. `stats` says where the cache went.
import { sampleRef } from '../../reference/sampling.ts';
import type { SamplingOptions } from '../generate.ts';
import { f16ToF32 } from '../../core/model/safetensors.ts';
import { checkDecoderLayout, OnnxLayoutError, type DecoderLayout } from './layout.ts';

type Ort = typeof import('onnxruntime-web');
type OrtTensor = import('onnxruntime-web').Tensor;
type OrtSession = import('onnxruntime-web').InferenceSession;

let ortModule: Promise<Ort> | null = null;
const inNode = typeof process !== 'undefined' && !!process.versions?.node;
/** Where the browser fetches onnxruntime-web's .wasm from (set by the page's worker: the copy bundled into the site). */
let wasmPaths: { wasm: string; mjs?: string } | null = null;

/**
 * Tells onnxruntime-web where its WebAssembly binary is (a URL of the site, never a CDN); called
 * before the first model is opened. A string import of the asset costs nothing: onnxruntime-web
 * itself is still imported on first use only.
 */
export function setOrtWasmPaths(paths: { wasm: string; mjs?: string }): void {
  wasmPaths = paths;
}

/** onnxruntime-web, imported once. */
export function loadOrt(): Promise<Ort> {
  ortModule ??= import('onnxruntime-web').then((ort) => {
    if (wasmPaths) ort.env.wasm.wasmPaths = wasmPaths;
    // Node's wasm backend runs best (and most predictably) on the calling thread.
    if (inNode) ort.env.wasm.numThreads = 1;
    // Warnings (an unknown CPU vendor, …) are not the user's business; errors still surface as exceptions.
    ort.env.logLevel = 'error';
    return ort;
  });
  return ortModule;
}

export type ExecutionProvider = 'auto' | 'webgpu' | 'wasm';

/** The providers to try in order: WebGPU where the page has navigator.gpu (never in Node), then WASM. */
export function executionProviders(ep: ExecutionProvider = 'auto', hasWebGpu = !inNode && typeof navigator !== 'undefined' && 'gpu' in navigator): string[] {
  if (ep === 'wasm') return ['wasm'];
  if (ep === 'webgpu') return ['webgpu'];
  return hasWebGpu ? ['webgpu', 'wasm'] : ['wasm'];
}

export interface OnnxDecoderOptions {
  /** Named in errors. */
  label?: string;
  /** The external-data files the model names, by the name it gives them (e.g. 'model.onnx_data'). */
  externalData?: { path: string; data: Uint8Array }[];
  executionProvider?: ExecutionProvider;
  /** KV heads and head width where the graph leaves them symbolic (config.json's num_key_value_heads, head_dim). */
  kvHeads?: number;
  headDim?: number;
}

/** The KV cache: present.N.* of the last run, fed back as past_key_values.N.*, and the tokens it holds. */
export interface KvCache {
  length: number;
  tensors: Map<string, OrtTensor>;
}

export interface ForwardResult {
  /** [tokens, vocab] float32, row-major. */
  logits: Float32Array;
  vocab: number;
  cache: KvCache;
}

export interface OnnxGenerateOptions {
  maxNewTokens: number;
  sampling: SamplingOptions;
  /** Ids that end generation (kept in the output, as transformers' generate() does). */
  stop?: readonly number[];
  signal?: AbortSignal;
}

/** Logits as float32 (float16 ones arrive as raw halves, or as a Float16Array where the browser has one). */
function toFloat32(type: string, data: unknown): Float32Array {
  if (type === 'float32') return data as Float32Array;
  if (type === 'float16') {
    if (!(data instanceof Uint16Array)) return Float32Array.from(data as ArrayLike<number>);
    const out = new Float32Array(data.length);
    for (let i = 0; i < data.length; i++) out[i] = f16ToF32(data[i]);
    return out;
  }
  throw new OnnxLayoutError(`logits are ${type}; a float32 or float16 output is expected`);
}

/** The tensor calls the cache bookkeeping needs (onnxruntime-web's Tensor has them). */
export interface CacheTensor {
  readonly location: string;
  dispose(): void;
}

/** A run's outputs sorted: the logits, the new cache (present.N.* under its past_key_values.N.* name) and anything else the graph gives (freed unread). */
export function splitOutputs<T>(out: Record<string, T>, layers: number): { logits: T; cache: Map<string, T>; other: T[] } {
  const cache = new Map<string, T>();
  for (let i = 0; i < layers; i++) {
    for (const kind of ['key', 'value']) {
      const t = out[`present.${i}.${kind}`];
      if (t === undefined) throw new OnnxLayoutError(`the model gave no present.${i}.${kind}`);
      cache.set(`past_key_values.${i}.${kind}`, t);
    }
  }
  if (out.logits === undefined) throw new OnnxLayoutError('the model gave no logits');
  const kept = new Set<T>([out.logits, ...cache.values()]);
  return { logits: out.logits, cache, other: Object.values(out).filter((t) => !kept.has(t)) };
}

/** What the decoder has done: passes, where the KV cache outputs arrived, and the cache tensors alive now. */
export interface DecoderStats {
  runs: number;
  /** present.N.* outputs that arrived in CPU memory: on WebGPU, cache read back from the GPU (none is); on WASM, all. */
  kvOnCpu: number;
  /** present.N.* outputs left on the GPU. */
  kvOnGpu: number;
  /** Cache tensors made by forward() and not released yet. */
  liveKv: number;
}

/**
 * The cache tensors a decoder has handed out and not yet freed. Each is freed once: releasing a
 * cache twice, or one that is not tracked (the empty cache), does nothing.
 */
export class CacheTracker<T extends CacheTensor> {
  private readonly live = new Set<T>();
  kvOnCpu = 0;
  kvOnGpu = 0;

  /** Counts where a new cache's tensors are and tracks them. */
  add(tensors: Iterable<T>): void {
    for (const t of tensors) {
      if (t.location === 'cpu' || t.location === 'cpu-pinned') this.kvOnCpu++;
      else this.kvOnGpu++;
      this.live.add(t);
    }
  }

  release(tensors: Iterable<T>): void {
    for (const t of tensors) if (this.live.delete(t)) t.dispose();
  }

  releaseAll(): void {
    this.release([...this.live]);
  }

  get size(): number {
    return this.live.size;
  }
}

/** Why onnxruntime-web refused a model: its message, or (its WebAssembly runtime stopped without one, throwing a bare number) what that usually means. */
export function loadFailure(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === 'number')
    return `its WebAssembly runtime stopped without a message (code ${e}), as it does on an operator or data type it cannot run; try another model file of the folder`;
  return String(e);
}

export class OnnxDecoder {
  /** What the cache holds per layer: [1, kvHeads, length, headDim] of kvType. */
  readonly kvHeads: number;
  readonly headDim: number;
  readonly kvType: 'float32' | 'float16';
  private readonly caches = new CacheTracker<OrtTensor>();
  private runs = 0;

  private constructor(
    private readonly ort: Ort,
    private readonly session: OrtSession,
    readonly layout: DecoderLayout,
    readonly executionProvider: string,
    kv: { kvHeads: number; headDim: number; kvType: 'float32' | 'float16' },
  ) {
    this.kvHeads = kv.kvHeads;
    this.headDim = kv.headDim;
    this.kvType = kv.kvType;
  }

  static async create(model: Uint8Array, options: OnnxDecoderOptions = {}): Promise<OnnxDecoder> {
    const ort = await loadOrt();
    const label = options.label ?? 'the ONNX model';
    const providers = executionProviders(options.executionProvider);
    let session: OrtSession | undefined;
    let lastError: unknown;
    let used = providers[0];
    // One provider at a time, so the one that took the model is known (and WASM is the fallback).
    for (const ep of providers) {
      try {
        session = await ort.InferenceSession.create(model, {
          executionProviders: [ep],
          graphOptimizationLevel: 'all',
          // On WebGPU every output stays in a GPU buffer: the cache is fed back from there, the logits read back.
          ...(ep === 'webgpu' && { preferredOutputLocation: 'gpu-buffer' as const }),
          ...(options.externalData && { externalData: options.externalData }),
        });
        used = ep;
        break;
      } catch (e) {
        lastError = e;
      }
    }
    if (!session) throw new OnnxLayoutError(`${label}: onnxruntime-web cannot load it: ${loadFailure(lastError)}`);
    const layout = checkDecoderLayout(session.inputNames, session.outputNames, label);
    const meta = session.inputMetadata.find((m) => m.name === 'past_key_values.0.key');
    const shape = meta?.isTensor ? meta.shape : [];
    const kvHeads = typeof shape[1] === 'number' ? shape[1] : options.kvHeads;
    const headDim = typeof shape[3] === 'number' ? shape[3] : options.headDim;
    if (!kvHeads || !headDim) {
      void session.release();
      throw new OnnxLayoutError(
        `${label}: the KV cache's heads and head width are not in the graph and not given (config.json's num_key_value_heads and head_dim)`,
      );
    }
    const kvType = meta?.isTensor && meta.type === 'float16' ? 'float16' : 'float32';
    return new OnnxDecoder(ort, session, layout, used, { kvHeads, headDim, kvType });
  }

  /** Passes run, where their KV cache outputs arrived, and the cache tensors alive now. */
  get stats(): DecoderStats {
    return { runs: this.runs, kvOnCpu: this.caches.kvOnCpu, kvOnGpu: this.caches.kvOnGpu, liveKv: this.caches.size };
  }

  /** The empty cache (no tokens yet; CPU tensors, nothing to release). */
  emptyCache(): KvCache {
    const tensors = new Map<string, OrtTensor>();
    const dims = [1, this.kvHeads, 0, this.headDim];
    for (let i = 0; i < this.layout.layers; i++) {
      for (const kind of ['key', 'value']) {
        tensors.set(
          `past_key_values.${i}.${kind}`,
          this.kvType === 'float16' ? new this.ort.Tensor('float16', new Uint16Array(0), dims) : new this.ort.Tensor('float32', new Float32Array(0), dims),
        );
      }
    }
    return { length: 0, tensors };
  }

  /** The inputs of a pass over `ids` after the tokens `cache` holds. */
  private feeds(ids: readonly number[], cache: KvCache): Record<string, OrtTensor> {
    const { Tensor } = this.ort;
    const n = ids.length;
    const total = cache.length + n;
    const feeds: Record<string, OrtTensor> = {
      input_ids: new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, n]),
      attention_mask: new Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]),
    };
    if (this.layout.hasPositionIds)
      feeds.position_ids = new Tensor(
        'int64',
        BigInt64Array.from({ length: n }, (_, i) => BigInt(cache.length + i)),
        [1, n],
      );
    if (this.layout.hasUseCacheBranch) feeds.use_cache_branch = new Tensor('bool', [cache.length > 0], [1]);
    for (const [name, t] of cache.tensors) feeds[name] = t;
    return feeds;
  }

  /**
   * Runs `ids` after the tokens `cache` holds (one sequence); the logits of every new token and the
   * grown cache. `cache` stays valid (the caller may run from it again); release it when done with
   * it (releaseCache), as the new one.
   */
  async forward(ids: readonly number[], cache: KvCache = this.emptyCache()): Promise<ForwardResult> {
    const out = await this.session.run(this.feeds(ids, cache));
    this.runs++;
    const { logits, cache: tensors, other } = splitOutputs(out, this.layout.layers);
    this.caches.add(tensors.values());
    for (const t of other) t.dispose();
    try {
      const vocab = logits.dims[logits.dims.length - 1];
      // Read back (and, on the GPU, freed): the only output that leaves the device.
      const data = await logits.getData(true);
      return { logits: toFloat32(logits.type, data), vocab, cache: { length: cache.length + ids.length, tensors } };
    } catch (e) {
      this.caches.release(tensors.values());
      throw e;
    } finally {
      logits.dispose();
    }
  }

  /** Frees a cache forward() returned (its GPU buffers on WebGPU); again, or for the empty cache, nothing. */
  releaseCache(cache: KvCache): void {
    this.caches.release(cache.tensors.values());
  }

  /** Generates after `prompt`: the prompt in one pass, then one token per pass; yields each new id. Every cache is freed by the time it ends, stops or is aborted. */
  async *generate(prompt: readonly number[], o: OnnxGenerateOptions): AsyncGenerator<number> {
    if (!prompt.length) throw new RangeError('ONNX generation: the prompt is empty');
    const stop = new Set(o.stop ?? []);
    const seed = o.sampling.seed ?? Math.floor(Math.random() * 2 ** 32);
    let step = await this.forward(prompt);
    try {
      for (let i = 0; i < o.maxNewTokens; i++) {
        if (o.signal?.aborted) return;
        const last = step.logits.subarray(step.logits.length - step.vocab);
        const { temperature, topK, topP } = o.sampling;
        const id = sampleRef(last, 1, step.vocab, { temperature, topK: topK ?? 0, topP: topP ?? 1, seed, step: i }).tokens[0];
        yield id;
        if (stop.has(id) || i + 1 === o.maxNewTokens) return;
        const next = await this.forward([id], step.cache);
        this.releaseCache(step.cache);
        step = next;
      }
    } finally {
      this.releaseCache(step.cache);
    }
  }

  /** Frees every cache still alive, then the session. */
  dispose(): void {
    this.caches.releaseAll();
    void this.session.release();
  }
}
