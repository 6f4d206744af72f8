import { describe, expect, it } from 'vitest';
import { ADAMW_DEFAULTS, lrAt } from '../../core/model/optim.ts';
import { adamwStepRef, buildDecayMask, type DecaySegment } from '../../reference/adamw.ts';
import type { GpuRuntime } from '../runtime.ts';
import { withScope } from '../testing/checkOp.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { withGridLimit } from '../testing/submit.ts';
import { AdamWKernel } from './adamw.ts';

const SCHEDULE = { warmupSteps: 2, totalSteps: 10, maxLr: 1e-2, minLr: 1e-3 };

/**
 * Three optimizer steps on the GPU and on the twin from the same start. gradScales[k] scales
 * step k's random gradients, so a large one forces clipping.
 */
async function run(rt: GpuRuntime, size: number, segments: DecaySegment[], gradScales: number[], zeroGrads: boolean, seed: number) {
  const cfg = { ...ADAMW_DEFAULTS, weightDecay: 0.2, maxGradNorm: 1 };
  return withScope(rt, async (scope) => {
    const k = await scope.kernel(AdamWKernel.create(rt, { size, segments, ...cfg, zeroGrads }));
    expect(k.vec4).toBe(size % 4 === 0);
    const mask = buildDecayMask(segments, size);
    const params = randomArray(size, seed);
    const m = new Float32Array(size);
    const v = new Float32Array(size);
    const P = scope.buffer('t.params', params);
    const G = scope.buffer('t.grads', size * 4);
    const M = scope.buffer('t.m', size * 4);
    const Vb = scope.buffer('t.v', size * 4);
    const norms: { norm: number; scale: number }[] = [];
    for (let step = 0; step < gradScales.length; step++) {
      const grads = randomArray(size, seed + 10 * (step + 1)).map((g) => (g * gradScales[step]) / Math.sqrt(size));
      rt.write(G, grads);
      const lr = lrAt(step, SCHEDULE);
      k.setStep(step, lr);
      scope.submit((pass) => k.encode(pass, P, G, M, Vb));
      const want = adamwStepRef(params, grads, m, v, mask, cfg, step, lr);
      const got = await k.readGradNorm();
      const what = `size ${size} step ${step}`;
      expectClose([got.norm, got.scale], [want.norm, want.scale], 1e-6, 1e-5, `grad norm ${what}`);
      expectClose(await scope.read(M), m, 1e-7, 1e-5, `m ${what}`);
      expectClose(await scope.read(Vb), v, 1e-9, 1e-5, `v ${what}`);
      expectClose(await scope.read(P), params, 1e-6, 1e-5, `params ${what}`);
      if (zeroGrads) expect((await scope.read(G)).every((x) => x === 0)).toBe(true);
      else expect(Array.from(await scope.read(G))).toEqual(Array.from(grads));
      norms.push(want);
    }
    const final = await scope.read(P);
    return { norms, final };
  });
}

/** The flat buffer cut at `cuts` into shards, each its own buffers: three steps against the twin on the whole. */
async function runSharded(rt: GpuRuntime, cuts: number[], segments: DecaySegment[], gradScales: number[], seed: number) {
  const size = cuts[cuts.length - 1];
  const cfg = { ...ADAMW_DEFAULTS, weightDecay: 0.2, maxGradNorm: 1 };
  const ranges = cuts.slice(0, -1).map((start, i) => [start, cuts[i + 1]] as const);
  const shards = ranges.map(([a, b]) => ({
    size: b - a,
    segments: segments.filter((g) => g.end > a && g.start < b).map((g) => ({ start: Math.max(g.start, a) - a, end: Math.min(g.end, b) - a, decay: g.decay })),
  }));
  await withScope(rt, async (scope) => {
    const k = await scope.kernel(AdamWKernel.create(rt, { size, segments: [], shards, ...cfg, zeroGrads: true }));
    const mask = buildDecayMask(segments, size);
    const params = randomArray(size, seed);
    const [m, v] = [new Float32Array(size), new Float32Array(size)];
    const bufs = ranges.map(([a, b]) => ({
      P: scope.buffer('t.params', params.slice(a, b)),
      G: scope.buffer('t.grads', (b - a) * 4),
      M: scope.buffer('t.m', (b - a) * 4),
      V: scope.buffer('t.v', (b - a) * 4),
    }));
    const read = async (which: 'P' | 'M' | 'V') => {
      const out = new Float32Array(size);
      for (let i = 0; i < ranges.length; i++) out.set(await scope.read(bufs[i][which]), ranges[i][0]);
      return out;
    };
    for (let step = 0; step < gradScales.length; step++) {
      const grads = randomArray(size, seed + 10 * (step + 1)).map((g) => (g * gradScales[step]) / Math.sqrt(size));
      ranges.forEach(([a, b], i) => rt.write(bufs[i].G, grads.slice(a, b)));
      const lr = lrAt(step, SCHEDULE);
      k.setStep(step, lr);
      scope.submit((pass) =>
        k.encode(
          pass,
          bufs.map((b) => b.P),
          bufs.map((b) => b.G),
          bufs.map((b) => b.M),
          bufs.map((b) => b.V),
        ),
      );
      const want = adamwStepRef(params, grads, m, v, mask, cfg, step, lr);
      const got = await k.readGradNorm();
      const what = `shards ${cuts.join(', ')} step ${step}`;
      expectClose([got.norm, got.scale], [want.norm, want.scale], 1e-6, 1e-5, `grad norm ${what}`);
      expectClose(await read('M'), m, 1e-7, 1e-5, `m ${what}`);
      expectClose(await read('V'), v, 1e-9, 1e-5, `v ${what}`);
      expectClose(await read('P'), params, 1e-6, 1e-5, `params ${what}`);
      for (const b of bufs) expect((await scope.read(b.G)).every((x) => x === 0)).toBe(true);
    }
  });
}

