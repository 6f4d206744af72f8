// What a user is told when a backend cannot run: the Playground's error callout and the Bench's
// per-backend rows read the same words, so both explain CORS (and how vLLM, Ollama and SGLang
// allow this page's origin), a checkpoint that cannot be run, and a browser without WebGPU.

import type { BackendProblemKind } from '../../core/records.ts';

export type { BackendProblemKind };

/** The page's origin, as a server must allow it (a placeholder where there is none, e.g. in tests). */
export function pageOrigin(): string {
  return typeof location !== 'undefined' && location.origin && location.origin !== 'null' ? location.origin : 'http://localhost:5173';
}

/** What a user is told about CORS (the browser's rule, and how each server allows an origin). */
export function corsHelp(origin: string): string {
  return (
    `What CORS is: a web page may call a server on another origin (scheme, host and port) only when that server answers with an Access-Control-Allow-Origin header naming the page's origin (${origin}); otherwise the browser blocks the reply, and the page only learns that the request failed. ` +
    `vLLM: start it with --allowed-origins '["${origin}"]' (e.g. \`vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000 --allowed-origins '["${origin}"]'\`). ` +
    `Ollama: start it with the origin allowed: \`OLLAMA_ORIGINS=${origin} ollama serve\`. ` +
    'SGLang: `python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --port 30000` allows every origin by default (base URL http://127.0.0.1:30000/v1); when it is still blocked, the server is down or a proxy in front drops the header. ' +
    'A hosted API that refuses browsers: put a reverse proxy in front that adds the header and answers the OPTIONS preflight. ' +
    'Also check that the server is running and that this page may connect to it: the built site allows http://localhost and http://127.0.0.1; other hosts must be listed in LWM_CSP_CONNECT when the site is built.'
  );
}

/** What to do about a checkpoint that cannot be run. */
export const CHECKPOINT_HELP =
  'A checkpoint runs with the tokenizer and the prompt template it was trained with, both stored inside it by LWM Studio training. ' +
  'One written elsewhere (or by an older version) lacks them: run a checkpoint trained in the Train view, or import the model as a Hugging Face folder, which carries its own tokenizer and chat template.';

/** What to do without WebGPU. */
export const NO_WEBGPU_HELP =
  'Checkpoints run on the GPU through WebGPU, which this browser does not offer. Endpoints and the copy-last and reference baselines run without it; the System view says how to get WebGPU (a recent Chrome or Edge, or Chromium started with --enable-unsafe-webgpu).';

/** The help shown under a backend problem, or null when the message says all there is. */
export function backendHelp(kind: BackendProblemKind, origin: string = pageOrigin()): string | null {
  switch (kind) {
    case 'cors':
    case 'unreachable':
      return corsHelp(origin);
    case 'checkpoint':
      return CHECKPOINT_HELP;
    case 'no-webgpu':
      return NO_WEBGPU_HELP;
    default:
      return null;
  }
}

/** A short title for a problem of this kind. */
export function backendProblemTitle(kind: BackendProblemKind): string {
  const titles: Record<BackendProblemKind, string> = {
    cors: 'The endpoint is blocked (CORS) or down',
    unreachable: 'The endpoint is unreachable',
    auth: 'The endpoint refused the API key',
    endpoint: 'The endpoint failed',
    checkpoint: 'This checkpoint cannot be run',
    'no-webgpu': 'This needs WebGPU',
    other: 'This backend failed',
  };
  return titles[kind];
}
