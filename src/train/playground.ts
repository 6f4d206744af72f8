// The Playground's 'generate' job: a checkpoint of ours on the worker's GPU (a run's checkpoint
// from browser storage, or a .safetensors file the user dropped), opened with
// openCheckpointBackend so it is prompted with the template it was trained with, generating one
// turn's observation and streaming it to the page ('text' messages) with its token rate
// ('progress'). The loaded model stays on the device between turns (and jobs), so each turn costs
// only its generation; another model, a release request or a new device replaces it.
import type { TurnRequest } from '../core/backend.ts';
import { contextReport, type ContextReport } from '../core/playground/context.ts';
import type { PromptTemplate } from '../core/templates/index.ts';
import { openCheckpointBackend, type CheckpointBackend } from '../backends/checkpoint.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { CheckpointError, loadCheckpoint } from '../model/checkpoint.ts';
import { loadCheckpointBytes } from '../storage/runs.ts';
import { UserFacingError, type JobContext } from './host.ts';

/** Which checkpoint: stored under `key` (a run's), or a file whose bytes the page sends until the worker holds it. */
export type PlaygroundModel = { source: 'run'; key: string; label: string } | { source: 'file'; id: string; name: string; bytes?: Uint8Array };

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
  /** The turn to predict; without it the job only loads the model and reports it. */
  request?: TurnRequest;
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
  /** The template it was trained with (used unless the page sends one). */
  template: string;
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
}

/** The error a file job without bytes gets when the worker does not hold that file (a fresh worker): the page sends them again. */
export const MODEL_NOT_LOADED = 'playground: the model file is not loaded in this worker; send its bytes';

interface Loaded {
  rt: GpuRuntime;
  id: string;
  open: CheckpointBackend;
  info: PlaygroundModelInfo;
}

let loaded: Loaded | null = null;

function modelId(m: PlaygroundModel): string {
  return m.source === 'run' ? `run:${m.key}` : `file:${m.id}`;
}

/** Frees the loaded model (its device may already be gone: then there is nothing to free). */
export function releasePlaygroundModel(): void {
  const l = loaded;
  loaded = null;
  if (l && !l.rt.lost) l.open.dispose();
}

async function ensureModel(rt: GpuRuntime, model: PlaygroundModel): Promise<Loaded> {
  const id = modelId(model);
  if (loaded && loaded.id === id && loaded.rt === rt && !rt.lost) return loaded;
  let bytes: Uint8Array;
  let source: string;
  if (model.source === 'run') {
    source = model.label;
    bytes = await loadCheckpointBytes(model.key).catch((e: Error) => {
      throw new UserFacingError(`The checkpoint ${model.label} could not be read from browser storage (${e.message}); it may have been deleted in the Train view.`);
    });
  } else {
    if (!model.bytes) throw new UserFacingError(MODEL_NOT_LOADED);
    source = model.name;
    bytes = model.bytes;
  }
  releasePlaygroundModel();
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
  const info: PlaygroundModelInfo = {
    id,
    name: open.backend.name,
    stage: ck.extraMetadata?.stage ?? 'checkpoint',
    step: ck.step,
    contextLength: ck.config.contextLength,
    vocabSize: ck.config.vocabSize,
    layers: ck.config.layers,
    dModel: ck.config.dModel,
    template: open.template.version,
  };
  loaded = { rt, id, open, info };
  return loaded;
}

/** Runs one generate job (see GenerateJobSpec). */
export async function runGenerateJob(spec: GenerateJobSpec, ctx: JobContext): Promise<GenerateJobResult | { released: true }> {
  if ('release' in spec) {
    releasePlaygroundModel();
    return { released: true };
  }
  const m = await ensureModel(ctx.rt, spec.model);
  ctx.progress({ kind: 'model', model: m.info } satisfies GenerateProgress);
  if (!spec.request) return { model: m.info };
  const s = spec.sampling ?? { maxTokens: 64, temperature: 0 };
  const context = m.info.contextLength;
  if (!(s.maxTokens >= 1) || s.maxTokens >= context) {
    throw new UserFacingError(`Max tokens ${s.maxTokens} leaves no room for the prompt in this model's context of ${context} tokens; choose from 1 to ${context - 1} (a few less leaves the prompt more room).`);
  }
  const template = spec.template ?? m.open.template;
  const report = contextReport(m.open.tokenizer, template, spec.request, context, s.maxTokens);
  ctx.progress({ kind: 'context', context: report } satisfies GenerateProgress);
  const abort = new AbortController();
  const off = ctx.onState((state) => {
    if (state === 'stopping') abort.abort(new Error('stopped'));
  });
  let text = '';
  let tokens = 0;
  const t0 = performance.now();
  try {
    for await (const piece of m.open.backend.generate(
      { ...spec.request, template },
      { maxTokens: s.maxTokens, temperature: s.temperature, topK: s.topK, topP: s.topP, seed: s.seed, signal: abort.signal, onTokens: (n) => (tokens = n) },
    )) {
      text += piece;
      ctx.text(piece);
      ctx.progress({ kind: 'tokens', tokens, ms: performance.now() - t0 } satisfies GenerateProgress);
      if (abort.signal.aborted) break;
    }
  } catch (e) {
    if (!abort.signal.aborted) throw e;
  } finally {
    off();
  }
  return { model: m.info, text, tokens, ms: performance.now() - t0, stopped: abort.signal.aborted, context: report };
}
