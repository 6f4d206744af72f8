// The one interface every LWM in the product is driven through: the local WebGPU model, an
// ONNX model, or a large model served elsewhere behind an OpenAI-compatible endpoint.
// Generation is streamed so the playground can show text as it arrives and a caller can stop
// early (abort signal) without waiting for the whole observation.

import { renderSystem, type PromptTemplate } from '../core/templates/index.ts';
import type { TurnSample } from '../core/turns/index.ts';

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

/**
 * A turn sample to predict the next observation of, with the template to lay it out (default:
 * the backend's choice, v0 for the local model). The local model cuts it to its context with the
 * policy it was trained under (src/core/templates/fit.ts); an endpoint gets it as chat messages.
 */
export interface TurnRequest {
  sample: Pick<TurnSample, 'domain' | 'systemPrompt' | 'history' | 'action'>;
  template?: PromptTemplate;
}

/**
 * What to continue. Turn form for LWMs (the structure the truncation policy needs); chat form
 * for models with a chat template (system = the rendered task context); prompt form for a raw
 * causal LM that was trained on flat text.
 */
export type GenerateRequest = { system: string; messages: ChatMessage[] } | { prompt: string } | TurnRequest;

export function isTurnRequest(r: GenerateRequest): r is TurnRequest {
  return 'sample' in r;
}

/** A turn request as chat messages: the rendered system text, then actions as user and observations as assistant turns. */
export function turnAsChat(r: TurnRequest, fallback: PromptTemplate): { system: string; messages: ChatMessage[] } {
  const messages: ChatMessage[] = [];
  for (const turn of r.sample.history) messages.push({ role: 'user', content: turn.action }, { role: 'assistant', content: turn.observation });
  messages.push({ role: 'user', content: r.sample.action });
  return { system: renderSystem(r.template ?? fallback, r.sample), messages };
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
}

export interface LwmBackend {
  /** Shown in tables and exported records (e.g. `endpoint:qwen2.5-7b`, `local:ckpt-300`). */
  name: string;
  /** Streams the generated text in pieces; concatenating them gives the whole output. */
  generate(request: GenerateRequest, options: GenerateOptions): AsyncIterable<string>;
}

export function isChatRequest(r: GenerateRequest): r is { system: string; messages: ChatMessage[] } {
  return 'messages' in r;
}

/** Drains a backend's stream into one string (what the benchmark and the judges need). */
export async function generateText(backend: LwmBackend, request: GenerateRequest, options: GenerateOptions): Promise<string> {
  let text = '';
  for await (const piece of backend.generate(request, options)) text += piece;
  return text;
}
