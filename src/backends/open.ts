// The one opener: a BackendRef (src/core/backendRef.ts) in, a backend ready to generate out, for
// every caller: the Playground's, Bench's and optimizer's jobs in the worker, `lwm infer` and
// `lwm optimize`, and the server. Where a model's bytes come from is the caller's BackendSource
// (the worker reads browser storage and the files a page picked; Node reads paths); everything
// else (which loader, which request layout, the model's generation defaults, what the Playground
// shows of it) is decided here once.
//
// The loaders are imported when a model of their kind is opened, so a page that opens only an
// endpoint or a baseline does not load the GPU engine or onnxruntime.
import {
  backendKey,
  checkpointLabel,
  type BackendRef,
  type CheckpointRef,
  type EndpointRef,
  type FolderRef,
  type GenerationSettings,
} from '../core/backendRef.ts';
import { defaultAnswerTokens, type GenerateOptions, type LwmBackend, type TurnRequest } from '../core/backend.ts';
import { requestFormFor, type RequestForm } from '../core/optimize/evaluate.ts';
import { contextReport, type ContextReport } from '../core/playground/context.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import type { GenerateStats } from '../model/generate.ts';
import type { ModelFiles } from '../model/hf/files.ts';
import { copyLastBackend, referenceBackend } from './baselines.ts';
import { BackendError } from './errors.ts';

/** Where the opener finds what a reference names, in the place it runs. */
export interface BackendSource {
  /** The GPU a checkpoint or a Hugging Face folder runs on (the worker's device; Dawn in Node). */
  gpu(): Promise<GpuRuntime>;
  /** A checkpoint's bytes (a BackendError, or the source's own error, when they cannot be read). */
  checkpoint(c: CheckpointRef): Promise<Uint8Array>;
  /** A folder's files. */
  folder(f: FolderRef, kind: 'hf' | 'onnx'): Promise<ModelFiles>;
  /** An endpoint's API key (never stored with a reference). */
  apiKey?(e: EndpointRef): string | undefined;
  /** The page an endpoint is called from (advice on CORS), or null in Node; absent: the global origin, if any. */
  pageOrigin?: string | null;
  log?(message: string): void;
}

/** What a person is shown of an opened model (the Playground's model line). */
export interface ModelInfo {
  /** backendKey of the reference it was opened from. */
  id: string;
  name: string;
  stage: string;
  step: number;
  contextLength: number;
  vocabSize: number;
  layers: number;
  dModel: number;
  /** The template it was trained with (used unless a request carries one); 'chat template' for a folder that lays turns out with its own. */
  template: string;
  /** A folder's architecture (LlamaForCausalLM, ...). */
  architecture?: string;
  /** Where generation stops (a folder: generation_config.json's eos ids). */
  stopIds?: number[];
  /** A Hugging Face folder: how its weights are held on the GPU and the bytes they take there. */
  weights?: { storage: 'f32' | 'f16'; bytes: number };
  /**
   * An ONNX folder: the model file opened and onnxruntime-web's execution provider running it
   * ('webgpu', 'wasm'); after a generation, where the decoder's KV cache outputs have arrived so
   * far (src/model/onnx/session.ts's stats: on WebGPU all stay on the GPU) and how many are alive.
   */
  onnx?: { file: string; executionProvider: string; kv?: { onGpu: number; onCpu: number; live: number } };
}

/** A backend ready to generate, and how to run it. */
export interface OpenedBackend {
  ref: BackendRef;
  backend: LwmBackend;
  /** A model's (absent for an endpoint and the baselines). */
  info?: ModelInfo;
  /** Tokens a prompt and its generation may take together; null: not known here (an endpoint, a baseline). */
  contextLength: number | null;
  /**
   * How the backend lays out a request given a template (prompt optimization): 'turn' when it
   * renders a turn request with the request's template (our checkpoints, ONNX exports without a
   * chat template, the baselines), 'chat' when it is sent chat messages (an endpoint, a folder
   * with a chat template of its own and no trained template).
   */
  form: RequestForm;
  /** Requests in flight at once. */
  concurrency: number;
  /** The context bar of a turn: how the prompt fills the model's context (null where there is nothing to measure: an ONNX export of ours, a baseline). */
  contextReport(request: TurnRequest, maxTokens: number): ContextReport | null;
  /** Raw token ids in, generated ids out (a Hugging Face folder only). */
  generateIds?(
    promptIds: number[],
    o: { maxTokens: number; temperature: number; topK?: number; topP?: number; seed?: number; signal?: AbortSignal },
  ): AsyncIterable<number>;
  /** The generator's counters (our engine): prompt tokens prefilled and reused. */
  stats?: Readonly<GenerateStats>;
  /** After a generation: refreshes what `info` says that changes (an ONNX decoder's KV cache). */
  refresh?(): void;
  dispose(): void;
}

