// A Hugging Face folder through the worker's side of the app: picked files (as the page posts
// them) → the 'hf-inspect' job's estimate → the Playground's 'generate' job, which loads the folder
// with loadHfModel and generates on the GPU. The tiny Llama, Qwen2 and Qwen3 folders give
// transformers' greedy tokens from raw ids; the tiny chat Llama's turn is rendered with its chat
// template and gives transformers' greedy text; a stop request ends the stream.
import { describe, expect, it } from 'vitest';
import { generateText } from '../core/backend.ts';
import type { BenchRecord } from '../core/records.ts';
import { openBenchBackend } from '../jobs/bench.ts';
import { emptySystemPrompt } from '../core/schema/types.ts';
import { fixtureBytes } from '../gpu/testing/fixture.ts';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import type { JobContext } from './context.ts';
import { runHfInspectJob } from './hf.ts';
import type { HfFolderFile, HfFolderInfo } from './hfFolder.ts';
import type { JobState } from '../jobs/protocol.ts';
import { releasePlaygroundModel, runGenerateJob, type GenerateJobResult, type GenerateProgress } from '../jobs/playground.ts';

const hfFixture = (folder: string, file: string) => fixtureBytes(new URL(`../model/fixtures/hf/${folder}/${file}`, import.meta.url));

/** A fixture folder as the page posts it: File objects with paths under the folder's name. */
async function picked(folder: string, names: string[]): Promise<HfFolderFile[]> {
  return Promise.all(names.map(async (n) => ({ path: `${folder}/${n}`, file: new File([await hfFixture(folder, n)], n) })));
}

async function json(folder: string, file: string) {
  return JSON.parse(new TextDecoder().decode(await hfFixture(folder, file)));
}

function fakeContext(rt: JobContext['rt']) {
  const texts: string[] = [];
  const progress: GenerateProgress[] = [];
  const listeners = new Set<(s: JobState) => void>();
  const ctx: JobContext = {
    rt,
    gpu: async () => rt,
    failure: async (e) => e,
    jobId: 'j',
    step: async () => {},
    metric: () => {},
    checkpoint: () => {},
    onState: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    text: (t) => texts.push(t),
    log: () => {},
    progress: (d) => progress.push(d as GenerateProgress),
    stopRequested: false,
    lost: null,
  };
  return { ctx, texts, progress, setState: (s: JobState) => listeners.forEach((l) => l(s)) };
}

const SETTINGS = { context: null, memoryGiB: 1 };
const WEIGHTS = ['config.json', 'generation_config.json', 'model.safetensors'];

