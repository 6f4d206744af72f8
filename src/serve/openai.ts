// `lwm serve`: one opened model (src/backends/open.ts) behind the OpenAI HTTP API, so agents,
// evaluation scripts (the public AgentWorldBench `eval.py infer`) and the OpenAI clients use a
// world model trained here unchanged. Node's http module only; no framework.
//
// Routes: GET /health, GET /v1/models, POST /v1/chat/completions, POST /v1/completions, and with
// `envs` the environment API under /v1/envs (src/serve/envs.ts).
// - Chat messages reach the model the way it was trained: a model that is sent chat messages
//   (a folder with its own chat template, a fine-tune with its trained template) gets them as they
//   are; a model that renders turns (our checkpoints) reads them in the AgentWorldBench message
//   layout (system prompt, then user actions and assistant observations, the last user message
//   the action to predict the observation of) and lays the turn out with its own template.
// - Requests run in arrival order, `concurrency` at a time (the model's own); a request that
//   finds `maxQueue` others waiting is refused with 503 and Retry-After.
// - Errors are OpenAI's error JSON with OpenAI's status codes.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { defaultAnswerTokens, type GenerateOptions, type GenerateRequest, type TurnRequest } from '../core/backend.ts';
import { turnRequestFromRecord } from '../core/bench/awbLayout.ts';
import type { AwbSampleRecord } from '../core/schema/agentworldbench.ts';
import type { ChatMessage } from '../core/chat.ts';
import { BackendError } from '../backends/errors.ts';
import { generationFor, type OpenedBackend } from '../backends/open.ts';
import { EnvApiError, EnvService, isRecord, type EnvLimits } from './envs.ts';

export interface ServeOptions {
  /** The id clients name the model by (GET /v1/models lists it). */
  modelId: string;
  /** Required as `Authorization: Bearer KEY` when set. */
  apiKey?: string;
  /** Origins a browser page may call from (CORS); none by default. `*` allows any. */
  allowedOrigins?: string[];
  /** Requests that may wait for the model; one more is answered 503. */
  maxQueue?: number;
  /** The domain a turn is simulated for when the request does not say (`domain` in the body). */
  domain?: string;
  /** Largest request body, in bytes. */
  maxBodyBytes?: number;
  /** Serve the environment API (/v1/envs, src/serve/envs.ts) with these limits. */
  envs?: Partial<EnvLimits>;
}

/** An error answered as OpenAI's error JSON. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string = 'invalid_request_error',
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

const DEFAULT_MAX_QUEUE = 64;
const DEFAULT_MAX_BODY = 16 * 1024 * 1024;

/** Runs tasks in arrival order, `slots` at a time; refuses a task when `maxWaiting` already wait. */
export class FairQueue {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(
    private readonly slots: number,
    private readonly maxWaiting: number,
  ) {}

  get depth(): number {
    return this.waiting.length;
  }

  /** Resolves when the caller may run (call the returned release when done); throws ApiError 503 when full. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.running < this.slots && this.waiting.length === 0) {
      this.running++;
      return this.releaser();
    }
    if (this.waiting.length >= this.maxWaiting) {
      throw new ApiError(503, `the server is busy: ${this.waiting.length} requests are waiting for the model; retry later`, 'server_error', null, 'queue_full');
    }
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(go);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(new ApiError(499, 'the client went away', 'client_closed'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(go);
    });
    this.running++;
    return this.releaser();
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.running--;
      const next = this.waiting.shift();
      if (next) next();
    };
  }
}

type Body = Record<string, unknown>;

function num(body: Body, key: string, lo: number, hi: number, integer = false): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < lo || v > hi || (integer && !Number.isInteger(v))) {
    throw new ApiError(
      400,
      `'${key}' must be ${integer ? 'an integer' : 'a number'} in [${lo}, ${hi}]; got ${JSON.stringify(v)}`,
      'invalid_request_error',
      key,
    );
  }
  return v;
}

function stopOf(body: Body): string[] | undefined {
  const s = body.stop;
  if (s === undefined || s === null) return undefined;
  const list = typeof s === 'string' ? [s] : s;
  if (!Array.isArray(list) || list.length > 4 || !list.every((x) => typeof x === 'string' && x.length > 0)) {
    throw new ApiError(400, "'stop' must be a non-empty string or a list of up to 4 non-empty strings", 'invalid_request_error', 'stop');
  }
  return list as string[];
}

/** A message's text: a string, or OpenAI's content parts of type 'text'. */
function contentText(m: Body, i: number): string {
  const c = m.content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) {
    return c
      .map((p, j) => {
        if (isRecord(p) && p.type === 'text' && typeof p.text === 'string') return p.text;
        throw new ApiError(400, `messages[${i}].content[${j}]: only text parts are supported`, 'invalid_request_error', `messages[${i}].content`);
      })
      .join('');
  }
  throw new ApiError(400, `messages[${i}].content must be a string or a list of text parts`, 'invalid_request_error', `messages[${i}].content`);
}