export interface OpenOptions {
  /** The backend's name in tables and records (default: the model's own, e.g. `local:sft-300`). */
  name?: string;
}

const none = () => null;

/** A folder's context report; its tokenizer's or template's refusal is the folder's fault. */
function folderReport(report: () => ContextReport | null): ContextReport | null {
  try {
    return report();
  } catch (e) {
    throw new BackendError((e as Error).message, 'folder');
  }
}

function named(backend: LwmBackend, name: string | undefined): LwmBackend {
  return name === undefined ? backend : { name, generate: (r, o) => backend.generate(r, o) };
}

/** The generation options a model runs with: what was asked, else its defaults; a BackendError when the output budget leaves no room for a prompt. */
export function generationFor(
  opened: Pick<OpenedBackend, 'ref' | 'backend' | 'contextLength'>,
  asked: GenerationSettings = {},
): Omit<GenerateOptions, 'signal'> {
  const sampling = {
    ...(asked.topP !== undefined && { topP: asked.topP }),
    ...(asked.topK !== undefined && { topK: asked.topK }),
    ...(asked.seed !== undefined && { seed: asked.seed }),
  };
  const { ref, contextLength: context } = opened;
  if (ref.kind === 'copy-last' || ref.kind === 'reference') return { maxTokens: 1, temperature: 0 };
  if (ref.kind === 'endpoint' || context === null) return { maxTokens: asked.maxTokens ?? 32768, temperature: asked.temperature ?? 0.6, ...sampling };
  const maxTokens = asked.maxTokens ?? defaultAnswerTokens(context);
  if (!(maxTokens >= 1) || maxTokens >= context) {
    throw new BackendError(
      `${opened.backend.name}: ${maxTokens} new tokens leave no room for a prompt in the model's ${context}-token context; choose from 1 to ${context - 1} (a few less leaves the prompt more room).`,
      'settings',
    );
  }
  return { maxTokens, temperature: asked.temperature ?? 0, ...sampling };
}

async function openCheckpoint(ref: Extract<BackendRef, { kind: 'checkpoint' }>, source: BackendSource, o: OpenOptions): Promise<OpenedBackend> {
  const c = ref.checkpoint;
  const label = checkpointLabel(c);
  const [{ CheckpointError, loadCheckpoint }, { openCheckpointBackend }] = await Promise.all([
    import('../core/model/checkpoint.ts'),
    import('./checkpoint.ts'),
  ]);
  // The GPU first: without one there is nothing to read the checkpoint for.
  const rt = await source.gpu();
  const bytes = await source.checkpoint(c);
  let ck;
  try {
    ck = loadCheckpoint(bytes, { source: label });
  } catch (e) {
    if (e instanceof CheckpointError && /config/.test(e.message)) {
      throw new BackendError(
        `${label} is not an LWM Studio checkpoint: it carries no model config, tokenizer or training template in its metadata. ` +
          'LWM Studio runs checkpoints trained here (the Train view, or `lwm train`); a model from elsewhere can be served behind an OpenAI-compatible endpoint instead.',
        'checkpoint',
      );
    }
    throw e;
  }
  if (!ck.extraMetadata?.tokenizer && !ck.extraMetadata?.hf_base) {
    throw new BackendError(
      `${label} holds no tokenizer (metadata "tokenizer"), so its token ids cannot be turned into text: it was not written by LWM Studio training. ` +
        'Use a checkpoint from the Train view or `lwm train`, or serve the model behind an OpenAI-compatible endpoint.',
      'checkpoint',
    );
  }
  let open;
  try {
    open = openCheckpointBackend(rt, ck, {
      source: label,
      ...(o.name !== undefined && { name: o.name }),
      ...(c.template !== undefined && { template: c.template }),
      ...(c.prefixSlots !== undefined && { prefixSlots: c.prefixSlots }),
      ...(c.weights && { weights: c.weights }),
    });
  } catch (e) {
    if (e instanceof CheckpointError) throw new BackendError(e.message, 'checkpoint');
    throw e;
  }
  const cfg = ck.config;
  const opened = open;
  return {
    ref,
    backend: opened.backend,
    info: {
      id: backendKey(ref),
      name: opened.backend.name,
      stage: ck.extraMetadata?.stage ?? 'checkpoint',
      step: ck.step,
      contextLength: cfg.contextLength,
      vocabSize: cfg.vocabSize,
      layers: cfg.layers,
      dModel: cfg.dModel,
      template: opened.template.version,
    },
    contextLength: cfg.contextLength,
    form: requestFormFor({ kind: 'checkpoint' }),
    concurrency: 1,
    stats: opened.stats,
    // A fine-tune of a Hugging Face model: the template wrapped in the model's chat format, fitted as it is sent.
    contextReport: (request, maxTokens) =>
      opened.trained
        ? opened.trained.contextReport({ ...request, template: request.template ?? opened.template }, cfg.contextLength, maxTokens)
        : contextReport(opened.tokenizer, request.template ?? opened.template, request, cfg.contextLength, maxTokens),
    dispose: () => opened.dispose(),
  };
}

