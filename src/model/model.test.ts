import { describe, expect, it } from 'vitest';
import { ModelConfigError, PRESETS, paramCount, presetConfig, trainStepFlops, validateConfig, type ModelConfig } from '../core/model/config.ts';
import { PARAM_ALIGN, decayMask, paramByName, paramLayout } from '../core/model/params.ts';
import { GaussianRng } from '../core/random.ts';
import { initParams } from './init.ts';

describe('config', () => {
  it('presets are valid and sized as documented', () => {
    const counts = Object.fromEntries(Object.entries(PRESETS).map(([k, c]) => [k, paramCount(c)]));
    expect(counts.micro).toBe(35712);
    expect(counts.bench).toBe(120576);
    expect(counts.mini).toBeGreaterThan(0.8e6);
    expect(counts.mini).toBeLessThan(1.5e6);
    expect(counts.small).toBeGreaterThan(5e6);
    expect(counts.small).toBeLessThan(20e6);
    for (const c of Object.values(PRESETS)) expect(() => validateConfig({ ...c })).not.toThrow();
  });

  it('names the bad field', () => {
    const bad = (o: Partial<ModelConfig>) => () => validateConfig({ ...PRESETS.micro, ...o });
    expect(bad({ dModel: 30, heads: 4 })).toThrow(/dModel: must be divisible by heads \(4\)/);
    expect(bad({ dModel: 512, heads: 2 })).toThrow(/heads: head size dModel\/heads = 256 exceeds 128/);
    expect(bad({ vocabSize: 0 })).toThrow(ModelConfigError);
    expect(bad({ vocabSize: 0 })).toThrow(/vocabSize/);
    expect(bad({ norm: 'batchnorm' as never })).toThrow(/norm: must be 'layernorm' or 'rmsnorm'/);
    expect(bad({ positions: 'rope', dModel: 30, heads: 2 })).toThrow(/even head size/);
    expect(bad({ mlpRatio: 0.3 })).toThrow(/mlpRatio/);
    expect(bad({ normEps: 0 })).toThrow(/normEps/);
    expect(() => presetConfig('nope' as never)).toThrow(/unknown preset/);
  });

  it('counts training FLOPs as 3× forward, ≈ 6·N·tokens for the matmuls', () => {
    const c = PRESETS.bench;
    const f = trainStepFlops(c, 8, 64);
    const nonEmbedding = paramCount(c) - c.vocabSize * c.dModel - c.contextLength * c.dModel;
    // Matmul weights (biases/norms aside) plus the tied head, 6 FLOPs each per token, plus attention.
    expect(f).toBeGreaterThan(6 * nonEmbedding * 8 * 64);
    expect(f).toBeLessThan(6 * (nonEmbedding + c.vocabSize * c.dModel) * 8 * 64 * 1.3);
  });
});

describe('params layout', () => {
  for (const [name, c] of Object.entries(PRESETS)) {
    it(`${name}: aligned, non-overlapping, counted, one decay range`, () => {
      const L = paramLayout(c);
      expect(L.paramCount).toBe(paramCount(c));
      let end = 0;
      for (const t of L.tensors) {
        expect(t.offset % PARAM_ALIGN).toBe(0);
        expect(t.offset).toBeGreaterThanOrEqual(end);
        expect(t.size).toBe(t.shape.reduce((a, b) => a * b, 1));
        end = t.offset + t.size;
      }
      expect(L.totalSize).toBeGreaterThanOrEqual(end);
      expect(L.totalSize % PARAM_ALIGN).toBe(0);
      expect(L.decaySegments).toHaveLength(1);
      const mask = decayMask(L);
      for (const t of L.tensors) {
        expect(mask[t.offset]).toBe(t.decay ? 1 : 0);
        expect(t.decay).toBe(t.kind === 'matrix');
      }
    });
  }

  it('has GPT-2 names and shapes; variants add and drop tensors', () => {
    const L = paramLayout(PRESETS.micro);
    expect(paramByName(L, 'h.1.attn.c_attn.weight').shape).toEqual([32, 96]);
    expect(paramByName(L, 'h.0.mlp.c_proj.weight').shape).toEqual([128, 32]);
    expect(paramByName(L, 'wpe').shape).toEqual([64, 32]);
    expect(paramByName(L, 'ln_f.bias').decay).toBe(false);
    expect(() => paramByName(L, 'lm_head.weight')).toThrow(/no parameter named 'lm_head.weight'/);
    const R = paramLayout({ ...PRESETS.micro, norm: 'rmsnorm', positions: 'rope', tiedEmbeddings: false });
    expect(R.byName.has('wpe')).toBe(false);
    expect(R.byName.has('h.0.ln_1.bias')).toBe(false);
    expect(paramByName(R, 'lm_head.weight')).toMatchObject({ shape: [256, 32], decay: true });
    expect(R.decaySegments).toHaveLength(1);
  });
});

describe('init', () => {
  it('is byte-identical for a seed and different across seeds', () => {
    const a = initParams(PRESETS.micro, 7);
    const b = initParams(PRESETS.micro, 7);
    const c = initParams(PRESETS.micro, 8);
    expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).toBe(true);
    expect(Buffer.from(a.buffer).equals(Buffer.from(c.buffer))).toBe(false);
  });

  it('uses GPT-2 statistics: std 0.02, residual projections scaled, biases 0, gains 1, padding 0', () => {
    const c = PRESETS.micro;
    const L = paramLayout(c);
    const p = initParams(c, 1, L);
    const std = (name: string) => {
      const t = paramByName(L, name);
      const v = p.subarray(t.offset, t.offset + t.size);
      let s = 0;
      for (const x of v) s += x * x;
      return Math.sqrt(s / v.length);
    };
    expect(std('wte')).toBeCloseTo(0.02, 3);
    expect(std('h.0.mlp.c_fc.weight')).toBeCloseTo(0.02, 3);
    expect(std('h.0.mlp.c_proj.weight')).toBeCloseTo(0.02 / Math.sqrt(4), 3);
    expect(std('h.1.attn.c_proj.weight')).toBeCloseTo(0.01, 2);
    expect(std('h.0.attn.c_attn.bias')).toBe(0);
    const g = paramByName(L, 'h.0.ln_1.weight');
    expect(Array.from(p.subarray(g.offset, g.offset + g.size)).every((x) => x === 1)).toBe(true);
    expect(std('h.0.ln_1.bias')).toBe(0);
    const used = new Uint8Array(L.totalSize);
    for (const t of L.tensors) used.fill(1, t.offset, t.offset + t.size);
    expect(p.every((x, i) => used[i] || x === 0)).toBe(true);
  });

  it('draws normals with mean 0 and variance 1', () => {
    const r = new GaussianRng('x');
    let s = 0;
    let s2 = 0;
    const n = 20000;
    for (let i = 0; i < n; i++) {
      const x = r.normal();
      s += x;
      s2 += x * x;
    }
    expect(Math.abs(s / n)).toBeLessThan(0.03);
    expect(Math.abs(s2 / n - 1)).toBeLessThan(0.05);
  });
});
