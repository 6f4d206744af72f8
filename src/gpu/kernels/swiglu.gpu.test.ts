import { describe, expect, it } from 'vitest';
import { swigluBackwardRef, swigluForwardRef, type SwigluShape } from '../../reference/swiglu.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { SwigluKernel } from './swiglu.ts';
import { submit } from './common.ts';

// Odd widths, one row, and more elements than one workgroup row of the grid.
const SHAPES: SwigluShape[] = [
  { rows: 1, F: 1 },
  { rows: 7, F: 13 },
  { rows: 33, F: 40 },
  { rows: 300, F: 257 },
];

describe('swiglu kernel vs reference', () => {
  for (const s of SHAPES) {
    it(`forward and backward ${JSON.stringify(s)}`, async () => {
      const rt = await gpuRuntime();
      const h = randomArray(s.rows * 2 * s.F, s.rows + s.F).map((v) => 6 * v);
      const dout = randomArray(s.rows * s.F, s.rows + s.F + 1);
      const k = await SwigluKernel.create(rt, s);
      const bh = rt.storage('t.h', h);
      const bOut = rt.storage('t.out', randomArray(s.rows * s.F, 5));
      const bDout = rt.storage('t.dout', dout);
      const bDh = rt.storage('t.dh', randomArray(h.length, 6));
      try {
        submit(rt, 'test', (pass) => {
          k.encodeForward(pass, bh, bOut);
          k.encodeBackward(pass, bh, bDout, bDh);
        });
        expectClose(await rt.readF32(bOut), swigluForwardRef(h, s, new Float64Array(s.rows * s.F)), 1e-6, 1e-5, 'out');
        expectClose(await rt.readF32(bDh), swigluBackwardRef(h, dout, s, new Float64Array(h.length)), 1e-6, 1e-5, 'dh');
      } finally {
        rt.release(bh, bOut, bDout, bDh);
        k.dispose();
      }
    });
  }

  it('refuses short buffers', async () => {
    const rt = await gpuRuntime();
    const k = await SwigluKernel.create(rt, { rows: 4, F: 8 });
    const small = rt.storage('t.small', 16 * 4);
    const out = rt.storage('t.out', 32 * 4);
    submit(rt, 'test', (pass) => expect(() => k.encodeForward(pass, small, out)).toThrow(/h holds 16 elements, needs 64/));
    rt.release(small, out);
    k.dispose();
    expect(rt.stats().live).toBe(0);
  });
});
