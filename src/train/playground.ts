// The Playground's 'generate' job: a checkpoint of ours on the worker's GPU (a run's checkpoint
// from browser storage, or a .safetensors file the user dropped), opened with
// openCheckpointBackend so it is prompted with the template it was trained with, or a Hugging
// Face model folder the user picked (its File objects; loaded by src/train/hf.ts, prompted with
// the model's own chat template in the AgentWorldBench message layout), or an ONNX folder the user
// picked (its chosen model file in onnxruntime-web, src/train/onnx.ts: WebGPU or WASM, no device of
// ours, so it runs in a browser without WebGPU), generating one turn's observation and streaming
// it to the page ('text' messages) with its token rate ('progress'). The loaded model stays
// loaded between turns (and jobs), so each turn costs only its generation; another model, a
// release request or a new device replaces it.
import type { TurnRequest } from '../core/backend.ts';
import { contextReport, type ContextReport } from '../core/playground/context.ts';
import type { PromptTemplate } from '../core/templates/index.ts';
import { openCheckpointBackend, type CheckpointBackend } from '../backends/checkpoint.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { CheckpointError, loadCheckpoint } from '../model/checkpoint.ts';
import { loadCheckpointBytes } from '../storage/runs.ts';
import { hfContextReport, type HfBackend } from '../backends/hf.ts';
import type { LwmBackend } from '../core/backend.ts';
import type { LoadedOnnxModel } from '../model/onnx/load.ts';
import { folderOf, loadHfBackend } from './hf.ts';
import { onnxFolderOf, openOnnxFolder } from './onnx.ts';
import type { OnnxExecution } from './onnxFolder.ts';
import type { HfFolderFile, HfRunSettings } from './hfFolder.ts';
import { UserFacingError, type JobContext } from './host.ts';

/** Which checkpoint: stored under `key` (a run's), or a file whose bytes the page sends until the worker holds it. */
export type PlaygroundModel =
  | { source: 'run'; key: string; label: string }
  | { source: 'file'; id: string; name: string; bytes?: Uint8Array }
  /** A Hugging Face folder: its files travel with every job (File handles, not bytes), loaded for `settings`. */
  | { source: 'hf'; id: string; name: string; files: HfFolderFile[]; settings: HfRunSettings }
  /** An ONNX folder: its files travel with every job; `file` is the model file chosen (absent: the folder's default). */
  | { source: 'onnx'; id: string; name: string; files: HfFolderFile[]; file?: string; execution: OnnxExecution };

export interface PlaygroundSampling {
  maxTokens: number;
  temperature: number;
  topK?: number;
  topP?: number;
  seed?: number;
}

export type GenerateJobSpec = {
  kind: 'generate';
  model: PlaygroundModel;
  /** The turn to predict; without it (and without promptIds) the job only loads the model and reports it. */
  request?: TurnRequest;
  /** Raw token ids to continue instead of a turn (a Hugging Face folder only): the result carries the generated ids. */
  promptIds?: number[];
  /** A template to render with instead of the one the checkpoint was trained with. */
  template?: PromptTemplate;
  sampling?: PlaygroundSampling;
} | {
  kind: 'generate';
  /** Frees the loaded model's GPU memory (the page left the Playground). */
  release: true;
};

/** What the page shows of the loaded model. */
export interface PlaygroundModelInfo {
  id: string;
  name: string;
  stage: string;
  step: number;
  contextLength: number;
  vocabSize: number;
  layers: number;
  dModel: number;
  /** The template it was trained with (used unless the page sends one); 'chat template' for a Hugging Face folder. */
  template: string;
  /** A Hugging Face folder's architecture (LlamaForCausalLM, ...). */
  architecture?: string;
  /** Where generation stops (a Hugging Face folder: generation_config.json's eos ids). */
  stopIds?: number[];
  /**
   * An ONNX folder: the model file opened and onnxruntime-web's execution provider running it
   * ('webgpu', 'wasm'); after a generation, where the decoder's KV cache outputs have arrived so
   * far (src/model/onnx/session.ts's stats: on WebGPU all stay on the GPU) and how many are alive.
   */
  onnx?: { file: string; executionProvider: string; kv?: { onGpu: number; onCpu: number; live: number } };
}

