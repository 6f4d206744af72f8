// Teachers and judges for rejection sampling and RL rewards, built from plain settings, so the
// CLI (`lwm labels`, `lwm train`) and the app's worker construct them the same way.
import { DEFAULT_KEEP_THRESHOLD, type JudgeKind, type LabelSettings } from '../core/trainSpec.ts';
import { defaultRequest, sampleFromTurn } from '../core/bench/runner.ts';
import { localJudge } from '../core/judge/rubric.ts';
import type { Judge } from '../core/judge/types.ts';
import { BUILTIN_TEMPLATES, renderSystem, type PromptTemplate } from '../core/templates/index.ts';
import type { TurnSample } from '../core/turns/index.ts';
import { endpointBackend, endpointJudge, type EndpointConfig } from '../backends/endpoint.ts';
import { openCheckpointBackend, type CheckpointBackend } from '../backends/checkpoint.ts';
import { defaultAnswerTokens, type GenerateRequest, type LwmBackend } from '../core/backend.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { CheckpointError } from '../core/model/checkpoint.ts';
import { UserFacingError } from './context.ts';
import { spreadSamples, retentionMetrics, retentionReport } from './labels.ts';
import { formatRetention, keptAsSamples, promptRequest, rejectionSample, type SftLabel } from './rejection.ts';

/** An OpenAI-compatible endpoint. The key is never stored with a run or a checkpoint. */
export interface EndpointRef {
  baseUrl: string;
  model: string;
  apiKey?: string;
}

/** The local rubric judge, or an LLM judge behind an endpoint (the existing client, as it is). */
export function makeJudge(kind: JudgeKind, endpoint?: EndpointRef, extra: Partial<EndpointConfig> = {}): Judge {
  if (kind === 'local') return localJudge;
  if (!endpoint?.baseUrl || !endpoint.model) throw new UserFacingError('an endpoint judge needs a base URL and a model name');
  return endpointJudge({ baseUrl: endpoint.baseUrl, model: endpoint.model, apiKey: endpoint.apiKey, ...extra });
}

/**
 * A chat model as teacher: the rendered system prompt as the system message and the history in
 * AgentWorldBench's layout (the same request `lwm bench` sends).
 */
export function endpointTeacher(
  endpoint: EndpointRef,
  template: PromptTemplate = BUILTIN_TEMPLATES.v0,
  extra: Partial<EndpointConfig> = {},
): { backend: LwmBackend; request: (s: TurnSample) => GenerateRequest } {
  if (!endpoint.baseUrl || !endpoint.model) throw new UserFacingError('an endpoint teacher needs a base URL and a model name');
  return {
    backend: endpointBackend({ baseUrl: endpoint.baseUrl, model: endpoint.model, apiKey: endpoint.apiKey, ...extra }),
    request: (s) => defaultRequest(sampleFromTurn(s, renderSystem(template, s))),
  };
}

/**
 * A checkpoint of ours as teacher, on the GPU: the prompt text the model was trained on, up to
 * the opening target tag. `maxTokens` is capped so a prompt still fits the context.
 */
export function localTeacher(rt: GpuRuntime, checkpoint: Uint8Array, template: PromptTemplate = BUILTIN_TEMPLATES.v0) {
  let local: CheckpointBackend;
  try {
    local = openCheckpointBackend(rt, checkpoint, { source: 'the teacher checkpoint' });
  } catch (e) {
    throw e instanceof CheckpointError ? new UserFacingError(e.message) : e;
  }
  return {
    backend: local.backend,
    request: promptRequest(template),
    /** The longest response: a quarter of the context, as the SFT evaluation generates. */
    maxTokens: defaultAnswerTokens(local.config.contextLength),
    dispose: () => local.dispose(),
  };
}

export function checkLabelSettings(l: LabelSettings): void {
  if (l.teacher !== 'local' && l.teacher !== 'endpoint') throw new UserFacingError(`labels.teacher must be local or endpoint; got '${l.teacher}'`);
  if (l.teacher === 'endpoint' && (!l.teacherEndpoint?.baseUrl || !l.teacherEndpoint.model))
    throw new UserFacingError('an endpoint teacher needs a base URL and a model');
  if ((l.judge ?? 'local') === 'endpoint' && (!l.judgeEndpoint?.baseUrl || !l.judgeEndpoint.model))
    throw new UserFacingError('an endpoint judge for the labels needs a base URL and a model');
  if (l.threshold !== undefined && !(l.threshold >= 1 && l.threshold <= 5))
    throw new UserFacingError(`labels.threshold must be within 1–5 (the judge's scale); got ${l.threshold}`);
  if (l.candidates !== undefined && !(Number.isInteger(l.candidates) && l.candidates >= 1))
    throw new UserFacingError(`labels.candidates must be a positive integer; got ${l.candidates}`);
}

/**
 * Labels an SFT run's train split by rejection sampling and reports retention (log, and metrics
 * at step 0 that the Train view shows with the run). The teacher is released before training.
 */
export async function rejectionLabels(
  settings: LabelSettings,
  samples: TurnSample[],
  ctx: {
    rt: GpuRuntime;
    seed: number;
    weightOf: (s: TurnSample) => number;
    teacherCheckpoint?: Uint8Array;
    teacherApiKey?: string;
    judgeApiKey?: string;
    log(m: string): void;
    metric(step: number, values: Record<string, number>): void;
  },
): Promise<SftLabel[]> {
  checkLabelSettings(settings);
  const judge = makeJudge(settings.judge ?? 'local', settings.judgeEndpoint && { ...settings.judgeEndpoint, apiKey: ctx.judgeApiKey });
  let teacher: { backend: LwmBackend; request: (s: TurnSample) => GenerateRequest };
  let maxTokens = settings.maxTokens ?? 256;
  let dispose = () => {};
  if (settings.teacher === 'local') {
    if (!ctx.teacherCheckpoint)
      throw new UserFacingError('rejection sampling with the local teacher samples from the starting checkpoint: start the SFT run from a checkpoint');
    const local = localTeacher(ctx.rt, ctx.teacherCheckpoint);
    teacher = local;
    maxTokens = Math.min(maxTokens, local.maxTokens);
    dispose = () => local.dispose();
  } else teacher = endpointTeacher({ ...settings.teacherEndpoint!, apiKey: ctx.teacherApiKey });
  try {
    const picked = spreadSamples(samples, settings.samples, ctx.seed);
    const candidates = settings.candidates ?? 4;
    ctx.log(
      `labels: ${picked.length} train-split turns × ${candidates} candidates from ${teacher.backend.name}, judged by ${judge.name} (keep at ≥ ${settings.threshold ?? DEFAULT_KEEP_THRESHOLD})`,
    );
    const r = await rejectionSample(picked, teacher.backend, judge, {
      candidates,
      threshold: settings.threshold,
      keep: settings.keep,
      temperature: settings.temperature,
      maxTokens,
      seed: ctx.seed,
      request: teacher.request,
      weightOf: ctx.weightOf,
      concurrency: settings.teacher === 'endpoint' ? 4 : 1,
    });
    ctx.log(retentionReport(r).trimEnd());
    ctx.metric(0, retentionMetrics(r));
    if (!r.kept.length)
      throw new UserFacingError(`rejection sampling kept no candidate (${formatRetention(r.overall)}); lower the threshold or use a stronger teacher`);
    return keptAsSamples(r.kept);
  } finally {
    dispose();
  }
}

export type { JudgeKind, LabelSettings } from '../core/trainSpec.ts';
