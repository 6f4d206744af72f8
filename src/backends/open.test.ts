// The one opener (open.ts) and Node's source (node.ts): what every kind of reference opens to, the
// generation defaults and the budget check every caller shares, and the errors a user meets
// before any GPU work (a file that is not ours, a checkpoint without a tokenizer, a path that is
// not there). Opening models on a GPU is tested where they run (src/jobs/playground.gpu.test.ts,
// src/cli/commands/infer.gpu.test.ts) and an ONNX folder in src/jobs/onnx.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backendKey, type BackendRef } from '../core/backendRef.ts';
import { generateText } from '../core/backend.ts';
import { generateTrajectories } from '../envs/index.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { saveCheckpoint } from '../core/model/checkpoint.ts';
import { presetConfig } from '../core/model/config.ts';
import { initParams } from '../model/init.ts';
import { writeSafetensors } from '../core/model/safetensors.ts';
import { BackendError } from './errors.ts';
import { nodeSource } from './node.ts';
import { generationFor, openBackend, openReady, type BackendSource } from './open.ts';

const t = generateTrajectories('terminal', 1, 3)[0];
const turn = {
  sample: { domain: t.domain, systemPrompt: t.system_prompt, history: t.turns.slice(0, 1), action: t.turns[1].action },
  reference: t.turns[1].observation,
};

/** A source that must not be asked for anything (a baseline, an endpoint). */
const nothing: BackendSource = {
  gpu: () => Promise.reject(new Error('no GPU asked for')),
  checkpoint: () => Promise.reject(new Error('no checkpoint asked for')),
  folder: () => Promise.reject(new Error('no folder asked for')),
};

describe('openBackend', () => {
  it('opens the baselines without a model: turn form, one request at a time, the name asked for', async () => {
    const copy = await openBackend({ kind: 'copy-last' }, nothing, { name: 'baseline:copy' });
    expect(copy).toMatchObject({ form: 'turn', concurrency: 1, contextLength: null });
    expect(copy.backend.name).toBe('baseline:copy');
    expect(await generateText(copy.backend, turn, generationFor(copy))).toContain(t.turns[0].observation);
    const ref = await openBackend({ kind: 'reference' }, nothing);
    expect(await generateText(ref.backend, turn, generationFor(ref))).toContain(t.turns[1].observation);
    expect(generationFor(ref, { maxTokens: 500, temperature: 1 })).toEqual({ maxTokens: 1, temperature: 0 });
    expect(copy.contextReport(turn, 10)).toBeNull();
  });

  it('refuses a kind it does not know, saying which kinds there are', async () => {
    await expect(openBackend({ kind: 'gguf' } as unknown as BackendRef, nothing)).rejects.toThrow(
      /no backend of kind "gguf": a model is a checkpoint, a Hugging Face folder/,
    );
  });

  it("refuses a file that is not one of our checkpoints, and one without a tokenizer, before any GPU work, as the checkpoint's fault", async () => {
    const fake = { gpu: async () => ({}) as GpuRuntime } as const;
    const foreign = writeSafetensors([{ name: 'wte.weight', dtype: 'F32', shape: [4, 2], data: new Float32Array(8) }], { format: 'pt' });
    const src = (bytes: Uint8Array): BackendSource => ({ ...nothing, ...fake, checkpoint: async () => bytes });
    const ref = (label: string): BackendRef => ({ kind: 'checkpoint', checkpoint: { key: label, label } });
    const e1 = await openBackend(ref('gpt2.safetensors'), src(foreign)).catch((e: Error) => e);
    expect(e1).toBeInstanceOf(BackendError);
    expect(e1).toMatchObject({
      about: 'checkpoint',
      message: expect.stringMatching(/^gpt2\.safetensors is not an LWM Studio checkpoint: it carries no model config/),
    });
    const config = presetConfig('micro', { vocabSize: 16, contextLength: 8 });
    const noTok = saveCheckpoint({ config, params: initParams(config, 1), step: 1 });
    const e2 = await openBackend(ref('bare.safetensors'), src(noTok)).catch((e: Error) => e);
    expect(e2).toMatchObject({ about: 'checkpoint', message: expect.stringMatching(/^bare\.safetensors holds no tokenizer/) });
  });
});