/** 'progress' records of a generate job. */
export type GenerateProgress = { kind: 'model'; model: PlaygroundModelInfo } | { kind: 'context'; context: ContextReport } | { kind: 'tokens'; tokens: number; ms: number };

export interface GenerateJobResult {
  model: PlaygroundModelInfo;
  text?: string;
  tokens?: number;
  ms?: number;
  stopped?: boolean;
  context?: ContextReport;
  /** The generated ids (a promptIds job), stop id included as transformers' generate() returns it. */
  ids?: number[];
}

/** The error a file job without bytes gets when the worker does not hold that file (a fresh worker): the page sends them again. */
export const MODEL_NOT_LOADED = 'playground: the model file is not loaded in this worker; send its bytes';

type Loaded = { id: string; info: PlaygroundModelInfo } & (
  | { kind: 'checkpoint'; rt: GpuRuntime; open: CheckpointBackend }
  | { kind: 'hf'; rt: GpuRuntime; hf: HfBackend }
  | { kind: 'onnx'; onnx: LoadedOnnxModel; backend: LwmBackend }
);

let loaded: Loaded | null = null;

function modelId(m: PlaygroundModel): string {
  if (m.source === 'onnx') return `onnx:${m.id}:${m.file ?? 'default'}:${m.execution}`;
  return m.source === 'run' ? `run:${m.key}` : m.source === 'file' ? `file:${m.id}` : `hf:${m.id}:${m.settings.context ?? 'auto'}:${m.settings.memoryGiB}`;
}

/** Frees the loaded model (its device may already be gone: then there is nothing to free). */
export function releasePlaygroundModel(): void {
  const l = loaded;
  loaded = null;
  if (l?.kind === 'onnx') l.onnx.decoder.dispose();
  else if (l && !l.rt.lost) (l.kind === 'checkpoint' ? l.open : l.hf).dispose();
}

async function checkpointBytes(model: Extract<PlaygroundModel, { source: 'run' | 'file' }>): Promise<{ bytes: Uint8Array; source: string }> {
  if (model.source === 'run') {
    const bytes = await loadCheckpointBytes(model.key).catch((e: Error) => {
      throw new UserFacingError(`The checkpoint ${model.label} could not be read from browser storage (${e.message}); it may have been deleted in the Train view.`);
    });
    return { bytes, source: model.label };
  }
  if (!model.bytes) throw new UserFacingError(MODEL_NOT_LOADED);
  return { bytes: model.bytes, source: model.name };
}

function openOurs(rt: GpuRuntime, id: string, bytes: Uint8Array, source: string): Loaded {
  let ck;
  try {
    ck = loadCheckpoint(bytes, { source });
  } catch (e) {
    if (e instanceof CheckpointError && /config/.test(e.message)) {
      throw new UserFacingError(
        `${source} is not an LWM Studio checkpoint: it carries no model config, tokenizer or training template in its metadata. ` +
          'The Playground runs checkpoints trained here (Train view, or `lwm train`); a model from elsewhere can be served behind an OpenAI-compatible endpoint instead.',
      );
    }
    throw e;
  }
  if (!ck.extraMetadata?.tokenizer) {
    throw new UserFacingError(
      `${source} holds no tokenizer (metadata "tokenizer"), so its token ids cannot be turned into text: it was not written by LWM Studio training. ` +
        'Use a checkpoint from the Train view or `lwm train`, or serve the model behind an OpenAI-compatible endpoint.',
    );
  }
  const open = openCheckpointBackend(rt, ck, { source });
  const c = ck.config;
  const info: PlaygroundModelInfo = { id, name: open.backend.name, stage: ck.extraMetadata?.stage ?? 'checkpoint', step: ck.step, contextLength: c.contextLength, vocabSize: c.vocabSize, layers: c.layers, dModel: c.dModel, template: open.template.version };
  return { kind: 'checkpoint', rt, id, open, info };
}

