// A client for OpenAI-compatible chat-completions endpoints (vLLM, SGLang, Ollama, hosted
// APIs). One client serves two roles: an LLM judge's transport and an LWM backend, so a user
// can drive the whole product with a large model served elsewhere. Runs in Node and browsers
// (fetch, AbortController, ReadableStream, TextDecoder only).
import type { GenerateOptions, GenerateRequest, LwmBackend } from '../core/backend.ts';
import { isChatRequest, isTurnRequest } from '../core/backend.ts';
import { awbMessages } from '../core/bench/awbLayout.ts';
import type { ChatMessage } from '../core/chat.ts';
import { createLlmJudge, sleepFor, type ChatComplete, type LlmJudgeOptions } from '../core/judge/llm.ts';
import type { Judge } from '../core/judge/types.ts';

export type EndpointErrorKind = 'unreachable' | 'auth' | 'timeout' | 'cors' | 'rate_limit' | 'http' | 'protocol' | 'aborted';

export class EndpointError extends Error {
  readonly kind: EndpointErrorKind;
  readonly status?: number;
  readonly url: string;
  /** Worth trying again after a pause. */
  readonly retryable: boolean;
  /** No retry or other sample can succeed: stop the run and tell the user (read by the judge layer). */
  readonly fatal: boolean;
  /** Server-suggested pause (Retry-After), in ms. */
  readonly retryAfterMs?: number;

  constructor(kind: EndpointErrorKind, url: string, message: string, opts: { status?: number; retryAfterMs?: number } = {}) {
    super(message);
    this.name = 'EndpointError';
    this.kind = kind;
    this.url = url;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
    this.retryable =
      kind === 'unreachable' || kind === 'timeout' || kind === 'rate_limit' || kind === 'protocol' || (kind === 'http' && (opts.status ?? 0) >= 500);
    this.fatal = kind === 'auth' || kind === 'cors';
  }
}

export interface EndpointConfig {
  /** e.g. `http://127.0.0.1:8000/v1` (vLLM, SGLang), `http://localhost:11434/v1` (Ollama); a full `/chat/completions` URL also works. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Per request; for a stream, the longest wait for the response head or between two chunks. Default 120 s. */
  timeoutMs?: number;
  /** Extra attempts after a retryable failure. Default 3. */
  retries?: number;
  /** First back-off pause; doubles each attempt up to `maxBackoffMs`. Defaults 500 ms, 8 s. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** A server's Retry-After is honoured up to this pause. Default 60 s. */
  maxRetryAfterMs?: number;
  /** Requests in flight at once (a stream holds its slot until it ends). Default 4. */
  maxConcurrency?: number;
  headers?: Record<string, string>;
  /** As a backend: stream the reply (server-sent events, default) or ask for it whole. */
  stream?: boolean;
  /** Merged into every request body (e.g. `{"chat_template_kwargs": {...}}` for vLLM). */
  extraBody?: Record<string, unknown>;
  fetch?: typeof fetch;
  /**
   * The page's origin when running in a browser (default: `location.origin` if there is one).
   * A network failure to another origin is then reported as a likely CORS refusal.
   */
  pageOrigin?: string | null;
  /** Waits between retries; replaceable so tests do not sleep. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface ChatOptions {
  maxTokens: number;
  temperature: number;
  topP?: number;
  topK?: number;
  seed?: number;
  stop?: string[];
  signal?: AbortSignal;
}

export function chatCompletionsUrl(baseUrl: string): string {
  const trimmed = baseUrl.trim().replace(/\/+$/, '');
  if (!/^https?:\/\//i.test(trimmed))
    throw new EndpointError(
      'unreachable',
      baseUrl,
      `the base URL ${JSON.stringify(baseUrl)} must start with http:// or https:// (e.g. http://127.0.0.1:8000/v1)`,
    );
  return /\/chat\/completions$/.test(trimmed) ? trimmed : `${trimmed}/chat/completions`;
}

function defaultPageOrigin(): string | null {
  const loc = (globalThis as { location?: { origin?: string } }).location;
  return typeof loc?.origin === 'string' && loc.origin !== 'null' ? loc.origin : null;
}

const defaultSleep = sleepFor;

/** A counting semaphore: the concurrency limit shared by every call of one client. */
class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly max: number) {}
  async acquire(): Promise<() => void> {
    if (this.active >= this.max) await new Promise<void>((r) => this.waiting.push(r));
    else this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }
}

