// The endpoint client against a real chat-completions server on 127.0.0.1, started here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatCompletionsUrl, EndpointClient, EndpointError, endpointBackend, endpointJudge, type EndpointConfig } from './endpoint.ts';
import { generateText } from '../core/backend.ts';

interface Seen {
  model: string;
  auth: string | undefined;
  body: Record<string, unknown>;
}

let server: Server;
let base: string;
const seen: Seen[] = [];
let inFlight = 0;
let maxInFlight = 0;
const flakyCount = new Map<string, number>();

const VERDICT = 'Reasoning... <verdict>{"scores": {"format": 5, "factuality": 4, "consistency": 5, "realism": 5, "quality": 4}}</verdict>';

function completion(content: string) {
  return JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] });
}

function sse(res: ServerResponse, events: string[], gapMs: number, end = true) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  let i = 0;
  const tick = () => {
    if (i < events.length) {
      res.write(events[i++]);
      setTimeout(tick, gapMs);
    } else if (end) res.end();
  };
  tick();
}

function delta(content: string) {
  return `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
}

async function handle(req: IncomingMessage, res: ServerResponse) {
  let raw = '';
  for await (const c of req) raw += c;
  const body = JSON.parse(raw) as Record<string, unknown>;
  const model = String(body.model);
  seen.push({ model, auth: req.headers.authorization, body });
  switch (model) {
    case 'echo': {
      const msgs = body.messages as { role: string; content: string }[];
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(completion(`${msgs.length}:${msgs[msgs.length - 1].content}`));
    }
    case 'judge':
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(completion(VERDICT));
    case 'judge-garbage':
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(completion('I would rather not say.'));
    case 'stream':
      // Pieces split mid-line across writes, CRLF line ends, a keep-alive comment, a role-only first delta.
      return sse(
        res,
        [
          ': keep-alive\n\n',
          `data: ${JSON.stringify({ choices: [{ delta: { role: 'assistant' } }] })}\r\n\r\n`,
          delta('total 8\n').slice(0, 20),
          delta('total 8\n').slice(20),
          delta('file.txt'),
          'data: [DONE]\n\n',
        ],
        5,
      );
    case 'stream-garbage':
      return sse(res, [delta('ok'), 'data: {not json\n\n'], 1);
    case 'stream-vllm-error':
      return sse(res, [delta('ok'), `data: ${JSON.stringify({ object: 'error', message: 'engine died', type: 'InternalServerError', code: 500 })}\n\n`], 1);
    case 'stream-stall':
      return sse(res, [delta('partial')], 1, false);
    case 'stream-empty':
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      return res.end();
    case 'key': {
      if (req.headers.authorization !== 'Bearer sk-right') {
        res.writeHead(401, { 'Content-Type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'Incorrect API key provided' } }));
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(completion('welcome'));
    }
    case 'forbidden':
      res.writeHead(403);
      return res.end('forbidden');
    case 'missing':
      res.writeHead(404, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify({ error: { message: 'The model `missing` does not exist.' } }));
    case 'flaky': {
      const n = (flakyCount.get(model) ?? 0) + 1;
      flakyCount.set(model, n);
      if (n <= 2) {
        res.writeHead(503, { 'Retry-After': '0' });
        return res.end('overloaded');
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(completion(`ok after ${n}`));
    }
    case 'vllm-400':
      // vLLM's error body: the message is at the top level, not under "error".
      res.writeHead(400, { 'Content-Type': 'application/json' });
      return res.end(
        JSON.stringify({
          object: 'error',
          message: "This model's maximum context length is 4096 tokens. However, you requested 32868 tokens.",
          type: 'BadRequestError',
          param: null,
          code: 400,
        }),
      );
    case 'retry-later':
      res.writeHead(429, { 'Retry-After': '30' });
      return res.end('come back later');
    case 'always-500':
      res.writeHead(500);
      return res.end('boom');
    case 'rate':
      res.writeHead(429, { 'Retry-After': '0' });
      return res.end('slow down');
    case 'garbage':
      res.writeHead(200, { 'Content-Type': 'text/html' });
      return res.end('<html>502 Bad Gateway</html>');
    case 'no-choices':
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify({ error: 'context length exceeded' }));
    case 'slow':
      return; // never answers: the client's timeout must fire
    case 'busy': {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(completion('done'));
      }, 30);
      return;
    }
    default:
      res.writeHead(400);
      res.end(`unknown test model ${model}`);
  }
}

beforeAll(async () => {
  server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const noSleep: EndpointConfig['sleep'] = async () => {};
function client(model: string, extra: Partial<EndpointConfig> = {}) {
  return new EndpointClient({ baseUrl: base, model, pageOrigin: null, sleep: noSleep, timeoutMs: 2000, ...extra });
}
const OPTS = { maxTokens: 64, temperature: 0 };

async function failure(p: Promise<unknown>): Promise<EndpointError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof EndpointError) return e;
    throw e;
  }
  throw new Error('expected a failure');
}

async function drain(it: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const p of it) out.push(p);
  return out;
}

describe('chatCompletionsUrl', () => {
  it('appends the path once and rejects non-HTTP URLs', () => {
    expect(chatCompletionsUrl('http://h:8000/v1/')).toBe('http://h:8000/v1/chat/completions');
    expect(chatCompletionsUrl('https://api.example.com/v1/chat/completions')).toBe('https://api.example.com/v1/chat/completions');
    expect(() => chatCompletionsUrl('localhost:8000')).toThrow(/must start with http/);
  });
});

describe('EndpointClient.complete', () => {
  it('sends the OpenAI request body and reads the reply', async () => {
    const c = client('echo', { apiKey: 'sk-1', extraBody: { chat_template_kwargs: { enable_thinking: false } } });
    const out = await c.complete(
      [
        { role: 'system', content: 's' },
        { role: 'user', content: 'hi' },
      ],
      { ...OPTS, topP: 0.9, topK: 20, seed: 7, stop: ['\n\n'] },
    );
    expect(out).toBe('2:hi');
    const last = seen[seen.length - 1];
    expect(last.auth).toBe('Bearer sk-1');
    expect(last.body).toMatchObject({
      max_tokens: 64,
      temperature: 0,
      top_p: 0.9,
      top_k: 20,
      seed: 7,
      stop: ['\n\n'],
      stream: false,
      chat_template_kwargs: { enable_thinking: false },
    });
  });

  it('reports a refused key clearly, without retrying', async () => {
    const before = seen.length;
    const e = await failure(client('key', { apiKey: 'sk-wrong' }).complete([{ role: 'user', content: 'x' }], OPTS));
    expect(e).toMatchObject({ kind: 'auth', status: 401, fatal: true, retryable: false });
    expect(e.message).toContain('refused the API key (HTTP 401: Incorrect API key provided)');
    expect(seen.length - before).toBe(1);
    expect(await client('key', { apiKey: 'sk-right' }).complete([{ role: 'user', content: 'x' }], OPTS)).toBe('welcome');
    expect((await failure(client('forbidden').complete([{ role: 'user', content: 'x' }], OPTS))).kind).toBe('auth');
  });

  it('explains a 404', async () => {
    const e = await failure(client('missing').complete([{ role: 'user', content: 'x' }], OPTS));
    expect(e).toMatchObject({ kind: 'http', status: 404, retryable: false });
    expect(e.message).toContain('does not exist');
    expect(e.message).toContain('/v1');
  });

  it('retries 503 with back-off and succeeds', async () => {
    const pauses: number[] = [];
    const c = client('flaky', { backoffMs: 100, sleep: async (ms) => void pauses.push(ms) });
    expect(await c.complete([{ role: 'user', content: 'x' }], OPTS)).toBe('ok after 3');
    // Retry-After: 0 from the server takes precedence over the exponential pause.
    expect(pauses).toEqual([0, 0]);
  });

  it('backs off exponentially up to the cap, then gives up', async () => {
    const pauses: number[] = [];
    const before = seen.length;
    const c = client('always-500', { retries: 4, backoffMs: 100, maxBackoffMs: 300, sleep: async (ms) => void pauses.push(ms) });
    const e = await failure(c.complete([{ role: 'user', content: 'x' }], OPTS));
    expect(e).toMatchObject({ kind: 'http', status: 500 });
    expect(pauses).toEqual([100, 200, 300, 300]);
    expect(seen.length - before).toBe(5);
  });

  it("reads vLLM's top-level error message and says how to fix a too-large max_tokens", async () => {
    const e = await failure(client('vllm-400').complete([{ role: 'user', content: 'x' }], OPTS));
    expect(e).toMatchObject({ kind: 'http', status: 400, retryable: false });
    expect(e.message).toContain('HTTP 400 from');
    expect(e.message).toContain("This model's maximum context length is 4096 tokens");
    expect(e.message).toContain('lower the max tokens');
  });

  it('honours Retry-After beyond the back-off cap, up to its own cap', async () => {
    const pauses: number[] = [];
    await failure(client('retry-later', { retries: 1, sleep: async (ms) => void pauses.push(ms) }).complete([{ role: 'user', content: 'x' }], OPTS));
    await failure(
      client('retry-later', { retries: 1, maxRetryAfterMs: 10_000, sleep: async (ms) => void pauses.push(ms) }).complete(
        [{ role: 'user', content: 'x' }],
        OPTS,
      ),
    );
    expect(pauses).toEqual([30_000, 10_000]);
  });

  it('retries rate limiting', async () => {
    const before = seen.length;
    const e = await failure(client('rate', { retries: 2 }).complete([{ role: 'user', content: 'x' }], OPTS));
    expect(e).toMatchObject({ kind: 'rate_limit', status: 429 });
    expect(seen.length - before).toBe(3);
  });

  it('rejects garbage and replies without choices', async () => {
    const g = await failure(client('garbage', { retries: 0 }).complete([{ role: 'user', content: 'x' }], OPTS));
    expect(g.kind).toBe('protocol');
    expect(g.message).toContain('not JSON: <html>502 Bad Gateway</html>');
    const n = await failure(client('no-choices', { retries: 0 }).complete([{ role: 'user', content: 'x' }], OPTS));
    expect(n.message).toContain('context length exceeded');
  });

  it('times out a silent server', async () => {
    const e = await failure(client('slow', { timeoutMs: 150, retries: 1 }).complete([{ role: 'user', content: 'x' }], OPTS));
    expect(e.kind).toBe('timeout');
    expect(e.message).toContain('within 150 ms');
  });

  it('is cancelled by the caller without retries', async () => {
    const ctl = new AbortController();
    const p = client('slow', { timeoutMs: 5000 }).complete([{ role: 'user', content: 'x' }], { ...OPTS, signal: ctl.signal });
    setTimeout(() => ctl.abort(), 30);
    expect((await failure(p)).kind).toBe('aborted');
  });

  it('reports an unreachable server, and a likely CORS refusal when called from another page origin', async () => {
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const deadBase = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/v1`;
    await new Promise<void>((r) => dead.close(() => r()));
    const node = await failure(
      new EndpointClient({ baseUrl: deadBase, model: 'm', pageOrigin: null, retries: 1, sleep: noSleep }).complete([{ role: 'user', content: 'x' }], OPTS),
    );
    expect(node.kind).toBe('unreachable');
    expect(node.message).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions .*is the server running/);
    const browser = await failure(
      new EndpointClient({ baseUrl: deadBase, model: 'm', pageOrigin: 'http://localhost:5173', retries: 0 }).complete([{ role: 'user', content: 'x' }], OPTS),
    );
    expect(browser).toMatchObject({ kind: 'cors', fatal: true });
    expect(browser.message).toContain('from this page (http://localhost:5173)');
    expect(browser.message).toContain(`--allowed-origins '["http://localhost:5173"]'`);
    expect(browser.message).toContain('OLLAMA_ORIGINS=http://localhost:5173');
  });

  it('keeps at most maxConcurrency requests in flight', async () => {
    maxInFlight = 0;
    const c = client('busy', { maxConcurrency: 2 });
    const results = await Promise.all(Array.from({ length: 6 }, () => c.complete([{ role: 'user', content: 'x' }], OPTS)));
    expect(results).toEqual(Array(6).fill('done'));
    expect(maxInFlight).toBe(2);
  });
});

