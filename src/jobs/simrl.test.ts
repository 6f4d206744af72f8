// The Sim RL job's world model when it is an endpoint (lwm serve, or any OpenAI-compatible
// server on 127.0.0.1 here): opened from the stored record with the key the page sent, which goes
// out with each request; the record itself never holds one.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { generateText } from '../core/backend.ts';
import { systemPromptFromText } from '../core/formats/systemPromptText.ts';
import type { ExperimentRecord } from '../core/records.ts';
import { newAgentExperiment } from '../train/agent/experiment.ts';
import { AGENT_DEFAULTS } from '../train/agent/run.ts';
import { openWorld } from './simrl.ts';

const seen: { auth: string | undefined; model: string; messages: number }[] = [];
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const b = JSON.parse(body) as { model: string; messages: unknown[] };
    seen.push({ auth: req.headers.authorization, model: b.model, messages: b.messages.length });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'velvet\n$ ' } }] }));
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
afterAll(() => new Promise((r) => server.close(r)));

function record(world: ExperimentRecord['world']): ExperimentRecord<ReturnType<typeof newAgentExperiment>> {
  const experiment = newAgentExperiment({ train: { ...AGENT_DEFAULTS, domain: 'terminal', families: ['write_word'] }, arms: ['model'], world: 'world' });
  return { id: 'x', name: 'x', createdAt: 0, updatedAt: 0, state: 'running', world, worldMaxTokens: 16, experiment };
}

const noGpu = { gpu: () => Promise.reject(new Error('no GPU for an endpoint')) };

describe('the Sim RL job’s world model', () => {
  it('an endpoint answers each turn, sent with the key the page gave', async () => {
    const world = await openWorld(record({ kind: 'endpoint', endpoint: { baseUrl: base, model: 'world', stream: false, concurrency: 8 } }), noGpu, 'sk-world');
    expect(world).not.toBeNull();
    expect(world!.generate).toMatchObject({ maxTokens: 16, temperature: 0 });
    const turn = {
      sample: {
        domain: 'terminal',
        systemPrompt: systemPromptFromText('a shell'),
        history: [{ action: 'echo velvet > a.txt', observation: '' }],
        action: 'cat a.txt',
      },
    };
    expect(await generateText(world!.backend, turn, world!.generate)).toBe('velvet\n$ ');
    // System prompt, the earlier turn's action and observation, the action: the AgentWorldBench layout.
    expect(seen).toEqual([{ auth: 'Bearer sk-world', model: 'world', messages: 4 }]);
    world!.dispose();
    // Without a key (none at hand on this device): the request goes without one.
    const bare = await openWorld(record({ kind: 'endpoint', endpoint: { baseUrl: base, model: 'world', stream: false } }), noGpu, undefined);
    await generateText(bare!.backend, turn, bare!.generate);
    expect(seen.at(-1)!.auth).toBeUndefined();
  });

  it('a world that cannot be opened is an error that names it', async () => {
    const r = record({ kind: 'endpoint', endpoint: { baseUrl: 'localhost:8000', model: 'world' } });
    await expect(openWorld(r, noGpu, undefined)).rejects.toThrow(/The world model world could not be opened: .*must start with http:\/\/ or https:\/\//);
  });
});
