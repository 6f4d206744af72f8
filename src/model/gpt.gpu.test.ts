// End-to-end parity: the GPU trainer follows the plain-TypeScript GPT (src/reference/gpt.ts) from
// the same initial weights on the same batches, step by step.
import { describe, expect, it } from 'vitest';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { expectClose } from '../gpu/testing/compare.ts';
import { logprobRef } from '../reference/logprob.ts';
import { ReferenceTrainer, gptLogits, gptLossAndGrad } from '../reference/gpt.ts';
import { toyBatch, toyCorpus } from '../reference/tinyData.ts';
import { presetConfig, type ModelConfig } from '../core/model/config.ts';
import { GpuTrainer } from './trainer.ts';
import { initParams } from './init.ts';
import { loadCheckpoint, saveCheckpoint } from '../core/model/checkpoint.ts';
import { ADAMW_DEFAULTS, lrAt, type LrSchedule } from '../core/model/optim.ts';

const corpus = toyCorpus();
const schedule: LrSchedule = { maxLr: 3e-3, minLr: 3e-4, warmupSteps: 3, totalSteps: 20 };

async function parity(config: ModelConfig, B: number, T: number, steps: number) {
  const rt = await gpuRuntime();
  const init = initParams(config, 1);
  const trainer = await GpuTrainer.create(rt, config, { batch: B, T });
  const ref = new ReferenceTrainer(config, init, ADAMW_DEFAULTS, schedule);
  try {
    trainer.setParams(init);
    const gpu: number[] = [];
    const cpu: number[] = [];
    for (let s = 0; s < steps; s++) {
      const batch = { ...toyBatch(corpus, B, T, s), weights: Float32Array.from({ length: B * T }, (_, i) => (i % 7 === 3 ? 0 : i % 5 === 0 ? 0.5 : 1)) };
      gpu.push((await trainer.trainStep(batch, lrAt(s, schedule))).loss!);
      cpu.push(ref.step(batch).loss);
    }
    return { gpu, cpu, trainer, final: await trainer.model.getParams(), refParams: ref.params };
  } finally {
    trainer.dispose();
  }
}

