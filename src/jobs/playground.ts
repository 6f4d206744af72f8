// The Playground's 'generate' job: a model on the worker (a run's checkpoint from browser storage
// or a .safetensors file the user dropped, prompted with the template it was trained with; a
// Hugging Face folder the user picked, on our WebGPU engine; an ONNX folder in onnxruntime-web,
// WebGPU or WASM, so it runs in a browser without WebGPU), opened by src/backends/open.ts from the
// job's BackendRef, generating one turn's observation and streaming it to the page ('text'
// messages) with its token rate ('progress'). The opened model stays between turns (and jobs), so
// each turn costs only its generation; another model, a release request or a new device replaces it.
import type { TurnRequest } from '../core/backend.ts';
import { backendKey, needsGpu, type BackendRef } from '../core/backendRef.ts';
import type { ContextReport } from '../core/playground/context.ts';
import type { PromptTemplate } from '../core/templates/index.ts';
import { generationFor, openBackend, type ModelInfo, type OpenedBackend } from '../backends/open.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { FILE_KEY_PREFIX } from '../core/backendRef.ts';
import { workerSource } from './backendSource.ts';
import type { HfFolderFile } from '../train/hfFolder.ts';
import { UserFacingError, type JobContext } from '../train/context.ts';

export { MODEL_NOT_LOADED } from './protocol.ts';

export interface PlaygroundSampling {
  maxTokens: number;
  temperature: number;
  topK?: number;
  topP?: number;
  seed?: number;
}

export type GenerateJobSpec =
  | {
      kind: 'generate';
      /** A checkpoint, a Hugging Face folder or an ONNX folder (endpoints and the baselines run in the page). */
      model: BackendRef;
      /** A folder's files (File handles, not bytes): they travel with every job. */
      files?: HfFolderFile[];
      /** A dropped file's bytes (checkpoint key `file:ID`), sent until the worker holds the model. */
      bytes?: Uint8Array;
      /** The turn to predict; without it (and without promptIds) the job only loads the model and reports it. */
      request?: TurnRequest;
      /** Raw token ids to continue instead of a turn (a Hugging Face folder only): the result carries the generated ids. */
      promptIds?: number[];
      /** A template to render with instead of the one the checkpoint was trained with. */
      template?: PromptTemplate;
      sampling?: PlaygroundSampling;
    }
  | {
      kind: 'generate';
      /** Frees the loaded model's GPU memory (the page left the Playground). */
      release: true;
    };

/** What the page shows of the loaded model. */
export type PlaygroundModelInfo = ModelInfo;

/** 'progress' records of a generate job. */
export type GenerateProgress =
  | { kind: 'model'; model: PlaygroundModelInfo }
  | { kind: 'context'; context: ContextReport }
  | { kind: 'tokens'; tokens: number; ms: number };

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

type Loaded = { key: string; opened: OpenedBackend & { info: ModelInfo }; rt: GpuRuntime | null };

let loaded: Loaded | null = null;

/** Frees the loaded model (its device may already be gone: then there is nothing to free). */
export function releasePlaygroundModel(): void {
  const l = loaded;
  loaded = null;
  if (l && !l.rt?.lost) l.opened.dispose();
}

type ModelSpec = Extract<GenerateJobSpec, { model: BackendRef }>;

async function ensureModel(ctx: JobContext, spec: ModelSpec): Promise<Loaded['opened']> {
  const ref = spec.model;
  if (ref.kind !== 'checkpoint' && ref.kind !== 'hf' && ref.kind !== 'onnx')
    throw new UserFacingError(`The Playground runs a ${ref.kind} backend in the page, not in the worker.`);
  const key = backendKey(ref);
  const rt = needsGpu(ref) ? await ctx.gpu() : null;
  if (loaded && loaded.key === key && loaded.rt === rt && !rt?.lost) return loaded.opened;
  const folderId = ref.kind === 'hf' ? ref.hf.folderId : ref.kind === 'onnx' ? ref.onnx.folderId : null;
  const fileKey = ref.kind === 'checkpoint' && ref.checkpoint.key.startsWith(FILE_KEY_PREFIX) ? ref.checkpoint.key : null;
  const source = workerSource(ctx, {
    ...(folderId !== null && spec.files && { folders: { [folderId]: spec.files } }),
    ...(fileKey !== null && spec.bytes && { files: { [fileKey]: spec.bytes } }),
    missingFolder: (f) => `No files were given for the folder ${f.name}: pick the folder again (folders are not kept after a reload).`,
  });
  releasePlaygroundModel();
  const opened = await openBackend(ref, rt ? { ...source, gpu: async () => rt } : source);
  if (!opened.info) throw new Error(`${opened.backend.name}: opened without a model description`);
  loaded = { key, opened: opened as Loaded['opened'], rt };
  return loaded.opened;
}
/** A stop request aborts the signal; call the returned function when the generation is over. */
function stopSignal(ctx: JobContext): { signal: AbortSignal; off: () => void } {
  const abort = new AbortController();
  const off = ctx.onState((state) => {
    if (state === 'stopping') abort.abort(new Error('stopped'));
  });
  return { signal: abort.signal, off };
}

/** Raw ids through a Hugging Face folder (its generated ids come back, as `lwm generate --json` prints them). */
async function generateIds(m: Loaded['opened'], promptIds: number[], s: PlaygroundSampling, ctx: JobContext): Promise<GenerateJobResult> {
  if (!m.generateIds) throw new UserFacingError('Raw token ids are taken for a Hugging Face folder only.');
  const { signal, off } = stopSignal(ctx);
  const ids: number[] = [];
  const t0 = performance.now();
  try {
    for await (const id of m.generateIds(promptIds, { ...s, signal })) {
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

/** Runs one generate job (see GenerateJobSpec). */
export async function runGenerateJob(spec: GenerateJobSpec, ctx: JobContext): Promise<GenerateJobResult | { released: true }> {
  if ('release' in spec) {
    releasePlaygroundModel();
    return { released: true };
  }
  const m = await ensureModel(ctx, spec);
  ctx.progress({ kind: 'model', model: m.info } satisfies GenerateProgress);
  const s = spec.sampling ?? { maxTokens: 64, temperature: 0 };
  if (spec.promptIds) return generateIds(m, spec.promptIds, s, ctx);
  if (!spec.request) return { model: m.info };
  const options = generationFor(m, s);
  // A checkpoint renders the turn with the template the page chose (its trained one otherwise); a folder lays it out its own way.
  const request = spec.template && spec.model.kind === 'checkpoint' ? { ...spec.request, template: spec.template } : spec.request;
  const report = m.contextReport(request, options.maxTokens);
  if (report) ctx.progress({ kind: 'context', context: report } satisfies GenerateProgress);
  const { signal, off } = stopSignal(ctx);
  let text = '';
  let tokens = 0;
  const t0 = performance.now();
  try {
    for await (const piece of m.backend.generate(request, { ...options, signal, onTokens: (n) => (tokens = n) })) {
      text += piece;
      ctx.text(piece);
      ctx.progress({ kind: 'tokens', tokens, ms: performance.now() - t0 } satisfies GenerateProgress);
      if (signal.aborted) break;
    }
  } catch (e) {
    if (!signal.aborted) throw e;
  } finally {
    off();
    if (m.refresh) {
      m.refresh();
      ctx.progress({ kind: 'model', model: m.info } satisfies GenerateProgress);
    }
  }
  return { model: m.info, text, tokens, ms: performance.now() - t0, stopped: signal.aborted, ...(report && { context: report }) };
}
