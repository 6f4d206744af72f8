import { describe, expect, it } from 'vitest';
import { validateConfig, type ModelConfig } from '../core/model/config.ts';
import { GaussianRng } from '../core/random.ts';
import { initParams } from '../model/init.ts';
import { ADAMW_DEFAULTS } from '../core/model/optim.ts';
import { paramLayout, tensorSegments } from '../core/model/params.ts';
import { adamwStepRef, buildDecayMask } from './adamw.ts';
import { ReferenceTrainer, generateRef, gptLogits, gptLoss, gptLossAndGrad, weightedCrossEntropy, type TokenBatch } from './gpt.ts';
import { compactVocab, toyBatch, toyCorpus, unigramEntropy } from './tinyData.ts';

/** A micro-like model shrunk until finite differences over it take milliseconds. */
function tinyConfig(over: Partial<ModelConfig> = {}): ModelConfig {
  return validateConfig({
    vocabSize: 11,
    contextLength: 8,
    layers: 2,
    heads: 2,
    dModel: 8,
    mlpRatio: 2,
    norm: 'layernorm',
    positions: 'learned',
    tiedEmbeddings: true,
    normEps: 1e-5,
    ropeBase: 10000,
    ...over,
  });
}

/**
 * f64 parameters with every tensor well away from its initial value (norm gains ≠ 1, biases
 * ≠ 0, weights large enough that attention is not uniform), so every term of the backward
 * pass carries weight in the check.
 */
function randomParams(c: ModelConfig, seed: number): Float64Array {
  const L = paramLayout(c);
  const p = new Float64Array(L.totalSize);
  const rng = new GaussianRng(seed);
  for (const t of L.tensors) {
    for (let i = 0; i < t.size; i++) {
      p[t.offset + i] = t.kind === 'norm' && t.name.endsWith('weight') ? 1 + 0.3 * rng.normal() : 0.4 * rng.normal();
    }
  }
  return p;
}

function batchOf(c: ModelConfig, B: number, T: number, seed: number, weights?: number[]): TokenBatch {
  const rng = new GaussianRng(`batch${seed}`);
  const tok = () => Math.floor(rng.uniform() * c.vocabSize);
  return {
    B,
    T,
    inputs: Array.from({ length: B * T }, tok),
    targets: Array.from({ length: B * T }, tok),
    weights,
  };
}

const LLAMA: Partial<ModelConfig> = {
  norm: 'rmsnorm',
  positions: 'rope',
  dModel: 16,
  heads: 4,
  kvHeads: 2,
  mlp: 'swiglu',
  mlpWidth: 12,
  qkvBias: false,
  projBias: false,
  mlpBias: false,
};

const variants: [string, Partial<ModelConfig>][] = [
  ['layernorm + learned, tied', {}],
  ['rmsnorm + rope, tied', { norm: 'rmsnorm', positions: 'rope' }],
  ['layernorm + rope, untied', { positions: 'rope', tiedEmbeddings: false }],
  ['rmsnorm + learned, untied', { norm: 'rmsnorm', tiedEmbeddings: false }],
  // The Llama family (plan.ts): grouped-query attention (4 query heads on 2 k/v heads), SwiGLU,
  // scaled RoPE, biases only where the architecture has them, Qwen3's q/k head norms.
  [
    'Llama: GQA, SwiGLU, llama3 RoPE, no biases, tied',
    { ...LLAMA, ropeScaling: 'llama3', ropeFactor: 4, ropeLowFreqFactor: 1, ropeHighFreqFactor: 4, ropeOriginalContext: 8 },
  ],
  ['Qwen2: q/k/v biases, linear RoPE, untied', { ...LLAMA, qkvBias: true, tiedEmbeddings: false, ropeScaling: 'linear', ropeFactor: 2 }],
  ['Qwen3: q/k head norms, head size ≠ dModel/heads', { ...LLAMA, qkNorm: true, headDim: 8 }],
  ['Llama with every bias (attention_bias, mlp_bias)', { ...LLAMA, qkvBias: true, projBias: true, mlpBias: true }],
];

