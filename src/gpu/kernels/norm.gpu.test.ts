import { describe, expect, it } from 'vitest';
import { normBackwardRef, normForwardRef, type NormKind, type NormShape } from '../../reference/norm.ts';
import type { GpuRuntime } from '../runtime.ts';
import { withScope } from '../testing/checkOp.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { withGridLimit } from '../testing/submit.ts';
import { NormKernel } from './norm.ts';

// 1 element; C below one workgroup; C spanning several threads per column set (130 → 128
// threads, two columns for some); rows spanning several backward blocks with a ragged last one.
// C a multiple of 4 takes the vec4 kernels: one quad; several rows and blocks; more than 64 quads
// (two column-role workgroups).
const SHAPES: [number, number][] = [
  [1, 1],
  [5, 7],
  [3, 130],
  [70, 33],
  [1, 4],
  [70, 12],
  [3, 260],
];

async function check(
  rt: GpuRuntime,
  kind: NormKind,
  rows: number,
  C: number,
  seed: number,
  opts: { shift?: number; accumulateDx?: boolean; forceScalar?: boolean } = {},
) {
  const shape: NormShape = { rows, C, kind, gammaOffset: 64, betaOffset: 64 + Math.ceil(C / 64) * 64 };
  const total = 64 + 2 * Math.ceil(C / 64) * 64;
  const x = randomArray(rows * C, seed).map((v) => 2 * v + (opts.shift ?? 0));
  const weights = randomArray(total, seed + 1).map((v) => 1 + 0.5 * v);
  const dy = randomArray(rows * C, seed + 2);
  const dx0 = randomArray(rows * C, seed + 3);
  const grads0 = randomArray(total, seed + 4);
  await withScope(rt, async (g) => {
    const k = await g.kernel(NormKernel.create(rt, shape, { accumulateDx: opts.accumulateDx, forceScalar: opts.forceScalar }));
    expect(k.vec4).toBe(C % 4 === 0 && !opts.forceScalar);
    const X = g.buffer('t.x', x);
    const W = g.buffer('t.w', weights);
    const Y = g.buffer('t.y', rows * C * 4);
    const S = g.buffer('t.stats', k.statsBytes);
    const DY = g.buffer('t.dy', dy);
    const DX = g.buffer('t.dx', dx0);
    const G = g.buffer('t.g', grads0);
    g.submit((pass) => {
      k.encodeForward(pass, X, W, Y, S);
      k.encodeBackward(pass, DY, X, W, S, DX, G);
    });
    const what = `${kind} ${rows}×${C}${opts.shift ? ` shift ${opts.shift}` : ''}`;
    const ref = normForwardRef(x, weights, shape);
    expectClose(await g.read(Y), ref.y, 2e-5, 2e-5, `y ${what}`);
    const stats = await g.read(S);
    expectClose(stats, ref.stats, 1e-5, 1e-5, `stats ${what}`);
    const back = normBackwardRef(dy, x, weights, ref.stats, shape);
    const wantDx = opts.accumulateDx ? back.dx.map((v, i) => v + dx0[i]) : back.dx;
    expectClose(await g.read(DX), wantDx, 5e-5, 5e-5, `dx ${what}`);
    const wantG = grads0.slice();
    for (let c = 0; c < C; c++) {
      wantG[64 + c] += back.dgamma[c];
      if (kind === 'layer') wantG[shape.betaOffset! + c] += back.dbeta[c];
    }
    const gotG = await g.read(G);
    expectClose(gotG, wantG, 5e-5, 5e-5, `grads ${what}`);
    // Determinism: the same backward again from the same starting gradients.
    rt.write(G, grads0);
    rt.write(DX, dx0);
    g.submit((pass) => k.encodeBackward(pass, DY, X, W, S, DX, G));
    expect(Array.from(await g.read(G))).toEqual(Array.from(gotG));
  });
}

describe('norm kernels vs reference', () => {
  for (const kind of ['layer', 'rms'] as NormKind[]) {
    it(`${kind}: forward, stats, dx, dgamma${kind === 'layer' ? ', dbeta' : ''} on awkward shapes`, async () => {
      const rt = await gpuRuntime();
      let seed = kind === 'layer' ? 10 : 50;
      for (const [rows, C] of SHAPES) await check(rt, kind, rows, C, seed++);
    });
  }

  it('LayerNorm of rows with a large mean; dx accumulated into an existing gradient', async () => {
    const rt = await gpuRuntime();
    await check(rt, 'layer', 6, 33, 90, { shift: 100 });
    await check(rt, 'layer', 6, 32, 92, { shift: 100 });
    await check(rt, 'rms', 5, 7, 91, { accumulateDx: true });
    await check(rt, 'rms', 5, 8, 93, { accumulateDx: true });
    await check(rt, 'layer', 70, 12, 94, { forceScalar: true });
  });

  it('spills large grids into y', async () => {
    const base = await gpuRuntime();
    await check(withGridLimit(base, 6), 'layer', 400, 10, 77); // forward 7 workgroups, backward 32
    await check(withGridLimit(base, 6), 'rms', 400, 8, 78); // vec4: the same
  });

  it('leaves no buffers behind', async () => {
    const rt = await gpuRuntime();
    const before = rt.stats().live;
    await check(rt, 'layer', 4, 7, 99);
    expect(rt.stats().live).toBe(before);
  });
});