describe('AdamW kernel vs reference', () => {
  it('parameters in several buffers (shards, some not a multiple of 4): one norm over all of them, each shard decayed by its own mask', async () => {
    const rt = await gpuRuntime();
    const segments: DecaySegment[] = [
      { start: 0, end: 100, decay: true },
      { start: 128, end: 133, decay: false },
      { start: 192, end: 4250, decay: true },
    ];
    await runSharded(rt, [0, 128, 192, 4250], segments, [0.5, 40, 0.8], 31);
    await runSharded(rt, [0, 64, 133, 192, 2241, 4250], segments, [0.5, 40, 0.8], 32);
    await expect(AdamWKernel.create(rt, { size: 10, segments: [], shards: [{ size: 4, segments: [] }], ...ADAMW_DEFAULTS })).rejects.toThrow(
      /shards hold 4 elements, the size is 10/,
    );
  });

  it('three steps with decay on some tensors only; the second step is clipped', async () => {
    const rt = await gpuRuntime();
    const segments: DecaySegment[] = [
      { start: 0, end: 100, decay: true }, // a matrix
      { start: 128, end: 133, decay: false }, // a norm gain
      { start: 192, end: 250, decay: true },
    ];
    const { norms } = await run(rt, 250, segments, [0.5, 40, 0.8], false, 1);
    expect(norms[0].scale).toBe(1);
    expect(norms[1].norm).toBeGreaterThan(1);
    expect(norms[1].scale).toBeLessThan(0.1);
    expect(norms[2].scale).toBe(1);
  });

  it('several grad-norm chunks, gradients cleared after use (scalar and vec4 updates); a single element', async () => {
    const rt = await gpuRuntime();
    await run(rt, 2 * 4096 + 77, [{ start: 0, end: 4096 + 64, decay: true }], [3, 0.2, 5], true, 2);
    await run(rt, 2 * 4096 + 1024 + 64, [{ start: 0, end: 4096 + 64, decay: true }], [3, 0.2, 5], true, 22);
    await run(rt, 1, [{ start: 0, end: 1, decay: false }], [0.3, 7, 1], true, 3);
  });

  it('spills large grids into y', async () => {
    const base = await gpuRuntime();
    // vec4: 4 norm-partial and 8 update workgroups; scalar: 3 and 20
    await run(withGridLimit(base, 3), 8000, [{ start: 0, end: 8000, decay: true }], [1, 9, 1], false, 9);
    await run(withGridLimit(base, 5), 5001, [{ start: 0, end: 5001, decay: true }], [1, 9, 1], false, 10);
  });

  it('is deterministic and leaves no buffers behind', async () => {
    const rt = await gpuRuntime();
    const before = rt.stats().live;
    const a = await run(rt, 300, [{ start: 64, end: 300, decay: true }], [2, 1, 9], false, 4);
    const b = await run(rt, 300, [{ start: 64, end: 300, decay: true }], [2, 1, 9], false, 4);
    expect(Array.from(b.final)).toEqual(Array.from(a.final));
    expect(rt.stats().live).toBe(before);
  });
});