async function openHf(ref: Extract<BackendRef, { kind: 'hf' }>, source: BackendSource, o: OpenOptions): Promise<OpenedBackend> {
  const [{ loadHfBackend }, { hfContextReport }] = await Promise.all([import('./folders.ts'), import('./hf.ts')]);
  const files = await source.folder(ref.hf, 'hf');
  const hf = await loadHfBackend(await source.gpu(), files, ref.hf, o.name);
  const c = hf.model.config;
  const tok = hf.model.tokenizer;
  return {
    ref,
    backend: hf.backend,
    info: {
      id: backendKey(ref),
      name: hf.backend.name,
      stage: 'pretrained',
      step: 0,
      contextLength: hf.context,
      vocabSize: c.vocabSize,
      layers: c.layers,
      dModel: c.dModel,
      template: hf.trained ? `${hf.trained.template.version} in the chat template` : hf.model.hasChatTemplate ? 'chat template' : 'none',
      architecture: hf.model.hf.architecture,
      stopIds: hf.model.stopIds,
      weights: { storage: ref.hf.weights ?? 'f32', bytes: hf.weightBytes },
    },
    contextLength: hf.context,
    // A fine-tune of ours (lwm_template.json) takes turns in the layout it trained on; any other folder, chat messages.
    form: requestFormFor({ kind: 'hf', chatTemplate: !hf.model.template }),
    concurrency: 1,
    stats: hf.stats,
    contextReport(request, maxTokens) {
      if (!tok) throw new BackendError(`${hf.model.name} has no tokenizer (tokenizer.json), so a turn cannot be turned into token ids.`, 'folder');
      return folderReport(() => (hf.trained ? hf.trained.contextReport(request, hf.context, maxTokens) : hfContextReport(tok, request, hf.context, maxTokens)));
    },
    generateIds: (ids, g) => hf.generateIds(ids, g),
    dispose: () => hf.dispose(),
  };
}