async function openFolder(rt: GpuRuntime, id: string, model: Extract<PlaygroundModel, { source: 'hf' }>): Promise<Loaded> {
  const hf = await loadHfBackend(rt, folderOf(model.files, model.name), model.settings);
  const c = hf.model.config;
  const info: PlaygroundModelInfo = {
    id,
    name: hf.backend.name,
    stage: 'pretrained',
    step: 0,
    contextLength: hf.context,
    vocabSize: c.vocabSize,
    layers: c.layers,
    dModel: c.dModel,
    template: hf.model.hasChatTemplate ? 'chat template' : 'none',
    architecture: hf.model.hf.architecture,
    stopIds: hf.model.stopIds,
  };
  return { kind: 'hf', rt, id, hf, info };
}

async function openOnnx(id: string, model: Extract<PlaygroundModel, { source: 'onnx' }>): Promise<Loaded> {
  const o = await openOnnxFolder(onnxFolderOf(model.files, model.name), { file: model.file, execution: model.execution });
  const m = o.model;
  const c = m.rawConfig ?? {};
  const num = (v: unknown) => (typeof v === 'number' ? v : 0);
  const info: PlaygroundModelInfo = {
    id,
    name: o.backend.name,
    stage: 'onnx',
    step: 0,
    contextLength: o.context,
    vocabSize: num(c.vocab_size),
    layers: m.decoder.layout.layers,
    dModel: num(c.hidden_size ?? c.n_embd),
    template: m.hasChatTemplate ? 'chat template' : 'LWM template',
    architecture: Array.isArray(c.architectures) && typeof c.architectures[0] === 'string' ? c.architectures[0] : 'ONNX decoder',
    stopIds: m.stopIds,
    onnx: { file: m.file, executionProvider: m.decoder.executionProvider },
  };
  return { kind: 'onnx', id, onnx: m, backend: o.backend, info };
}

async function ensureModel(ctx: JobContext, model: PlaygroundModel): Promise<Loaded> {
  const id = modelId(model);
  if (model.source === 'onnx') {
    if (loaded?.id === id) return loaded;
    releasePlaygroundModel();
    loaded = await openOnnx(id, model);
    return loaded;
  }
  const rt = await ctx.gpu();
  if (loaded && loaded.id === id && loaded.kind !== 'onnx' && loaded.rt === rt && !rt.lost) return loaded;
  if (model.source === 'hf') {
    releasePlaygroundModel();
    loaded = await openFolder(rt, id, model);
    return loaded;
  }
  const { bytes, source } = await checkpointBytes(model);
  releasePlaygroundModel();
  loaded = openOurs(rt, id, bytes, source);
  return loaded;
}

/** A stop request aborts the signal; call the returned function when the generation is over. */
function stopSignal(ctx: JobContext): { signal: AbortSignal; off: () => void } {
  const abort = new AbortController();
  const off = ctx.onState((state) => {
    if (state === 'stopping') abort.abort(new Error('stopped'));
  });
  return { signal: abort.signal, off };
}

function checkSampling(s: PlaygroundSampling, context: number): void {
  if (!(s.maxTokens >= 1) || s.maxTokens >= context) {
    throw new UserFacingError(`Max tokens ${s.maxTokens} leaves no room for the prompt in this model's context of ${context} tokens; choose from 1 to ${context - 1} (a few less leaves the prompt more room).`);
  }
}

