// Fine-tuning a pretrained model from its Hugging Face folder (the tiny chat Llama of
// src/model/fixtures/hf/llama-chat, its tokenizer and chat template) through the pipeline: LoRA SFT
// lowers held-out loss, its checkpoint is a PEFT adapter, and a resumed run equals an
// uninterrupted one; full fine-tuning from the folder trains every weight.
import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../envs/generate.ts';
import type { Trajectory } from '../core/schema/types.ts';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { loadCheckpoint } from '../core/model/checkpoint.ts';
import { loadLoraCheckpoint } from '../model/hf/adapter.ts';
import { readHfBase } from '../model/hf/base.ts';
import { filesFolder } from '../model/hf/files.ts';
import { readSafetensors } from '../core/model/safetensors.ts';
import { chatWrap } from './chat.ts';
import { prepare, resolveSpec, runTraining, type TrainHost, type TrainSpec } from './pipeline.ts';
import { openHfBase } from '../model/hf/base.ts';

const data: Trajectory[] = generateTrajectories('terminal', 40, 3);
const FILES = ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];

async function tinyBase() {
  const fs = await import('node:fs/promises');
  const entries = await Promise.all(
    FILES.map(async (n) => ({
      path: `llama-chat/${n}`,
      file: new Blob([new Uint8Array(await fs.readFile(new URL(`../model/fixtures/hf/llama-chat/${n}`, import.meta.url)))]),
    })),
  );
  const limits = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 27, memoryBudget: 2 ** 30, shaderF16: false };
  return readHfBase(filesFolder(entries, 'llama-chat'), { limits, mode: { kind: 'lora', rank: 8 } }, 'llama-chat');
}

type Metric = { step: number; values: Record<string, number> };
function host(rt: TrainHost['rt'], metrics: Metric[], checkpoints: { step: number; bytes: Uint8Array }[] = []): TrainHost {
  return {
    rt,
    step: async () => {},
    log: () => {},
    metric: (step, values) => metrics.push({ step, values }),
    checkpoint: (bytes, info) => void (info.tag === 'last' && checkpoints.push({ step: info.step, bytes })),
  };
}
const evalLosses = (m: Metric[]) => m.filter((x) => 'eval_loss' in x.values).map((x) => x.values.eval_loss);

const SFT: TrainSpec = {
  kind: 'train',
  stage: 'sft',
  preset: 'micro',
  steps: 40,
  batch: 4,
  T: 96,
  evalEvery: 40,
  evalBatches: 3,
  evalJudgeSamples: 0,
  seed: 2,
  lr: { peak: 1e-2, min: 1e-3, warmup: 2 },
  lora: { rank: 8 },
};

