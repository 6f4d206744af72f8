// The environment API (envs.ts), on its own and over HTTP on 127.0.0.1: a "real" episode answers
// what the built-in environment answers, a "model" episode what the served model predicts from
// the history kept on the server, the same agent code steps both, and the limits hold.
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { GenerateRequest, LwmBackend, TurnRequest } from '../core/backend.ts';
import { systemPromptToText } from '../core/formats/systemPromptText.ts';
import { ENV_DOMAINS } from '../envs/registry.ts';
import type { OpenedBackend } from '../backends/open.ts';
import { EnvApiError, EnvService, type EnvModel } from './envs.ts';
import { listen, OpenAIService } from './openai.ts';

/** A world model that answers each action with a tagged echo; it records what it was sent. */
function echoModel() {
  const seen: TurnRequest[] = [];
  const backend: LwmBackend = {
    name: 'echo',
    async *generate(request: GenerateRequest) {
      const turn = request as TurnRequest;
      seen.push(turn);
      yield `thinking…<predicted_observation>\n`;
      yield `ran: ${turn.sample.action} (after ${turn.sample.history.length})\n</predicted_observation>`;
    },
  };
  const model: EnvModel = { backend, options: () => ({ maxTokens: 16, temperature: 0 }), acquire: async () => () => {} };
  return { backend, model, seen };
}

describe('EnvService', () => {
  it('a real episode answers as the built-in environment does, step by step', async () => {
    const s = new EnvService(null);
    const ep = s.create({ domain: 'terminal', seed: 5, simulator: 'real' });
    const env = ENV_DOMAINS.terminal.create();
    const reset = env.reset(5);
    expect(ep).toMatchObject({ object: 'env.episode', domain: 'terminal', seed: 5, simulator: 'real', turns: 0 });
    expect(ep.system_prompt).toBe(systemPromptToText(reset.system_prompt));
    for (const action of ['pwd', 'ls -a', 'cat nope.txt', 'mkdir d && ls']) {
      const want = env.step(action);
      const got = await s.step(ep.id as string, { action });
      expect(got).toMatchObject({ action, observation: want.observation, ok: want.ok, spans: want.spans });
    }
    expect(s.read(ep.id as string)).toMatchObject({ turns: [{ action: 'pwd' }, { action: 'ls -a' }, { action: 'cat nope.txt' }, { action: 'mkdir d && ls' }] });
    expect(s.end(ep.id as string)).toEqual({ id: ep.id, object: 'env.episode.deleted', deleted: true, turns: 4 });
    await expect(s.step(ep.id as string, { action: 'pwd' })).rejects.toMatchObject({ status: 404, code: 'episode_not_found' });
  });

  it('a model episode: the observation is the text of the last tag block, the history its own earlier answers', async () => {
    const { model, seen } = echoModel();
    const s = new EnvService(model);
    const ep = s.create({ domain: 'mcp', seed: 2, simulator: 'model' });
    expect((await s.step(ep.id as string, { action: 'a1' })).observation).toBe('ran: a1 (after 0)');
    expect((await s.step(ep.id as string, { action: 'a2' })).observation).toBe('ran: a2 (after 1)');
    expect(seen[1].sample).toMatchObject({ domain: 'mcp', action: 'a2', history: [{ action: 'a1', observation: 'ran: a1 (after 0)' }] });
    expect(systemPromptToText(seen[1].sample.systemPrompt as never)).toBe(ep.system_prompt);
  });

  it('refuses bad requests with the field named', async () => {
    const s = new EnvService(null, { maxTurns: 1, maxActionChars: 10 });
    const bad: [unknown, string, string | null][] = [
      [[], 'must be a JSON object', null],
      [{ domain: 'chess' }, "'domain' must be one of", 'domain'],
      [{ domain: 'os', seed: -1 }, "'seed' must be a whole number", 'seed'],
      [{ domain: 'os', seed: 1.5 }, "'seed' must be a whole number", 'seed'],
      [{ domain: 'os', simulator: 'dream' }, "'simulator' must be", 'simulator'],
      [{ domain: 'os', simulator: 'model' }, 'serves no model', 'simulator'],
    ];
    for (const [body, message, param] of bad) {
      expect(() => s.create(body), JSON.stringify(body)).toThrow(message);
      try {
        s.create(body);
      } catch (e) {
        expect(e).toBeInstanceOf(EnvApiError);
        expect((e as EnvApiError).param).toBe(param);
      }
    }
    const ep = s.create({ domain: 'os' });
    expect(ep.seed).toBe(0);
    await expect(s.step(ep.id as string, {})).rejects.toThrow("'action' must be a string");
    await expect(s.step(ep.id as string, { action: 'x'.repeat(11) })).rejects.toThrow('more than 10');
    await s.step(ep.id as string, { action: 'ls' });
    await expect(s.step(ep.id as string, { action: 'ls' })).rejects.toMatchObject({ code: 'episode_over' });
  });

  it('limits: live episodes, idle time, one step at a time per episode', async () => {
    let t = 0;
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const { backend } = echoModel();
    const slow: EnvModel = {
      backend: {
        name: 'slow',
        async *generate(r, o) {
          await gate;
          yield* backend.generate(r, o);
        },
      },
      options: () => ({ maxTokens: 4, temperature: 0 }),
      acquire: async () => () => {},
    };
    const s = new EnvService(slow, { maxEpisodes: 2, idleMs: 1000 }, () => t);
    const a = s.create({ domain: 'search', simulator: 'model' });
    s.create({ domain: 'web' });
    expect(() => s.create({ domain: 'web' })).toThrow(expect.objectContaining({ status: 429, code: 'too_many_episodes' }));
    const first = s.step(a.id as string, { action: 'q' });
    await expect(s.step(a.id as string, { action: 'q2' })).rejects.toMatchObject({ status: 409 });
    t = 5000; // the web episode idles past the limit; the busy one does not expire mid-step
    expect(s.live).toBe(1);
    open();
    await first;
    expect(s.create({ domain: 'android' })).toMatchObject({ domain: 'android' });
    t = 7000;
    expect(s.live).toBe(0);
  });
});

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

