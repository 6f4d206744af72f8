import { describe, expect, it } from 'vitest';
import { swigluBackwardRef, swigluForwardRef, type SwigluShape } from '../../reference/swiglu.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { checkOp, withScope } from '../testing/checkOp.ts';
import { randomArray } from '../testing/compare.ts';
import { SwigluKernel } from './swiglu.ts';

// Odd widths, one row, and more elements than one workgroup row of the grid.
const SHAPES: SwigluShape[] = [
  { rows: 1, F: 1 },
  { rows: 7, F: 13 },
  { rows: 33, F: 40 },
  { rows: 300, F: 257 },
];

describe('swiglu kernel vs reference', () => {
  for (const s of SHAPES) {
    it(`forward and backward ${JSON.stringify(s)}`, () =>
      checkOp([s], {
        inputs: (s) => ({ h: randomArray(s.rows * 2 * s.F, s.rows + s.F).map((v) => 6 * v), dout: randomArray(s.rows * s.F, s.rows + s.F + 1) }),
        gpu: async (g, { h, dout }, s) => {
          const k = await g.kernel(SwigluKernel.create(g.rt, s));
          const bh = g.buffer('t.h', h);
          const bOut = g.buffer('t.out', randomArray(s.rows * s.F, 5));
          const bDh = g.buffer('t.dh', randomArray(h.length, 6));
          g.submit((pass) => {
            k.encodeForward(pass, bh, bOut);
            k.encodeBackward(pass, bh, g.buffer('t.dout', dout), bDh);
          });
          return { out: await g.read(bOut), dh: await g.read(bDh) };
        },
        twin: ({ h, dout }, s) => ({
          out: swigluForwardRef(h, s, new Float64Array(s.rows * s.F)),
          dh: swigluBackwardRef(h, dout, s, new Float64Array(h.length)),
        }),
        tol: { out: [1e-6, 1e-5], dh: [1e-6, 1e-5] },
      }));
  }

  it('refuses short buffers', async () => {
    const rt = await gpuRuntime();
    await withScope(rt, async (g) => {
      const k = await g.kernel(SwigluKernel.create(g.rt, { rows: 4, F: 8 }));
      const small = g.buffer('t.small', 16 * 4);
      const out = g.buffer('t.out', 32 * 4);
      g.submit((pass) => expect(() => k.encodeForward(pass, small, out)).toThrow(/h holds 16 elements, needs 64/));
    });
    expect(rt.stats().live).toBe(0);
  });
});