function excerpt(text: string, n = 200): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n)}…` : t;
}

/**
 * The message in an error body: OpenAI-style `error.message` (or a string `error`), or the
 * top-level `message` vLLM sends (`{"object": "error", "message": …, "code": 400}`).
 */
function errorMessageOf(text: string): string | undefined {
  let body: { error?: { message?: unknown } | string; message?: unknown } | null;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined; // not JSON: the raw text is the detail
  }
  return errorMessageOfBody(body);
}

function errorMessageOfBody(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const { error: err, message } = body as { error?: { message?: unknown } | string; message?: unknown };
  if (typeof err === 'string') return err;
  if (err && typeof err.message === 'string') return err.message;
  if (typeof message === 'string') return message;
  return undefined;
}

function retryAfter(res: Response): number | undefined {
  const h = res.headers.get('retry-after');
  if (!h) return undefined;
  const s = Number(h);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const at = Date.parse(h);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

export class EndpointClient {
  readonly url: string;
  private readonly config: EndpointConfig;
  private readonly limiter: Limiter;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly pageOrigin: string | null;

  constructor(config: EndpointConfig) {
    this.config = config;
    this.url = chatCompletionsUrl(config.baseUrl);
    this.limiter = new Limiter(Math.max(1, config.maxConcurrency ?? 4));
    this.fetchImpl = config.fetch ?? ((...a: Parameters<typeof fetch>) => fetch(...a));
    this.sleep = config.sleep ?? defaultSleep;
    this.pageOrigin = config.pageOrigin === undefined ? defaultPageOrigin() : config.pageOrigin;
  }

  private body(messages: ChatMessage[], o: ChatOptions, stream: boolean): string {
    const b: Record<string, unknown> = { model: this.config.model, messages, max_tokens: o.maxTokens, temperature: o.temperature, stream };
    if (o.topP !== undefined) b.top_p = o.topP;
    // top_k is not in the OpenAI schema, but vLLM, SGLang and Ollama read it.
    if (o.topK !== undefined) b.top_k = o.topK;
    if (o.seed !== undefined) b.seed = o.seed;
    if (o.stop?.length) b.stop = o.stop;
    return JSON.stringify({ ...b, ...this.config.extraBody });
  }

  /**
   * One HTTP exchange with the response head checked. `timer` aborts a silent server; the
   * caller's signal aborts everything.
   */
  private async send(
    body: string,
    signal: AbortSignal | undefined,
    stream: boolean,
  ): Promise<{ res: Response; arm: () => void; disarm: () => void; timedOut: () => boolean }> {
    const ctl = new AbortController();
    const timeoutMs = this.config.timeoutMs ?? 120_000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let timedOut = false;
    const arm = () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        ctl.abort();
      }, timeoutMs);
    };
    const disarm = () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => ctl.abort();
    if (signal?.aborted) throw new EndpointError('aborted', this.url, 'the request was cancelled');
    signal?.addEventListener('abort', onAbort, { once: true });
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: stream ? 'text/event-stream' : 'application/json',
      ...this.config.headers,
    };
    if (this.config.apiKey) headers.Authorization = `Bearer ${this.config.apiKey}`;
    arm();
    let res: Response;
    try {
      res = await this.fetchImpl(this.url, { method: 'POST', headers, body, signal: ctl.signal });
    } catch (e) {
      disarm();
      throw this.networkError(e, timedOut, signal, timeoutMs);
    }
    if (!res.ok) {
      let text = '';
      try {
        text = await res.text();
      } catch {
        /* the body is only for the message */
      }
      disarm();
      throw this.httpError(res, text);
    }
    // The timer stays armed: a server that stalls while sending the body times out too.
    return { res, arm, disarm, timedOut: () => timedOut };
  }

  private networkError(e: unknown, timedOut: boolean, signal: AbortSignal | undefined, timeoutMs: number, url = this.url): EndpointError {
    if (timedOut)
      return new EndpointError(
        'timeout',
        url,
        `no answer from ${url} within ${timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1000)} s`} (timeout); the server may be overloaded or the model still loading`,
      );
    if (signal?.aborted) return new EndpointError('aborted', url, 'the request was cancelled');
    const cause = e instanceof Error ? (e.cause instanceof Error ? `${e.message}: ${e.cause.message}` : e.message) : String(e);
    const target = new URL(url).origin;
    if (this.pageOrigin && target !== this.pageOrigin && e instanceof TypeError) {
      return new EndpointError(
        'cors',
        url,
        `the browser could not call ${url} from this page (${this.pageOrigin}). Either the server is down, or it does not allow cross-origin requests from ${this.pageOrigin}. ` +
          `To allow the origin: vLLM: start with --allowed-origins '["${this.pageOrigin}"]'; Ollama: set OLLAMA_ORIGINS=${this.pageOrigin} before \`ollama serve\`; ` +
          `SGLang allows every origin by default (if it is blocked, a proxy in front drops the header); other servers and hosted APIs that refuse browsers: put a reverse proxy in front that adds Access-Control-Allow-Origin: ${this.pageOrigin} (and answers the OPTIONS preflight).`,
      );
    }
    return new EndpointError(
      'unreachable',
      url,
      `cannot reach ${url} (${cause}); is the server running, and is the base URL right (e.g. http://127.0.0.1:8000/v1)?`,
    );
  }

  private httpError(res: Response, text: string, url = this.url): EndpointError {
    const detail = excerpt(errorMessageOf(text) ?? text) || res.statusText;
    if (res.status === 401 || res.status === 403)
      return new EndpointError('auth', url, `the endpoint ${url} refused the API key (HTTP ${res.status}: ${detail}); check --api-key or the key in settings`, {
        status: res.status,
      });
    if (res.status === 429)
      return new EndpointError('rate_limit', url, `the endpoint ${url} is rate limiting (HTTP 429: ${detail})`, {
        status: 429,
        retryAfterMs: retryAfter(res),
      });
    const hint =
      res.status === 404
        ? ' (is the base URL right? it usually ends in /v1; and is the model name one the server serves?)'
        : res.status === 400 && /max_tokens|max_completion_tokens|context length|maximum context/i.test(detail)
          ? ' (the request asks for more tokens than the model allows; lower the max tokens, e.g. --max-tokens)'
          : '';
    return new EndpointError('http', url, `HTTP ${res.status} from ${url}: ${detail}${hint}`, { status: res.status, retryAfterMs: retryAfter(res) });
  }

  private backoff(attempt: number, e: EndpointError): number {
    const base = this.config.backoffMs ?? 500;
    const max = this.config.maxBackoffMs ?? 8000;
    if (e.retryAfterMs !== undefined) return Math.min(e.retryAfterMs, this.config.maxRetryAfterMs ?? 60_000);
    return Math.min(max, base * 2 ** attempt);
  }

  private async withRetries<T>(signal: AbortSignal | undefined, once: () => Promise<T>): Promise<T> {
    const retries = this.config.retries ?? 3;
    for (let attempt = 0; ; attempt++) {
      try {
        return await once();
      } catch (e) {
        if (!(e instanceof EndpointError) || !e.retryable || attempt >= retries || signal?.aborted) throw e;
        await this.sleep(this.backoff(attempt, e), signal);
      }
    }
  }

  /** The model ids the server lists (GET {base}/models, OpenAI's `{"data": [{"id": …}]}`), retried as completions are. */
  async models(signal?: AbortSignal): Promise<string[]> {
    const url = this.url.replace(/\/chat\/completions$/, '/models');
    const timeoutMs = this.config.timeoutMs ?? 120_000;
    const headers: Record<string, string> = { Accept: 'application/json', ...this.config.headers };
    if (this.config.apiKey) headers.Authorization = `Bearer ${this.config.apiKey}`;
    return this.withRetries(signal, async () => {
      const ctl = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        ctl.abort();
      }, timeoutMs);
      const onAbort = () => ctl.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      let text: string;
      try {
        const res = await this.fetchImpl(url, { method: 'GET', headers, signal: ctl.signal });
        text = await res.text();
        if (!res.ok) throw this.httpError(res, text, url);
      } catch (e) {
        throw e instanceof EndpointError ? e : this.networkError(e, timedOut, signal, timeoutMs, url);
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new EndpointError('protocol', url, `the endpoint ${url} answered with something that is not JSON: ${excerpt(text)}`);
      }
      const data = (json as { data?: unknown })?.data;
      if (!Array.isArray(data) || data.some((m) => typeof (m as { id?: unknown })?.id !== 'string'))
        throw new EndpointError('protocol', url, `the endpoint ${url} answered without a list of models ({"data": [{"id": …}]}): ${excerpt(text)}`);
      return data.map((m) => (m as { id: string }).id);
    });
  }

  /** A whole chat completion (non-streamed). */
  async complete(messages: ChatMessage[], options: ChatOptions): Promise<string> {
    const release = await this.limiter.acquire();
    try {
      return await this.withRetries(options.signal, async () => {
        const { res, disarm, timedOut } = await this.send(this.body(messages, options, false), options.signal, false);
        let text: string;
        try {
          text = await res.text();
        } catch (e) {
          throw this.networkError(e, timedOut(), options.signal, this.config.timeoutMs ?? 120_000);
        } finally {
          disarm();
        }
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          throw new EndpointError('protocol', this.url, `the endpoint ${this.url} answered with something that is not JSON: ${excerpt(text)}`);
        }
        const content = (json as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]?.message?.content;
        if (typeof content !== 'string') {
          const why = errorMessageOfBody(json);
          throw new EndpointError(
            'protocol',
            this.url,
            `the endpoint ${this.url} answered without choices[0].message.content${why ? `: ${why}` : `: ${excerpt(text)}`}`,
          );
        }
        return content;
      });
    } finally {
      release();
    }
  }

  /**
   * A streamed chat completion (server-sent events): yields content pieces as they arrive.
   * Retries happen only before the first piece; once text has been yielded a failure is thrown.
   */
  async *stream(messages: ChatMessage[], options: ChatOptions): AsyncGenerator<string> {
    const release = await this.limiter.acquire();
    try {
      const timeoutMs = this.config.timeoutMs ?? 120_000;
      const { res, arm, disarm, timedOut } = await this.withRetries(options.signal, () => this.send(this.body(messages, options, true), options.signal, true));
      if (!res.body) throw new EndpointError('protocol', this.url, `the endpoint ${this.url} sent no response body`);
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      let sawData = false;
      try {
        for (;;) {
          let chunk: ReadableStreamReadResult<Uint8Array>;
          try {
            arm();
            chunk = await reader.read();
          } catch (e) {
            throw this.networkError(e, timedOut(), options.signal, timeoutMs);
          }
          if (chunk.done) break;
          buffer += decoder.decode(chunk.value, { stream: true });
          let nl: number;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl).replace(/\r$/, '');
            buffer = buffer.slice(nl + 1);
            const piece = this.sseLine(line);
            if (piece === null) continue;
            sawData = true;
            if (piece === DONE) return;
            if (piece) yield piece;
          }
        }
        buffer += decoder.decode();
        const tail = this.sseLine(buffer.trim());
        if (tail !== null && tail !== DONE) {
          sawData = true;
          if (tail) yield tail;
        }
        if (!sawData) throw new EndpointError('protocol', this.url, `the endpoint ${this.url} closed the stream without sending any event`);
      } finally {
        disarm();
        reader.cancel().catch(() => {});
      }
    } finally {
      release();
    }
  }

  /** The content of one SSE line: null for non-data lines, DONE at the end marker. */
  private sseLine(line: string): string | typeof DONE | null {
    if (!line.startsWith('data:')) return null;
    const data = line.slice(5).trim();
    if (data === '[DONE]') return DONE;
    if (!data) return null;
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      throw new EndpointError('protocol', this.url, `the endpoint ${this.url} sent a stream event that is not JSON: ${excerpt(data)}`);
    }
    const { error: err, object } = (json ?? {}) as { error?: unknown; object?: unknown };
    if (err || object === 'error') {
      // OpenAI-style `{"error": …}`, or vLLM's `{"object": "error", "message": …}`.
      const why = errorMessageOfBody(json) ?? JSON.stringify(err ?? json);
      throw new EndpointError('protocol', this.url, `the endpoint ${this.url} reported an error mid-stream: ${why}`);
    }
    const choice = (json as { choices?: { delta?: { content?: unknown }; text?: unknown }[] })?.choices?.[0];
    const content = choice?.delta?.content ?? choice?.text;
    return typeof content === 'string' ? content : '';
  }

  /** This client as an LLM judge's transport. */
  readonly asChatComplete: ChatComplete = (messages, o) => this.complete(messages, { maxTokens: o.maxTokens, temperature: o.temperature, signal: o.signal });
}

