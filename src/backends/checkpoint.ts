// A checkpoint of ours as an LwmBackend on the GPU: the weights on the device, the tokenizer the
// checkpoint carries, and the template it was trained with applied to every turn request that
// does not name one. One function for every place that runs a checkpoint (`lwm infer`, the
// rejection-sampling teacher, the Playground and the Bench), so all of them prompt the model the
// same way.
import type { LwmBackend } from '../core/backend.ts';
import { BUILTIN_TEMPLATES, normalizeTemplates, type PromptTemplate } from '../core/templates/index.ts';
import { Tokenizer } from '../core/tokenizer/index.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { CheckpointError, loadCheckpoint, type Checkpoint } from '../model/checkpoint.ts';
import type { ModelConfig } from '../model/config.ts';
import { GpuGenerator, type GenerateStats } from '../model/generate.ts';
import { paramLayout } from '../model/params.ts';
import { ParamBuffers, planFor } from '../model/shards.ts';
import { localBackend } from './local.ts';

/** The templates a checkpoint knows (built-in plus the run's own) and the one it was trained with. */
export interface TrainedTemplates {
  templates: Record<string, PromptTemplate>;
  /** The heaviest version of the training stage's mix (ties: the first in name order); v0 without a spec. */
  trained: string;
}

export function trainedTemplates(ck: Pick<Checkpoint, 'extraMetadata'>): TrainedTemplates {
  let spec: { templates?: Record<string, number>; templateSet?: Record<string, PromptTemplate> } = {};
  try {
    const parsed: unknown = JSON.parse(ck.extraMetadata?.spec ?? '{}');
    if (parsed && typeof parsed === 'object') spec = parsed as typeof spec;
  } catch {
    /* an unreadable spec: the default template */
  }
  const templates: Record<string, PromptTemplate> = Object.assign(Object.create(null), BUILTIN_TEMPLATES, normalizeTemplates(spec.templateSet)); // JSON templates of older checkpoints become text
  const mix = Object.entries(spec.templates ?? { v0: 1 })
    .filter(([v]) => templates[v])
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
  return { templates, trained: mix[0]?.[0] ?? 'v0' };
}

/** The tokenizer a checkpoint of ours carries in its metadata; a clear error where there is none. */
export function checkpointTokenizer(ck: Pick<Checkpoint, 'extraMetadata'>, source: string): Tokenizer {
  const tj = ck.extraMetadata?.tokenizer;
  if (!tj) throw new CheckpointError(`${source}: the checkpoint holds no tokenizer (metadata "tokenizer"); it was not written by LWM Studio training`);
  try {
    return Tokenizer.fromJSON(JSON.parse(tj));
  } catch (e) {
    throw new CheckpointError(`${source}: the checkpoint's tokenizer cannot be read: ${(e as Error).message}`);
  }
}

export interface CheckpointBackend {
  backend: LwmBackend;
  tokenizer: Tokenizer;
  /** The template turn requests without their own are rendered with. */
  template: PromptTemplate;
  templates: Record<string, PromptTemplate>;
  config: ModelConfig;
  step: number;
  /** The generator's counters: prompt tokens prefilled and reused, tokens decoded, time in each. */
  stats: Readonly<GenerateStats>;
  /** Free the generator and the weights (the runtime stays the caller's). */
  dispose(): void;
}

export interface OpenCheckpointOptions {
  /** Named in errors (a path, or a run and checkpoint name). */
  source?: string;
  /** The backend's name in tables and records; default `local:<stage>-<step>`. */
  name?: string;
  /** A template version to use instead of the trained one. */
  template?: string;
  /** Sequences generated at once (default 1). */
  maxSequences?: number;
  /**
   * Prompts whose KV cache is kept (default 4): a request that starts like one of them (the same
   * system prompt, a later turn of the same trajectory) prefills only the rest. 0 turns it off.
   */
  prefixSlots?: number;
}

/** Loads a checkpoint (bytes or already parsed) onto `rt` as a backend. */
export function openCheckpointBackend(rt: GpuRuntime, checkpoint: Uint8Array | Checkpoint, options: OpenCheckpointOptions = {}): CheckpointBackend {
  const source = options.source ?? 'the checkpoint';
  const ck = checkpoint instanceof Uint8Array ? loadCheckpoint(checkpoint, { source }) : checkpoint;
  const tokenizer = checkpointTokenizer(ck, source);
  const { templates, trained } = trainedTemplates(ck);
  const version = options.template ?? trained;
  const template = templates[version];
  if (!template) throw new CheckpointError(`${source}: no template '${version}' (known: ${Object.keys(templates).join(', ')})`);
  const params = ParamBuffers.upload(rt, planFor(rt, paramLayout(ck.config)), ck.params, 'checkpoint.params');
  const gen = new GpuGenerator(rt, ck.config, params, { maxSequences: options.maxSequences ?? 1, maxLength: ck.config.contextLength, prefixSlots: options.prefixSlots ?? 4 });
  const inner = localBackend(gen, tokenizer, options.name ?? `local:${ck.extraMetadata?.stage ?? 'checkpoint'}-${ck.step}`);
  const backend: LwmBackend = { name: inner.name, generate: (req, o) => inner.generate('sample' in req ? { ...req, template: req.template ?? template } : req, o) };
  return {
    backend,
    tokenizer,
    template,
    templates,
    config: ck.config,
    step: ck.step,
    stats: gen.stats,
    dispose() {
      gen.dispose();
      params.release();
    },
  };
}
