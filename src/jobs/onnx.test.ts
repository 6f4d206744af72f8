// ONNX folders in the worker, as the app sends them (File objects of a picked folder): the tiny
// chat Llama (src/model/fixtures/hf/llama-chat) exported to ONNX is inspected without opening its
// model (its model files, config.json's shape, tokenizer and chat template), a Playground turn on
// it through onnxruntime-web's WASM provider streams our reference engine's greedy text with no GPU
// device at all (the job's gpu() fails; a turn too long for the context fitted as a Hugging Face
// folder's is), the Bench opens it the same way, and a folder's faults are
// messages naming the file.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { hfPrompt } from '../backends/hf.ts';
import type { TurnRequest } from '../core/backend.ts';
import { emptySystemPrompt } from '../core/schema/types.ts';
import { loadHfModel, type LoadedHfModel } from '../model/hf/load.ts';
import { nodeFolder } from '../model/hf/node.ts';
import { hfFolderSideFiles, onnxExportFiles } from '../model/onnx/export.ts';
import { generateRef } from '../reference/gpt.ts';
import type { BenchBackendRef, BenchRecord } from '../core/records.ts';
import { openBenchBackend } from './bench.ts';
import type { HfFolderFile } from '../train/hfFolder.ts';
import { userMessage, type JobContext } from '../train/context.ts';
import { BackendError } from '../backends/errors.ts';
import type { JobState } from './protocol.ts';
import { inspectOnnxFolder, onnxFolderOf } from './onnx.ts';
import { runGenerateJob, type GenerateJobResult, type GenerateProgress } from './playground.ts';

const CHAT = fileURLToPath(new URL('../model/fixtures/hf/llama-chat', import.meta.url));
const big = Number.MAX_SAFE_INTEGER;
let model: LoadedHfModel;
let folder: HfFolderFile[] = [];

async function exported(): Promise<HfFolderFile[]> {
  if (folder.length) return folder;
  const hf = await nodeFolder(CHAT);
  model = await loadHfModel(hf, { limits: { maxBufferSize: big, maxStorageBufferBindingSize: big, memoryBudget: big, shaderF16: false } });
  const files = onnxExportFiles(model, await hfFolderSideFiles(hf));
  folder = files.map((f) => ({ path: `TinyOnnx/${f.name}`, file: new Blob([f.bytes as Uint8Array<ArrayBuffer>]) }));
  return folder;
}

/** A job context with no GPU: an ONNX folder must never ask for one. */
function noGpuContext() {
  const texts: string[] = [];
  const progress: GenerateProgress[] = [];
  const listeners = new Set<(s: JobState) => void>();
  const ctx: JobContext = {
    get rt(): never {
      throw new Error('no GPU runtime');
    },
    gpu: () => Promise.reject(new Error('this test has no GPU')),
    failure: async (e) => e,
    jobId: 'j',
    step: async () => {},
    metric: () => {},
    checkpoint: () => {},
    onState: (l) => (listeners.add(l), () => listeners.delete(l)),
    text: (t) => texts.push(t),
    log: () => {},
    progress: (d) => progress.push(d as GenerateProgress),
    stopRequested: false,
    lost: null,
  };
  return { ctx, texts, progress };
}

const turn: TurnRequest = {
  sample: {
    domain: 'terminal',
    systemPrompt: { ...emptySystemPrompt(), text: 'You simulate a Linux shell.' },
    history: [{ action: 'ls', observation: 'a.txt b.txt' }],
    action: 'cat a.txt',
  },
};

/** A turn too long for the 128-token context: its oldest turns are left out, as a Hugging Face folder's are. */
const longTurn: TurnRequest = {
  sample: {
    ...turn.sample,
    history: Array.from({ length: 6 }, (_, i) => ({ action: `cat file${i}.txt`, observation: `line ${i} of a long file with several words in it` })),
  },
};

/** Our engine's greedy text for the same prompt (the chat template over the AgentWorldBench layout, fitted to the room). */
function referenceText(maxTokens: number, request: TurnRequest = turn): string {
  const tok = model.tokenizer!;
  const { ids } = hfPrompt(tok, request, model.config.contextLength - maxTokens);
  const out: number[] = [];
  for (const id of generateRef(model.params, model.config, ids, { maxNewTokens: maxTokens, temperature: 0 })) {
    if (model.stopIds.includes(id)) break;
    out.push(id);
  }
  return tok.decode(out);
}

