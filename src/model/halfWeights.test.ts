import { describe, expect, it } from 'vitest';
import { presetConfig } from '../core/model/config.ts';
import { halfDeviceLayout, halfStored, packWeights, unpackWeights } from './halfWeights.ts';
import { initParams } from './init.ts';
import { paramLayout, PARAM_ALIGN } from '../core/model/params.ts';
import { planAt, weightsOf } from './shards.ts';
import { f16round } from '../reference/f16.ts';

describe('f16 weight layout', () => {
  const c = presetConfig('micro', { vocabSize: 83, contextLength: 12, norm: 'layernorm', tiedEmbeddings: false });
  const host = paramLayout(c);
  const device = halfDeviceLayout(host);

  it('packs every matrix but wpe into ceil(cols/2) words a row, offsets aligned, order kept', () => {
    expect(device.tensors.map((t) => t.name)).toEqual(host.tensors.map((t) => t.name));
    for (const t of host.tensors) {
      const d = device.byName.get(t.name)!;
      expect(d.offset % PARAM_ALIGN).toBe(0);
      expect(d.size).toBe(halfStored(t) ? t.shape[0] * Math.ceil(t.shape[1] / 2) : t.size);
    }
    expect(halfStored(host.wpe!)).toBe(false);
    expect(halfStored(host.lmHead!)).toBe(true);
    expect(device.blocks[1].fcWeight).toBe(device.byName.get('h.1.mlp.c_fc.weight'));
    expect(device.totalSize).toBeLessThan(0.6 * host.totalSize);
  });

  it('round-trips the f32 layout: matrices rounded to f16, everything else exact', () => {
    const flat = initParams(c, 3);
    const back = unpackWeights(host, device, packWeights(host, device, flat));
    for (const t of host.tensors) {
      const want = Array.from(flat.subarray(t.offset, t.offset + t.size), (v) => (halfStored(t) ? f16round(v) : v));
      expect(Array.from(back.subarray(t.offset, t.offset + t.size)), t.name).toEqual(want);
    }
    expect(() => packWeights(host, device, new Float32Array(3))).toThrow(/hold 3 elements, the layout needs/);
  });

  it('plans shards over the packed words within the binding limit', () => {
    const plan = planAt(host, 2000, 'f16');
    expect(weightsOf(plan)).toBe('f16');
    expect(plan.half?.device.totalSize).toBe(plan.totalSize);
    for (const s of plan.shards) expect((s.end - s.start) * 4).toBeLessThanOrEqual(2000);
    // lm_head [83, 32]: 16 words (64 bytes) a row, 31 rows fit 2000 bytes: pieces of 28 (a multiple of 4).
    expect(plan.pieces.get('lm_head.weight')!.map((p) => p.rowEnd - p.rowStart)).toEqual([28, 28, 27]);
    expect(weightsOf(planAt(host, 2000))).toBe('f32');
    expect(planAt(host, 2 ** 30, 'f16').shards).toHaveLength(1);
  });
});