describe('reference GPT: gradients', () => {
  for (const [name, over] of variants) {
    it(`matches central finite differences (${name})`, () => {
      const c = tinyConfig(over);
      const L = paramLayout(c);
      const p = randomParams(c, 11);
      // Mixed weights, including zeros and a non-unit scale, as the SFT mask produces.
      const weights = [1, 0.5, 0, 1, 1, 0.1, 1, 0, 1, 1, 2, 1, 0.5, 1];
      const batch = batchOf(c, 2, 7, 3, weights);
      const { grad, loss, weightSum, lossNorm } = gptLossAndGrad(p, c, batch);
      expect(loss).toBeCloseTo(gptLoss(p, c, batch), 12);
      // The gradient is that of Σ w·CE / lossNorm (the weighted mean times Σ w / lossNorm).
      expect(lossNorm).toBe(weights.filter((w) => w > 0).length);
      const scale = weightSum / lossNorm;

      // One sample from every tensor (embedding rows that were actually looked up), plus extras.
      const rng = new GaussianRng('pick');
      const picks: number[] = [];
      for (const t of L.tensors) {
        let idx = t.offset + Math.floor(rng.uniform() * t.size);
        if (t.name === 'wte') idx = t.offset + Number(batch.inputs[4]) * c.dModel + 3;
        picks.push(idx);
      }
      for (let i = 0; i < 16; i++) {
        const t = L.tensors[Math.floor(rng.uniform() * L.tensors.length)];
        picks.push(t.offset + Math.floor(rng.uniform() * t.size));
      }
      expect(picks.length).toBe(L.tensors.length + 16);
      const eps = 1e-5;
      for (const i of picks) {
        const keep = p[i];
        p[i] = keep + eps;
        const up = gptLoss(p, c, batch);
        p[i] = keep - eps;
        const down = gptLoss(p, c, batch);
        p[i] = keep;
        const numeric = (scale * (up - down)) / (2 * eps);
        const where = L.tensors.find((t) => i >= t.offset && i < t.offset + t.size)!.name;
        expect(Math.abs(numeric - grad[i]), `${where}[${i}]: numeric ${numeric}, analytic ${grad[i]}`).toBeLessThan(1e-7 + 1e-5 * Math.abs(numeric));
      }
      // Padding between tensors never gets a gradient.
      const used = new Uint8Array(L.totalSize);
      for (const t of L.tensors) used.fill(1, t.offset, t.offset + t.size);
      expect(grad.every((g, i) => used[i] || g === 0)).toBe(true);
    });
  }

  it('ignores the targets of weight-0 tokens; the weighted mean is scale-free; W = 0 gives 0', () => {
    const c = tinyConfig({ positions: 'rope' });
    const p = randomParams(c, 5);
    const weights = [1, 0, 1, 0, 0, 1, 1, 1, 0, 1];
    const a = batchOf(c, 2, 5, 9, weights);
    const b = { ...a, targets: Array.from(a.targets, (t, i) => (weights[i] === 0 ? (Number(t) + 3) % c.vocabSize : t)) };
    const ga = gptLossAndGrad(p, c, a);
    const gb = gptLossAndGrad(p, c, b);
    expect(gb.loss).toBe(ga.loss);
    expect(Array.from(gb.grad)).toEqual(Array.from(ga.grad));
    // Padding ids outside the vocabulary are fine where the weight is 0.
    const padded = { ...a, targets: Array.from(a.targets, (t, i) => (weights[i] === 0 ? 99999 : t)) };
    expect(gptLossAndGrad(p, c, padded).loss).toBe(ga.loss);

    const doubled = gptLossAndGrad(p, c, { ...a, weights: weights.map((w) => 2 * w) });
    expect(doubled.loss).toBeCloseTo(ga.loss, 12);
    const zero = gptLossAndGrad(p, c, { ...a, weights: weights.map(() => 0) });
    expect(zero.loss).toBe(0);
    expect(zero.grad.every((g) => g === 0)).toBe(true);
    expect(() => gptLossAndGrad(p, c, { ...a, weights: weights.map(() => -1) })).toThrow(/loss weight -1 at row 0/);
    expect(() => gptLossAndGrad(p, c, { ...a, targets: Array.from(a.targets, () => 11), weights: undefined })).toThrow(/target 11 at row 0 is outside/);
  });
});

