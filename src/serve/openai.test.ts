// The OpenAI-compatible server (openai.ts) against the OpenAI JavaScript client itself and raw
// HTTP, on 127.0.0.1, with scripted backends: routes, streaming in OpenAI's chunk format, usage,
// the AgentWorldBench message layout for a turn-rendering model, fair queueing, and every error
// case with OpenAI's status and error JSON.
import OpenAI from 'openai';
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { GenerateOptions, GenerateRequest, LwmBackend } from '../core/backend.ts';
import type { OpenedBackend } from '../backends/open.ts';
import { FairQueue, listen, OpenAIService, turnFromChat, type ServeOptions } from './openai.ts';

interface Script {
  /** Text pieces the backend yields for every request. */
  pieces?: string[];
  form?: 'turn' | 'chat';
  contextLength?: number | null;
  /** Resolves before each piece (to hold requests in flight). */
  gate?: () => Promise<void>;
  promptTokens?: number;
}

function scripted(s: Script = {}) {
  const seen: { request: GenerateRequest; options: GenerateOptions }[] = [];
  const stats = { prompts: 0, promptTokens: 0, reusedTokens: 0, prefillMs: 0, decodeTokens: 0, decodeMs: 0 };
  const backend: LwmBackend = {
    name: 'scripted',
    async *generate(request, options) {
      seen.push({ request, options });
      stats.promptTokens += s.promptTokens ?? 0;
      let n = 0;
      for (const p of s.pieces ?? ['<predicted_observation>\n', 'hi', '\n</predicted_observation>']) {
        if (s.gate) await s.gate();
        if (options.signal?.aborted) return;
        n++;
        options.onTokens?.(n);
        yield p;
      }
    },
  };
  const opened: OpenedBackend = {
    ref: { kind: 'checkpoint', checkpoint: { key: 'm.safetensors' } },
    backend,
    contextLength: s.contextLength === undefined ? 256 : s.contextLength,
    form: s.form ?? 'turn',
    concurrency: 1,
    contextReport: (_r, maxTokens) => {
      const context = s.contextLength === undefined ? 256 : s.contextLength;
      return context === null
        ? null
        : ({ exact: true, context, maxTokens, room: context - maxTokens, prompt: 100, full: 100, parts: { system: 60, history: 30, action: 10 } } as never);
    },
    ...(s.promptTokens !== undefined && { stats }),
    dispose() {},
  };
  return { opened, seen };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function serve(opened: OpenedBackend, o: Partial<ServeOptions> = {}) {
  const service = new OpenAIService(opened, { modelId: 'tiny-lwm', ...o });
  const { server, url } = await listen(service, '127.0.0.1', 0);
  servers.push(server);
  return { service, url, client: new OpenAI({ baseURL: `${url}/v1`, apiKey: o.apiKey ?? 'unused', maxRetries: 0 }) };
}

const post = (url: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const AWB_CHAT = [
  { role: 'system' as const, content: 'You simulate a shell.' },
  { role: 'user' as const, content: '### Turn 1\n**Action:**\necho hi > a.txt' },
  { role: 'assistant' as const, content: '**Environment Observation:**\n' },
  { role: 'user' as const, content: '### Turn 2\n**Action:**\ncat a.txt' },
];

describe('lwm serve: the OpenAI API', () => {
  it('lists the model and answers the health route', async () => {
    const { url, client } = await serve(scripted().opened);
    const models = await client.models.list();
    expect(models.data.map((m) => [m.id, m.object, m.owned_by])).toEqual([['tiny-lwm', 'model', 'lwm-studio']]);
    expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok', model: 'tiny-lwm', waiting: 0 });
  });

  it('a chat completion through the OpenAI client: text, finish reason, usage counted by the model', async () => {
    const { opened, seen } = scripted({ promptTokens: 42 });
    const { client } = await serve(opened);
    const r = await client.chat.completions.create({
      model: 'tiny-lwm',
      messages: AWB_CHAT,
      max_tokens: 20,
      temperature: 0.3,
      top_p: 0.9,
      seed: 7,
      stop: ['</x>'],
    });
    expect(r.object).toBe('chat.completion');
    expect(r.choices[0].message).toMatchObject({ role: 'assistant', content: '<predicted_observation>\nhi\n</predicted_observation>' });
    expect(r.choices[0].finish_reason).toBe('stop');
    expect(r.usage).toEqual({ prompt_tokens: 42, completion_tokens: 3, total_tokens: 45 });
    expect(seen[0].options).toMatchObject({ maxTokens: 20, temperature: 0.3, topP: 0.9, seed: 7, stop: ['</x>'] });
  });

  it('streams in OpenAI chunk format through the client, ending with [DONE] and usage when asked', async () => {
    const { client, url } = await serve(scripted().opened);
    const stream = await client.chat.completions.create({ model: 'tiny-lwm', messages: AWB_CHAT, stream: true, stream_options: { include_usage: true } });
    let text = '';
    const finish: (string | null)[] = [];
    let usage: unknown = null;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (c.choices[0]) finish.push(c.choices[0].finish_reason);
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('<predicted_observation>\nhi\n</predicted_observation>');
    expect(finish.at(-1)).toBe('stop');
    expect(usage).toMatchObject({ completion_tokens: 3 });
    const raw = await (await post(url, '/v1/chat/completions', { model: 'tiny-lwm', messages: AWB_CHAT, stream: true })).text();
    const events = raw.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(JSON.parse(events[0].slice(6)).choices[0].delta).toEqual({ role: 'assistant', content: '<predicted_observation>\n' });
  });

  it('max_tokens is a ceiling: one the context cannot hold runs with the room the prompt leaves, or a quarter of the context', async () => {
    const turn = scripted({ contextLength: 256 });
    const { client } = await serve(turn.opened);
    // eval.py's default: 32768 tokens; the prompt takes 100 of the 256
    await client.chat.completions.create({ model: 'tiny-lwm', messages: AWB_CHAT, max_tokens: 32768 });
    expect(turn.seen[0].options.maxTokens).toBe(156);
    await client.chat.completions.create({ model: 'tiny-lwm', messages: AWB_CHAT, max_tokens: 20 });
    expect(turn.seen[1].options.maxTokens).toBe(20);
    const chat = scripted({ contextLength: 256, form: 'chat' });
    const served = await serve(chat.opened);
    await served.client.chat.completions.create({ model: 'tiny-lwm', messages: AWB_CHAT, max_tokens: 32768 });
    expect(chat.seen[0].options.maxTokens).toBe(64);
  });

  it('a legacy completion with a prompt', async () => {
    const { opened, seen } = scripted({ pieces: ['a', 'b'] });
    const { client } = await serve(opened);
    const r = await client.completions.create({ model: 'tiny-lwm', prompt: 'x = ', max_tokens: 2 });
    expect(r.choices[0].text).toBe('ab');
    expect(r.choices[0].finish_reason).toBe('length');
    expect(seen[0].request).toEqual({ prompt: 'x = ' });
  });

  it('a turn-rendering model reads the chat as an AgentWorldBench turn: system prompt, earlier turns, the action to simulate', async () => {
    const { opened, seen } = scripted();
    const { client } = await serve(opened, { domain: 'terminal' });
    await client.chat.completions.create({ model: 'tiny-lwm', messages: AWB_CHAT });
    const req = seen[0].request as Extract<GenerateRequest, { sample: unknown }>;
    expect(req.sample.domain).toBe('terminal');
    expect(req.sample.action).toBe('cat a.txt');
    expect(req.sample.history).toEqual([{ action: 'echo hi > a.txt', observation: '' }]);
    expect(req.awb).toEqual({ system: 'You simulate a shell.', actions: [AWB_CHAT[1].content, AWB_CHAT[3].content], observations: [AWB_CHAT[2].content] });
    // a domain in the body wins over the server's
    await post((await serve(opened)).url, '/v1/chat/completions', { model: 'tiny-lwm', messages: AWB_CHAT, domain: 'mcp' });
    expect((seen[1].request as typeof req).sample.domain).toBe('mcp');
  });

  it('a chat-template model gets the messages as they are', async () => {
    const { opened, seen } = scripted({ form: 'chat' });
    const { client } = await serve(opened);
    await client.chat.completions.create({
      model: 'tiny-lwm',
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: [{ type: 'text', text: 'hello' }] },
      ],
    });
    expect(seen[0].request).toEqual({ system: 'S', messages: [{ role: 'user', content: 'hello' }] });
  });

  it('eight concurrent clients are all answered, one at a time in arrival order', async () => {
    let inFlight = 0;
    let most = 0;
    const { opened, seen } = scripted({
      gate: async () => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 2));
        inFlight--;
      },
    });
    const { client } = await serve(opened);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        client.chat.completions.create({ model: 'tiny-lwm', messages: [{ role: 'user', content: `action ${i}` }], stream: i % 2 === 0 }).then(async (r) => {
          if (!('choices' in r)) {
            let t = '';
            for await (const c of r) t += c.choices[0]?.delta?.content ?? '';
            return t;
          }
          return r.choices[0].message.content;
        }),
      ),
    );
    expect(answers).toEqual(Array(8).fill('<predicted_observation>\nhi\n</predicted_observation>'));
    expect(seen).toHaveLength(8);
    expect(most).toBe(1);
  });

  describe('errors: OpenAI status codes and error JSON', () => {
    const errorOf = async (r: Response) => ({ status: r.status, error: ((await r.json()) as { error: Record<string, unknown> }).error });

    it('400 for bad input, saying what and where', async () => {
      const { url } = await serve(scripted().opened);
      const cases: [unknown, string, string | null][] = [
        ['{"model": ', 'not valid JSON', null],
        [[1], 'must be a JSON object', null],
        [{ model: 'tiny-lwm' }, "'messages' must be a non-empty list", 'messages'],
        [{ model: 'tiny-lwm', messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].role must be system, user or assistant', 'messages[0].role'],
        [{ model: 'tiny-lwm', messages: [{ role: 'user', content: 3 }] }, 'messages[0].content must be a string', 'messages[0].content'],
        [{ model: 'tiny-lwm', messages: [{ role: 'assistant', content: 'x' }] }, 'the last message must be a user message', 'messages'],
        [
          {
            model: 'tiny-lwm',
            messages: [
              { role: 'user', content: 'a' },
              { role: 'user', content: 'b' },
            ],
          },
          'two user messages in a row',
          'messages',
        ],
        [{ model: 'tiny-lwm', messages: AWB_CHAT, temperature: 3 }, "'temperature' must be a number in [0, 2]", 'temperature'],
        [{ model: 'tiny-lwm', messages: AWB_CHAT, max_tokens: 1.5 }, "'max_tokens' must be an integer", 'max_tokens'],
        [{ model: 'tiny-lwm', messages: AWB_CHAT, stop: [''] }, "'stop' must be", 'stop'],
        [{ model: 'tiny-lwm', messages: AWB_CHAT, n: 2 }, "'n' must be an integer in [1, 1]", 'n'],
        [{ model: 'tiny-lwm', messages: AWB_CHAT, stream: 'yes' }, "'stream' must be a boolean", 'stream'],
      ];
      for (const [body, message, param] of cases) {
        const { status, error } = await errorOf(await post(url, '/v1/chat/completions', body));
        expect(status, JSON.stringify(body)).toBe(400);
        expect(error.message).toContain(message);
        expect(error.type).toBe('invalid_request_error');
        expect(error.param).toBe(param);
      }
    });

    it('400 for a prompt longer than the context', async () => {
      const { url } = await serve(scripted({ contextLength: 120 }).opened);
      const long = await errorOf(await post(url, '/v1/chat/completions', { model: 'tiny-lwm', messages: AWB_CHAT, max_tokens: 40 }));
      expect(long.status).toBe(400);
      expect(long.error.code).toBe('context_length_exceeded');
      expect(long.error.message).toContain('the prompt takes 100 tokens, more than the 80');
    });

    it('401 for a missing or wrong key; the right key passes', async () => {
      const { url, client } = await serve(scripted().opened, { apiKey: 'sekret' });
      expect((await errorOf(await fetch(`${url}/v1/models`))).status).toBe(401);
      const wrong = await errorOf(await fetch(`${url}/v1/models`, { headers: { authorization: 'Bearer nope' } }));
      expect(wrong).toMatchObject({ status: 401, error: { code: 'invalid_api_key' } });
      expect((await client.models.list()).data).toHaveLength(1);
      await expect(new OpenAI({ baseURL: `${url}/v1`, apiKey: 'nope', maxRetries: 0 }).models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    });

    it('404 for an unknown model or route', async () => {
      const { url, client } = await serve(scripted().opened);
      await expect(client.chat.completions.create({ model: 'gpt-4o', messages: AWB_CHAT })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      expect(await errorOf(await post(url, '/v1/chat/completions', { model: 'gpt-4o', messages: AWB_CHAT }))).toMatchObject({
        status: 404,
        error: { code: 'model_not_found', param: 'model' },
      });
      expect((await errorOf(await fetch(`${url}/v1/embeddings`))).status).toBe(404);
    });

    it('503 with Retry-After when the queue is full', async () => {
      let open!: () => void;
      const held = new Promise<void>((r) => {
        open = r;
      });
      const { url } = await serve(scripted({ gate: () => held }).opened, { maxQueue: 1 });
      const first = post(url, '/v1/chat/completions', { model: 'tiny-lwm', messages: AWB_CHAT });
      await new Promise((r) => setTimeout(r, 50));
      const second = post(url, '/v1/chat/completions', { model: 'tiny-lwm', messages: AWB_CHAT });
      await new Promise((r) => setTimeout(r, 50));
      const third = await post(url, '/v1/chat/completions', { model: 'tiny-lwm', messages: AWB_CHAT });
      expect(third.status).toBe(503);
      expect(third.headers.get('retry-after')).toBe('1');
      expect(((await third.json()) as { error: { code: string } }).error.code).toBe('queue_full');
      open();
      expect((await first).status).toBe(200);
      expect((await second).status).toBe(200);
    });
  });

  it('CORS is off by default and answers only the origins allowed', async () => {
    const closed = await serve(scripted().opened);
    const none = await fetch(`${closed.url}/v1/models`, { headers: { origin: 'http://localhost:5173' } });
    expect(none.headers.get('access-control-allow-origin')).toBeNull();
    const { url } = await serve(scripted().opened, { allowedOrigins: ['http://localhost:5173'] });
    const pre = await fetch(`${url}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(pre.headers.get('access-control-allow-headers')).toContain('authorization');
    const other = await fetch(`${url}/v1/models`, { headers: { origin: 'http://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('FairQueue', () => {
  it('runs tasks in arrival order, slots at a time, and refuses past the waiting limit', async () => {
    const q = new FairQueue(2, 2);
    const order: number[] = [];
    const r1 = await q.acquire();
    const r2 = await q.acquire();
    const p3 = q.acquire().then((r) => (order.push(3), r));
    const p4 = q.acquire().then((r) => (order.push(4), r));
    await expect(q.acquire()).rejects.toMatchObject({ status: 503 });
    r2();
    r2(); // a second release of the same slot is ignored
    (await p3)();
    r1();
    (await p4)();
    expect(order).toEqual([3, 4]);
    expect(q.depth).toBe(0);
  });

  it('a waiting client that goes away leaves the queue', async () => {
    const q = new FairQueue(1, 4);
    const r1 = await q.acquire();
    const abort = new AbortController();
    const p = q.acquire(abort.signal);
    expect(q.depth).toBe(1);
    abort.abort();
    await expect(p).rejects.toMatchObject({ status: 499 });
    expect(q.depth).toBe(0);
    r1();
  });
});

describe('turnFromChat', () => {
  it('reads a first turn (no history) and keeps the system prompt', () => {
    const t = turnFromChat({ system: '', messages: [{ role: 'user', content: 'ls' }] }, 'terminal');
    expect(t.sample).toMatchObject({ domain: 'terminal', action: 'ls', history: [] });
  });
});
