// What one evaluation of a template is, for the loop's callers (the app's worker and the CLI):
// the dev and test samples, split by trajectory so no trajectory's turns are on both sides, and
// an `evaluate(text, split)` that renders every sample with the template, runs the simulator and
// judges the predictions (src/core/bench/runner.ts), in sample order. Rendering goes through the
// template code (renderContext / renderSystem, src/core/templates/render.ts), so the text that is
// scored is exactly the text a training run or the Playground would use; `templateValidator`
// checks a text the way the Prompts view does and renders it on every dev sample.
import type { GenerateOptions, GenerateRequest, LwmBackend } from '../backend.ts';
import type { AwbJudgedRecord } from '../bench/records.ts';
import { runBenchmark, turnRequestOf, type BenchProgress, type BenchSample } from '../bench/runner.ts';
import type { ChatMessage } from '../chat.ts';
import type { Judge } from '../judge/types.ts';
import { keyedUniform } from '../random.ts';
import { checkTemplateText, TARGET_CLOSE, TARGET_OPEN, type PromptTemplate } from '../templates/builtin.ts';
import { renderContext, renderProblems, renderSystem } from '../templates/render.ts';
import type { LayoutSample } from '../templates/layout.ts';
import type { TurnSample } from '../turns/index.ts';

export interface OptimizationSplits {
  dev: BenchSample[];
  test: BenchSample[];
}

export interface SplitOptions {
  /** Samples per domain in the dev split (the loop's working set). */
  devPerDomain: number;
  /** Samples per domain in the test split (scored once, at the end). */
  testPerDomain: number;
  seed: number;
}

/** A sample's trajectory: its record's id when it came from one, else its id. */
const trajectoryOf = (s: BenchSample): string => String(s.record?.id ?? s.id);

/**
 * Dev and test samples, per domain: trajectories are ordered by a hash of (id, seed); the first
 * go to dev until it holds `devPerDomain` samples, the rest to test. The same data and seed give
 * the same splits whatever the input order; the splits keep the input order.
 */
export function splitForOptimization(samples: readonly BenchSample[], o: SplitOptions): OptimizationSplits {
  const byDomain = new Map<string, Map<string, number[]>>();
  samples.forEach((s, i) => {
    let trajs = byDomain.get(s.domain);
    if (!trajs) byDomain.set(s.domain, (trajs = new Map()));
    const t = trajectoryOf(s);
    trajs.set(t, [...(trajs.get(t) ?? []), i]);
  });
  const dev = new Set<number>();
  const test = new Set<number>();
  for (const trajs of byDomain.values()) {
    const order = [...trajs.keys()].sort((a, b) => keyedUniform(a, o.seed) - keyedUniform(b, o.seed) || (a < b ? -1 : 1));
    let nDev = 0;
    let nTest = 0;
    for (const t of order) {
      const idx = trajs.get(t)!;
      if (nDev < o.devPerDomain) {
        for (const i of idx.slice(0, o.devPerDomain - nDev)) dev.add(i);
        nDev += Math.min(idx.length, o.devPerDomain - nDev);
      } else if (nTest < o.testPerDomain) {
        for (const i of idx.slice(0, o.testPerDomain - nTest)) test.add(i);
        nTest += Math.min(idx.length, o.testPerDomain - nTest);
      }
    }
  }
  return { dev: samples.filter((_, i) => dev.has(i)), test: samples.filter((_, i) => test.has(i)) };
}

/** The prediction tags a candidate's template closes the context with (a start template's own, or the shared ones). */
export type TargetTags = Pick<PromptTemplate, 'targetOpen' | 'targetClose'>;

/** A template text as the template the renderers take (the prediction tags every template shares, or `tags`). */
export function candidateTemplate(text: string, version = 'candidate', tags?: TargetTags): PromptTemplate {
  return {
    version,
    description: 'a prompt-optimization candidate',
    text,
    targetOpen: tags?.targetOpen ?? TARGET_OPEN,
    targetClose: tags?.targetClose ?? TARGET_CLOSE,
  };
}

/** A sample's system-prompt fields, earlier turns and action: what a template lays out. */
export function layoutSampleOf(s: BenchSample): LayoutSample {
  return turnRequestOf(s).sample;
}

/**
 * How a rendered sample reaches the simulator.
 * - 'turn': a turn request carrying the template; a model that renders text (our checkpoints, an
 *   ONNX export without a chat template) lays it out with renderContext; the baselines read the
 *   fields. Its AgentWorldBench texts are left out, so no backend can fall back on them.
 * - 'chat': the system message is renderSystem's text; the earlier actions and observations are
 *   user and assistant messages, then the action (as renderChat lays a sample out): for an
 *   endpoint or a model with a chat template.
 * - 'prompt': renderContext's text and the opening prediction tag, as one flat prompt.
 */
