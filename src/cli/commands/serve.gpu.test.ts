// `lwm serve` with real models on the GPU (Dawn), on 127.0.0.1: a micro checkpoint of ours answers
// the AgentWorldBench messages `lwm infer --backend endpoint` sends with exactly what
// `lwm infer --backend local` generates for the same records (the server lays the turn out as the
// local backend does); a Hugging Face folder's chat answer is transformers' greedy text, its
// prompt counted by the model; streamed, whole and eight concurrent answers agree.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { openBackend } from '../../backends/open.ts';
import { nodeSource } from '../../backends/node.ts';
import { toAgentWorldBenchRecords } from '../../core/formats/agentworldbench.ts';
import { generateTrajectories } from '../../envs/generate.ts';
import { listen, OpenAIService } from '../../serve/openai.ts';
import { captureIO, microCheckpoint } from '../testing.ts';
import infer from './infer.ts';
import { parseServeArgs, serveRef } from './serve.ts';

const FOLDER = fileURLToPath(new URL('../../model/fixtures/hf/llama-chat', import.meta.url));

/** Serves what `lwm serve ARGS` would, in this process; closes it after `body`. */
async function serving(argv: string[], modelId: string, body: (url: string, client: OpenAI) => Promise<void>) {
  const args = parseServeArgs(argv, {});
  if (args === 'help') throw new Error('help');
  const source = nodeSource();
  const opened = await openBackend(serveRef(args), source);
  const service = new OpenAIService(opened, { modelId, ...(args.domain !== undefined && { domain: args.domain }) });
  const { server, url } = await listen(service, '127.0.0.1', 0);
  try {
    await body(url, new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }));
  } finally {
    await new Promise((r) => server.close(r));
    opened.dispose();
    source.release?.();
  }
}

const records = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { gen: string; gen_error?: string });

describe('lwm serve on the GPU', () => {
  it('a micro checkpoint: lwm infer through the server writes what lwm infer --backend local writes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-serve-gpu-'));
    try {
      const data = generateTrajectories('terminal', 2, 5);
      const ckpt = join(dir, 'micro.safetensors');
      await writeFile(ckpt, microCheckpoint(data, { template: 'v1', scale: 10 })); // sharp: a different prompt shows in the tokens
      const awb = toAgentWorldBenchRecords(data[0]).slice(0, 3);
      const file = join(dir, 'awb.jsonl');
      await writeFile(file, awb.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const local = captureIO();
      expect(await infer([file, '--backend', 'local', '--model', ckpt, '--max-tokens', '8'], local)).toBe(0);
      const want = records(local.stdout).map((r) => r.gen);
      expect(want.every((g) => g.length > 0)).toBe(true);

      await serving(['--model', ckpt, '--domain', 'terminal'], 'micro', async (url, client) => {
        const viaServer = captureIO();
        const code = await infer(
          [file, '--backend', 'endpoint', '--base-url', `${url}/v1`, '--model', 'micro', '--max-tokens', '8', '--temperature', '0'],
          viaServer,
        );
        expect(viaServer.stderr).not.toContain('gen_error');
        expect(code).toBe(0);
        expect(records(viaServer.stdout).map((r) => r.gen)).toEqual(want);
        // Streamed through the OpenAI client: the same text; usage counts the prompt the model prefilled.
        const messages = [
          { role: 'system' as const, content: String(awb[1].system_str) },
          { role: 'user' as const, content: awb[1].prompt[0] },
          { role: 'assistant' as const, content: awb[1].response[0] },
          { role: 'user' as const, content: awb[1].prompt[1] },
        ];
        const stream = await client.chat.completions.create({
          model: 'micro',
          messages,
          max_tokens: 8,
          temperature: 0,
          stream: true,
          stream_options: { include_usage: true },
        });
        let text = '';
        let usage: OpenAI.CompletionUsage | undefined;
        for await (const c of stream) {
          text += c.choices[0]?.delta?.content ?? '';
          usage = c.usage ?? usage;
        }
        expect(text).toBe(want[1]);
        expect(usage!.completion_tokens).toBeGreaterThan(0);
        expect(usage!.completion_tokens).toBeLessThanOrEqual(8);
        expect(usage!.prompt_tokens).toBeGreaterThan(0);
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it("a Hugging Face folder with a chat template: transformers' greedy text, eight concurrent clients answered alike", async () => {
    const want = JSON.parse(await readFile(join(FOLDER, 'generate.json'), 'utf8'));
    await serving(['--model', FOLDER], 'llama-chat', async (_url, client) => {
      const ask = (stream: boolean) =>
        client.chat.completions.create({
          model: 'llama-chat',
          messages: [{ role: 'user', content: want.chat.input }],
          max_tokens: want.max_new_tokens,
          temperature: 0,
          stream,
        });
      const whole = await ask(false);
      if (!('choices' in whole)) throw new Error('not a completion');
      expect(whole.choices[0].message.content).toBe(want.chat.text);
      expect(whole.usage).toMatchObject({ prompt_tokens: want.chat.prompt_ids.length, completion_tokens: want.max_new_tokens });
      expect(whole.choices[0].finish_reason).toBe('length');
      const eight = await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const r = await ask(i % 2 === 1);
          if ('choices' in r) return r.choices[0].message.content;
          let t = '';
          for await (const c of r) t += c.choices[0]?.delta?.content ?? '';
          return t;
        }),
      );
      expect(eight).toEqual(Array(8).fill(want.chat.text));
    });
  }, 300_000);
});
