import { describe, expect, it } from 'vitest';
import { presetConfig } from './config.ts';
import { blockPlan } from './plan.ts';

describe('block plan', () => {
  it('chooses the block ops from the config', () => {
    const gpt2 = blockPlan(presetConfig('micro'));
    expect(gpt2).toEqual({ norm: 'layer', rope: false, mlp: 'gelu', heads: 2, kvHeads: 2, headSize: 16, C: 32, F: 128 });
    const rotary = blockPlan(presetConfig('micro', { norm: 'rmsnorm', positions: 'rope' }));
    expect([rotary.norm, rotary.rope]).toEqual(['rms', true]);
  });
});