export type RequestForm = 'turn' | 'chat' | 'prompt';
export const REQUEST_FORMS: readonly RequestForm[] = ['turn', 'chat', 'prompt'];

/**
 * The form a simulator is sent a template's requests in, as `lwm infer` / `lwm optimize` and the
 * app's optimization job choose it: 'chat' for an endpoint, and for a model folder with a chat
 * template of its own (a Hugging Face folder, an ONNX folder that has one), which lays out chat
 * messages and would otherwise never see the candidate text; 'turn' for our checkpoints, an ONNX
 * export without a chat template (both render the request's template) and the baselines.
 */
export function requestFormFor(simulator: {
  kind: 'endpoint' | 'checkpoint' | 'hf' | 'onnx' | 'copy-last' | 'reference';
  chatTemplate?: boolean;
}): RequestForm {
  return simulator.kind === 'endpoint' || (simulator.kind !== 'checkpoint' && simulator.chatTemplate === true) ? 'chat' : 'turn';
}

/** The request a template text makes of a sample, in a form (see RequestForm), with the prediction tags `tags` (default: the shared ones). */
export function templateRequest(text: string, sample: BenchSample, form: RequestForm = 'turn', tags?: TargetTags): GenerateRequest {
  const template = candidateTemplate(text, 'candidate', tags);
  const turn = turnRequestOf(sample);
  const ls = turn.sample;
  if (form === 'prompt') return { prompt: renderContext(template, ls) + template.targetOpen };
  if (form === 'chat') {
    const messages: ChatMessage<'user' | 'assistant'>[] = [];
    for (const h of ls.history) messages.push({ role: 'user', content: h.action }, { role: 'assistant', content: h.observation });
    messages.push({ role: 'user', content: ls.action });
    return { system: renderSystem(template, ls), messages };
  }
  return { sample: ls, template, ...(turn.reference !== undefined && { reference: turn.reference }) };
}

/** The evaluator's `render` for a form (and a start template's prediction tags). */
export function templateRender(form: RequestForm = 'turn', tags?: TargetTags): (text: string, sample: BenchSample) => GenerateRequest {
  return (text, sample) => templateRequest(text, sample, form, tags);
}

/**
 * The loop's `validate`: why a text cannot be used (checkTemplateText's problems, each with its
 * line), or the first samples it does not render on (renderProblems: the engine's error, or a value
 * the template changes so the truncation policy could not find it). Empty when usable.
 */
export function templateValidator(samples: readonly BenchSample[], options: { maxProblems?: number; tags?: TargetTags } = {}): (text: string) => string[] {
  const turnSamples: TurnSample[] = samples.map((s) => ({
    ...layoutSampleOf(s),
    trajectoryId: String(s.id),
    turnIndex: s.turnIdx - 1,
    targetObservation: s.reference,
  }));
  return (text) => {
    const problems = checkTemplateText(text).map((p) => `line ${p.line}: ${p.message}`);
    if (problems.length) return problems;
    const failed = renderProblems(candidateTemplate(text, 'candidate', options.tags), turnSamples);
    const max = options.maxProblems ?? 3;
    return failed.length > max ? [...failed.slice(0, max), `… and ${failed.length - max} more sample(s)`] : failed;
  };
}

export interface EvaluatorOptions {
  backend: LwmBackend;
  judge: Judge;
  splits: OptimizationSplits;
  /** The sample rendered with a template text: the request the simulator gets (default: templateRender(form)). */
  render?: (text: string, sample: BenchSample) => GenerateRequest;
  /** The form of templateRender's requests when `render` is not given (default 'turn'). */
  form?: RequestForm;
  generate: Omit<GenerateOptions, 'signal'>;
  concurrency?: number;
  onProgress?: (p: BenchProgress & { split: 'dev' | 'test' }) => void;
}

/** The loop's `evaluate`: judged records of a template on a split, in sample order. */
export function benchEvaluator(o: EvaluatorOptions): (text: string, split: 'dev' | 'test', signal?: AbortSignal) => Promise<AwbJudgedRecord[]> {
  const render = o.render ?? templateRender(o.form);
  return async (text, split, signal) => {
    const samples = o.splits[split];
    const result = await runBenchmark(samples, {
      backend: o.backend,
      judge: o.judge,
      toRequest: (s) => render(text, s),
      generate: o.generate,
      concurrency: o.concurrency,
      signal,
      onProgress: o.onProgress ? (p) => o.onProgress!({ ...p, split }) : undefined,
    });
    return result.judged;
  };
}