describe('the environment API over HTTP', () => {
  /** What an agent written against the API does: start an episode, step a few actions, end it. */
  async function agent(url: string, simulator: 'real' | 'model'): Promise<string[]> {
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${url}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const json = (await r.json()) as Record<string, unknown>;
      if (!r.ok) throw new Error(`${r.status} ${JSON.stringify(json)}`);
      return json;
    };
    const ep = await call('POST', '/v1/envs', { domain: 'terminal', seed: 11, simulator });
    const seen: string[] = [];
    for (const action of ['pwd', 'ls']) seen.push((await call('POST', `/v1/envs/${ep.id}/step`, { action })).observation as string);
    await call('DELETE', `/v1/envs/${ep.id}`);
    return seen;
  }

  it('the same agent code steps the real environment and the world model, switched by one field', async () => {
    const { backend } = echoModel();
    const opened = {
      ref: { kind: 'copy-last' },
      backend,
      contextLength: null,
      form: 'turn',
      concurrency: 1,
      contextReport: () => null,
      dispose() {},
    } as OpenedBackend;
    const service = new OpenAIService(opened, { modelId: 'echo', envs: {} });
    const { server, url } = await listen(service, '127.0.0.1', 0);
    servers.push(server);
    const env = ENV_DOMAINS.terminal.create();
    env.reset(11);
    expect(await agent(url, 'real')).toEqual([env.step('pwd').observation, env.step('ls').observation]);
    expect(await agent(url, 'model')).toEqual(['ran: pwd (after 0)', 'ran: ls (after 1)']);
    expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ status: 'ok', episodes: 0 });
  });

  it('environments without a model: no model listed, completions 404, a model episode refused; errors are OpenAI error JSON', async () => {
    const service = new OpenAIService(null, { modelId: '', envs: { maxEpisodes: 1 } });
    const { server, url } = await listen(service, '127.0.0.1', 0);
    servers.push(server);
    expect(await (await fetch(`${url}/v1/models`)).json()).toEqual({ object: 'list', data: [] });
    const chat = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(404);
    const post = (path: string, body: unknown) => fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body) });
    const noModel = await post('/v1/envs', { domain: 'os', simulator: 'model' });
    expect(noModel.status).toBe(400);
    expect(((await noModel.json()) as { error: unknown }).error).toMatchObject({ code: 'no_model', param: 'simulator', type: 'invalid_request_error' });
    const ep = (await (await post('/v1/envs', { domain: 'os' })).json()) as { id: string };
    expect((await post('/v1/envs', { domain: 'os' })).status).toBe(429);
    expect((await fetch(`${url}/v1/envs`)).ok).toBe(true);
    expect(((await (await fetch(`${url}/v1/envs/${ep.id}`)).json()) as { domain: string }).domain).toBe('os');
    expect((await fetch(`${url}/v1/envs/${ep.id}/step`, { method: 'GET' })).status).toBe(405);
    expect((await fetch(`${url}/v1/envs/nope`, { method: 'DELETE' })).status).toBe(404);
  });

  it('a server started without --envs has no environment routes', async () => {
    const service = new OpenAIService(null, { modelId: '' });
    const { server, url } = await listen(service, '127.0.0.1', 0);
    servers.push(server);
    const r = await fetch(`${url}/v1/envs`, { method: 'POST', body: '{}' });
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { message: string } }).error.message).toContain('--envs');
  });
});