describe('Hugging Face folders through the worker jobs', () => {
  for (const [arch, name] of [
    ['llama', 'LlamaForCausalLM'],
    ['qwen2', 'Qwen2ForCausalLM'],
    ['qwen3', 'Qwen3ForCausalLM'],
  ] as const) {
    it(`${arch}: the estimate, then transformers' greedy tokens from the picked files`, async () => {
      const rt = await gpuRuntime();
      const files = await picked(arch, WEIGHTS);
      const expected = await json(arch, 'expected.json');
      try {
        const info = (await runHfInspectJob({ kind: 'hf-inspect', files, settings: SETTINGS }, fakeContext(rt).ctx)) as HfFolderInfo;
        expect(info).toMatchObject({ name: arch, architecture: name, context: 64, maxContext: 64, tokenizer: false, files: 3 });
        expect(info.fit.fits).toBe(true);
        const a = fakeContext(rt);
        const model = { kind: 'hf' as const, hf: { folderId: arch, name: arch, ...SETTINGS } };
        const r = (await runGenerateJob(
          { kind: 'generate', model, files, promptIds: expected.input_ids, sampling: { maxTokens: expected.greedy.length, temperature: 0 } },
          a.ctx,
        )) as GenerateJobResult;
        expect(r.model).toMatchObject({ name: `hf:${arch}`, architecture: name, contextLength: 64, stopIds: [2] });
        expect(r.ids).toEqual(expected.greedy);
        expect(a.progress.filter((p) => p.kind === 'tokens')).toHaveLength(expected.greedy.length);
      } finally {
        releasePlaygroundModel();
      }
    });
  }

  it("the chat Llama: a turn rendered with the model's chat template gives transformers' greedy text; stop ends the stream", async () => {
    const rt = await gpuRuntime();
    const files = await picked('llama-chat', [...WEIGHTS, 'tokenizer.json', 'tokenizer_config.json']);
    const expected = (await json('llama-chat', 'generate.json')).chat;
    const model = { kind: 'hf' as const, hf: { folderId: 'chat', name: 'llama-chat', ...SETTINGS } };
    // One user message, no system prompt: the AgentWorldBench layout of a first turn given as the record writes it.
    const request = {
      sample: { domain: 'chat', systemPrompt: emptySystemPrompt(), history: [], action: expected.input },
      awb: { system: '', actions: [expected.input], observations: [] },
    };
    try {
      const a = fakeContext(rt);
      const r = (await runGenerateJob(
        { kind: 'generate', model, files, request, sampling: { maxTokens: expected.ids.length, temperature: 0 } },
        a.ctx,
      )) as GenerateJobResult;
      expect(r.model.template).toBe('chat template');
      expect(r.context).toMatchObject({ exact: true, prompt: expected.prompt_ids.length, truncated: false });
      expect(r.tokens).toBe(expected.ids.length);
      expect(r.text).toBe(expected.text);
      expect(a.texts.join('')).toBe(r.text);

      // Stop after the first piece: the job ends with what it had.
      const b = fakeContext(rt);
      b.ctx.text = (x) => {
        b.texts.push(x);
        b.setState('stopping');
      };
      const stopped = (await runGenerateJob(
        { kind: 'generate', model, files, request, sampling: { maxTokens: expected.ids.length, temperature: 0 } },
        b.ctx,
      )) as GenerateJobResult;
      expect(stopped.stopped).toBe(true);
      expect(stopped.text).toBe(b.texts.join(''));
      expect(expected.text.startsWith(stopped.text!)).toBe(true);
    } finally {
      releasePlaygroundModel();
    }
  });

  it("the Bench's backend for a folder: transformers' greedy text for the same turn, the run's token budget", async () => {
    const rt = await gpuRuntime();
    const files = await picked('llama-chat', [...WEIGHTS, 'tokenizer.json', 'tokenizer_config.json']);
    const expected = (await json('llama-chat', 'generate.json')).chat;
    const hf = { folderId: 'f', name: 'llama-chat', architecture: 'LlamaForCausalLM', parameters: 0, context: null, memoryGiB: 1 };
    const ref = { id: 'hf:f', name: 'hf:llama-chat', kind: 'hf' as const, hf };
    const record: BenchRecord = {
      id: 'b',
      name: 'b',
      createdAt: 0,
      updatedAt: 0,
      origin: 'run',
      state: 'queued',
      data: { datasetId: 'd', name: 'd', perDomain: 1, evalFraction: 0.1, seed: 0, domains: [] },
      samples: [],
      backends: [ref],
      judges: [],
      generation: { maxTokens: expected.ids.length },
      progress: { done: 0, total: 0 },
    };
    const opened = await openBenchBackend(ref, record, { gpu: async () => rt }, undefined, files);
    try {
      expect(opened.backend.name).toBe('hf:llama-chat');
      expect(opened.generate).toEqual({ maxTokens: expected.ids.length, temperature: 0 });
      const request = {
        sample: { domain: 'chat', systemPrompt: emptySystemPrompt(), history: [], action: expected.input },
        awb: { system: '', actions: [expected.input], observations: [] },
      };
      expect(await generateText(opened.backend, request, opened.generate)).toBe(expected.text);
    } finally {
      opened.dispose();
    }
  });
});
