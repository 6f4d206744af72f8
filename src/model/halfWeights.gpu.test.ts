// f16 weight storage (halfWeights.ts) on the GPU: the tiny Hugging Face Llama / Qwen2 / Qwen3 models
// held in f16 give transformers' greedy tokens (the f32 path's) and logits within f16 rounding of
// the f32 ones; against the f32 engine run on the same weights rounded to f16 they agree to f32
// accuracy (the storage changes the weights, not the arithmetic). Split over small bindings, with
// the GPT-2 block (learned positions, LayerNorm, biases), and as a LoRA base, likewise.
//
// Logits of an f16 model come from GpuModel (inference: f16 needs no adapter there); training on
// an f16 base is GpuTrainer with LoRA, the f16 weights frozen.
import { describe, expect, it } from 'vitest';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { presetConfig, type ModelConfig } from '../core/model/config.ts';
import { GpuGenerator } from './generate.ts';
import { GpuModel } from './gpt.ts';
import { GpuTrainer } from './trainer.ts';
import { initParams } from './init.ts';
import { initLora, loraLayout, loraSettings } from './lora.ts';
import { paramLayout } from '../core/model/params.ts';
import { ParamBuffers, planFor } from './shards.ts';
import type { WeightStorage } from './halfWeights.ts';
import { loadTinyModel, maxRelError, TINY_ARCHS } from './hf/tinyFixtures.ts';

/** Max |a − b| / max(|b|, 1) (maxRelError's measure, for two flat arrays). */
function rel(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]) / Math.max(Math.abs(b[i]), 1));
  return worst;
}

/** Logits [T, V] of `ids` with the weights held as `weights`. */
async function logits(
  rt: GpuRuntime,
  c: ModelConfig,
  params: Float32Array,
  ids: number[],
  weights: WeightStorage,
): Promise<{ logits: Float32Array; stored: Float32Array; bytes: number }> {
  const model = await GpuModel.create(rt, c, { batch: 1, T: ids.length, weights });
  try {
    model.setParams(params);
    return { logits: await model.logitsOf({ B: 1, T: ids.length, inputs: ids }), stored: await model.getParams(), bytes: model.params.bytes };
  } finally {
    model.dispose();
  }
}

async function greedy(rt: GpuRuntime, c: ModelConfig, params: Float32Array, prompt: number[], n: number, weights: WeightStorage): Promise<number[]> {
  const P = ParamBuffers.upload(rt, planFor(rt, paramLayout(c), weights), params, `test.${weights}`);
  const gen = new GpuGenerator(rt, c, P, { maxSequences: 1, maxLength: prompt.length + n });
  try {
    const out: number[] = [];
    for await (const t of gen.generate(prompt, { maxNewTokens: n, sampling: { temperature: 0 } })) out.push(t);
    return out;
  } finally {
    gen.dispose();
    P.release();
  }
}

/** Tolerance of f16 logits against f32 ones (maxRelError's measure): f16 keeps 11 significant bits, ~5e-4 relative per weight. */
const F16_LOGITS = 1e-2;