describe('EndpointClient.stream and the LWM backend', () => {
  it('streams SSE pieces split across network writes', async () => {
    const pieces = await drain(client('stream').stream([{ role: 'user', content: 'ls' }], OPTS));
    expect(pieces).toEqual(['total 8\n', 'file.txt']);
    expect(seen[seen.length - 1].body.stream).toBe(true);
  });

  it('is an LwmBackend: system prompt first, then the turns', async () => {
    const backend = endpointBackend({ baseUrl: base, model: 'stream', pageOrigin: null });
    expect(backend.name).toBe('endpoint:stream');
    const text = await generateText(
      backend,
      { system: 'You are a shell.', messages: [{ role: 'user', content: 'ls' }] },
      { maxTokens: 32, temperature: 0.7, topK: 40 },
    );
    expect(text).toBe('total 8\nfile.txt');
    const body = seen[seen.length - 1].body;
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are a shell.' },
      { role: 'user', content: 'ls' },
    ]);
    expect(body).toMatchObject({ temperature: 0.7, top_k: 40, max_tokens: 32 });
    await generateText(backend, { prompt: 'raw text' }, { maxTokens: 8, temperature: 0 });
    expect(seen[seen.length - 1].body.messages).toEqual([{ role: 'user', content: 'raw text' }]);
  });

  it('frees its concurrency slot when the consumer stops early', async () => {
    const c = client('stream', { maxConcurrency: 1 });
    for await (const piece of c.stream([{ role: 'user', content: 'x' }], OPTS)) {
      expect(piece).toBe('total 8\n');
      break;
    }
    expect(await drain(c.stream([{ role: 'user', content: 'x' }], OPTS))).toEqual(['total 8\n', 'file.txt']);
  });

  it('fails on a garbage event after yielding the good ones', async () => {
    const got: string[] = [];
    const e = await failure(
      (async () => {
        for await (const p of client('stream-garbage').stream([{ role: 'user', content: 'x' }], OPTS)) got.push(p);
      })(),
    );
    expect(got).toEqual(['ok']);
    expect(e.message).toContain('not JSON: {not json');
  });

  it("fails on vLLM's error event, with its message", async () => {
    const e = await failure(drain(client('stream-vllm-error').stream([{ role: 'user', content: 'x' }], OPTS)));
    expect(e.message).toContain('reported an error mid-stream: engine died');
  });

  it('times out a stream that stalls mid-way', async () => {
    const got: string[] = [];
    const e = await failure(
      (async () => {
        for await (const p of client('stream-stall', { timeoutMs: 150 }).stream([{ role: 'user', content: 'x' }], OPTS)) got.push(p);
      })(),
    );
    expect(got).toEqual(['partial']);
    expect(e.kind).toBe('timeout');
  });

  it('rejects a stream with no events and passes HTTP errors through', async () => {
    expect((await failure(drain(client('stream-empty').stream([{ role: 'user', content: 'x' }], OPTS)))).kind).toBe('protocol');
    expect((await failure(drain(client('key', { apiKey: 'nope' }).stream([{ role: 'user', content: 'x' }], OPTS)))).kind).toBe('auth');
  });
});

