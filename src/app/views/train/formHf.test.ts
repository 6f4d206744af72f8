// The Train form's "Start from: a Hugging Face folder": the spec a folder's run becomes (the files
// sent with the job, LoRA's settings, tokens per sequence bounded by the model), and the refusals
// (no folder, a folder still read or broken, no chat template, a run that does not fit, CPT, a
// LoRA checkpoint without its folder).
import { describe, expect, it } from 'vitest';
import { DEFAULT_STAGE_TEMPLATES } from '../../../core/templates/index.ts';
import type { DatasetMeta, RunRecord } from '../../../core/records.ts';
import type { HfFolderInfo } from '../../../train/hfFolder.ts';
import type { HfFolderRef } from '../../../core/trainSpec.ts';
import { DEFAULT_FORM, HF_START, type TrainForm } from '../../stores/trainForm.ts';
import { buildSpec, type FormContext, type HfFormFolder } from './form.ts';

const dataset: DatasetMeta = {
  id: 'default',
  name: 'Default',
  createdAt: 0,
  origin: 'builtin',
  formats: ['native'],
  files: [],
  trajectories: 1400,
  turns: 9000,
  domains: ['mcp', 'terminal'],
  errorCount: 0,
  chunks: 3,
};
const ref: HfFolderRef = { name: 'TinyChat', files: [{ path: 'config.json', size: 700 }], config: 'a'.repeat(64), weights: 'b'.repeat(64) };
const files = [{ path: 'TinyChat/config.json', file: new Blob(['{}']) }];
const fit = {
  fits: true,
  total: 2 << 20,
  weights: 1 << 20,
  kvCache: 0,
  activations: 1 << 20,
  adapters: 1,
  gradients: 1,
  optimizer: 2,
  budget: 2 ** 32,
  message: 'TinyChat fits',
  alternatives: [],
};
const info: HfFolderInfo = {
  name: 'TinyChat',
  architecture: 'LlamaForCausalLM',
  parameters: 60_700,
  layers: 2,
  hidden: 32,
  heads: 4,
  kvHeads: 2,
  vocab: 1461,
  maxContext: 128,
  context: 128,
  dtypes: ['F32'],
  weightBytes: 1 << 18,
  files: 5,
  tokenizer: true,
  chatTemplate: true,
  fit,
};
const picked = (change: Partial<HfFormFolder> = {}): HfFormFolder => ({
  folder: { name: 'TinyChat', files, ref },
  status: 'ready',
  info,
  error: null,
  ...change,
});
const ctx = (hf: HfFormFolder | undefined, runs: RunRecord[] = []): FormContext => ({
  datasets: [dataset],
  runs,
  templateMix: (s) => ({ ...DEFAULT_STAGE_TEMPLATES[s] }),
  webgpuProblem: null,
  hf,
});
const form = (f: Partial<TrainForm> = {}): TrainForm => ({ ...DEFAULT_FORM, datasetId: 'default', from: HF_START, steps: '6', evalEvery: '3', ...f });

describe('Train form: start from a Hugging Face folder', () => {
  it('a LoRA run: the folder sent with the job, rank and alpha in the spec, tokens up to the model context', () => {
    const { spec, errors } = buildSpec(form({ loraRank: '4', loraAlpha: '' }), ctx(picked()));
    expect(errors).toEqual({});
    expect(spec!.hf).toEqual({ files, memoryGiB: 4 });
    expect(spec!.train).toMatchObject({ stage: 'sft', lora: { rank: 4 }, T: 128 });
    expect(spec!.train.lora).not.toHaveProperty('alpha');
    expect(spec!.name).toBe('SFT · TinyChat LoRA r4 · Default');
    expect(buildSpec(form({ tokens: '200' }), ctx(picked())).errors.tokens).toBe('Tokens per sequence must be between 8 and 128; got 200.');
  });

  it('full fine-tuning: no lora; the memory budget as typed', () => {
    const { spec } = buildSpec(form({ tuning: 'full', memoryGiB: '1.5', stage: 'rl', tokens: '64', maxNewTokens: '8' }), ctx(picked()));
    expect(spec!.train.lora).toBeUndefined();
    expect(spec!.train.stage).toBe('rl');
    expect(spec!.hf!.memoryGiB).toBe(1.5);
  });

  it('refuses what cannot start: no folder, still read, unreadable, no chat template, too big, CPT, bad LoRA settings', () => {
    const err = (f: Partial<TrainForm>, hf?: HfFormFolder) => buildSpec(form(f), ctx(hf)).errors;
    expect(err({}, undefined).from).toMatch(/^Pick the Hugging Face folder to start from/);
    expect(err({}, picked({ status: 'inspecting', info: null })).from).toBe('TinyChat is still being read; start when its estimate is shown.');
    expect(err({}, picked({ status: 'error', info: null, error: 'TinyChat: has no config.json' })).from).toBe('TinyChat: has no config.json');
    expect(err({}, picked({ info: { ...info, chatTemplate: false } })).from).toMatch(/has no chat template/);
    expect(
      err({}, picked({ info: { ...info, fit: { ...fit, fits: false, message: 'TinyChat needs 2 MiB. Would fit instead: batch 1 (1 MiB).' } } })).from,
    ).toBe('Does not fit: TinyChat needs 2 MiB. Would fit instead: batch 1 (1 MiB).');
    expect(err({ stage: 'cpt' }, picked()).stage).toMatch(/SFT or RL/);
    expect(err({ loraRank: '0' }, picked()).loraRank).toBe('LoRA rank must be between 1 and 4096; got 0.');
    expect(err({ loraAlpha: '-1' }, picked()).loraAlpha).toMatch(/^LoRA alpha must be a number above 0/);
    expect(err({ memoryGiB: 'lots' }, picked()).memoryGiB).toMatch(/^GPU memory \(GiB\) must be a number above 0/);
    expect(err({ labels: 'rejection', teacher: 'local' }, picked()).from).toMatch(/local teacher samples from the starting checkpoint/);
  });

  it("a LoRA run's checkpoint needs its folder again, the same one", () => {
    const run: RunRecord = {
      id: 'r1',
      name: 'SFT lora',
      createdAt: 0,
      updatedAt: 0,
      stage: 'sft',
      spec: { kind: 'train', stage: 'sft', preset: 'mini', steps: 6, T: 64, lora: { rank: 4 } },
      data: { datasetId: 'default', name: 'Default', trajectories: 1400 },
      from: null,
      state: 'done',
      step: 6,
      checkpoints: { last: { key: 'k6', step: 6, size: 10, createdAt: 0 } },
      resumes: [],
      hf: { folder: ref, tuning: 'lora', memoryGiB: 2 },
    };
    const rl = { from: 'r1|last', stage: 'rl' as const, maxNewTokens: '8' };
    expect(buildSpec(form(rl), ctx(undefined, [run])).errors.from).toBe(
      'This adapter trains on the Hugging Face folder TinyChat, which this page does not keep after a reload: pick that folder again.',
    );
    const other = picked({ folder: { name: 'Other', files, ref: { ...ref, name: 'Other', config: 'c'.repeat(64) } } });
    expect(buildSpec(form(rl), ctx(other, [run])).errors.from).toBe('Other is not the folder this run trained on (TinyChat): config.json differs.');
    const { spec, errors } = buildSpec(form(rl), ctx(picked(), [run]));
    expect(errors).toEqual({});
    expect(spec!.hf).toEqual({ files, memoryGiB: 2 });
    expect(spec!.train).toMatchObject({ stage: 'rl', T: 64, lora: { rank: 4 } });
  });
});
