// A checkpoint of ours as an LwmBackend on the GPU: the weights on the device, the tokenizer the
// checkpoint carries, and the template it was trained with applied to every turn request that
// does not name one. One function for every place that runs a checkpoint (`lwm infer`, the
// rejection-sampling teacher, the Playground and the Bench), so all of them prompt the model the
// same way. A full fine-tune of a pretrained Hugging Face model (metadata hf_base: the base's
// config, tokenizer and chat template files) carries no tokenizer of ours: it is served with the
// base's tokenizer in the layout it was trained on (./trainedChat.ts: the trained template inside
// the model's chat format, the same prompt ids as the SFT pipeline's), stopping at the base's stop
// ids, its text at the observation's closing tag.
import { isChatRequest, isTurnRequest, type GenerateOptions, type GenerateRequest, type LwmBackend } from '../core/backend.ts';
import type { HfTokenizer } from '../core/tokenizer/hf.ts';
import { BUILTIN_TEMPLATES, normalizeTemplates, type PromptTemplate } from '../core/templates/index.ts';
import { Tokenizer } from '../core/tokenizer/index.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { CheckpointError, loadCheckpoint, type Checkpoint } from '../core/model/checkpoint.ts';
import type { ModelConfig } from '../core/model/config.ts';
import { GpuGenerator, type GenerateStats } from '../model/generate.ts';
import { paramLayout } from '../core/model/params.ts';
import { ParamBuffers, planFor } from '../model/shards.ts';
import { baseFromJson, openHfBase, type OpenedBase } from '../model/hf/base.ts';
import type { WeightStorage } from '../model/halfWeights.ts';
import { localBackend } from './local.ts';
import { decodeStream } from './stream.ts';
import { stopAtClose, trainedChat, type TrainedChat } from './trainedChat.ts';

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

/** The stage of an agent policy's checkpoint (lwm agent train): it acts, it does not simulate, and has no world-model template. */
export const AGENT_STAGE = 'agent';

/** The world-model template a checkpoint of ours trained with, which its exports keep (lwm_template.json); null for an agent policy. */
export function exportedTemplate(ck: Pick<Checkpoint, 'extraMetadata'>): PromptTemplate | null {
  if (ck.extraMetadata?.stage === AGENT_STAGE) return null;
  const { templates, trained } = trainedTemplates(ck);
  return templates[trained];
}

/**
 * The template a fine-tune of a Hugging Face model trained with, as written (its checkpoint keeps
 * the run's templates unwrapped; training put them inside the model's chat format): what its
 * exports keep as lwm_template.json. null without a spec (an adapter trained elsewhere).
 */
export function hfTrainedTemplate(meta: Readonly<Record<string, string>> | undefined): PromptTemplate | null {
  if (!meta?.spec || meta.stage === AGENT_STAGE) return null;
  const { templates, trained } = trainedTemplates({ extraMetadata: { ...meta } });
  return templates[trained] ?? null;
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
  /** Ours; for a fine-tune of a Hugging Face model, the base's tokenizer as training called it. */
  tokenizer: Tokenizer;
  /** The template turn requests without their own are rendered with (as written). */
  template: PromptTemplate;
  /** A fine-tune of a Hugging Face model: the layout it is served in (its chat format around our template); null for ours. */
  trained: TrainedChat | null;
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
  /** How the weights are held on the GPU (default f32; f16 halves the matrices' memory, src/model/halfWeights.ts). */
  weights?: WeightStorage;
}

/** A fine-tune of a Hugging Face model: its base's tokenizer and stop ids, and the layout it trained on; null for a model of ours. */
export function checkpointTrainedChat(
  ck: Pick<Checkpoint, 'extraMetadata'>,
  template: PromptTemplate,
  source: string,
): { trained: TrainedChat; base: OpenedBase } | null {
  const meta = ck.extraMetadata?.hf_base;
  if (!meta) return null;
  try {
    const base = openHfBase(baseFromJson(meta));
    return { trained: trainedChat(base.tokenizer, base.stopIds, template), base };
  } catch (e) {
    throw new CheckpointError(`${source}: its base model (metadata hf_base) cannot serve it: ${(e as Error).message}`);
  }
}

/** The backend of a fine-tune of a Hugging Face model: turn and chat requests in the trained layout; a raw prompt as transformers' tokenizer(text) gives it, its end kept. */
function trainedChatBackend(gen: GpuGenerator, hf: { trained: TrainedChat; base: OpenedBase }, name: string): LwmBackend {
  const tok: HfTokenizer = hf.base.tokenizer;
  const stop = hf.base.stopIds;
  return {
    name,
    async *generate(request: GenerateRequest, o: GenerateOptions) {
      const room = gen.limits.maxLength - o.maxTokens;
      if (room < 1) throw new RangeError(`${name}: maxTokens ${o.maxTokens} leaves no room for a prompt in ${gen.limits.maxLength} tokens`);
      let ids: number[];
      let options = o;
      if (isTurnRequest(request) || isChatRequest(request)) {
        const p = hf.trained.prompt(request, room);
        ids = p.fitted.ids;
        options = stopAtClose(o, p.close);
      } else {
        ids = tok.encode(request.prompt);
        if (ids.length > room) ids = ids.slice(ids.length - room);
      }
      const sampling = { temperature: o.temperature, topK: o.topK, topP: o.topP, seed: o.seed };
      yield* decodeStream(
        gen.generate(ids, { maxNewTokens: o.maxTokens, sampling, stop: [...stop], signal: o.signal }),
        (x) => tok.decode(x, { skipSpecialTokens: true }),
        new Set(stop),
        options,
      );
    },
  };
}

/** Loads a checkpoint (bytes or already parsed) onto `rt` as a backend. */
export function openCheckpointBackend(rt: GpuRuntime, checkpoint: Uint8Array | Checkpoint, options: OpenCheckpointOptions = {}): CheckpointBackend {
  const source = options.source ?? 'the checkpoint';
  const ck = checkpoint instanceof Uint8Array ? loadCheckpoint(checkpoint, { source }) : checkpoint;
  const { templates, trained } = trainedTemplates(ck);
  const version = options.template ?? trained;
  const template = templates[version];
  if (!template) throw new CheckpointError(`${source}: no template '${version}' (known: ${Object.keys(templates).join(', ')})`);
  const hf = checkpointTrainedChat(ck, template, source);
  const tokenizer = hf ? hf.trained.tokenizer : checkpointTokenizer(ck, source);
  const params = ParamBuffers.upload(rt, planFor(rt, paramLayout(ck.config), options.weights), ck.params, 'checkpoint.params');
  const gen = new GpuGenerator(rt, ck.config, params, {
    maxSequences: options.maxSequences ?? 1,
    maxLength: ck.config.contextLength,
    prefixSlots: options.prefixSlots ?? 4,
  });
  const name = options.name ?? `local:${ck.extraMetadata?.stage ?? 'checkpoint'}-${ck.step}`;
  let backend: LwmBackend;
  if (hf) backend = trainedChatBackend(gen, hf, name);
  else {
    const inner = localBackend(gen, tokenizer, name);
    backend = { name: inner.name, generate: (req, o) => inner.generate('sample' in req ? { ...req, template: req.template ?? template } : req, o) };
  }
  return {
    backend,
    tokenizer,
    template,
    templates,
    trained: hf?.trained ?? null,
    config: ck.config,
    step: ck.step,
    stats: gen.stats,
    dispose() {
      gen.dispose();
      params.release();
    },
  };
}
