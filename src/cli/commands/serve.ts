// `lwm serve --model M`: a world model behind an OpenAI-compatible HTTP API (src/serve/openai.ts),
// opened by the one opener every backend goes through (src/backends/open.ts, Node's source).
import { basename } from 'node:path';
import type { BackendRef } from '../../core/backendRef.ts';
import { DEFAULT_FOLDER_CONTEXT } from '../../core/backendRef.ts';
import { openBackend } from '../../backends/open.ts';
import { BackendError } from '../../backends/errors.ts';
import { nodeSource, refFromPath } from '../../backends/node.ts';
import { listen, OpenAIService } from '../../serve/openai.ts';
import { FileError, intOption, parseCommandArgs, UsageError, type CliIO } from '../io.ts';
import { modelArg } from './common.ts';

const HELP = `Usage: lwm serve --model M [--envs] [options]
       lwm serve --envs [options]

Serves one world model over the OpenAI API: GET /v1/models, POST /v1/chat/completions and
POST /v1/completions (streaming too), and GET /health. Clients written for OpenAI (the
AgentWorldBench eval.py, the OpenAI Python and JavaScript clients, lwm infer --backend endpoint)
use it unchanged.

  --model M            a checkpoint of ours (FILE.safetensors), a Hugging Face model folder
                       (config.json, *.safetensors, tokenizer.json) or an ONNX causal-LM folder
                       (onnx/model.onnx), or a Hugging Face Hub id org/name[@revision] (downloaded
                       into the Hugging Face cache); or copy-last, the baseline that repeats the
                       last observation (no model)
  --model-id ID        the id clients name the model by (default: the file or folder name)
  --host H             address to bind (default 127.0.0.1: this machine only)
  --port N             port (default 8000; 0 picks a free one)
  --api-key K          require Authorization: Bearer K (default: LWM_SERVE_API_KEY, else none)
  --allowed-origins O  comma-separated origins a web page may call from (CORS; default none,
                       * for any): e.g. the app's origin, to use the server as its endpoint
  --max-queue N        requests that may wait for the model (default 64); one more gets 503
  --domain D           the environment a chat is simulated for when a request does not say
                       ("domain" in the body); our checkpoints render it into their prompt
  --template NAME      a checkpoint's trained template to prompt with (default: its own)
  --weights f32|f16    how a checkpoint's or folder's weights are held on the GPU (default f32)
  --context N          a Hugging Face folder's context in tokens (default: its own, at most ${DEFAULT_FOLDER_CONTEXT})
  --memory-gib G       GPU memory a Hugging Face folder may take (default 8)
  --variant V          an ONNX folder's model file (fp16, q4, … or a file name)
  --envs               also serve the environment API: POST /v1/envs {domain, seed, simulator}
                       starts an episode of a built-in environment whose observations come from
                       the environment ("real") or the served model ("model"); POST
                       /v1/envs/ID/step {action} steps it; DELETE /v1/envs/ID ends it
  --max-episodes N     live episodes at once (default 64)
  --episode-idle S     seconds an episode may sit unstepped before it ends (default 600)

Chat messages reach the model the way it was trained: through a folder's chat template or a
fine-tune's trained template; for our checkpoints in the AgentWorldBench layout (the system
prompt, then user actions and assistant observations, ending with the action to simulate).
Requests are answered in arrival order. Stop with Ctrl-C or SIGTERM.
`;

export interface ServeArgs {
  model: string;
  modelId?: string;
  host: string;
  port: number;
  apiKey?: string;
  allowedOrigins: string[];
  maxQueue: number;
  domain?: string;
  template?: string;
  weights?: 'f32' | 'f16';
  context?: number;
  memoryGiB: number;
  variant?: string;
  envs?: { maxEpisodes: number; idleMs: number };
}

