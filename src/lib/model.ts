// A world model, as a program uses one: opened from a BackendRef through the product's one opener,
// asked for the observation that follows an action, streamed.
import type { TurnRequest } from '../core/backend.ts';
import type { BackendRef } from '../core/backendRef.ts';
import { systemPromptFromText } from '../core/formats/systemPromptText.ts';
import { extractPrediction } from '../core/judge/extract.ts';
import type { SystemPrompt } from '../core/schema/types.ts';
import { generationFor, openBackend, type BackendSource, type ModelInfo } from '../backends/open.ts';

/** One turn to simulate: the task context, the turns so far, and the agent's action. */
export interface Turn {
  /** The environment's domain (terminal, mcp, search, os, web, android, swe, or any other name). */
  domain: string;
  /** The five system-prompt fields, or the system prompt as one text. */
  systemPrompt: SystemPrompt | string;
  /** Earlier actions with their observations, oldest first. */
  history?: { action: string; observation: string }[];
  action: string;
}

export interface SimulateOptions {
  /** Most new tokens (default: the model's own, a quarter of its context). */
  maxTokens?: number;
  /** 0 is greedy (the default for our models). */
  temperature?: number;
  topP?: number;
  seed?: number;
  signal?: AbortSignal;
}

export interface WorldModel {
  /** How tables and records name it (`local:quick.safetensors`, `endpoint:…`). */
  readonly name: string;
  /** What it is (a model of ours or a folder: size, context, template); absent for an endpoint or a baseline. */
  readonly info?: ModelInfo;
  /** Streams the model's output for the turn: concatenated, its whole reply. */
  simulate(turn: Turn, options?: SimulateOptions): AsyncIterable<string>;
  /** The whole reply and the observation in it (the text of its last <predicted_observation> block, else all of it). */
  observe(turn: Turn, options?: SimulateOptions): Promise<{ text: string; observation: string }>;
  /** Frees the model (GPU memory); the source's GPU stays the source's. */
  close(): void;
}

function request(turn: Turn): TurnRequest {
  if (typeof turn.action !== 'string') throw new TypeError('turn.action must be a string');
  const systemPrompt = typeof turn.systemPrompt === 'string' ? systemPromptFromText(turn.systemPrompt) : turn.systemPrompt;
  return {
    sample: {
      domain: turn.domain,
      systemPrompt,
      history: (turn.history ?? []).map((h) => ({ action: h.action, observation: h.observation })),
      action: turn.action,
    },
  };
}

/** Opens the model `ref` names from `source` (where its bytes, files, GPU and API key come from). */
export async function openModel(ref: BackendRef, source: BackendSource): Promise<WorldModel> {
  const opened = await openBackend(ref, source);
  const simulate = (turn: Turn, o: SimulateOptions = {}): AsyncIterable<string> => {
    const { signal, ...asked } = o;
    const options = generationFor(opened, asked);
    return opened.backend.generate(request(turn), { ...options, ...(signal && { signal }) });
  };
  return {
    name: opened.backend.name,
    ...(opened.info && { info: opened.info }),
    simulate,
    async observe(turn, o) {
      let text = '';
      for await (const piece of simulate(turn, o)) text += piece;
      return { text, observation: extractPrediction(text) };
    },
    close: () => opened.dispose(),
  };
}

/** openModel from a source made for this one model: closing the model releases the source too (its GPU device). */
export async function openOwned(ref: BackendRef, source: BackendSource & { release(): void }): Promise<WorldModel> {
  let opened: WorldModel;
  try {
    opened = await openModel(ref, source);
  } catch (e) {
    source.release();
    throw e;
  }
  return {
    ...opened,
    close() {
      opened.close();
      source.release();
    },
  };
}
