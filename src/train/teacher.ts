// Teachers and judges for rejection sampling and RL rewards, built from plain settings, so the
// CLI (`lwm labels`, `lwm train`) and the app's worker construct them the same way.
import { defaultRequest, sampleFromTurn } from '../core/bench/runner.ts';
import { localJudge } from '../core/judge/rubric.ts';
import type { Judge } from '../core/judge/types.ts';
import { BUILTIN_TEMPLATES, renderSystem, type PromptTemplate } from '../core/templates/index.ts';
import { Tokenizer } from '../core/tokenizer/index.ts';
import type { TurnSample } from '../core/turns/index.ts';
import { endpointBackend, endpointJudge, type EndpointConfig } from '../backends/endpoint.ts';
import { localBackend } from '../backends/local.ts';
import type { GenerateRequest, LwmBackend } from '../backends/types.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { loadCheckpoint } from '../model/checkpoint.ts';
import { GpuGenerator } from '../model/generate.ts';
import { UserFacingError } from './host.ts';
import { promptRequest } from './rejection.ts';

/** An OpenAI-compatible endpoint. The key is never stored with a run or a checkpoint. */
export interface EndpointRef {
  baseUrl: string;
  model: string;
  apiKey?: string;
}

export type JudgeKind = 'local' | 'endpoint';

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
export function endpointTeacher(endpoint: EndpointRef, template: PromptTemplate = BUILTIN_TEMPLATES.v0, extra: Partial<EndpointConfig> = {}): { backend: LwmBackend; request: (s: TurnSample) => GenerateRequest } {
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
  const ck = loadCheckpoint(checkpoint, { source: 'the teacher checkpoint' });
  const tj = ck.extraMetadata?.tokenizer;
  if (!tj) throw new UserFacingError('the teacher checkpoint has no tokenizer in its metadata; it was not written by LWM Studio training');
  const tok = Tokenizer.fromJSON(JSON.parse(tj));
  const params = rt.storage('teacher.params', ck.params);
  const gen = new GpuGenerator(rt, ck.config, params, { maxSequences: 1, maxLength: ck.config.contextLength });
  return {
    backend: localBackend(gen, tok, `local:${ck.extraMetadata?.stage ?? 'checkpoint'}-${ck.step}`),
    request: promptRequest(template),
    /** The longest response: a quarter of the context, as the SFT evaluation generates. */
    maxTokens: Math.max(1, Math.floor(ck.config.contextLength / 4)),
    dispose() {
      gen.dispose();
      rt.release(params);
    },
  };
}
