import { describe, expect, it } from 'vitest';
import { presetConfig } from '../core/model/config.ts';
import { paramLayout } from '../core/model/params.ts';
import { shardPlan, shardSegments, wholePlan } from './shards.ts';

describe('shard plans', () => {
  const layout = paramLayout(presetConfig('micro', { vocabSize: 83, contextLength: 12, norm: 'layernorm' }));

  it("packs tensors in layout order into shards within the limit, splitting matrices by rows, a norm's gain and bias together", () => {
    for (const limit of [3072, 4000, 600 * 4, 40_000]) {
      const plan = shardPlan(layout, limit);
      for (const s of plan.shards) expect((s.end - s.start) * 4).toBeLessThanOrEqual(limit);
      for (const t of layout.tensors) {
        const pieces = plan.pieces.get(t.name)!;
        const cols = t.size / t.shape[0];
        // The pieces cover the rows once, in order, each the whole of a shard's range at its offset.
        expect(pieces[0].rowStart).toBe(0);
        expect(pieces.at(-1)!.rowEnd).toBe(t.shape[0]);
        pieces.forEach((p, i) => {
          if (i > 0) expect(p.rowStart).toBe(pieces[i - 1].rowEnd);
          const s = plan.shards[p.shard];
          expect(s.start + p.offset).toBe(t.offset + p.rowStart * cols);
          expect(s.start + p.offset + (p.rowEnd - p.rowStart) * cols).toBeLessThanOrEqual(s.end);
          if (pieces.length > 1 && p.rowEnd < t.shape[0]) expect((p.rowEnd - p.rowStart) % 4).toBe(p.rowEnd - p.rowStart < 4 ? p.rowEnd - p.rowStart : 0);
        });
        if (t.name.endsWith('.bias') && t.kind === 'norm') expect(pieces[0].shard).toBe(plan.pieces.get(t.name.replace(/bias$/, 'weight'))![0].shard);
      }
    }
    const plan = shardPlan(layout, 3072);
    expect(plan.pieces.get('wte')!.map((p) => p.rowEnd - p.rowStart)).toEqual([24, 24, 24, 11]);
    expect(plan.pieces.get('h.0.mlp.c_fc.weight')!.map((p) => p.rowEnd - p.rowStart)).toEqual([4, 4, 4, 4, 4, 4, 4, 4]);
  });

  it('a layout that fits is one shard at the flat offsets', () => {
    const whole = wholePlan(layout);
    expect(whole.shards).toEqual([{ start: 0, end: layout.totalSize }]);
    for (const t of layout.tensors) expect(whole.pieces.get(t.name)).toEqual([{ shard: 0, offset: t.offset, rowStart: 0, rowEnd: t.shape[0] }]);
  });

  it("gives each shard its tensors' decay segments, relative to the shard", () => {
    const plan = shardPlan(layout, 3072);
    const segs = shardSegments(plan, layout);
    plan.shards.forEach((s, i) => {
      expect(segs[i].size).toBe(s.end - s.start);
      for (const g of segs[i].segments) {
        const t = layout.tensors.find((x) => x.offset <= s.start + g.start && s.start + g.end <= x.offset + x.size)!;
        expect(g.decay).toBe(t.decay);
      }
    });
  });

  it('refuses what cannot be split, naming the tensor', () => {
    // wpe [12, 32] is read whole by the embedding.
    expect(() => shardPlan(layout, 1024)).toThrow(
      /tensor 'wpe' \[12, 32\] \(1536 bytes\) is larger than one storage binding \(1024 bytes\) and cannot be split/,
    );
    expect(() => shardPlan(layout, 100)).toThrow(/a row of tensor 'wte' \[83, 32\] \(10624 bytes\) is 128 bytes, more than one storage binding \(100 bytes\)/);
    expect(() => shardPlan(layout, 0)).toThrow(/at least 4 bytes/);
  });
});
