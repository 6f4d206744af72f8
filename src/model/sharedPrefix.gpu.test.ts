// The GSPO update pass with the group's prompt processed once (sharedPrefix.ts) gives the loss,
// the statistics and every parameter gradient of the unshared path (G full prompt + response
// rows, GpuTrainer.gspoGradient), on micro models with learned positions and with RoPE, and on
// Llama- and Qwen3-like micro models with grouped-query attention (kvHeads < heads).
import { describe, expect, it } from 'vitest';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { expectClose } from '../gpu/testing/compare.ts';
import { rlBatch } from '../train/stages/rl.ts';
import { presetConfig, type ModelConfig } from '../core/model/config.ts';
import { GpuTrainer } from './trainer.ts';
import { initParams } from './init.ts';
import { SharedPrefixGspo } from './sharedPrefix.ts';

const G = 3;
const Lmax = 5;
const PROMPT_MAX = 11;
const T = PROMPT_MAX + Lmax;
const PAD = 1;

function tokens(n: number, seed: number, V: number): number[] {
  return Array.from({ length: n }, (_, i) => (i * 37 + seed * 101 + ((i * i) % 13)) % V);
}

/** bindingLimit: the model's parameters split into buffers of at most this many bytes (shards.ts). */
async function compare(config: ModelConfig, prompt: number[], responses: number[][], bindingLimit?: number) {
  const base = await gpuRuntime();
  const rt = bindingLimit ? base.withBindingLimit(bindingLimit) : base;
  const rl = { Lmax, temperature: 0.7 };
  // No clipping of the gradient norm: gspoGradient reads the raw gradient either way, and the
  // gradNorm of a step must be that of the same raw gradient.
  const trainer = await GpuTrainer.create(rt, config, { batch: G, T, adamw: { maxGradNorm: 0 }, rl });
  const shared = await SharedPrefixGspo.create(trainer, { G, Lmax, promptMax: PROMPT_MAX, temperature: rl.temperature });
  try {
    trainer.setParams(initParams(config, 4));
    const batch = rlBatch(prompt, responses, T, Lmax, PAD);
    const group = { prompt, responses };
    expect(shared.lengths(group)).toEqual(batch.spans.map((s) => s.len));
    // π_old's log-probs: the same numbers by either path.
    const old = await trainer.responseLogprobs(batch);
    expectClose(await shared.responseLogprobs(group), old, 1e-5, 1e-5, 'response log-probs');
    // Mixed-sign advantages; an old policy that differs per sequence, so one sequence ratio sits
    // inside the clip range and the others outside it (above and below).
    const adv = [0.8, -1.1, 0.3];
    const moved = old.map((x, i) => x + [0, 4e-4, -4e-4][Math.floor(i / Lmax)]);
    for (const logpOld of ['current', moved] as const) {
      const want = await trainer.gspoGradient(batch, logpOld, adv);
      const got = await shared.gspoGradient(group, logpOld, adv);
      const what = logpOld === 'current' ? 'π_old = π_θ' : 'π_old moved';
      expect(got.loss, what).toBeCloseTo(want.loss, 6);
      expect(got.objective, what).toBeCloseTo(want.objective, 6);
      expect(got.clipFraction, what).toBe(want.clipFraction);
      expect(got.meanRatio, what).toBeCloseTo(want.meanRatio, 6);
      const maxAbs = want.grad.reduce((m, g) => Math.max(m, Math.abs(g)), 0);
      expect(maxAbs).toBeGreaterThan(0);
      expectClose(got.grad, want.grad, 2e-4 * maxAbs, 1e-3, `every parameter gradient (${what})`);
    }
    // A whole step: the same gradient norm, and the same gradient in AdamW's first moment
    // (m = (1 − β₁)·g after a first step; the weights themselves move by ≈ lr·sign(g), which
    // float noise flips where g is ~0, so they are not the thing to compare).
    const before = await trainer.model.getParams();
    const s1 = await shared.gspoStep(group, moved, adv, 1e-3, { gradNorm: true });
    const m1 = (await trainer.getOptimizerState()).m;
    trainer.setParams(before);
    const s2 = await trainer.gspoStep(batch, moved, adv, 1e-3, { gradNorm: true });
    const m2 = (await trainer.getOptimizerState()).m;
    expect(Math.abs(s1.gradNorm! - s2.gradNorm!) / s2.gradNorm!).toBeLessThan(1e-3);
    const maxM = m2.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    expect(maxM).toBeGreaterThan(0);
    expectClose(m1, m2, 2e-4 * maxM, 1e-3, 'AdamW first moment after one step');
  } finally {
    shared.dispose();
    trainer.dispose();
  }
}

describe('GSPO with the shared prompt prefix equals the unshared path', () => {
  it('micro (learned positions, LayerNorm, tied head): prompt shorter than the prefix buffer, one response cut at Lmax', async () => {
    const config = presetConfig('micro');
    const V = config.vocabSize;
    await compare(config, tokens(9, 1, V), [tokens(4, 2, V), tokens(7, 3, V), tokens(2, 4, V)]);
  });

  it('micro with RoPE, RMSNorm and an untied head: a one-token prompt (empty prefix) and a full-length one', async () => {
    const config = presetConfig('micro', { positions: 'rope', norm: 'rmsnorm', tiedEmbeddings: false });
    const V = config.vocabSize;
    await compare(config, tokens(PROMPT_MAX, 5, V), [tokens(5, 6, V), tokens(1, 7, V), tokens(3, 8, V)]);
    await compare(config, tokens(1, 9, V), [tokens(5, 10, V), tokens(5, 11, V), tokens(2, 12, V)]);
  });

  // Llama-like: RMSNorm, RoPE, SwiGLU, no biases, 4 query heads over 1 key/value head.
  const LLAMA: Partial<ModelConfig> = {
    positions: 'rope',
    norm: 'rmsnorm',
    tiedEmbeddings: false,
    heads: 4,
    kvHeads: 1,
    mlp: 'swiglu',
    mlpWidth: 24,
    qkvBias: false,
    projBias: false,
    mlpBias: false,
  };

  it('Llama-like micro with grouped-query attention (4 query heads, 1 key/value head)', async () => {
    expect(SharedPrefixGspo.supports(presetConfig('micro', LLAMA))).toBe(true);
    const config = presetConfig('micro', LLAMA);
    const V = config.vocabSize;
    await compare(config, tokens(8, 13, V), [tokens(5, 14, V), tokens(3, 15, V), tokens(6, 16, V)]);
  });

  it('Qwen3-like micro: 2 key/value heads for 4 query heads, q/k norm, head size ≠ dModel/heads, biased qkv', async () => {
    const config = presetConfig('micro', { ...LLAMA, kvHeads: 2, headDim: 16, qkNorm: true, qkvBias: true });
    const V = config.vocabSize;
    await compare(config, tokens(PROMPT_MAX, 17, V), [tokens(2, 18, V), tokens(5, 19, V), tokens(4, 20, V)]);
  });

  it('Qwen3-like micro with its parameters split over 3000-byte buffers (every matrix cut by rows)', async () => {
    const config = presetConfig('micro', { ...LLAMA, kvHeads: 2, headDim: 16, qkNorm: true, qkvBias: true });
    const V = config.vocabSize;
    await compare(config, tokens(7, 21, V), [tokens(5, 22, V), tokens(1, 23, V), tokens(4, 24, V)], 3000);
  });

  it('leaves no buffers behind', async () => {
    const rt = await gpuRuntime();
    expect(rt.stats().live).toBe(0);
  });
});