describe('fine-tuning a Hugging Face folder', () => {
  it("samples are rendered in the model's chat format", async () => {
    const { base, params } = await tinyBase();
    const w = chatWrap(openHfBase(base).tokenizer);
    expect(w.sysOpen).toContain('<|start_header_id|>system<|end_header_id|>');
    expect(w.userToAssistant).toContain('<|start_header_id|>assistant<|end_header_id|>');
    expect(w.assistantClose).toContain('<|eot_id|>');
    const p = prepare(resolveSpec(SFT), data, undefined, { base, params });
    expect(p.config.vocabSize).toBe(1461);
    expect(p.lora!.layout.settings).toEqual({ rank: 8, alpha: 16, targets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] });
  });

  it('LoRA SFT on the tiny Llama lowers held-out loss; its checkpoint is a PEFT adapter', async () => {
    const rt = await gpuRuntime();
    const hfBase = await tinyBase();
    // Before: the adapter at its initial value (B = 0) is the base model; one step at lr 0 evaluates it.
    const before: Metric[] = [];
    await runTraining({ ...SFT, steps: 1, evalEvery: 1, lr: { peak: 1e-12, min: 1e-12, warmup: 0 } }, data, host(rt, before), undefined, { hfBase });
    const after: Metric[] = [];
    const r = await runTraining(SFT, data, host(rt, after), undefined, { hfBase });
    const [b, a] = [evalLosses(before)[0], evalLosses(after).at(-1)!];
    console.log(
      `[lora] tiny Llama, LoRA r 8 SFT ${SFT.steps} steps: held-out loss ${b.toFixed(3)} → ${a.toFixed(3)} (unigram ${after.find((x) => 'unigram_loss' in x.values)!.values.unigram_loss.toFixed(3)})`,
    );
    expect(a).toBeLessThan(b - 0.5);
    const file = readSafetensors(r.checkpoint);
    expect(file.tensors.map((t) => t.name)).toContain('base_model.model.model.layers.1.mlp.down_proj.lora_B.weight');
    expect(file.tensors.find((t) => t.name === 'base_model.model.model.layers.0.self_attn.k_proj.lora_A.weight')!.shape).toEqual([8, 32]);
    expect(file.tensors.find((t) => t.name === 'base_model.model.model.layers.0.self_attn.k_proj.lora_B.weight')!.shape).toEqual([16, 8]);
    const ck = loadLoraCheckpoint(r.checkpoint);
    expect(ck.step).toBe(SFT.steps);
    expect(ck.baseModel).toBe('llama-chat');
    expect(JSON.parse(file.metadata.adapter_config)).toMatchObject({ peft_type: 'LORA', task_type: 'CAUSAL_LM', r: 8, lora_alpha: 16 });
  });

  it('a resumed LoRA run equals the uninterrupted one', async () => {
    const rt = await gpuRuntime();
    const hfBase = await tinyBase();
    const spec = { ...SFT, steps: 6, evalEvery: 3 };
    const straight: Metric[] = [];
    const full = await runTraining(spec, data, host(rt, straight), undefined, { hfBase });
    const first: Metric[] = [];
    const saved: { step: number; bytes: Uint8Array }[] = [];
    await runTraining(spec, data, host(rt, first, saved), undefined, { hfBase });
    const resumed: Metric[] = [];
    const r = await runTraining(spec, data, host(rt, resumed), saved.find((c) => c.step === 3)!.bytes, { hfBase });
    const losses = (m: Metric[]) => m.filter((x) => x.step > 3 && 'loss' in x.values).map((x) => x.values.loss);
    expect(losses(resumed)).toEqual(losses(straight));
    expect(Array.from(loadLoraCheckpoint(r.checkpoint).lora)).toEqual(Array.from(loadLoraCheckpoint(full.checkpoint).lora));
  });

  it("full fine-tuning from the folder trains every weight and keeps the base's files", async () => {
    const rt = await gpuRuntime();
    const hfBase = await tinyBase();
    const m: Metric[] = [];
    const r = await runTraining({ ...SFT, steps: 3, evalEvery: 3, lora: undefined, lr: { peak: 1e-3, min: 1e-4, warmup: 0 } }, data, host(rt, m), undefined, {
      hfBase,
    });
    const ck = loadCheckpoint(r.checkpoint);
    expect(ck.params.length).toBe(hfBase.params.length);
    expect(ck.params.some((v, i) => v !== hfBase.params[i])).toBe(true);
    expect(JSON.parse(ck.extraMetadata!.hf_base).files['tokenizer.json']).toBe(hfBase.base.files['tokenizer.json']);
    expect(ck.optimizer).toBeDefined();
  });

  it('GSPO with LoRA from the folder: rollouts from the adapted model, the adapter alone moves', async () => {
    const rt = await gpuRuntime();
    const hfBase = await tinyBase();
    const m: Metric[] = [];
    const spec: TrainSpec = {
      kind: 'train',
      stage: 'rl',
      preset: 'micro',
      steps: 2,
      T: 96,
      seed: 2,
      evalEvery: 2,
      lr: { peak: 1e-3, min: 1e-4, warmup: 0 },
      rl: { groupSize: 4, promptsPerStep: 1, maxNewTokens: 8, evalSamples: 1 },
      lora: { rank: 4 },
    };
    // A toy reward that varies within a group, so advantages are nonzero.
    const reward = (prediction: string) => ({ reward: (prediction.length % 7) / 7 });
    const r = await runTraining(spec, data, { ...host(rt, m), reward }, undefined, { hfBase });
    const ck = loadLoraCheckpoint(r.checkpoint);
    const init = prepare(resolveSpec(spec), data, undefined, hfBase).lora!.params;
    expect(ck.step).toBe(2);
    expect(ck.lora.some((v, i) => v !== init[i])).toBe(true);
    expect(m.some((x) => 'reward' in x.values)).toBe(true);
  });
});