async function openOnnx(ref: Extract<BackendRef, { kind: 'onnx' }>, source: BackendSource, o: OpenOptions): Promise<OpenedBackend> {
  const [{ openOnnxFolder }, { hfContextReport }, { trainedChat }] = await Promise.all([import('./folders.ts'), import('./hf.ts'), import('./trainedChat.ts')]);
  const files = await source.folder(ref.onnx, 'onnx');
  const opened = await openOnnxFolder(files, {
    ...(ref.onnx.file !== undefined && { file: ref.onnx.file }),
    execution: ref.onnx.execution,
    ...(o.name !== undefined && { name: o.name }),
  });
  const m = opened.model;
  source.log?.(`${opened.backend.name}: ${m.file} in onnxruntime-web on ${m.decoder.executionProvider === 'webgpu' ? 'WebGPU' : 'WASM'}`);
  const c = m.rawConfig ?? {};
  const num = (v: unknown) => (typeof v === 'number' ? v : 0);
  const info: ModelInfo = {
    id: backendKey(ref),
    name: opened.backend.name,
    stage: 'onnx',
    step: 0,
    contextLength: opened.context,
    vocabSize: num(c.vocab_size),
    layers: m.decoder.layout.layers,
    dModel: num(c.hidden_size ?? c.n_embd),
    template: m.hasChatTemplate ? (m.template ? `${m.template.version} in the chat template` : 'chat template') : 'LWM template',
    architecture: Array.isArray(c.architectures) && typeof c.architectures[0] === 'string' ? c.architectures[0] : 'ONNX decoder',
    stopIds: m.stopIds,
    onnx: { file: m.file, executionProvider: m.decoder.executionProvider },
  };
  const tok = m.tokenizer!;
  return {
    ref,
    backend: opened.backend,
    info,
    contextLength: opened.context,
    // A chat model is sent messages; our exports (no chat template) and fine-tunes of ours (lwm_template.json) take turns.
    form: requestFormFor({ kind: 'onnx', chatTemplate: m.hasChatTemplate && !m.template }),
    concurrency: 1,
    contextReport(request, maxTokens) {
      if (!m.hasChatTemplate) return null;
      return folderReport(() => {
        const trained = m.template ? trainedChat(tok, m.stopIds, m.template) : null;
        return trained ? trained.contextReport(request, opened.context, maxTokens) : hfContextReport(tok, request, opened.context, maxTokens);
      });
    },
    refresh() {
      const s = m.decoder.stats;
      info.onnx!.kv = { onGpu: s.kvOnGpu, onCpu: s.kvOnCpu, live: s.liveKv };
    },
    dispose: () => m.decoder.dispose(),
  };
}

async function openEndpoint(ref: Extract<BackendRef, { kind: 'endpoint' }>, source: BackendSource, o: OpenOptions): Promise<OpenedBackend> {
  const { endpointBackend } = await import('./endpoint.ts');
  const e = ref.endpoint;
  const concurrency = e.concurrency ?? 4;
  const backend = endpointBackend({
    baseUrl: e.baseUrl,
    model: e.model,
    apiKey: source.apiKey?.(e),
    maxConcurrency: concurrency,
    ...(e.timeoutMs !== undefined && { timeoutMs: e.timeoutMs }),
    ...(e.retries !== undefined && { retries: e.retries }),
    ...(e.stream !== undefined && { stream: e.stream }),
    ...(source.pageOrigin !== undefined && { pageOrigin: source.pageOrigin }),
  });
  return {
    ref,
    backend: named(backend, o.name),
    contextLength: null,
    form: requestFormFor({ kind: 'endpoint' }),
    concurrency,
    contextReport: none,
    dispose() {},
  };
}

/** Opens the model a reference names, from `source`. */
export async function openBackend(ref: BackendRef, source: BackendSource, o: OpenOptions = {}): Promise<OpenedBackend> {
  switch (ref.kind) {
    case 'copy-last':
    case 'reference': {
      const backend = named(ref.kind === 'copy-last' ? copyLastBackend() : referenceBackend(), o.name);
      return { ref, backend, contextLength: null, form: requestFormFor({ kind: ref.kind }), concurrency: 1, contextReport: none, dispose() {} };
    }
    case 'checkpoint':
      return openCheckpoint(ref, source, o);
    case 'hf':
      return openHf(ref, source, o);
    case 'onnx':
      return openOnnx(ref, source, o);
    case 'endpoint':
      return openEndpoint(ref, source, o);
    default:
      throw new BackendError(
        `no backend of kind ${JSON.stringify((ref as { kind: unknown }).kind)}: a model is a checkpoint, a Hugging Face folder, an ONNX folder, an endpoint, copy-last or reference`,
      );
  }
}

/** An opened backend with the generation options it runs a batch of turns with (a benchmark, an optimization, `lwm infer`). */
export interface ReadyBackend extends OpenedBackend {
  generate: Omit<GenerateOptions, 'signal'>;
}

/** openBackend, then generationFor `asked` (the model is freed again when the settings do not fit it). */
export async function openReady(ref: BackendRef, source: BackendSource, asked: GenerationSettings = {}, o: OpenOptions = {}): Promise<ReadyBackend> {
  const opened = await openBackend(ref, source, o);
  try {
    return { ...opened, generate: generationFor(opened, asked) };
  } catch (e) {
    opened.dispose();
    throw e;
  }
}