describe('ONNX folders in the worker', () => {
  it('inspects a folder from its listing, config.json and tokenizer', async () => {
    const info = await inspectOnnxFolder(onnxFolderOf(await exported()));
    expect(info).toMatchObject({
      name: 'TinyOnnx',
      defaultFile: 'onnx/model.onnx',
      architecture: 'LlamaForCausalLM',
      layers: 2,
      hidden: 32,
      heads: 4,
      kvHeads: 2,
      vocab: 1461,
      maxContext: 128,
      tokenizer: true,
      chatTemplate: true,
    });
    expect(info.variants).toEqual([{ file: 'onnx/model.onnx', bytes: (await exported()).find((f) => f.path === 'TinyOnnx/onnx/model.onnx')!.file.size }]);
  });

  it("a Playground turn on WASM, with no GPU device: our engine's greedy text, streamed, with the provider named", async () => {
    const { ctx, texts, progress } = noGpuContext();
    const spec = {
      kind: 'generate' as const,
      model: { kind: 'onnx' as const, onnx: { folderId: 'tiny', name: 'TinyOnnx', execution: 'wasm' as const } },
      files: await exported(),
      request: turn,
      sampling: { maxTokens: 10, temperature: 0 },
    };
    const r = (await runGenerateJob(spec, ctx)) as GenerateJobResult;
    expect(r.text).toBe(referenceText(10));
    expect(r.text!.length).toBeGreaterThan(0);
    expect(texts.join('')).toBe(r.text);
    expect(r.model).toMatchObject({
      name: 'onnx:TinyOnnx',
      stage: 'onnx',
      contextLength: 128,
      layers: 2,
      dModel: 32,
      vocabSize: 1461,
      template: 'chat template',
      architecture: 'LlamaForCausalLM',
      onnx: { file: 'onnx/model.onnx', executionProvider: 'wasm' },
    });
    expect(progress.some((p) => p.kind === 'context' && p.context.exact && p.context.maxTokens === 10)).toBe(true);
    // Where the decoder's cache went, told to the page after the turn: WASM keeps it in CPU memory, a key and a value per layer and pass, none left alive.
    const kv = r.model.onnx!.kv!;
    expect(kv).toMatchObject({ onGpu: 0, live: 0 });
    expect(kv.onCpu).toBeGreaterThan(0);
    expect(kv.onCpu % (2 * 2)).toBe(0);
    expect(progress.at(-1)).toMatchObject({ kind: 'model', model: { onnx: { kv } } });
    // Too long for the context: fitted as a Hugging Face folder's prompt is, the same text as our engine's.
    const long = (await runGenerateJob({ ...spec, request: longTurn }, ctx)) as GenerateJobResult;
    expect(long.context).toMatchObject({ truncated: true, context: 128 });
    expect(hfPrompt(model.tokenizer!, longTurn, 118).droppedTurns).toBeGreaterThan(0);
    expect(long.text).toBe(referenceText(10, longTurn));
    await runGenerateJob({ kind: 'generate', release: true }, ctx);
  });

  it('the Bench opens it the same way', async () => {
    const ref: BenchBackendRef = {
      id: 'onnx:tiny',
      name: 'onnx:TinyOnnx',
      kind: 'onnx',
      onnx: { folderId: 'tiny', name: 'TinyOnnx', file: 'onnx/model.onnx', execution: 'wasm' },
    };
    const bench = { generation: { maxTokens: 10 } } as BenchRecord;
    const logs: string[] = [];
    const opened = await openBenchBackend(ref, bench, { gpu: noGpuContext().ctx.gpu, log: (m) => logs.push(m) }, undefined, await exported());
    expect(logs).toEqual(['onnx:TinyOnnx: onnx/model.onnx in onnxruntime-web on WASM']);
    let text = '';
    for await (const p of opened.backend.generate(turn, { ...opened.generate })) text += p;
    expect(text).toBe(referenceText(10));
    opened.dispose();
    await expect(openBenchBackend(ref, bench, noGpuContext().ctx, undefined, undefined)).rejects.toThrow(/the folder TinyOnnx is not open in this page/);
  });

  it("a folder's faults name the file: no model file, no config.json, a broken tokenizer.json, a variant it lacks, a model file that is not ONNX", async () => {
    const files = await exported();
    const without = (name: string) => files.filter((f) => f.path !== `TinyOnnx/${name}`);
    await expect(inspectOnnxFolder(onnxFolderOf(without('onnx/model.onnx')))).rejects.toThrow(/^TinyOnnx: has no ONNX model \(onnx\/\*\.onnx\)/);
    await expect(inspectOnnxFolder(onnxFolderOf(without('config.json')))).rejects.toThrow(/^TinyOnnx: has no config\.json \(found: /);
    const broken = [...without('tokenizer.json'), { path: 'TinyOnnx/tokenizer.json', file: new Blob(['{"model": ']) }];
    await expect(inspectOnnxFolder(onnxFolderOf(broken))).rejects.toThrow(/^TinyOnnx\/tokenizer\.json: is not valid JSON/);
    const onnx = { folderId: 'v', name: 'TinyOnnx', file: 'onnx/model_q4.onnx', execution: 'wasm' as const };
    await expect(runGenerateJob({ kind: 'generate', model: { kind: 'onnx', onnx }, files }, noGpuContext().ctx)).rejects.toThrow(
      /TinyOnnx: has no model_q4\.onnx \(its ONNX files: model\.onnx\)/,
    );
    const notOnnx = [...files, { path: 'TinyOnnx/onnx/model_fp16.onnx', file: new Blob(['not a model']) }];
    await expect(
      runGenerateJob(
        { kind: 'generate', model: { kind: 'onnx', onnx: { ...onnx, folderId: 'w', file: 'onnx/model_fp16.onnx' } }, files: notOnnx },
        noGpuContext().ctx,
      ),
    ).rejects.toThrow(/TinyOnnx\/onnx\/model_fp16\.onnx: onnxruntime-web cannot load it/);
  });

  it("a broken lwm_template.json is refused as the user's problem, naming the file, the text and the line", async () => {
    const files = [
      ...(await exported()),
      {
        path: 'TinyOnnx/lwm_template.json',
        file: new Blob([JSON.stringify({ version: 'v0', text: 'A world model.', targetOpen: '<o>', targetClose: '</o>' })]),
      },
    ];
    const job = runGenerateJob(
      { kind: 'generate', model: { kind: 'onnx', onnx: { folderId: 't', name: 'TinyOnnx', execution: 'wasm' } }, files },
      noGpuContext().ctx,
    );
    // Written for the user: the worker shows its message as it is.
    await expect(job).rejects.toThrow(BackendError);
    expect(userMessage((await job.catch((e: Error) => e)) as Error)).toMatch(/^TinyOnnx\/lwm_template\.json: text: line 1/);
    await expect(job).rejects.toThrow(/^TinyOnnx\/lwm_template\.json: text: line 1: the template never shows the history/);
  });
});
