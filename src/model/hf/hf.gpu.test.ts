// The tiny Hugging Face Llama / Qwen2 / Qwen3 models (scripts/fixtures/hf_tiny_models.py) on our
// WGSL engine: logits within 1e-4 of transformers', the same greedy tokens through the KV-cache
// generator (grouped-query cache), and training gradients equal to the reference model's.
import { describe, expect, it } from 'vitest';
import { gpuRuntime } from '../../gpu/testing/runtime.ts';
import { GaussianRng } from '../../core/random.ts';
import { gptLossAndGrad, ReferenceTrainer } from '../../reference/gpt.ts';
import { ADAMW_DEFAULTS, lrAt, type LrSchedule } from '../../core/model/optim.ts';
import { GpuGenerator } from '../generate.ts';
import { GpuModel } from '../gpt.ts';
import { GpuTrainer } from '../trainer.ts';
import { loadTinyModel, maxRelError, TINY_ARCHS } from './tinyFixtures.ts';

describe('Hugging Face tiny models on the GPU', () => {
  for (const arch of TINY_ARCHS) {
    it(`${arch}: logits within 1e-4 of transformers', greedy tokens equal through the KV cache`, async () => {
      const rt = await gpuRuntime();
      const m = await loadTinyModel(arch);
      const c = m.hf.config;
      const T = m.inputIds.length;
      const model = await GpuModel.create(rt, c, { batch: 1, T });
      const gen = new GpuGenerator(rt, c, model.params, { maxSequences: 1, maxLength: T + m.greedy.length });
      try {
        model.setParams(m.params);
        const logits = await model.logitsOf({ B: 1, T, inputs: m.inputIds });
        const err = maxRelError(logits, m.logits);
        console.log(`[hf] ${arch}: max relative logit error ${err.toExponential(2)}`);
        expect(err).toBeLessThan(1e-4);
        const tokens: number[] = [];
        for await (const t of gen.generate(m.inputIds, { maxNewTokens: m.greedy.length, sampling: { temperature: 0 } })) tokens.push(t);
        expect(tokens).toEqual(m.greedy);
      } finally {
        gen.dispose();
        model.dispose();
      }
    });

    it(`${arch}: the training gradient equals the reference model's`, async () => {
      const rt = await gpuRuntime();
      const m = await loadTinyModel(arch);
      const c = m.hf.config;
      const B = 2;
      const T = 7;
      const rng = new GaussianRng(`batch/${arch}`);
      const ids = Array.from({ length: B * (T + 1) }, () => Math.floor(rng.uniform() * c.vocabSize));
      const inputs = ids.filter((_, i) => i % (T + 1) !== T);
      const targets = ids.filter((_, i) => i % (T + 1) !== 0);
      const weights = Float32Array.from({ length: B * T }, (_, i) => (i % 5 === 2 ? 0 : i % 3 === 0 ? 0.5 : 1));
      const batch = { B, T, inputs, targets, weights };
      const trainer = await GpuTrainer.create(rt, c, { batch: B, T });
      try {
        trainer.setParams(m.params);
        const got = await trainer.lossAndGradient(batch);
        const want = gptLossAndGrad(m.params, c, batch);
        expect(Math.abs(got.loss - want.loss) / want.loss).toBeLessThan(1e-4);
        const scale = want.grad.reduce((a, g) => Math.max(a, Math.abs(g)), 0);
        let worst = 0;
        let at = 0;
        want.grad.forEach((g, i) => {
          const e = Math.abs(got.grad[i] - g) / scale;
          if (e > worst) [worst, at] = [e, i];
        });
        const name = trainer.model.layout.tensors.find((t) => at >= t.offset && at < t.offset + t.size)?.name ?? 'padding';
        expect(worst, `${name}[${at}]: GPU ${got.grad[at]}, reference ${want.grad[at]}`).toBeLessThan(1e-4);
      } finally {
        trainer.dispose();
      }
    });
  }

  it('fine-tuning the tiny Llama follows the reference trainer and lowers the loss', async () => {
    const rt = await gpuRuntime();
    const m = await loadTinyModel('llama');
    const c = m.hf.config;
    const B = 2;
    const T = 8;
    // A repeating sequence the model can learn in a few steps.
    const text = Array.from({ length: B * (T + 1) }, (_, i) => (i * 7) % 13);
    const batch = { B, T, inputs: text.filter((_, i) => i % (T + 1) !== T), targets: text.filter((_, i) => i % (T + 1) !== 0) };
    const schedule: LrSchedule = { maxLr: 3e-3, minLr: 3e-4, warmupSteps: 1, totalSteps: 6 };
    const trainer = await GpuTrainer.create(rt, c, { batch: B, T });
    const ref = new ReferenceTrainer(c, m.params, ADAMW_DEFAULTS, schedule);
    try {
      trainer.setParams(m.params);
      const gpu: number[] = [];
      for (let step = 0; step < 6; step++) {
        gpu.push((await trainer.trainStep(batch, lrAt(step, schedule))).loss!);
        const cpu = ref.step(batch).loss;
        expect(Math.abs(gpu[step] - cpu) / cpu, `step ${step}: GPU ${gpu[step]}, reference ${cpu}`).toBeLessThan(1e-3);
      }
      expect(gpu.at(-1)!).toBeLessThan(gpu[0]);
    } finally {
      trainer.dispose();
    }
  });

  it("a GSPO-style group (shared prompt prefill, grouped-query caches) decodes transformers' greedy tokens in every sequence", async () => {
    const rt = await gpuRuntime();
    const m = await loadTinyModel('qwen3');
    const c = m.hf.config;
    const model = await GpuModel.create(rt, c, { batch: 1, T: 1 });
    const gen = new GpuGenerator(rt, c, model.params, { maxSequences: 3, maxLength: m.inputIds.length + m.greedy.length });
    try {
      model.setParams(m.params);
      const out = await gen.generateGroup(m.inputIds, 3, { maxNewTokens: m.greedy.length, sampling: { temperature: 0 } });
      expect(out).toEqual([m.greedy, m.greedy, m.greedy]);
    } finally {
      gen.dispose();
      model.dispose();
    }
  });
});
