import { describe, expect, it } from 'vitest';
import { ADAMW_DEFAULTS } from '../core/model/optim.ts';
import { adamwStepRef, buildDecayMask, clipScale, decayAt } from './adamw.ts';

// AdamW has no backward; these check the twin against hand-computed values.
describe('AdamW reference', () => {
  it('decay mask: per 64-block bits, with alignment checks', () => {
    const mask = buildDecayMask(
      [
        { start: 0, end: 100, decay: true },
        { start: 128, end: 130, decay: false },
        { start: 2048, end: 2050, decay: true },
      ],
      2100,
    );
    expect(decayAt(mask, 0)).toBe(true);
    expect(decayAt(mask, 127)).toBe(true); // padding after the tensor belongs to it
    expect(decayAt(mask, 128)).toBe(false);
    expect(decayAt(mask, 2049)).toBe(true);
    expect(mask.length).toBe(2);
    expect(() => buildDecayMask([{ start: 10, end: 20, decay: true }], 64)).toThrow(/multiple of 64/);
    expect(() =>
      buildDecayMask(
        [
          { start: 0, end: 10, decay: true },
          { start: 10, end: 20, decay: false },
        ],
        64,
      ),
    ).toThrow(/shares/);
    expect(() => buildDecayMask([{ start: 0, end: 70, decay: true }], 64)).toThrow(/within/);
  });

  it('one step on hand-checked numbers: bias correction, decay only where masked, clipping', () => {
    const cfg = { ...ADAMW_DEFAULTS, weightDecay: 0.5, maxGradNorm: 1 };
    const mask = buildDecayMask([{ start: 0, end: 1, decay: true }], 65);
    const params = new Float32Array(65);
    params[0] = 2;
    params[64] = 2;
    const grads = new Float64Array(65);
    grads[0] = 3;
    grads[64] = 4; // norm 5 → every gradient scaled by 1/5
    const m = new Float32Array(65);
    const v = new Float32Array(65);
    const { norm, scale } = adamwStepRef(params, grads, m, v, mask, cfg, 0, 0.1);
    expect(norm).toBe(5);
    expect(scale).toBeCloseTo(1 / 5, 6);
    // First step: m̂ = g, v̂ = g², so the Adam step is lr·sign(g) (up to eps).
    expect(params[0]).toBeCloseTo(2 - 0.1 * 0.5 * 2 - 0.1, 6);
    expect(params[64]).toBeCloseTo(2 - 0.1, 6);
    expect(m[0]).toBeCloseTo(0.1 * 0.6, 6);
    expect(v[64]).toBeCloseTo(0.05 * 0.8 * 0.8, 6);
    expect(clipScale(0.5, 1)).toBe(1);
    expect(clipScale(50, 0)).toBe(1);
  });
});
