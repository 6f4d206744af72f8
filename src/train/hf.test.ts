// A picked Hugging Face folder as the worker reads it before loading: what it holds and whether it
// fits (config.json and the safetensors headers only), and the messages a broken folder gets, each
// naming the file at fault; plus the page's side of the protocol (paths, names, ids, settings).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { folderOf, inspectHfFolder } from './hf.ts';
import { folderError, loadHfBackend, runContext } from '../backends/folders.ts';
import {
  chatProblem,
  DEFAULT_HF_CONTEXT,
  describeFolder,
  F16_WEIGHTS,
  folderFiles,
  folderId,
  folderName,
  formatCount,
  settingsProblem,
  type HfFolderFile,
  type HfRunSettings,
} from './hfFolder.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';

const LIMITS = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 27 };

function fixture(folder: string, names: string[], rename = folder): HfFolderFile[] {
  return names.map((n) => ({ path: `${rename}/${n}`, file: new File([readFileSync(new URL(`../model/fixtures/hf/${folder}/${n}`, import.meta.url))], n) }));
}

const LLAMA = ['config.json', 'generation_config.json', 'model.safetensors'];
const CHAT = [...LLAMA, 'tokenizer.json', 'tokenizer_config.json'];

async function inspectError(files: HfFolderFile[], settings: HfRunSettings = { context: null, memoryGiB: 1 }): Promise<string> {
  try {
    await inspectHfFolder(folderOf(files), settings, LIMITS);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('inspect did not fail');
}

describe('inspecting a picked folder', () => {
  it('reports the architecture, the parameter count, the context and the estimate against the budget', async () => {
    const info = await inspectHfFolder(folderOf(fixture('llama-chat', CHAT, 'TinyChat')), { context: null, memoryGiB: 1 }, LIMITS);
    const config = JSON.parse(readFileSync(new URL('../model/fixtures/hf/llama-chat/config.json', import.meta.url), 'utf8'));
    expect(info).toMatchObject({
      name: 'TinyChat',
      architecture: 'LlamaForCausalLM',
      layers: config.num_hidden_layers,
      hidden: config.hidden_size,
      vocab: config.vocab_size,
      tokenizer: true,
      chatTemplate: true,
      files: 5,
      dtypes: ['F32'],
    });
    expect(info.context).toBe(Math.min(config.max_position_embeddings, DEFAULT_HF_CONTEXT));
    // F32 weights: four bytes a parameter, the safetensors file's data.
    expect(info.fit.weights).toBe(info.parameters * 4);
    expect(info.weightBytes).toBeGreaterThan(info.parameters * 4);
    expect(info.fit).toMatchObject({ fits: true, budget: 2 ** 30 });
    expect(info.fit.total).toBe(info.fit.weights + info.fit.kvCache + info.fit.activations);
    expect(describeFolder(info)).toMatch(/^TinyChat: LlamaForCausalLM, [\d.]+K parameters .* needs [\d.]+ (KiB|MiB) of the 1\.00 GiB budget/);
  });

  it('refuses a run that does not fit and says what would fit instead', async () => {
    const files = fixture('llama', LLAMA);
    const info = await inspectHfFolder(folderOf(files), { context: null, memoryGiB: 120 / 2 ** 20 }, LIMITS);
    expect(info.fit.fits).toBe(false);
    expect(info.fit.message).toMatch(/more than the 120\.0 KiB budget/);
    expect(info.fit.alternatives.length).toBeGreaterThan(0);
    expect(info.fit.alternatives[0].context).toBeLessThan(64);
    expect(info.fit.message).toContain('Would fit instead: context');
    // Loading refuses the same way, before any weight reaches the GPU (the runtime is never used beyond its limits).
    const rt = { report: { limits: LIMITS } } as unknown as GpuRuntime;
    await expect(loadHfBackend(rt, folderOf(files), { context: null, memoryGiB: 120 / 2 ** 20 })).rejects.toThrow(/Would fit instead/);
  });

  it('with f16 weights asked, counts the matrices at two bytes; a budget only f16 fits is refused with f16 offered', async () => {
    const files = fixture('llama-chat', CHAT, 'TinyChat');
    const f32 = await inspectHfFolder(folderOf(files), { context: null, memoryGiB: 1 }, LIMITS);
    const f16 = await inspectHfFolder(folderOf(files), { context: null, memoryGiB: 1, weights: 'f16' }, LIMITS);
    expect(f16.fit.weights).toBeLessThan(0.55 * f32.fit.weights);
    expect(f16.fit.total - f16.fit.weights).toBe(f32.fit.total - f32.fit.weights);
    expect(f16.fit.message).toMatch(/for inference, context \d+, batch 1, f16 weights/);
    const between = (f16.fit.total + f32.fit.total) / 2 / 2 ** 30;
    const refused = await inspectHfFolder(folderOf(files), { context: null, memoryGiB: between }, LIMITS);
    expect(refused.fit.fits).toBe(false);
    expect(refused.fit.alternatives.find((a) => a.change === F16_WEIGHTS)).toMatchObject({ total: f16.fit.total });
    expect(refused.fit.message).toMatch(new RegExp(`Would fit instead: .*${F16_WEIGHTS.replace(/[()]/g, '\\$&')}`));
    expect((await inspectHfFolder(folderOf(files), { context: null, memoryGiB: between, weights: 'f16' }, LIMITS)).fit.fits).toBe(true);
  });

  it('names the file at fault: no config.json, an unsupported architecture, a bad safetensors file, no weights', async () => {
    expect(await inspectError(fixture('llama', ['generation_config.json', 'model.safetensors'], 'NoConfig'))).toMatch(
      /^NoConfig: has no config\.json \(found: generation_config\.json, model\.safetensors\)/,
    );
    const gpt2 = [
      { path: 'Gpt2/config.json', file: new File([JSON.stringify({ architectures: ['GPT2LMHeadModel'] })], 'config.json') },
      ...fixture('llama', ['model.safetensors'], 'Gpt2'),
    ];
    expect(await inspectError(gpt2)).toMatch(/^Gpt2\/config\.json: architectures: "GPT2LMHeadModel" is not supported \(supported: LlamaForCausalLM/);
    const bad = [
      ...fixture('llama', ['config.json'], 'Bad'),
      { path: 'Bad/model.safetensors', file: new File([new Uint8Array([1, 2, 3])], 'model.safetensors') },
    ];
    expect(await inspectError(bad)).toMatch(/Bad\/model\.safetensors/);
    expect(await inspectError(fixture('llama', ['config.json'], 'Empty'))).toMatch(/^Empty: has no model\.safetensors or model\.safetensors\.index\.json/);
    expect(await inspectError(fixture('llama', LLAMA), { context: 4, memoryGiB: 1 })).toMatch(/Context must be a whole number of tokens, at least 16/);
    expect(() => folderOf([])).toThrow(/pick a Hugging Face model folder/);
  });

  it("keeps errors that are not the folder's as they are", () => {
    const e = new TypeError('x');
    expect(folderError(e, 'F')).toBe(e);
  });

  it("runs at the context asked, within the model's maximum", () => {
    expect(runContext({ context: null, memoryGiB: 1 }, 8192)).toBe(DEFAULT_HF_CONTEXT);
    expect(runContext({ context: null, memoryGiB: 1 }, 64)).toBe(64);
    expect(runContext({ context: 512, memoryGiB: 1 }, 8192)).toBe(512);
    expect(runContext({ context: 99999, memoryGiB: 1 }, 8192)).toBe(8192);
  });
});

describe("the page's side of a folder", () => {
  it('takes paths from a folder picker (webkitRelativePath) or a drop (names), and names the folder', () => {
    const a = new File(['{}'], 'config.json');
    Object.defineProperty(a, 'webkitRelativePath', { value: 'SmolLM2-135M/config.json' });
    const b = new File(['x'], 'model.safetensors');
    Object.defineProperty(b, 'webkitRelativePath', { value: 'SmolLM2-135M/model.safetensors' });
    const picked = folderFiles([a, b]);
    expect(picked.map((f) => f.path)).toEqual(['SmolLM2-135M/config.json', 'SmolLM2-135M/model.safetensors']);
    expect(folderName(picked)).toBe('SmolLM2-135M');
    const dropped = folderFiles([new File(['{}'], 'config.json')]);
    expect(dropped[0].path).toBe('config.json');
    expect(folderName(dropped)).toBeNull();
    expect(
      folderName(
        folderFiles([
          { path: '/Models/Tiny/config.json', file: a },
          { path: 'Models/Tiny/onnx/model.onnx', file: b },
        ]),
      ),
    ).toBe('Tiny');
  });

  it('gives one id to the same files and another to different ones', () => {
    const f = (path: string, text: string) => ({ path, file: new File([text], path.split('/').pop()!, { lastModified: 5 }) });
    const one = [f('M/config.json', '{}'), f('M/model.safetensors', 'abc')];
    expect(folderId(one)).toBe(folderId([...one].reverse()));
    expect(folderId(one)).toMatch(/^M#/);
    expect(folderId([f('M/config.json', '{}'), f('M/model.safetensors', 'abcd')])).not.toBe(folderId(one));
  });

  it('says why a folder that fits cannot serve a turn: no tokenizer, or no chat template', () => {
    expect(chatProblem({ name: 'Tiny', tokenizer: false, chatTemplate: false })).toMatch(/^Tiny has no tokenizer\.json/);
    expect(chatProblem({ name: 'Base', tokenizer: true, chatTemplate: false })).toMatch(/^Base has no chat template .* use the instruct \/ chat version/);
    expect(chatProblem({ name: 'Chat', tokenizer: true, chatTemplate: true })).toBeNull();
  });

  it('checks the settings a user typed, and writes counts', () => {
    expect(settingsProblem({ context: null, memoryGiB: 4 })).toBeNull();
    expect(settingsProblem({ context: 15, memoryGiB: 4 })).toMatch(/at least 16/);
    expect(settingsProblem({ context: 1.5, memoryGiB: 4 })).toMatch(/whole number/);
    expect(settingsProblem({ context: 64, memoryGiB: 0 })).toMatch(/GPU memory must be/);
    expect(settingsProblem({ context: 64, memoryGiB: Number.NaN })).toMatch(/GPU memory must be/);
    expect([formatCount(134_515_008), formatCount(494_032_768), formatCount(1_543_714_304), formatCount(36_200), formatCount(12)]).toEqual([
      '135M',
      '494M',
      '1.5B',
      '36.2K',
      '12',
    ]);
  });
});
