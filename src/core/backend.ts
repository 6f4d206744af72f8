// The one interface every LWM in the product is driven through: the local WebGPU model, an
// ONNX model, or a large model served elsewhere behind an OpenAI-compatible endpoint.
// Generation is streamed so the playground can show text as it arrives and a caller can stop
// early (abort signal) without waiting for the whole observation. The interface lives in core so
// that core (the benchmark runner) and train (rejection sampling) can drive a backend without
// importing src/backends/, which holds the implementations.

import type { ChatMessage } from './chat.ts';

/**
 * What to continue. Chat form for models with a chat template (system = the rendered task
 * context); prompt form for a raw causal LM that was trained on flat text.
 */
export type GenerateRequest = { system: string; messages: ChatMessage<'user' | 'assistant'>[] } | { prompt: string };

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

export function isChatRequest(r: GenerateRequest): r is { system: string; messages: ChatMessage<'user' | 'assistant'>[] } {
  return 'messages' in r;
}

/** Drains a backend's stream into one string (what the benchmark and the judges need). */
export async function generateText(backend: LwmBackend, request: GenerateRequest, options: GenerateOptions): Promise<string> {
  let text = '';
  for await (const piece of backend.generate(request, options)) text += piece;
  return text;
}
