// The one interface every LWM in the product is driven through: the local WebGPU model, an
// ONNX model, or a large model served elsewhere behind an OpenAI-compatible endpoint.
// Generation is streamed so the playground can show text as it arrives and a caller can stop
// early (abort signal) without waiting for the whole observation. The interface lives in core so
// that core (the benchmark runner) and train (rejection sampling) can drive a backend without
// importing src/backends/, which holds the implementations.
import type { PromptTemplate } from './templates/index.ts';
import type { TurnSample } from './turns/index.ts';

import type { ChatMessage } from './chat.ts';

/**
 * One turn of a world to predict the observation of, structured, so every backend lays it out
 * its own way: the local model renders it with the template it was trained with; an endpoint
 * gets the AgentWorldBench message layout (src/core/bench/awbLayout.ts); the baselines read
 * the fields they need (copy-last the previous observation or the initial state, reference the
 * real observation).
 */
export interface TurnRequest {
  /** System-prompt fields (or unsplit text), earlier turns (plain), the current action. */
  sample: Pick<TurnSample, 'domain' | 'systemPrompt' | 'history' | 'action'>;
  /** How a model that renders text lays the turn out (default: the backend's choice). */
  template?: PromptTemplate;
  /** The real observation of this turn. Only the reference baseline reads it; a model never sees it. */
  reference?: string;
  /**
   * The turn as an AgentWorldBench record writes it (`system_str`, and the `prompt` / `response`
   * entries with their headers): an endpoint is sent these texts unchanged, as the public
   * inference script sends them. `actions` holds turns 1 … t, `observations` turns 1 … t-1.
   */
  awb?: { system: string; actions: string[]; observations: string[] };
}

/**
 * What to continue. Turn form for world-model work (what every backend, baselines included,
 * can serve); chat form for models with a chat template (system = the rendered task context);
 * prompt form for a raw causal LM that was trained on flat text.
 */
export type GenerateRequest = { system: string; messages: ChatMessage<'user' | 'assistant'>[] } | { prompt: string } | TurnRequest;

export function isTurnRequest(r: GenerateRequest): r is TurnRequest {
  return 'sample' in r;
}

export interface GenerateOptions {
  maxTokens: number;
  temperature: number;
  topP?: number;
  topK?: number;
  seed?: number;
  /** Generation ends before any of these strings; the stop string itself is not yielded. */
  stop?: string[];
  signal?: AbortSignal;
  /** Told the number of tokens generated so far, by backends that count them (the local model); for token rates. */
  onTokens?: (tokens: number) => void;
}

export interface LwmBackend {
  /** Shown in tables and exported records (e.g. `endpoint:qwen2.5-7b`, `local:ckpt-300`). */
  name: string;
  /** Streams the generated text in pieces; concatenating them gives the whole output. */
  generate(request: GenerateRequest, options: GenerateOptions): AsyncIterable<string>;
}

export function isChatRequest(r: GenerateRequest): r is { system: string; messages: ChatMessage<'user' | 'assistant'>[] } {
  return 'messages' in r;
}

/**
 * The answer budget a local model gets when none is asked for: a quarter of its context, the rest
 * left to the prompt. `lwm infer`, the benchmark, a Sim RL world and the OpenAI server use it, and
 * a recipe with task play trains its rows for it (TrainSpec.answerRoom).
 */
export function defaultAnswerTokens(contextLength: number): number {
  return Math.max(1, Math.floor(contextLength / 4));
}

/** Drains a backend's stream into one string (what the benchmark and the judges need). */
export async function generateText(backend: LwmBackend, request: GenerateRequest, options: GenerateOptions): Promise<string> {
  let text = '';
  for await (const piece of backend.generate(request, options)) text += piece;
  return text;
}
