// A worker model as the page's LwmBackend (workerBackend.ts), against a scripted worker behind a
// real JobClient: the stream in order, the worker's token counts, a stop, a dropped file sent
// again to a worker that does not hold it, and a failure that says whether the device was lost.
import { describe, expect, it } from 'vitest';
import { generateText, type TurnRequest } from '../core/backend.ts';
import { generateTrajectories } from '../envs/index.ts';
import { MODEL_NOT_LOADED } from './protocol.ts';
import { JobError } from './client.ts';
import { scriptedWorker, type GenerateScript } from './generate.testing.ts';
import { workerBackend, type WorkerModel } from './workerBackend.ts';

const info = {
  id: 'checkpoint:file:f:::f32',
  name: 'local:sft-4',
  stage: 'sft',
  step: 4,
  contextLength: 48,
  vocabSize: 400,
  layers: 2,
  dModel: 32,
  template: 'v0',
};
const t = generateTrajectories('terminal', 1, 0)[0];
const request: TurnRequest = { sample: { domain: 'terminal', systemPrompt: t.system_prompt, history: [], action: 'ls' } };

type Script = GenerateScript;

/** The worker answers a stop with the job's end (what it had so far). */
const fakeWorker = (script: Script) =>
  scriptedWorker(script, (jobId, post) => post({ type: 'done', jobId, result: { model: info, text: 'part', tokens: 1, ms: 5, stopped: true } }));

const file = (withBytes: boolean): WorkerModel => ({
  model: { kind: 'checkpoint', checkpoint: { key: 'file:f', label: 'mine.safetensors' } },
  ...(withBytes && { bytes: new Uint8Array([1, 2]) }),
});

const streams: Script = (spec, jobId, post) => {
  post({ type: 'progress', jobId, data: { kind: 'model', model: info } });
  if (!('request' in spec) || !spec.request) return post({ type: 'done', jobId, result: { model: info } });
  post({
    type: 'progress',
    jobId,
    data: { kind: 'context', context: { exact: true, context: 48, maxTokens: 8, room: 40, prompt: 30, truncated: false, parts: [] } },
  });
  post({ type: 'text', jobId, text: 'READ' });
  post({ type: 'progress', jobId, data: { kind: 'tokens', tokens: 2, ms: 20 } });
  post({ type: 'text', jobId, text: 'ME.md' });
  post({ type: 'progress', jobId, data: { kind: 'tokens', tokens: 3, ms: 30 } });
  post({ type: 'done', jobId, result: { model: info, text: 'README.md', tokens: 3, ms: 31, stopped: false } });
};

describe('workerBackend', () => {
  it("yields the worker's stream in order, tells the hooks the model, context and rate, and sends the page's sampling and template", async () => {
    const w = fakeWorker(streams);
    const seen: string[] = [];
    const counts: number[] = [];
    const template = { version: 'mine', text: 'T {{ action }}', targetOpen: '<o>', targetClose: '</o>' } as never;
    const backend = workerBackend(
      w.client,
      'local',
      file,
      { onModel: (m) => seen.push(`model ${m.name}`), onContext: (c) => seen.push(`context ${c.room}`), onRate: (n, ms) => seen.push(`rate ${n} ${ms}`) },
      () => template,
    );
    const pieces: string[] = [];
    for await (const p of backend.generate(request, { maxTokens: 8, temperature: 0.5, seed: 3, onTokens: (n) => counts.push(n) })) pieces.push(p);
    expect(pieces).toEqual(['READ', 'ME.md']);
    expect(seen).toEqual(['model local:sft-4', 'context 40', 'rate 2 20', 'rate 3 30']);
    expect(counts).toEqual([2, 3]);
    expect(backend.last).toMatchObject({ text: 'README.md', tokens: 3, ms: 31 });
    expect(w.started[0]).toEqual({ kind: 'generate', model: file(false).model, request, template, sampling: { maxTokens: 8, temperature: 0.5, seed: 3 } });
    // The same call as any backend: generateText reads it whole.
    expect(await generateText(backend, request, { maxTokens: 8, temperature: 0 })).toBe('README.md');
  });

  it('asks the worker to stop when the signal aborts, and ends with what it had', async () => {
    const w = fakeWorker((_spec, jobId, post) => {
      post({ type: 'text', jobId, text: 'part' });
    });
    const abort = new AbortController();
    const pieces: string[] = [];
    for await (const p of workerBackend(w.client, 'local', file).generate(request, { maxTokens: 8, temperature: 0, signal: abort.signal })) {
      pieces.push(p);
      abort.abort();
    }
    expect(pieces).toEqual(['part']);
    expect(w.stopped).toHaveLength(1);
  });

  it("sends a dropped file's bytes again when the worker does not hold it, once", async () => {
    const held = new Set<string>();
    const w = fakeWorker((spec, jobId, post) => {
      if ('release' in spec) return;
      if (spec.bytes) held.add('f');
      else if (!held.has('f')) return post({ type: 'error', jobId, message: MODEL_NOT_LOADED });
      streams(spec, jobId, post);
    });
    const backend = workerBackend(w.client, 'local', file);
    expect(await backend.load()).toMatchObject({ name: 'local:sft-4' });
    expect(w.started.map((s) => 'bytes' in s && !!s.bytes)).toEqual([false, true]);
    expect(await generateText(backend, request, { maxTokens: 8, temperature: 0 })).toBe('README.md');
    expect(w.started.map((s) => 'bytes' in s && !!s.bytes)).toEqual([false, true, false]);
  });

  it("fails with the worker's message, and says when the device was lost meanwhile", async () => {
    const w = fakeWorker((_spec, jobId, post) => {
      post({ type: 'lost', message: 'The GPU device was lost (destroyed).' });
      post({ type: 'text', jobId, text: 'half' });
      post({ type: 'error', jobId, message: 'The GPU device was lost (destroyed). The job stopped.', kind: 'device-lost' });
    });
    const pieces: string[] = [];
    const e = await (async () => {
      for await (const p of workerBackend(w.client, 'local', file).generate(request, { maxTokens: 8, temperature: 0 })) pieces.push(p);
    })().catch((x: unknown) => x);
    expect(pieces).toEqual(['half']);
    expect(e).toBeInstanceOf(JobError);
    expect(e).toMatchObject({ lost: true, kind: 'device-lost', message: 'The GPU device was lost (destroyed). The job stopped.' });
  });

  it('a model the page cannot describe any more (a folder no longer picked) fails the generation with that error', async () => {
    const w = fakeWorker(streams);
    const gone = () => {
      throw new Error('The folder Tiny is no longer open in this page');
    };
    await expect(generateText(workerBackend(w.client, 'hf:Tiny', gone), request, { maxTokens: 8, temperature: 0 })).rejects.toThrow(/no longer open/);
    expect(w.started).toHaveLength(0);
  });
});