describe('endpointJudge', () => {
  const input = { domain: 'terminal', history: [], action: 'ls', prediction: 'a', reference: 'a b' };
  it('judges through the endpoint', async () => {
    const v = await endpointJudge({ baseUrl: base, model: 'judge', pageOrigin: null }).judge(input);
    expect(v).toMatchObject({ failed: false, scores: { format: 5, factuality: 4 }, total: 4.6 });
    expect((seen[seen.length - 1].body.messages as { content: string }[])[0].content).toContain('Domain: terminal');
  });
  it('records an unparseable verdict as failed after retries', async () => {
    const before = seen.length;
    const v = await endpointJudge({ baseUrl: base, model: 'judge-garbage', pageOrigin: null }, { retries: 1 }).judge(input);
    expect(v.failed).toBe(true);
    expect(seen.length - before).toBe(2);
  });
  it('has one retry policy: at most retries + 1 requests per sample, Retry-After capped', async () => {
    const before = seen.length;
    const pauses: number[] = [];
    const sleep = async (ms: number) => void pauses.push(ms);
    const v = await endpointJudge({ baseUrl: base, model: 'always-500', pageOrigin: null, sleep }, { retries: 2 }).judge(input);
    expect(v.failed).toBe(true);
    expect(seen.length - before).toBe(3); // not (judge retries + 1) × (client retries + 1) = 12
    expect(pauses).toEqual([1000, 2000]);
    pauses.length = 0;
    const limited = await endpointJudge({ baseUrl: base, model: 'retry-later', pageOrigin: null, sleep, maxRetryAfterMs: 5000 }, { retries: 1 }).judge(input);
    expect(limited.failed && limited.error).toContain('rate limiting');
    expect(pauses).toEqual([5000]);
    const refused = await endpointJudge({ baseUrl: base, model: 'vllm-400', pageOrigin: null, sleep }).judge(input);
    expect(refused.failed && refused.error).toContain('no usable verdict after 1 attempt (HTTP 400');
  });
  it('sends the max tokens and temperature it is given (public defaults otherwise)', async () => {
    await endpointJudge({ baseUrl: base, model: 'judge', pageOrigin: null }).judge(input);
    expect(seen[seen.length - 1].body).toMatchObject({ max_tokens: 32768, temperature: 0.6 });
    await endpointJudge({ baseUrl: base, model: 'judge', pageOrigin: null }, { maxTokens: 2000, temperature: 0.1 }).judge(input);
    expect(seen[seen.length - 1].body).toMatchObject({ max_tokens: 2000, temperature: 0.1 });
  });
  it('stops on a refused key', async () => {
    await expect(endpointJudge({ baseUrl: base, model: 'key', apiKey: 'bad', pageOrigin: null }).judge(input)).rejects.toMatchObject({ kind: 'auth' });
  });
});
