import { describe, expect, it } from 'vitest';
import { presetConfig, ropeFrequencies } from './config.ts';
import { blockPlan } from './plan.ts';

describe('block plan', () => {
  it('chooses the block ops from the config', () => {
    const gpt2 = blockPlan(presetConfig('micro'));
    expect(gpt2).toEqual({
      norm: 'layer',
      rope: false,
      mlp: 'gelu',
      heads: 2,
      kvHeads: 2,
      headSize: 16,
      C: 32,
      F: 128,
      qDim: 32,
      kvDim: 32,
      qkvDim: 96,
      upDim: 128,
      qkvBias: true,
      projBias: true,
      mlpBias: true,
      qkNorm: false,
      ropeFreqs: new Float64Array(0),
    });
    const rotary = blockPlan(presetConfig('micro', { norm: 'rmsnorm', positions: 'rope' }));
    expect([rotary.norm, rotary.rope]).toEqual(['rms', true]);
    expect(Array.from(rotary.ropeFreqs)).toEqual(Array.from({ length: 8 }, (_, i) => 10000 ** (-i / 8)));
  });

  it('lays out grouped-query attention, SwiGLU and the Qwen3 head norms', () => {
    const qwen3 = blockPlan(
      presetConfig('micro', {
        norm: 'rmsnorm',
        positions: 'rope',
        heads: 4,
        kvHeads: 2,
        headDim: 12,
        mlp: 'swiglu',
        mlpWidth: 40,
        qkvBias: false,
        projBias: false,
        mlpBias: false,
        qkNorm: true,
      }),
    );
    expect(qwen3).toMatchObject({ heads: 4, kvHeads: 2, headSize: 12, qDim: 48, kvDim: 24, qkvDim: 96, F: 40, upDim: 80, qkNorm: true, qkvBias: false });
  });

  it('scales RoPE frequencies as Hugging Face does', () => {
    const base = { ropeBase: 10000 };
    const plain = ropeFrequencies(base, 16);
    expect(Array.from(ropeFrequencies({ ...base, ropeScaling: 'linear', ropeFactor: 4 }, 16))).toEqual(Array.from(plain, (f) => f / 4));
    // llama3: wavelengths under original/high (8) unchanged, over original/low (32) divided by
    // the factor, in between interpolated.
    const l3 = ropeFrequencies({ ...base, ropeScaling: 'llama3', ropeFactor: 8, ropeLowFreqFactor: 1, ropeHighFreqFactor: 4, ropeOriginalContext: 32 }, 16);
    plain.forEach((f, i) => {
      const wl = (2 * Math.PI) / f;
      if (wl < 8) expect(l3[i]).toBe(f);
      else if (wl > 32) expect(l3[i]).toBe(f / 8);
      else {
        const s = (32 / wl - 1) / 3;
        expect(l3[i]).toBeCloseTo((1 - s) * (f / 8) + s * f, 15);
      }
    });
    expect(new Set(Array.from(plain, (f) => Math.sign((2 * Math.PI) / f - 8) + Math.sign((2 * Math.PI) / f - 32))).size).toBe(3);
  });
});
