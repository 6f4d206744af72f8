// Property-based fuzzing of what `lwm serve` takes from a client: generated request bodies for the
// completion routes and the environment API, and generated actions stepped in every built-in
// environment's episodes. Every answer is a success or OpenAI's error JSON with a 4xx status,
// never a 500 or a dropped connection, and Object.prototype is left as it was.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LwmBackend } from '../core/backend.ts';
import { DOMAINS } from '../core/schema/types.ts';
import type { OpenedBackend } from '../backends/open.ts';
import { EnvService } from './envs.ts';
import { OpenAIService } from './openai.ts';

/** A model that echoes the action it was asked about, as a world model's tagged answer. */
const echo: LwmBackend = {
  name: 'echo',
  async *generate(request) {
    yield `<predicted_observation>\n${'sample' in request ? request.sample.action.slice(0, 40) : 'ok'}\n</predicted_observation>`;
  },
};
const opened = {
  ref: { kind: 'copy-last' },
  backend: echo,
  contextLength: 512,
  form: 'turn',
  concurrency: 1,
  contextReport: () => null,
  dispose() {},
} as OpenedBackend;

/** Answers one request in process, as the HTTP server would: status and parsed body. */
async function answer(service: OpenAIService, method: string, path: string, body: string): Promise<{ status: number; json: unknown }> {
  const { PassThrough } = await import('node:stream');
  const req = Object.assign(new PassThrough(), { method, url: path, headers: { 'content-type': 'application/json' } });
  req.end(body);
  return new Promise((resolve, reject) => {
    let status = 0;
    let text = '';
    const res = {
      headersSent: false,
      writableEnded: false,
      setHeader() {},
      on() {},
      off() {},
      writeHead(s: number) {
        status = s;
        this.headersSent = true;
      },
      write(chunk: string) {
        text += chunk;
        return true;
      },
      end(chunk?: string) {
        if (chunk) text += chunk;
        this.writableEnded = true;
        try {
          resolve({ status, json: text.startsWith('data:') ? text : text ? JSON.parse(text) : null });
        } catch (e) {
          reject(e);
        }
      },
    };
    service.handle(req as never, res as never);
  });
}

/** JSON values that look like requests: the real fields with arbitrary values, and arbitrary extra fields. */
const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant('__proto__'), fc.constant({ __proto__: { polluted: true } }), fc.string({ maxLength: 80 }));
const message = fc.record(
  { role: fc.oneof(fc.constantFrom('system', 'user', 'assistant', 'tool', 'developer'), value), content: fc.oneof(fc.string({ maxLength: 60 }), value) },
  { requiredKeys: [] },
);
const chatBody = fc.record(
  {
    model: fc.oneof(fc.constant('m'), value),
    messages: fc.oneof(fc.array(message, { maxLength: 6 }), value),
    max_tokens: fc.oneof(fc.integer({ min: -5, max: 2000 }), value),
    temperature: fc.oneof(fc.double({ noNaN: false }), value),
    top_p: fc.oneof(fc.double(), value),
    seed: fc.oneof(fc.integer(), value),
    stop: fc.oneof(fc.array(fc.string({ maxLength: 5 }), { maxLength: 6 }), value),
    stream: fc.oneof(fc.boolean(), value),
    n: value,
    prompt: value,
    domain: value,
  },
  { requiredKeys: [] },
);
const envBody = fc.record(
  { domain: fc.oneof(fc.constantFrom(...DOMAINS), value), seed: fc.oneof(fc.nat(50), value), simulator: fc.oneof(fc.constantFrom('real', 'model'), value) },
  { requiredKeys: [] },
);

function isOpenAIError(json: unknown): boolean {
  const e = (json as { error?: Record<string, unknown> } | null)?.error;
  return typeof e === 'object' && e !== null && typeof e.message === 'string' && e.message.length > 0 && typeof e.type === 'string';
}

describe('fuzz: lwm serve request bodies', () => {
  it('completion and environment requests get a success or a 4xx in OpenAI error JSON, never a 500', async () => {
    const service = new OpenAIService(opened, { modelId: 'm', envs: { maxEpisodes: 100_000 } });
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          chatBody.map((b) => ['/v1/chat/completions', JSON.stringify(b)] as const),
          chatBody.map((b) => ['/v1/completions', JSON.stringify(b)] as const),
          envBody.map((b) => ['/v1/envs', JSON.stringify(b)] as const),
          fc.string({ maxLength: 40 }).map((s) => ['/v1/chat/completions', s] as const),
        ),
        async ([path, body]) => {
          const r = await answer(service, 'POST', path, body);
          seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
          if (r.status === 200) return;
          expect(r.status, `${path} ${body}`).toBeGreaterThanOrEqual(400);
          expect(r.status, `${path} ${body}`).toBeLessThan(500);
          expect(isOpenAIError(r.json), `${path} ${body}: ${JSON.stringify(r.json)}`).toBe(true);
        },
      ),
      { numRuns: 2500, seed: 41 },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // The generated bodies reach past the checks (answers) as well as into each refusal.
    expect(seen.get(200)).toBeGreaterThan(50);
    expect(seen.get(400)).toBeGreaterThan(500);
    expect(seen.get(404)).toBeGreaterThan(50);
  });

  it("actions stepped in every domain's real and model episodes: an observation or a clear refusal", async () => {
    const model = { backend: echo, options: () => ({ maxTokens: 8, temperature: 0 }), acquire: async () => () => {} };
    const envs = new EnvService(model, { maxEpisodes: 100_000, maxTurns: 100_000, maxActionChars: 2000 });
    const episodes = DOMAINS.flatMap((domain) => (['real', 'model'] as const).map((simulator) => envs.create({ domain, seed: 3, simulator }).id as string));
    await fc.assert(
      fc.asyncProperty(
        fc.nat(episodes.length - 1),
        fc.oneof(fc.string({ maxLength: 120 }), fc.string({ unit: 'binary', maxLength: 60 }), value),
        async (i, action) => {
          try {
            const r = await envs.step(episodes[i], { action });
            expect(typeof r.observation).toBe('string');
          } catch (e) {
            expect((e as { name: string }).name).toBe('EnvApiError');
            expect((e as { status: number }).status).toBe(400);
          }
        },
      ),
      { numRuns: 3000, seed: 42 },
    );
  });
});