describe('f16 weights on the GPU', () => {
  for (const arch of TINY_ARCHS) {
    it(`tiny ${arch}: transformers' greedy tokens, logits within f16 rounding of f32, exact against the f32 engine on f16-rounded weights`, async () => {
      const rt = await gpuRuntime();
      const m = await loadTinyModel(arch);
      const c = m.hf.config;
      const f32 = await logits(rt, c, m.params, m.inputIds, 'f32');
      const f16 = await logits(rt, c, m.params, m.inputIds, 'f16');
      const rounded = await logits(rt, c, f16.stored, m.inputIds, 'f32');
      const vsHf = maxRelError(f16.logits, m.logits);
      const vsF32 = rel(f16.logits, f32.logits);
      const vsRounded = rel(f16.logits, rounded.logits);
      console.log(
        `[f16] tiny ${arch}: logits vs transformers ${vsHf.toExponential(2)} (f32: ${maxRelError(f32.logits, m.logits).toExponential(2)}), vs our f32 ${vsF32.toExponential(2)}, vs f32 on f16-rounded weights ${vsRounded.toExponential(2)}; weights on the GPU ${f16.bytes} B f16 vs ${f32.bytes} B f32 (${(f16.bytes / f32.bytes).toFixed(3)})`,
      );
      expect(vsF32).toBeLessThan(F16_LOGITS);
      expect(vsHf).toBeLessThan(F16_LOGITS);
      expect(vsRounded).toBeLessThan(1e-4);
      expect(f16.bytes).toBeLessThan(0.6 * f32.bytes);
      expect(await greedy(rt, c, m.params, m.inputIds, m.greedy.length, 'f16')).toEqual(m.greedy);
    });
  }

  it('tiny Qwen3 split over 600-byte bindings in f16: the same logits and greedy tokens as unsplit', async () => {
    const base = await gpuRuntime();
    const rt = base.withBindingLimit(600);
    const m = await loadTinyModel('qwen3');
    const c = m.hf.config;
    const plan = planFor(rt, paramLayout(c), 'f16');
    // A row of wte [V, d] is d/2 words: twice the rows of the f32 split fit one binding.
    const f32Plan = planFor(rt, paramLayout(c));
    expect(plan.pieces.get('wte')!.length).toBeLessThan(f32Plan.pieces.get('wte')!.length);
    expect(plan.pieces.get('h.0.mlp.c_fc.weight')!.length).toBeGreaterThan(1);
    for (const s of plan.shards) expect((s.end - s.start) * 4).toBeLessThanOrEqual(600);
    const split = await logits(rt, c, m.params, m.inputIds, 'f16');
    const whole = await logits(base, c, m.params, m.inputIds, 'f16');
    expect(rel(split.logits, whole.logits)).toBeLessThan(1e-5);
    expect(Array.from(split.stored)).toEqual(Array.from(whole.stored));
    expect(await greedy(rt, c, m.params, m.inputIds, m.greedy.length, 'f16')).toEqual(m.greedy);
  });

  it('GPT micro (learned positions, LayerNorm, biases, width 36, vocabulary 83): f16 is the f32 engine on f16-rounded weights', async () => {
    const rt = await gpuRuntime();
    const c = presetConfig('micro', { vocabSize: 83, contextLength: 12, dModel: 36, heads: 3 });
    const params = initParams(c, 4);
    const ids = [5, 80, 17, 0, 42, 42, 7];
    const f16 = await logits(rt, c, params, ids, 'f16');
    const rounded = await logits(rt, c, f16.stored, ids, 'f32');
    expect(rel(f16.logits, rounded.logits)).toBeLessThan(1e-4);
    // The norms, biases and learned positions are stored as they are; the matrices are rounded.
    const L = paramLayout(c);
    for (const name of ['wpe', 'h.0.ln_1.bias', 'h.1.mlp.c_fc.bias']) {
      const t = L.byName.get(name)!;
      expect(Array.from(f16.stored.subarray(t.offset, t.offset + t.size)), name).toEqual(Array.from(params.subarray(t.offset, t.offset + t.size)));
    }
    expect(await greedy(rt, c, params, ids, 4, 'f16')).toEqual(await greedy(rt, c, f16.stored, ids, 4, 'f32'));
  });

  it("a LoRA adapter trains on an f16 base: its gradient is the f32 engine's on the f16-rounded base", async () => {
    const rt = await gpuRuntime();
    const m = await loadTinyModel('llama');
    const c = m.hf.config;
    const layout = loraLayout(c, loraSettings(2));
    const adapter = initLora(layout, 3).map((v, i) => v + (i % 7) * 1e-3); // B not zero, so every path carries gradient
    const batch = { B: 1, T: 6, inputs: m.inputIds.slice(0, 6), targets: m.inputIds.slice(1, 7) };
    const run = async (weights: WeightStorage, params: Float32Array) => {
      const trainer = await GpuTrainer.create(rt, c, { batch: 1, T: 6, lora: layout, weights });
      try {
        trainer.setParams(params);
        trainer.model.setLora(adapter);
        return { ...(await trainer.lossAndGradient(batch)), stored: await trainer.model.getParams() };
      } finally {
        trainer.dispose();
      }
    };
    const f16 = await run('f16', m.params);
    const f32 = await run('f32', f16.stored);
    expect(Math.abs(f16.loss - f32.loss) / f32.loss).toBeLessThan(1e-5);
    expect(rel(f16.grad, f32.grad)).toBeLessThan(1e-4);
    await expect(GpuTrainer.create(rt, c, { batch: 1, T: 6, weights: 'f16' })).rejects.toThrow(/f16 weights are frozen, for a LoRA base/);
  });
});
