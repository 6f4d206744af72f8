// Parameters split over several buffers (shards.ts) give what one flat buffer gives: the same
// logits, greedy tokens, gradients and training steps. The runtime's binding limit is lowered
// (GpuRuntime.withBindingLimit) so that tiny models take the split path a 0.5B model takes on a
// real adapter: the token table, the LM head and the block matrices cut by rows into pieces of a
// few rows (the last piece shorter), packed vectors in shards of their own.
import { describe, expect, it } from 'vitest';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { GpuRuntime } from '../gpu/runtime.ts';
import { GaussianRng } from '../core/random.ts';
import { presetConfig, type ModelConfig } from '../core/model/config.ts';
import { GpuGenerator } from './generate.ts';
import { GpuModel, type ModelBatch } from './gpt.ts';
import { GpuTrainer } from './trainer.ts';
import { initParams } from './init.ts';
import { paramLayout } from '../core/model/params.ts';
import { planFor } from './shards.ts';
import { lrAt, type LrSchedule } from '../core/model/optim.ts';
import { loadTinyModel, maxRelError, TINY_ARCHS } from './hf/tinyFixtures.ts';

const schedule: LrSchedule = { maxLr: 3e-3, minLr: 3e-4, warmupSteps: 1, totalSteps: 6 };

/** Max |a − b| over max |b| (1 when b is all zeros). */
function relDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  let scale = 0;
  for (let i = 0; i < b.length; i++) {
    worst = Math.max(worst, Math.abs(a[i] - b[i]));
    scale = Math.max(scale, Math.abs(b[i]));
  }
  return worst / (scale || 1);
}

function randomBatch(c: ModelConfig, B: number, T: number, seed: string): ModelBatch {
  const rng = new GaussianRng(seed);
  const ids = Array.from({ length: B * (T + 1) }, () => Math.floor(rng.uniform() * c.vocabSize));
  const weights = Float32Array.from({ length: B * T }, (_, i) => (i % 5 === 2 ? 0 : i % 3 === 0 ? 0.5 : 1));
  return { B, T, inputs: ids.filter((_, i) => i % (T + 1) !== T), targets: ids.filter((_, i) => i % (T + 1) !== 0), weights };
}

/** A model on one flat buffer and the same model split at `limit` bytes per binding. */
async function pair(rt: GpuRuntime, c: ModelConfig, params: Float32Array, limit: number, B: number, T: number) {
  const whole = await GpuTrainer.create(rt, c, { batch: B, T });
  const split = await GpuTrainer.create(rt.withBindingLimit(limit), c, { batch: B, T });
  whole.setParams(params);
  split.setParams(params);
  const plan = split.model.shards;
  expect(whole.model.shards.shards).toHaveLength(1);
  for (const s of plan.shards) expect((s.end - s.start) * 4).toBeLessThanOrEqual(limit);
  for (const name of [(split.model.layout.lmHead ?? split.model.layout.wte).name, 'h.0.mlp.c_fc.weight', 'h.1.attn.c_attn.weight']) {
    expect(plan.pieces.get(name)!.length, `${name} is split`).toBeGreaterThan(1);
  }
  // The shards hold the flat layout exactly.
  expect(Array.from(await split.model.getParams())).toEqual(Array.from(params));
  return { whole, split, dispose: () => (whole.dispose(), split.dispose()) };
}

/** Logits, the gradient and three training steps of the split model against the whole one. */
async function checkSplitTraining(rt: GpuRuntime, c: ModelConfig, params: Float32Array, limit: number, what: string) {
  const B = 2;
  const T = Math.min(7, c.contextLength);
  const { whole, split, dispose } = await pair(rt, c, params, limit, B, T);
  try {
    const batch = randomBatch(c, B, T, `split/${what}`);
    const logitsErr = relDiff(await split.model.logitsOf(batch), await whole.model.logitsOf(batch));
    const a = await split.lossAndGradient(batch);
    const b = await whole.lossAndGradient(batch);
    const gradErr = relDiff(a.grad, b.grad);
    console.log(
      `[shards] ${what}: ${split.model.shards.shards.length} shards of ≤ ${limit} B, ${split.dispatchesPerStep} dispatches per step (${whole.dispatchesPerStep} unsplit); logits ${logitsErr.toExponential(2)}, gradient ${gradErr.toExponential(2)} (relative to the largest)`,
    );
    expect(logitsErr).toBeLessThan(1e-5);
    expect(Math.abs(a.loss - b.loss) / b.loss).toBeLessThan(1e-5);
    expect(gradErr).toBeLessThan(1e-5);
    for (let step = 0; step < 3; step++) {
      const [x, y] = [
        await split.trainStep(batch, lrAt(step, schedule), { loss: true, gradNorm: true }),
        await whole.trainStep(batch, lrAt(step, schedule), { loss: true, gradNorm: true }),
      ];
      expect(Math.abs(x.loss! - y.loss!) / y.loss!, `step ${step} loss`).toBeLessThan(1e-5);
      expect(Math.abs(x.gradNorm! - y.gradNorm!) / y.gradNorm!, `step ${step} gradient norm`).toBeLessThan(1e-5);
    }
    expect(relDiff(await split.model.getParams(), await whole.model.getParams())).toBeLessThan(1e-5);
    const opt = [await split.getOptimizerState(), await whole.getOptimizerState()];
    expect(relDiff(opt[0].v, opt[1].v)).toBeLessThan(1e-4);
  } finally {
    dispose();
  }
}