describe('generationFor: one set of defaults and one budget check for every caller', () => {
  const model = {
    ref: { kind: 'checkpoint', checkpoint: { key: 'k' } } as BackendRef,
    backend: { name: 'local:sft-3', generate: () => (async function* () {})() },
    contextLength: 64,
  };
  it('a model: a quarter of its context, greedy; what was asked otherwise', () => {
    expect(generationFor(model)).toEqual({ maxTokens: 16, temperature: 0 });
    expect(generationFor(model, { maxTokens: 63, temperature: 0.7, topP: 0.9, topK: 5, seed: 3 })).toEqual({
      maxTokens: 63,
      temperature: 0.7,
      topP: 0.9,
      topK: 5,
      seed: 3,
    });
  });
  it("an output budget that leaves no prompt room is the settings' fault, with the range to choose from", () => {
    for (const maxTokens of [64, 1000, 0]) {
      const e = (() => {
        try {
          generationFor(model, { maxTokens });
        } catch (x) {
          return x as BackendError;
        }
      })();
      expect(e).toBeInstanceOf(BackendError);
      expect(e).toMatchObject({
        about: 'settings',
        message: `local:sft-3: ${maxTokens} new tokens leave no room for a prompt in the model's 64-token context; choose from 1 to 63 (a few less leaves the prompt more room).`,
      });
    }
  });
  it("an endpoint: the public inference script's 32768 tokens at temperature 0.6", () => {
    expect(generationFor({ ...model, ref: { kind: 'endpoint', endpoint: { baseUrl: 'http://127.0.0.1:1/v1', model: 'm' } }, contextLength: null })).toEqual({
      maxTokens: 32768,
      temperature: 0.6,
    });
  });
});

describe('backendKey', () => {
  it('tells apart what loads differently, and only that', () => {
    const hf = (o: object): BackendRef => ({ kind: 'hf', hf: { folderId: 'Tiny#1', name: 'Tiny', context: 64, memoryGiB: 1, ...o } });
    const keys = [
      hf({}),
      hf({ context: 128 }),
      hf({ weights: 'f16' }),
      hf({ memoryGiB: 2 }),
      { kind: 'onnx', onnx: { folderId: 'Tiny#1', name: 'Tiny', execution: 'wasm' } } as BackendRef,
    ].map(backendKey);
    expect(new Set(keys).size).toBe(keys.length);
    expect(backendKey(hf({ architecture: 'LlamaForCausalLM', name: 'Other name' }))).toBe(backendKey(hf({})));
    expect(backendKey({ kind: 'checkpoint', checkpoint: { key: 'run-1/best', runName: 'a' } })).toBe(
      backendKey({ kind: 'checkpoint', checkpoint: { key: 'run-1/best', label: 'b' } }),
    );
  });
});

describe("an endpoint opened from a reference, with the source's key", () => {
  let server: Server;
  let base: string;
  const seen: { auth?: string; model?: string; stream?: boolean }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const b = JSON.parse(body) as { model: string; stream?: boolean };
        seen.push({ auth: req.headers.authorization, model: b.model, stream: b.stream });
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({
            choices: [{ index: 0, message: { role: 'assistant', content: '<predicted_observation>\nok\n</predicted_observation>' }, finish_reason: 'stop' }],
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('sends the key the source gives, to the model named, in the chat form, without streaming when asked not to', async () => {
    const opened = await openReady(
      { kind: 'endpoint', endpoint: { baseUrl: base, model: 'sim-7b', concurrency: 2, stream: false } },
      { ...nothing, apiKey: () => 'sk-test' },
      { maxTokens: 32 },
      { name: 'endpoint:sim' },
    );
    expect(opened).toMatchObject({ form: 'chat', concurrency: 2, contextLength: null, generate: { maxTokens: 32, temperature: 0.6 } });
    expect(opened.backend.name).toBe('endpoint:sim');
    expect(await generateText(opened.backend, turn, opened.generate)).toContain('ok');
    expect(seen.at(-1)).toEqual({ auth: 'Bearer sk-test', model: 'sim-7b', stream: false });
  });
});

describe("Node's source", () => {
  it('reads a checkpoint path, and says which path cannot be read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-open-'));
    try {
      await writeFile(join(dir, 'a.safetensors'), new Uint8Array([1, 2, 3]));
      const source = nodeSource();
      expect(await source.checkpoint({ key: join(dir, 'a.safetensors') })).toEqual(new Uint8Array([1, 2, 3]));
      await expect(source.checkpoint({ key: join(dir, 'missing.safetensors') })).rejects.toThrow(/missing\.safetensors: cannot read \(ENOENT\)/);
      await expect(source.folder({ folderId: join(dir, 'nope'), name: 'nope' }, 'hf')).rejects.toThrow(/nope: cannot be opened \(ENOENT\)/);
      source.release();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  it('gives the key asked for, else $LWM_API_KEY, then $OPENAI_API_KEY', () => {
    const keep = { a: process.env.LWM_API_KEY, b: process.env.OPENAI_API_KEY };
    try {
      process.env.LWM_API_KEY = 'lwm';
      process.env.OPENAI_API_KEY = 'openai';
      const e = { baseUrl: 'http://127.0.0.1:1/v1', model: 'm' };
      expect(nodeSource({ apiKey: 'given' }).apiKey!(e)).toBe('given');
      expect(nodeSource().apiKey!(e)).toBe('lwm');
      delete process.env.LWM_API_KEY;
      expect(nodeSource().apiKey!(e)).toBe('openai');
    } finally {
      for (const [k, v] of [
        ['LWM_API_KEY', keep.a],
        ['OPENAI_API_KEY', keep.b],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });
});