describe('GPU GPT vs reference', () => {
  it('first-step gradients match the reference (micro, learned positions, LayerNorm)', async () => {
    const rt = await gpuRuntime();
    const config = presetConfig('micro');
    const B = 2;
    const T = 16;
    const init = initParams(config, 3);
    const trainer = await GpuTrainer.create(rt, config, { batch: B, T, adamw: { maxGradNorm: 0 } });
    try {
      trainer.setParams(init);
      const batch = toyBatch(corpus, B, T, 5);
      // The optimizer clears gradients as it applies them, so compare through the norm it reads:
      // ‖g‖ over every parameter is sensitive to any wrong gradient element.
      const r = await trainer.trainStep(batch, 0, { loss: true, gradNorm: true });
      const want = gptLossAndGrad(init, config, batch);
      let sq = 0;
      for (const g of want.grad) sq += g * g;
      expect(r.loss!).toBeCloseTo(want.loss, 4);
      expect(Math.abs(r.gradNorm! - Math.sqrt(sq)) / Math.sqrt(sq)).toBeLessThan(1e-3);
    } finally {
      trainer.dispose();
    }
  });

  it('mask weights: the step follows Σ w·ℓ / lossNorm (not Σ w), the loss read is the weighted mean', async () => {
    const rt = await gpuRuntime();
    const config = presetConfig('micro');
    const B = 2;
    const T = 16;
    const init = initParams(config, 4);
    const trainer = await GpuTrainer.create(rt, config, { batch: B, T, adamw: { maxGradNorm: 0 } });
    try {
      const weights = Float32Array.from({ length: B * T }, (_, i) => (i < 5 ? 0 : i < 12 ? 0.05 : 1));
      for (const lossNorm of [undefined, 40]) {
        trainer.setParams(init);
        const batch = { ...toyBatch(corpus, B, T, 7), weights, lossNorm };
        const r = await trainer.trainStep(batch, 0, { loss: true, gradNorm: true });
        const want = gptLossAndGrad(init, config, batch);
        expect(want.lossNorm).toBe(lossNorm ?? 27);
        const norm = Math.sqrt(want.grad.reduce((n, g) => n + g * g, 0));
        expect(r.loss!).toBeCloseTo(want.loss, 4);
        expect(Math.abs(r.gradNorm! - norm) / norm).toBeLessThan(1e-3);
      }
    } finally {
      trainer.dispose();
    }
  });

  it('evalTokenLosses: the per-position losses weigh up to the batch loss, each row apart', async () => {
    const rt = await gpuRuntime();
    const config = presetConfig('micro');
    const B = 2;
    const T = 16;
    const init = initParams(config, 5);
    const trainer = await GpuTrainer.create(rt, config, { batch: B, T });
    try {
      trainer.setParams(init);
      const weights = Float32Array.from({ length: B * T }, (_, i) => (i % 4 === 0 ? 0 : i < T ? 0.5 : 1));
      const batch = { ...toyBatch(corpus, B, T, 3), weights };
      const { loss, nll } = await trainer.model.evalTokenLosses(batch);
      expect(loss).toBeCloseTo(await trainer.model.evalLoss(batch), 6);
      expect(nll).toHaveLength(B * T);
      const rowMean = (b: number) => {
        let sum = 0;
        let w = 0;
        for (let t = 0; t < T; t++) {
          sum += weights[b * T + t] * nll[b * T + t];
          w += weights[b * T + t];
        }
        return sum / w;
      };
      // Each row alone: the loss of a batch of that row only (the other row weighted 0).
      for (const b of [0, 1]) {
        const only = Float32Array.from(weights, (w, i) => (Math.floor(i / T) === b ? w : 0));
        expect(rowMean(b)).toBeCloseTo(await trainer.model.evalLoss({ ...batch, weights: only }), 4);
      }
      const all = weights.reduce((n, w, i) => n + w * nll[i], 0) / weights.reduce((n, w) => n + w, 0);
      expect(all).toBeCloseTo(loss, 4);
    } finally {
      trainer.dispose();
    }
  });

  it('20 training steps of micro follow the reference losses within 1e-3 relative', async () => {
    const { gpu, cpu, trainer } = await parity(presetConfig('micro'), 2, 32, 20);
    console.log(
      `[parity] micro: ${trainer.dispatchesPerStep} dispatches per step; loss ${gpu[0].toFixed(4)} → ${gpu.at(-1)!.toFixed(4)} (reference ${cpu[0].toFixed(4)} → ${cpu.at(-1)!.toFixed(4)})`,
    );
    for (let s = 0; s < gpu.length; s++) {
      expect(Math.abs(gpu[s] - cpu[s]) / cpu[s], `step ${s}: GPU ${gpu[s]}, reference ${cpu[s]}`).toBeLessThan(1e-3);
    }
    expect(gpu.at(-1)!).toBeLessThan(gpu[0]);
  });

  it('RoPE + RMSNorm + untied head also follow the reference', async () => {
    const config = presetConfig('micro', { positions: 'rope', norm: 'rmsnorm', tiedEmbeddings: false });
    const { gpu, cpu } = await parity(config, 2, 16, 6);
    for (let s = 0; s < gpu.length; s++) {
      expect(Math.abs(gpu[s] - cpu[s]) / cpu[s], `step ${s}: GPU ${gpu[s]}, reference ${cpu[s]}`).toBeLessThan(1e-3);
    }
  });

  it('GSPO: response log-probs match the reference, and a step gradient is the ratio-weighted log-prob gradient', async () => {
    const rt = await gpuRuntime();
    const config = presetConfig('micro');
    const B = 3;
    const T = 16;
    const Lmax = 8;
    const init = initParams(config, 9);
    const trainer = await GpuTrainer.create(rt, config, { batch: B, T, adamw: { maxGradNorm: 0 }, rl: { Lmax } });
    try {
      trainer.setParams(init);
      const base = toyBatch(corpus, B, T, 2);
      const spans = [
        { start: 4, len: 8 },
        { start: 7, len: 5 },
        { start: 15, len: 1 },
      ];
      const batch = { B, T, inputs: base.inputs, targets: base.targets, spans };
      const old = await trainer.responseLogprobs(batch);
      // Reference log-probs, sequence by sequence.
      const V = config.vocabSize;
      for (let i = 0; i < B; i++) {
        const logits = gptLogits(init, config, Array.from(base.inputs).slice(i * T, (i + 1) * T));
        for (let t = 0; t < spans[i].len; t++) {
          const row = logits.subarray((spans[i].start + t) * V, (spans[i].start + t + 1) * V);
          const max = Math.max(...row);
          const lse = max + Math.log(row.reduce((n, x) => n + Math.exp(x - max), 0));
          expect(old[i * Lmax + t]).toBeCloseTo(row[base.targets[i * T + spans[i].start + t]] - lse, 4);
        }
        for (let t = spans[i].len; t < Lmax; t++) expect(old[i * Lmax + t]).toBe(0);
      }
      // Mixed-sign advantages: a sign error anywhere in the chain shows element by element.
      const adv = [0.5, -1, 2];
      // With s = 1: ∇L = Σ_i A_i/(len_i·B) Σ_t ∇nll_t. The reference takes weights ≥ 0, so split
      // by the advantage's sign: ∇L = W₊·∇(weighted CE)₊ − W₋·∇(weighted CE)₋.
      const part = (sign: number) => {
        const weights = new Float32Array(B * T);
        spans.forEach((s, i) => {
          if (Math.sign(adv[i]) !== sign) return;
          for (let t = 0; t < s.len; t++) weights[i * T + s.start + t] = Math.abs(adv[i]) / (s.len * B);
        });
        const W = weights.reduce((a, b) => a + b, 0);
        return gptLossAndGrad(init, config, { ...base, weights, lossNorm: W }).grad.map((g) => sign * W * g);
      };
      const [pos, neg] = [part(1), part(-1)];
      const want = pos.map((g, j) => g + neg[j]);
      const maxAbs = want.reduce((m, g) => Math.max(m, Math.abs(g)), 0);
      const g = await trainer.gspoGradient(batch, old, adv);
      expect(g.objective).toBeCloseTo(1.5 / 3, 5);
      expectClose(g.grad, want, 1e-4 * maxAbs, 1e-3, 'GSPO gradient');
      const r = await trainer.gspoStep(batch, old, adv, 0, { gradNorm: true });
      expect(r.meanRatio).toBeCloseTo(1, 5);
      expect(r.clipFraction).toBe(0);
      expect(r.objective).toBeCloseTo(1.5 / 3, 5);
      const refNorm = Math.sqrt(want.reduce((n, x) => n + x * x, 0));
      expect(Math.abs(r.gradNorm! - refNorm) / refNorm).toBeLessThan(1e-3);
      // gspoGradient left no gradient behind: the step above applied exactly the reference one.
      const after = await trainer.gspoGradient(batch, old, adv);
      expectClose(after.grad, g.grad, 1e-6 * maxAbs, 1e-4, 'gradient after a step at lr 0');
      // π_old = the current weights: the step's own forward gives the old log-probs, same gradient.
      const cur = await trainer.gspoGradient(batch, 'current', adv);
      expect(cur.meanRatio).toBe(1);
      expect(cur.objective).toBeCloseTo(g.objective, 6);
      expectClose(cur.grad, g.grad, 1e-6 * maxAbs, 1e-4, "gradient with logpOld 'current'");
      const before = await trainer.model.getParams();
      trainer.setParams(before);
      trainer.step = 0;
      await trainer.gspoStep(batch, 'current', adv, 1e-3);
      const a1 = await trainer.model.getParams();
      trainer.setParams(before);
      trainer.step = 0;
      await trainer.gspoStep(batch, old, adv, 1e-3);
      expectClose(await trainer.model.getParams(), a1, 1e-6, 1e-4, "a step with logpOld 'current'");
    } finally {
      trainer.dispose();
    }
  });

  it('GSPO at rollout temperature τ: old and new log-probs are those of softmax(logits/τ), the distribution sampled from', async () => {
    const rt = await gpuRuntime();
    const config = presetConfig('micro');
    const B = 2;
    const T = 12;
    const Lmax = 6;
    const tau = 0.7;
    const init = initParams(config, 11);
    const trainer = await GpuTrainer.create(rt, config, { batch: B, T, adamw: { maxGradNorm: 0 }, rl: { Lmax, temperature: tau } });
    try {
      trainer.setParams(init);
      const base = toyBatch(corpus, B, T, 3);
      const spans = [
        { start: 3, len: 6 },
        { start: 8, len: 4 },
      ];
      const batch = { B, T, inputs: base.inputs, targets: base.targets, spans };
      const old = await trainer.responseLogprobs(batch);
      const V = config.vocabSize;
      for (let i = 0; i < B; i++) {
        const logits = gptLogits(init, config, Array.from(base.inputs).slice(i * T, (i + 1) * T));
        const rows = logits.subarray(spans[i].start * V, (spans[i].start + spans[i].len) * V);
        const targets = Array.from(base.targets).slice(i * T + spans[i].start, i * T + spans[i].start + spans[i].len);
        const tempered = logprobRef(rows, targets, spans[i].len, V, tau).logp;
        const plain = logprobRef(rows, targets, spans[i].len, V, 1).logp;
        expectClose(old.subarray(i * Lmax, i * Lmax + spans[i].len), tempered, 1e-4, 1e-4, `tempered log-probs of sequence ${i}`);
        // The tempered distribution is a different one: the check above would catch τ being ignored.
        expect(Math.max(...tempered.map((x, t) => Math.abs(x - plain[t])))).toBeGreaterThan(1e-2);
      }
      // The new policy is evaluated at the same τ: unchanged weights give ratio 1 exactly where a
      // τ-mismatch between old and new would not.
      const r = await trainer.gspoStep(batch, old, [1, -1], 0);
      expect(r.meanRatio).toBeCloseTo(1, 5);
      expect(r.clipFraction).toBe(0);
    } finally {
      trainer.dispose();
    }
  });

  it('a checkpoint saved mid-run resumes the same loss curve, and saves back byte for byte', async () => {
    const rt = await gpuRuntime();
    const config = presetConfig('micro');
    const B = 2;
    const T = 16;
    const batch = (s: number) => toyBatch(corpus, B, T, 100 + s);
    const a = await GpuTrainer.create(rt, config, { batch: B, T });
    const b = await GpuTrainer.create(rt, config, { batch: B, T });
    try {
      a.setParams(initParams(config, 5));
      for (let s = 0; s < 3; s++) await a.trainStep(batch(s), lrAt(s, schedule), {});
      const bytes = saveCheckpoint(await a.toCheckpoint({ extraMetadata: { stage: 'sft' } }));
      const ck = loadCheckpoint(bytes, { config });
      expect(saveCheckpoint(ck)).toEqual(bytes);
      b.loadCheckpoint(ck);
      expect(b.step).toBe(3);
      for (let s = 3; s < 6; s++) {
        const la = (await a.trainStep(batch(s), lrAt(s, schedule))).loss!;
        const lb = (await b.trainStep(batch(s), lrAt(s, schedule))).loss!;
        expect(lb).toBe(la);
      }
      expect(Array.from(await b.model.getParams())).toEqual(Array.from(await a.model.getParams()));
      const other = presetConfig('micro', { dModel: 64 });
      expect(() => loadCheckpoint(bytes, { config: other })).toThrow(/dModel/);
    } finally {
      a.dispose();
      b.dispose();
    }
  });
});