async function greedy(gen: GpuGenerator, prompt: number[], n: number): Promise<number[]> {
  const out: number[] = [];
  for await (const t of gen.generate(prompt, { maxNewTokens: n, sampling: { temperature: 0 } })) out.push(t);
  return out;
}

describe('parameters split over buffers under the binding limit', () => {
  it('GPT micro (learned positions, LayerNorm, tied head, vocab 83): same logits, gradient and training steps', async () => {
    const rt = await gpuRuntime();
    const c = presetConfig('micro', { vocabSize: 83, contextLength: 12 });
    // 3072 B: c_fc [32, 128] in pieces of 4 rows, wte [83, 32] of 24 (the last 11), wpe [12, 32] whole.
    await checkSplitTraining(rt, c, initParams(c, 5), 3072, 'micro');
  });

  it('GPT micro: greedy tokens through the KV cache are the same with the split parameters', async () => {
    const rt = await gpuRuntime();
    const c = presetConfig('micro', { vocabSize: 83, contextLength: 12, positions: 'rope', norm: 'rmsnorm', tiedEmbeddings: false });
    const params = initParams(c, 6);
    const { whole, split, dispose } = await pair(rt, c, params, 3072, 1, 1);
    const [g1, g2] = [
      new GpuGenerator(rt, c, whole.model.params, { maxSequences: 2, maxLength: 12 }),
      new GpuGenerator(split.rt, c, split.model.params, { maxSequences: 2, maxLength: 12 }),
    ];
    try {
      const prompt = [5, 80, 17, 0, 42];
      expect(await greedy(g2, prompt, 7)).toEqual(await greedy(g1, prompt, 7));
      const group = { maxNewTokens: 6, sampling: { temperature: 0.9, seed: 3 } };
      expect(await g2.generateGroup(prompt, 2, group)).toEqual(await g1.generateGroup(prompt, 2, group));
    } finally {
      g1.dispose();
      g2.dispose();
      dispose();
    }
  });

  for (const arch of TINY_ARCHS) {
    it(`tiny ${arch}: transformers' logits and greedy tokens with every matrix split (600 B bindings)`, async () => {
      const rt = (await gpuRuntime()).withBindingLimit(600);
      const m = await loadTinyModel(arch);
      const c = m.hf.config;
      const T = m.inputIds.length;
      const model = await GpuModel.create(rt, c, { batch: 1, T });
      const gen = new GpuGenerator(rt, c, model.params, { maxSequences: 1, maxLength: T + m.greedy.length });
      try {
        expect(model.shards.pieces.get('wte')!.length).toBe(16);
        expect(model.shards.pieces.get('h.0.mlp.c_fc.weight')!.length).toBeGreaterThanOrEqual(c.dModel / 2);
        model.setParams(m.params);
        const err = maxRelError(await model.logitsOf({ B: 1, T, inputs: m.inputIds }), m.logits);
        console.log(`[shards] tiny ${arch} split into ${model.shards.shards.length} shards: max relative logit error ${err.toExponential(2)}`);
        expect(err).toBeLessThan(1e-4);
        expect(await greedy(gen, m.inputIds, m.greedy.length)).toEqual(m.greedy);
      } finally {
        gen.dispose();
        model.dispose();
      }
    });
  }

  it('tiny Llama: the split model trains as the whole one', async () => {
    const rt = await gpuRuntime();
    const m = await loadTinyModel('llama');
    await checkSplitTraining(rt, m.hf.config, m.params, 600, 'tiny llama');
  });

  it("the binding limit is the device's, lowered by the runtime option or withBindingLimit", async () => {
    const base = await gpuRuntime();
    const { maxStorageBufferBindingSize, maxBufferSize } = base.report.limits;
    expect(base.bindingLimit).toBe(Math.min(maxStorageBufferBindingSize, maxBufferSize));
    expect(base.withBindingLimit(1002).bindingLimit).toBe(1000);
    expect(base.withBindingLimit(600).withBindingLimit(4000).bindingLimit).toBe(600);
    expect(base.withBindingLimit(2 ** 52).bindingLimit).toBe(base.bindingLimit);
    expect(() => base.withBindingLimit(2)).toThrow(/at least 4 bytes, got 2/);
    await expect(GpuRuntime.create({ maxBindingBytes: 0.5 })).rejects.toThrow(/maxBindingBytes must be an integer of at least 4 bytes, got 0.5/);
    const rt = await GpuRuntime.create({ maxBindingBytes: 3072 });
    try {
      expect(rt.bindingLimit).toBe(3072);
      // The plan a model on this runtime takes (GpuModel.create plans with planFor, as the split
      // models above show), without compiling a model's pipelines on a second device.
      expect(planFor(rt, paramLayout(presetConfig('micro', { vocabSize: 83, contextLength: 12 }))).pieces.get('wte')).toHaveLength(4);
    } finally {
      rt.dispose();
    }
  });

  it('a vector or a row larger than the limit is refused, naming the tensor', async () => {
    const rt = (await gpuRuntime()).withBindingLimit(64);
    await expect(GpuModel.create(rt, presetConfig('micro'), { batch: 1, T: 4 })).rejects.toThrow(
      /a row of tensor 'wte' \[256, 32\] \(32768 bytes\) is 128 bytes, more than one storage binding \(64 bytes\)/,
    );
  });
});