/** The chat messages of a request, checked: roles system, user, assistant; at least one user message. */
export function chatMessages(body: Body): { system: string; messages: ChatMessage<'user' | 'assistant'>[] } {
  const raw = body.messages;
  if (!Array.isArray(raw) || raw.length === 0) throw new ApiError(400, "'messages' must be a non-empty list", 'invalid_request_error', 'messages');
  const system: string[] = [];
  const messages: ChatMessage<'user' | 'assistant'>[] = [];
  raw.forEach((m, i) => {
    if (!isRecord(m)) throw new ApiError(400, `messages[${i}] must be an object`, 'invalid_request_error', `messages[${i}]`);
    const text = contentText(m, i);
    if (m.role === 'system' || m.role === 'developer') {
      if (messages.length > 0)
        throw new ApiError(400, `messages[${i}]: a system message must come before the conversation`, 'invalid_request_error', `messages[${i}].role`);
      system.push(text);
    } else if (m.role === 'user' || m.role === 'assistant') messages.push({ role: m.role, content: text });
    else
      throw new ApiError(
        400,
        `messages[${i}].role must be system, user or assistant; got ${JSON.stringify(m.role)}`,
        'invalid_request_error',
        `messages[${i}].role`,
      );
  });
  if (messages.length === 0 || messages[messages.length - 1].role !== 'user') {
    throw new ApiError(400, 'the last message must be a user message (the action whose observation is asked for)', 'invalid_request_error', 'messages');
  }
  return { system: system.join('\n\n'), messages };
}

/**
 * The turn a chat request asks a turn-rendering model for, read in the AgentWorldBench message
 * layout: the system message is the record's system_str, user messages its actions, assistant
 * messages its observations; the last user message is the current action.
 */
export function turnFromChat(chat: { system: string; messages: ChatMessage<'user' | 'assistant'>[] }, domain: string): TurnRequest {
  const prompt: string[] = [];
  const response: string[] = [];
  for (const m of chat.messages) {
    if (m.role === 'user') {
      if (prompt.length > response.length)
        throw new ApiError(
          400,
          'two user messages in a row: actions and observations must alternate (user, assistant, …, user)',
          'invalid_request_error',
          'messages',
        );
      prompt.push(m.content);
    } else {
      if (response.length >= prompt.length)
        throw new ApiError(400, 'an assistant message must answer a user message: actions and observations alternate', 'invalid_request_error', 'messages');
      response.push(m.content);
    }
  }
  const record: AwbSampleRecord = { id: 'request', task: domain, system_str: chat.system, prompt, response: [...response, ''], turn_idx: prompt.length };
  const turn = turnRequestFromRecord(record);
  return { sample: turn.sample, ...(turn.awb && { awb: turn.awb }) };
}