describe('reference GPT: forward and inference', () => {
  it('starts near ln(vocab) from GPT-2 init', () => {
    const c = tinyConfig({ vocabSize: 64, dModel: 16 });
    const loss = gptLoss(initParams(c, 0), c, batchOf(c, 2, 8, 1));
    expect(Math.abs(loss - Math.log(64))).toBeLessThan(0.05);
  });

  it('is causal: a prefix has the same logits alone and inside a longer sequence', () => {
    for (const [, over] of variants) {
      const c = tinyConfig(over);
      const p = randomParams(c, 2);
      const seq = [3, 1, 4, 1, 5, 9, 2, 6];
      const full = gptLogits(p, c, seq);
      const prefix = gptLogits(p, c, seq.slice(0, 5));
      for (let i = 0; i < prefix.length; i++) expect(prefix[i]).toBeCloseTo(full[i], 12);
    }
  });

  it('generates greedily (argmax of the recomputed logits) and reproducibly with a seed', () => {
    const c = tinyConfig({ positions: 'rope' });
    const p = randomParams(c, 4);
    const greedy = generateRef(p, c, [1, 2], { maxNewTokens: 5, temperature: 0 });
    const seq = [1, 2];
    for (const tok of greedy) {
      const logits = gptLogits(p, c, seq);
      const last = Array.from(logits.subarray((seq.length - 1) * c.vocabSize));
      expect(tok).toBe(last.indexOf(Math.max(...last)));
      seq.push(tok);
    }
    const s1 = generateRef(p, c, [1, 2], { maxNewTokens: 6, temperature: 1, seed: 7 });
    expect(generateRef(p, c, [1, 2], { maxNewTokens: 6, temperature: 1, seed: 7 })).toEqual(s1);
    expect(() => generateRef(p, c, [1, 2, 3], { maxNewTokens: 6, temperature: 0 })).toThrow(/exceed contextLength 8/);
  });
});

describe('reference GPT: optimizer', () => {
  it('AdamW: bias-corrected first step, decay on matrices only, global clipping', () => {
    const c = tinyConfig();
    const L = paramLayout(c);
    const p = new Float32Array(L.totalSize);
    for (const t of L.tensors) p.fill(0.5, t.offset, t.offset + t.size);
    const g = new Float64Array(L.totalSize);
    for (const t of L.tensors) g.fill(0.25, t.offset, t.offset + t.size);
    const m = new Float32Array(L.totalSize);
    const v = new Float32Array(L.totalSize);
    const o = { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, maxGradNorm: 1 };
    const mask = buildDecayMask(tensorSegments(L), L.totalSize);
    const { norm: gradNorm, scale: clipScale } = adamwStepRef(p, g, m, v, mask, o, 0, 0.01);
    expect(gradNorm).toBeCloseTo(0.25 * Math.sqrt(L.paramCount), 9);
    expect(clipScale).toBeCloseTo(1 / (gradNorm + 1e-6), 12);
    // Step 1: m̂ = g', v̂ = g'², so the update is lr·g'/(|g'| + eps) ≈ lr, whatever the clip.
    const matrix = L.blocks[0].fcWeight.offset;
    const biasAt = L.blocks[0].fcBias!.offset;
    expect(p[biasAt]).toBeCloseTo(0.5 - 0.01, 6);
    expect(p[matrix]).toBeCloseTo(0.5 - 0.01 * 0.1 * 0.5 - 0.01, 6);
    expect(p[L.wte.offset]).toBeCloseTo(0.49, 6); // embeddings are not decayed
    expect(m[biasAt]).toBeCloseTo(0.1 * 0.25 * clipScale, 9);
    expect(p[L.wte.offset + L.wte.size]).toBe(0); // padding stays 0
  });
});