export function parseServeArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): ServeArgs | 'help' {
  const { values } = parseCommandArgs(
    argv,
    {
      model: { type: 'string' },
      'model-id': { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'api-key': { type: 'string' },
      'allowed-origins': { type: 'string' },
      'max-queue': { type: 'string' },
      domain: { type: 'string' },
      template: { type: 'string' },
      weights: { type: 'string' },
      context: { type: 'string' },
      'memory-gib': { type: 'string' },
      variant: { type: 'string' },
      envs: { type: 'boolean' },
      'max-episodes': { type: 'string' },
      'episode-idle': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    false,
  );
  if (values.help) return 'help';
  if (!values.model && !values.envs)
    throw new UsageError('--model is required (a checkpoint, a Hugging Face folder, an ONNX folder, or copy-last), or --envs for environments only');
  for (const f of ['max-episodes', 'episode-idle'] as const) if (values[f] !== undefined && !values.envs) throw new UsageError(`--${f} is for --envs`);
  if (values.weights !== undefined && values.weights !== 'f32' && values.weights !== 'f16')
    throw new UsageError(`--weights must be f32 or f16, got ${JSON.stringify(values.weights)}`);
  const memory = values['memory-gib'] === undefined ? 8 : Number(values['memory-gib']);
  if (!(Number.isFinite(memory) && memory > 0 && memory <= 1024))
    throw new UsageError(`--memory-gib must be a number of GiB above 0, got ${JSON.stringify(values['memory-gib'])}`);
  const origins = (values['allowed-origins'] ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  for (const o of origins) {
    if (o !== '*' && !/^https?:\/\/[^/\s]+$/.test(o))
      throw new UsageError(`--allowed-origins: ${JSON.stringify(o)} is not an origin (scheme://host[:port], or *)`);
  }
  const modelId = values['model-id'];
  if (modelId !== undefined && !/^[\w.:@/-]{1,200}$/.test(modelId))
    throw new UsageError(`--model-id must be letters, digits and . _ - : @ / (at most 200), got ${JSON.stringify(modelId)}`);
  const apiKey = values['api-key'] ?? env.LWM_SERVE_API_KEY;
  return {
    model: values.model ?? '',
    ...(modelId !== undefined && { modelId }),
    host: values.host ?? '127.0.0.1',
    port: values.port === undefined ? 8000 : intOption('port', values.port, 0, 65535),
    ...(apiKey && { apiKey }),
    allowedOrigins: origins,
    maxQueue: values['max-queue'] === undefined ? 64 : intOption('max-queue', values['max-queue'], 0, 100_000),
    ...(values.domain !== undefined && { domain: values.domain }),
    ...(values.template !== undefined && { template: values.template }),
    ...(values.weights !== undefined && { weights: values.weights as 'f32' | 'f16' }),
    ...(values.context !== undefined && { context: intOption('context', values.context, 16) }),
    memoryGiB: memory,
    ...(values.variant !== undefined && { variant: values.variant }),
    ...(values.envs && {
      envs: {
        maxEpisodes: values['max-episodes'] === undefined ? 64 : intOption('max-episodes', values['max-episodes'], 1, 100_000),
        idleMs: (values['episode-idle'] === undefined ? 600 : intOption('episode-idle', values['episode-idle'], 1, 7 * 24 * 3600)) * 1000,
      },
    }),
  };
}

/** The model `--model` names, as a BackendRef: a checkpoint file, a Hugging Face folder, an ONNX folder, or copy-last. */
export function serveRef(a: ServeArgs): BackendRef {
  try {
    return refFromPath(a.model, {
      ...(a.template !== undefined && { template: a.template }),
      ...(a.weights && { weights: a.weights }),
      ...(a.context !== undefined && { context: a.context }),
      memoryGiB: a.memoryGiB,
      ...(a.variant !== undefined && { variant: a.variant }),
    });
  } catch (e) {
    throw e instanceof BackendError ? new FileError(e.message) : e;
  }
}

/** Resolves on the first SIGINT or SIGTERM; a second one ends the process at once. */
function stopSignal(): Promise<string> {
  return new Promise((resolve) => {
    const on = (s: string) => () => {
      process.off('SIGINT', int);
      process.off('SIGTERM', term);
      const force = () => process.exit(130);
      process.once('SIGINT', force);
      process.once('SIGTERM', force);
      resolve(s);
    };
    const int = on('SIGINT');
    const term = on('SIGTERM');
    process.on('SIGINT', int);
    process.on('SIGTERM', term);
  });
}

export default async function serve(argv: string[], io: CliIO): Promise<number> {
  const a = parseServeArgs(argv);
  if (a === 'help') {
    io.out(HELP);
    return 0;
  }
  const named = a.model;
  if (a.model) a.model = await modelArg(io, a.model);
  const ref = a.model ? serveRef(a) : null;
  const source = nodeSource({ log: (m) => io.err(`lwm serve: ${m}\n`) });
  const opened =
    ref &&
    (await openBackend(ref, source).catch((e) => {
      source.release();
      throw e instanceof BackendError ? new FileError(`${a.model}: ${e.message}`) : e;
    }));
  const modelId =
    a.modelId ??
    (!ref ? '' : ref.kind === 'copy-last' ? 'copy-last' : named !== a.model ? named : basename(a.model.replace(/[/\\]+$/, '')).replace(/\.safetensors$/, ''));
  const service = new OpenAIService(opened, {
    modelId,
    ...(a.apiKey && { apiKey: a.apiKey }),
    allowedOrigins: a.allowedOrigins,
    maxQueue: a.maxQueue,
    ...(a.domain !== undefined && { domain: a.domain }),
    ...(a.envs && { envs: a.envs }),
  });
  let bound: Awaited<ReturnType<typeof listen>>;
  try {
    bound = await listen(service, a.host, a.port);
  } catch (e) {
    opened?.dispose();
    source.release();
    throw new FileError(`cannot listen on ${a.host}:${a.port}: ${(e as Error).message}`);
  }
  const what = [ref && `${modelId} (${ref.kind})`, a.envs && 'environments'].filter(Boolean).join(' and ');
  io.out(`lwm serve: ${what} at ${bound.url}/v1${a.apiKey ? ' (API key required)' : ''}\n`);
  const signal = await stopSignal();
  io.err(`lwm serve: ${signal}: closing\n`);
  bound.server.closeIdleConnections?.();
  await new Promise<void>((resolve) => {
    bound.server.close(() => resolve());
    // Streams in flight end when their clients see the socket close.
    setTimeout(() => {
      bound.server.closeAllConnections?.();
      resolve();
    }, 2000).unref();
  });
  opened?.dispose();
  source.release();
  return 0;
}