/** Raw ids through a Hugging Face folder (its generated ids come back, as `lwm generate --json` prints them). */
async function generateIds(m: Loaded, promptIds: number[], s: PlaygroundSampling, ctx: JobContext): Promise<GenerateJobResult> {
  if (m.kind !== 'hf') throw new UserFacingError('Raw token ids are taken for a Hugging Face folder only.');
  const { signal, off } = stopSignal(ctx);
  const ids: number[] = [];
  const t0 = performance.now();
  try {
    for await (const id of m.hf.generateIds(promptIds, { ...s, signal })) {
      ids.push(id);
      ctx.progress({ kind: 'tokens', tokens: ids.length, ms: performance.now() - t0 } satisfies GenerateProgress);
    }
  } catch (e) {
    if (!signal.aborted) throw e;
  } finally {
    off();
  }
  return { model: m.info, ids, tokens: ids.length, ms: performance.now() - t0, stopped: signal.aborted };
}

/** The context bar of a turn: the checkpoint's template fit, or the folder's chat messages (null: an ONNX export of ours, prompted with our template in its tokenizer). */
function turnContext(m: Loaded, spec: Extract<GenerateJobSpec, { model: PlaygroundModel }>, request: TurnRequest, maxTokens: number): ContextReport | null {
  if (m.kind === 'checkpoint') return contextReport(m.open.tokenizer, spec.template ?? m.open.template, request, m.info.contextLength, maxTokens);
  if (m.kind === 'onnx' && !m.onnx.hasChatTemplate) return null;
  const tok = m.kind === 'hf' ? m.hf.model.tokenizer : m.onnx.tokenizer;
  const name = m.kind === 'hf' ? m.hf.model.name : m.onnx.name;
  if (!tok) throw new UserFacingError(`${name} has no tokenizer (tokenizer.json), so a turn cannot be turned into token ids.`);
  try {
    return hfContextReport(tok, request, m.info.contextLength, maxTokens);
  } catch (e) {
    throw new UserFacingError((e as Error).message);
  }
}

/** After an ONNX folder's generation: where its decoder's KV cache went, for the page. */
function onnxKvReport(m: Loaded, ctx: JobContext): void {
  if (m.kind !== 'onnx' || !m.info.onnx) return;
  const s = m.onnx.decoder.stats;
  m.info.onnx.kv = { onGpu: s.kvOnGpu, onCpu: s.kvOnCpu, live: s.liveKv };
  ctx.progress({ kind: 'model', model: m.info } satisfies GenerateProgress);
}

/** Runs one generate job (see GenerateJobSpec). */
export async function runGenerateJob(spec: GenerateJobSpec, ctx: JobContext): Promise<GenerateJobResult | { released: true }> {
  if ('release' in spec) {
    releasePlaygroundModel();
    return { released: true };
  }
  const m = await ensureModel(ctx, spec.model);
  ctx.progress({ kind: 'model', model: m.info } satisfies GenerateProgress);
  const s = spec.sampling ?? { maxTokens: 64, temperature: 0 };
  if (spec.promptIds) return generateIds(m, spec.promptIds, s, ctx);
  if (!spec.request) return { model: m.info };
  checkSampling(s, m.info.contextLength);
  const report = turnContext(m, spec, spec.request, s.maxTokens);
  if (report) ctx.progress({ kind: 'context', context: report } satisfies GenerateProgress);
  const backend = m.kind === 'checkpoint' ? m.open.backend : m.kind === 'hf' ? m.hf.backend : m.backend;
  const request = m.kind === 'checkpoint' ? { ...spec.request, template: spec.template ?? m.open.template } : spec.request;
  const { signal, off } = stopSignal(ctx);
  let text = '';
  let tokens = 0;
  const t0 = performance.now();
  try {
    for await (const piece of backend.generate(request, { maxTokens: s.maxTokens, temperature: s.temperature, topK: s.topK, topP: s.topP, seed: s.seed, signal, onTokens: (n) => (tokens = n) })) {
      text += piece;
      ctx.text(piece);
      ctx.progress({ kind: 'tokens', tokens, ms: performance.now() - t0 } satisfies GenerateProgress);
      if (signal.aborted) break;
    }
  } catch (e) {
    if (!signal.aborted) throw e;
  } finally {
    off();
    onnxKvReport(m, ctx);
  }
  return { model: m.info, text, tokens, ms: performance.now() - t0, stopped: signal.aborted, ...(report && { context: report }) };
}