describe('reference GPT: learning', () => {
  it('learns a repetitive toy corpus to well below the unigram baseline (< 0.2 × entropy in 250 steps; it reaches ≈ 0.12)', () => {
    const { tokens, vocab } = compactVocab(toyCorpus());
    const baseline = unigramEntropy(tokens); // ≈ 2.33 nats over 14 symbols
    const c = tinyConfig({ vocabSize: vocab.length, contextLength: 16, dModel: 16, mlpRatio: 4 });
    const trainer = new ReferenceTrainer(c, initParams(c, 1), ADAMW_DEFAULTS, { maxLr: 1e-2, minLr: 1e-3, warmupSteps: 20, totalSteps: 250 });
    const losses: number[] = [];
    for (let i = 0; i < 250; i++) losses.push(trainer.step(toyBatch(tokens, 4, 16, i)).loss);
    const final = losses.slice(-10).reduce((a, b) => a + b, 0) / 10;
    expect(losses[0]).toBeGreaterThan(0.9 * Math.log(vocab.length));
    expect(final).toBeLessThan(0.2 * baseline);
  });
});

describe('reference GPT: the loss follows the cross-entropy kernel twin', () => {
  // Every other op of the reference GPT is a kernel twin; its loss is written separately.
  const B = 2;
  const T = 5;
  const rows = B * T;
  const rng = new GaussianRng('conv');
  const rand = (n: number) => Float64Array.from({ length: n }, () => rng.normal());
  const close = (a: ArrayLike<number>, b: ArrayLike<number>, tol: number) => {
    expect(a.length).toBe(b.length);
    for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i]), `at ${i}: ${a[i]} vs ${b[i]}`).toBeLessThan(tol);
  };

  it('weighted cross-entropy matches xent.ts', async () => {
    const { xentRef, weightSum, targetCount } = await import('./xent.ts');
    const V = 7;
    const logits = rand(rows * V);
    const targets = Array.from({ length: rows }, (_, i) => (i * 3) % V);
    const weights = [1, 0, 0.5, 1, 1, 0.1, 0, 1, 2, 1];
    const mine = weightedCrossEntropy(logits, { B, T, inputs: targets, targets, weights }, V);
    const theirs = xentRef(logits, targets, weights, rows, V, targetCount(targets, weights, V));
    expect(mine.objective).toBeCloseTo(theirs.loss, 6);
    expect(mine.loss).toBeCloseTo(theirs.weightedSum / weightSum(targets, weights, V), 6);
    close(mine.dlogits, theirs.dlogits!, 1e-7);
  });
});

describe('reference GPT: the micro preset (the GPU parity model)', () => {
  it('takes a few AdamW steps on byte-level toy text and its loss falls', async () => {
    const { PRESETS } = await import('../core/model/config.ts');
    const c = PRESETS.micro;
    const tokens = toyCorpus();
    const trainer = new ReferenceTrainer(c, initParams(c, 0), ADAMW_DEFAULTS, { maxLr: 3e-3, minLr: 3e-4, warmupSteps: 2, totalSteps: 20 });
    const batch = toyBatch(tokens, 2, 32, 0);
    const reports = Array.from({ length: 6 }, () => trainer.step(batch));
    expect(reports[0].loss).toBeCloseTo(Math.log(256), 1);
    expect(reports[5].loss).toBeLessThan(reports[0].loss - 0.3);
    expect(reports.map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

describe('tiny data', () => {
  it('cuts batches from inside the corpus, targets shifted by one, reproducibly', () => {
    const tokens = toyCorpus();
    for (let i = 0; i < 50; i++) {
      const b = toyBatch(tokens, 3, 16, i, 5);
      expect(Array.from(b.inputs).every((t) => t >= 32 && t < 128)).toBe(true);
      for (let r = 0; r < 3; r++) expect(Array.from(b.inputs).slice(r * 16 + 1, r * 16 + 16)).toEqual(Array.from(b.targets).slice(r * 16, r * 16 + 15));
      expect(toyBatch(tokens, 3, 16, i, 5)).toEqual(b);
    }
  });
});