async function readBody(req: IncomingMessage, limit: number): Promise<Body> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new ApiError(413, `the request body is larger than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (e) {
    throw new ApiError(400, `the request body is not valid JSON: ${(e as Error).message}`);
  }
  if (!isRecord(body)) throw new ApiError(400, 'the request body must be a JSON object');
  return body;
}

function send(res: ServerResponse, status: number, json: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(json));
}

function sendError(res: ServerResponse, e: ApiError): void {
  const headers: Record<string, string> = e.status === 503 ? { 'retry-after': '1' } : {};
  send(res, e.status, { error: { message: e.message, type: e.type, param: e.param, code: e.code } }, headers);
}

let counter = 0;
function requestId(prefix: string): string {
  counter = (counter + 1) % 1e9;
  return `${prefix}-${Date.now().toString(36)}${counter.toString(36)}`;
}

/** What one completion request asks for, checked. */
interface Job {
  request: GenerateRequest;
  options: Omit<GenerateOptions, 'signal'>;
  stream: boolean;
  chat: boolean;
  includeUsage: boolean;
}

/** The served model (none: environments only), the queue in front of it, and the request handler. */
export class OpenAIService {
  readonly queue: FairQueue;
  readonly created = Math.floor(Date.now() / 1000);
  readonly envs: EnvService | null;
  private readonly domain: string;

  constructor(
    private readonly served: OpenedBackend | null,
    readonly options: ServeOptions,
  ) {
    this.queue = new FairQueue(Math.max(1, served?.concurrency ?? 1), options.maxQueue ?? DEFAULT_MAX_QUEUE);
    this.domain = options.domain ?? 'environment';
    const model = served && {
      backend: served.backend,
      options: () => generationFor(served),
      acquire: (signal?: AbortSignal) => this.queue.acquire(signal),
    };
    this.envs = options.envs ? new EnvService(model, options.envs) : null;
  }

  /** The served model; a 404 when the server serves environments only. */
  get opened(): OpenedBackend {
    if (!this.served)
      throw new ApiError(404, 'this server serves no model (it was started with --envs and no --model)', 'invalid_request_error', 'model', 'model_not_found');
    return this.served;
  }

  /** The Node request handler. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.route(req, res).catch((e) => {
      if (e instanceof EnvApiError) sendError(res, new ApiError(e.status, e.message, 'invalid_request_error', e.param, e.code));
      else sendError(res, e instanceof ApiError ? e : new ApiError(500, `internal error: ${(e as Error).message}`, 'server_error'));
    });
  };

  private cors(req: IncomingMessage, res: ServerResponse): void {
    const origin = req.headers.origin;
    const allowed = this.options.allowedOrigins ?? [];
    if (!origin || allowed.length === 0) return;
    if (allowed.includes('*') || allowed.includes(origin)) {
      res.setHeader('access-control-allow-origin', allowed.includes('*') ? '*' : origin);
      res.setHeader('vary', 'Origin');
      res.setHeader('access-control-allow-headers', 'authorization, content-type');
      res.setHeader('access-control-allow-methods', 'GET, POST, DELETE, OPTIONS');
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.cors(req, res);
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (req.method === 'OPTIONS') {
      res.writeHead(204);
      res.end();
      return;
    }
    if (path === '/health') {
      send(res, 200, {
        status: 'ok',
        model: this.served ? this.options.modelId : null,
        waiting: this.queue.depth,
        ...(this.envs && { episodes: this.envs.live }),
      });
      return;
    }
    if (!path.startsWith('/v1/'))
      throw new ApiError(
        404,
        `no route ${req.method} ${path}: the API is under /v1/ (models, chat/completions, completions)`,
        'invalid_request_error',
        null,
        'not_found',
      );
    this.authorize(req);
    if (path === '/v1/envs' || path.startsWith('/v1/envs/')) {
      await this.envRoute(req, res, path);
      return;
    }
    if (path === '/v1/models' && req.method === 'GET') {
      send(res, 200, { object: 'list', data: this.served ? [this.modelCard()] : [] });
      return;
    }
    if (this.served && path === `/v1/models/${this.options.modelId}` && req.method === 'GET') {
      send(res, 200, this.modelCard());
      return;
    }
    if ((path === '/v1/chat/completions' || path === '/v1/completions') && req.method === 'POST') {
      const body = await readBody(req, this.options.maxBodyBytes ?? DEFAULT_MAX_BODY);
      const job = this.parse(body, path === '/v1/chat/completions');
      await this.complete(res, job);
      return;
    }
    throw new ApiError(404, `no route ${req.method} ${path}`, 'invalid_request_error', null, 'not_found');
  }

  private async envRoute(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const envs = this.envs;
    if (!envs) throw new ApiError(404, 'this server serves no environments: start it with --envs', 'invalid_request_error', null, 'not_found');
    const m = /^\/v1\/envs(?:\/([^/]+)(\/step)?)?$/.exec(path);
    if (!m) throw new ApiError(404, `no route ${req.method} ${path}`, 'invalid_request_error', null, 'not_found');
    const [, id, step] = m;
    const limit = this.options.maxBodyBytes ?? DEFAULT_MAX_BODY;
    if (!id && req.method === 'POST') send(res, 200, envs.create(await readBody(req, limit)));
    else if (!id && req.method === 'GET') send(res, 200, envs.list());
    else if (id && step && req.method === 'POST') {
      const abort = new AbortController();
      const onClose = () => {
        if (!res.writableEnded) abort.abort();
      };
      res.on('close', onClose);
      try {
        send(res, 200, await envs.step(decodeURIComponent(id), await readBody(req, limit), abort.signal));
      } finally {
        res.off('close', onClose);
      }
    } else if (id && !step && req.method === 'GET') send(res, 200, envs.read(decodeURIComponent(id)));
    else if (id && !step && req.method === 'DELETE') send(res, 200, envs.end(decodeURIComponent(id)));
    else throw new ApiError(405, `${req.method} is not a method of ${path}`, 'invalid_request_error', null, 'method_not_allowed');
  }

  private authorize(req: IncomingMessage): void {
    const key = this.options.apiKey;
    if (!key) return;
    const given = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (given !== key)
      throw new ApiError(
        401,
        given === undefined ? 'no API key: send Authorization: Bearer KEY' : 'the API key is not valid',
        'invalid_request_error',
        null,
        'invalid_api_key',
      );
  }

  private modelCard() {
    return { id: this.options.modelId, object: 'model', created: this.created, owned_by: 'lwm-studio' };
  }

  private parse(body: Body, chat: boolean): Job {
    if (typeof body.model !== 'string') throw new ApiError(400, "'model' must be a string", 'invalid_request_error', 'model');
    if (body.model !== this.options.modelId) {
      throw new ApiError(
        404,
        `the model '${body.model}' does not exist here; this server serves '${this.options.modelId}'`,
        'invalid_request_error',
        'model',
        'model_not_found',
      );
    }
    num(body, 'n', 1, 1, true); // one choice per request
    const maxTokens = num(body, 'max_completion_tokens', 1, 1 << 20, true) ?? num(body, 'max_tokens', 1, 1 << 20, true);
    const temperature = num(body, 'temperature', 0, 2);
    const topP = num(body, 'top_p', 0, 1);
    const seed = num(body, 'seed', -(2 ** 53), 2 ** 53, true);
    const stop = stopOf(body);
    if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean')
      throw new ApiError(400, "'stream' must be a boolean", 'invalid_request_error', 'stream');
    const streamOptions = body.stream_options;
    const includeUsage = isRecord(streamOptions) && streamOptions.include_usage === true;
    const domain = typeof body.domain === 'string' && body.domain ? body.domain : this.domain;
    let request: GenerateRequest;
    if (chat) {
      const messages = chatMessages(body);
      request = this.opened.form === 'chat' ? messages : turnFromChat(messages, domain);
    } else {
      if (typeof body.prompt !== 'string') throw new ApiError(400, "'prompt' must be a string", 'invalid_request_error', 'prompt');
      request = { prompt: body.prompt };
    }
    const budget = maxTokens === undefined ? undefined : this.budget(request, maxTokens);
    let options: Omit<GenerateOptions, 'signal'>;
    try {
      options = generationFor(this.opened, {
        ...(budget !== undefined && { maxTokens: budget }),
        ...(temperature !== undefined && { temperature }),
        ...(topP !== undefined && { topP }),
        ...(seed !== undefined && { seed }),
      });
    } catch (e) {
      throw new ApiError(400, (e as Error).message, 'invalid_request_error', 'max_tokens');
    }
    if (stop) options = { ...options, stop };
    if ('sample' in request) {
      const report = this.opened.contextReport(request, options.maxTokens);
      if (report && report.room !== null && report.prompt > report.room) {
        throw new ApiError(
          400,
          `the prompt takes ${report.prompt} tokens, more than the ${report.room} the model's context of ${report.context} leaves beside max_tokens ${options.maxTokens}: shorten the messages or lower max_tokens`,
          'invalid_request_error',
          'messages',
          'context_length_exceeded',
        );
      }
    }
    return { request, options, stream: body.stream === true, chat, includeUsage };
  }

  /**
   * The output budget a request runs with: max_tokens is a ceiling. One the context cannot hold
   * (clients written for large models ask for 32768) is lowered to the room the whole prompt
   * leaves (a turn, measured with the model's tokenizer), else to a quarter of the context, the
   * model's own default; finish_reason 'length' then tells the client where it stopped.
   */
  private budget(request: GenerateRequest, asked: number): number {
    const context = this.opened.contextLength;
    if (context === null || asked < context) return asked;
    const fallback = defaultAnswerTokens(context);
    if (!('sample' in request)) return fallback;
    const full = this.opened.contextReport(request, 1)?.full;
    return full !== undefined && context - full >= 1 ? Math.min(asked, context - full) : fallback;
  }

  private async complete(res: ServerResponse, job: Job): Promise<void> {
    const abort = new AbortController();
    const onClose = () => {
      if (!res.writableEnded) abort.abort();
    };
    res.on('close', onClose);
    const release = await this.queue.acquire(abort.signal);
    const id = requestId(job.chat ? 'chatcmpl' : 'cmpl');
    const created = Math.floor(Date.now() / 1000);
    const model = this.options.modelId;
    let completionTokens = 0;
    const before = this.opened.stats ? this.opened.stats.promptTokens : 0;
    const options: GenerateOptions = {
      ...job.options,
      signal: abort.signal,
      onTokens: (t) => {
        completionTokens = t;
      },
    };
    const chunk = (delta: string | null, finish: string | null, first = false) =>
      job.chat
        ? {
            id,
            object: 'chat.completion.chunk',
            created,
            model,
            choices: [{ index: 0, delta: delta === null ? {} : { ...(first && { role: 'assistant' }), content: delta }, finish_reason: finish }],
          }
        : { id, object: 'text_completion', created, model, choices: [{ index: 0, text: delta ?? '', finish_reason: finish, logprobs: null }] };
    let text = '';
    try {
      const pieces = this.opened.backend.generate(job.request, options);
      if (job.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
        const write = (x: unknown) => res.write(`data: ${JSON.stringify(x)}\n\n`);
        let first = true;
        for await (const piece of pieces) {
          text += piece;
          if (piece) write(chunk(piece, null, first));
          first = false;
        }
        if (first && job.chat) write(chunk('', null, true));
        const usage = this.usage(job, text, completionTokens, before);
        write({ ...chunk(null, this.finishReason(job, completionTokens)), ...(job.includeUsage && { usage: null }) });
        if (job.includeUsage) write({ id, object: job.chat ? 'chat.completion.chunk' : 'text_completion', created, model, choices: [], usage });
        res.write('data: [DONE]\n\n');
        res.end();
        return;
      }
      for await (const piece of pieces) text += piece;
      const usage = this.usage(job, text, completionTokens, before);
      const finish = this.finishReason(job, completionTokens);
      send(
        res,
        200,
        job.chat
          ? {
              id,
              object: 'chat.completion',
              created,
              model,
              choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finish, logprobs: null }],
              usage,
            }
          : { id, object: 'text_completion', created, model, choices: [{ index: 0, text, finish_reason: finish, logprobs: null }], usage },
      );
    } catch (e) {
      if (abort.signal.aborted) return;
      const err =
        e instanceof ApiError
          ? e
          : e instanceof BackendError
            ? new ApiError(400, e.message)
            : new ApiError(500, `generation failed: ${(e as Error).message}`, 'server_error');
      if (res.headersSent) {
        res.write(`data: ${JSON.stringify({ error: { message: err.message, type: err.type, param: err.param, code: err.code } })}\n\n`);
        res.end();
      } else sendError(res, err);
    } finally {
      res.off('close', onClose);
      release();
    }
  }

  private finishReason(job: Job, completionTokens: number): 'stop' | 'length' {
    return completionTokens >= job.options.maxTokens ? 'length' : 'stop';
  }

  private usage(job: Job, text: string, completionTokens: number, before: number) {
    const counted = this.opened.stats ? this.opened.stats.promptTokens - before : null;
    let prompt = counted !== null && counted > 0 ? counted : null;
    if (prompt === null && 'sample' in job.request) prompt = this.opened.contextReport(job.request, job.options.maxTokens)?.prompt ?? null;
    if (prompt === null) prompt = Math.ceil(requestChars(job.request) / 4);
    const completion = completionTokens > 0 ? completionTokens : Math.ceil(text.length / 4);
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  }
}

function requestChars(r: GenerateRequest): number {
  if ('prompt' in r) return r.prompt.length;
  if ('messages' in r) return r.system.length + r.messages.reduce((s, m) => s + m.content.length, 0);
  return JSON.stringify(r.sample).length;
}

/** Starts listening; resolves with the server and the address it bound. */
export async function listen(service: OpenAIService, host: string, port: number): Promise<{ server: Server; url: string }> {
  const server = createServer(service.handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const a = server.address();
  const bound = typeof a === 'object' && a ? a.port : port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return { server, url: `http://${shown}:${bound}` };
}