const DONE = Symbol('done');

/**
 * The endpoint as an LWM backend: a turn request in the AgentWorldBench message layout
 * (src/core/bench/awbLayout.ts), chat requests as they are, prompt requests as one user message.
 */
export function endpointBackend(config: EndpointConfig): LwmBackend {
  const client = new EndpointClient(config);
  return {
    name: `endpoint:${config.model}`,
    generate(request: GenerateRequest, options: GenerateOptions): AsyncIterable<string> {
      const messages: ChatMessage[] = isTurnRequest(request)
        ? awbMessages(request)
        : isChatRequest(request)
          ? [...(request.system ? [{ role: 'system' as const, content: request.system }] : []), ...request.messages]
          : [{ role: 'user', content: request.prompt }];
      if (config.stream === false)
        return (async function* () {
          yield await client.complete(messages, options);
        })();
      return client.stream(messages, options);
    },
  };
}

export type EndpointJudgeOptions = Omit<LlmJudgeOptions, 'name' | 'complete' | 'sleep'> & { name?: string };

/**
 * An LLM judge served by the endpoint. The judge's one retry policy covers transport errors too
 * (Retry-After honoured up to `maxRetryAfterMs`, else the endpoint's `maxRetryAfterMs`): the
 * client itself does not retry, so a sample costs at most `retries + 1` requests.
 */
export function endpointJudge(config: EndpointConfig, options: EndpointJudgeOptions = {}): Judge {
  const client = new EndpointClient({ ...config, retries: 0 });
  const { name, ...rest } = options;
  return createLlmJudge({
    maxRetryAfterMs: config.maxRetryAfterMs,
    ...rest,
    name: name ?? `judge:${config.model}`,
    complete: client.asChatComplete,
    ...(config.sleep ? { sleep: config.sleep } : {}),
  });
}
