import { describe, expect, it } from 'vitest';
import { groupAdvantages, gspoRef, type GspoInput } from '../../reference/gspo.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { withScope } from '../testing/checkOp.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { GspoKernel } from './gspo.ts';

function make(
  lengths: number[],
  Lmax: number,
  adv: ArrayLike<number>,
  deltaScale: number,
  seed: number,
  eps = [3e-4, 4e-4],
): GspoInput & { logpNew: Float32Array; logpOld: Float32Array } {
  const n = lengths.length;
  const logpOld = randomArray(n * Lmax, seed).map((x) => x * 3 - 4);
  const noise = randomArray(n * Lmax, seed + 1);
  const logpNew = logpOld.map((x, i) => x + noise[i] * deltaScale);
  return { logpNew, logpOld, lengths, advantages: Float32Array.from(adv), numSeqs: n, Lmax, epsLow: eps[0], epsHigh: eps[1] };
}

async function check(x: GspoInput) {
  const rt = await gpuRuntime();
  return withScope(rt, async (g) => {
    const k = await g.kernel(GspoKernel.create(rt, { numSeqs: x.numSeqs, Lmax: x.Lmax, epsLow: x.epsLow, epsHigh: x.epsHigh }));
    const bufs = [
      g.buffer('t.new', Float32Array.from(x.logpNew)),
      g.buffer('t.old', Float32Array.from(x.logpOld)),
      g.buffer('t.len', Uint32Array.from(x.lengths)),
      g.buffer('t.adv', Float32Array.from(x.advantages)),
      g.buffer('t.grad', randomArray(x.numSeqs * x.Lmax, 3)),
      g.buffer('t.seq', x.numSeqs * 16),
      g.buffer('t.stats', 16),
    ];
    g.submit((pass) => {
      k.encode(pass, ...(bufs as [GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer]));
    });
    // The twin sees the same f32-rounded inputs as the GPU.
    const want = gspoRef({ ...x, logpNew: Float32Array.from(x.logpNew), logpOld: Float32Array.from(x.logpOld), advantages: Float32Array.from(x.advantages) });
    const got = await GspoKernel.readStats(rt, bufs[6]);
    expect(got.objective).toBeCloseTo(want.objective, 5);
    expect(got.loss).toBeCloseTo(want.loss, 5);
    expect(got.clipFraction).toBeCloseTo(want.clipFraction, 6);
    expect(got.meanRatio).toBeCloseTo(want.meanRatio, 5);
    const seq = await g.read(bufs[5]);
    expectClose(
      seq.filter((_, i) => i % 4 === 0),
      want.ratios,
      1e-6,
      1e-5,
      'ratios',
    );
    expect(
      Array.from(
        seq.filter((_, i) => i % 4 === 2),
        (c) => c === 1,
      ),
    ).toEqual(want.clipped);
    expectClose(await g.read(bufs[4]), want.grad, 1e-8, 1e-4, 'grad');
    return want;
  });
}

describe('gspo kernel vs reference', () => {
  it('a fully clipped group', async () => {
    const x = make([3, 2], 4, [1, -1], 0, 1);
    for (let t = 0; t < 3; t++) x.logpNew[t] = x.logpOld[t] + 0.01;
    for (let t = 0; t < 2; t++) x.logpNew[4 + t] = x.logpOld[4 + t] - 0.01;
    const want = await check(x);
    expect(want.clipFraction).toBe(1);
  });

  it('a zero-advantage group (all rewards equal): J = 0 and no gradient', async () => {
    const want = await check(make([4, 1, 3, 2], 4, groupAdvantages([7, 7, 7, 7], 4), 0.5, 2));
    expect(want.objective).toBe(0);
  });

  it('length-1 and mixed lengths, some clipped', async () => {
    await check(make([1, 1, 5, 2, 7, 3], 7, [1.2, -0.4, 0.3, -1.1, 0.9, -0.2], 0.2, 3, [0.05, 0.08]));
  });

  it('more sequences than threads, long sequences, an empty one', async () => {
    const n = 300;
    const lengths = Array.from({ length: n }, (_, i) => (i * 37) % 41);
    const adv = groupAdvantages(randomArray(n, 4), 6);
    await check(make(lengths, 40, adv, 0.3, 5, [0.1, 0.15]));
  });

  it('leaves no buffers behind', async () => {
    expect((await gpuRuntime()).stats().live).toBe(0);
  });
});
