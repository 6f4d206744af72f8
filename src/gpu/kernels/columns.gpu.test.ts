import { describe, expect, it } from 'vitest';
import { columnsRef, type ColumnsShape } from '../../reference/columns.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { checkOp, withScope } from '../testing/checkOp.ts';
import { randomArray } from '../testing/compare.ts';
import { ColumnsKernel } from './columns.ts';

// One row, one column, odd widths and offsets, a block ending at the last column, more elements than one workgroup.
const SHAPES: ColumnsShape[] = [
  { rows: 1, width: 1, srcWidth: 1, srcOffset: 0, dstWidth: 3, dstOffset: 2 },
  { rows: 7, width: 5, srcWidth: 13, srcOffset: 3, dstWidth: 5, dstOffset: 0, alpha: 0.375 },
  { rows: 33, width: 12, srcWidth: 12, srcOffset: 0, dstWidth: 40, dstOffset: 28, alpha: 2, accumulate: true },
  { rows: 300, width: 257, srcWidth: 300, srcOffset: 43, dstWidth: 771, dstOffset: 257, alpha: -1.5, accumulate: true },
];

describe('columns kernel vs reference', () => {
  for (const s of SHAPES) {
    it(JSON.stringify(s), () =>
      checkOp([s], {
        inputs: (s) => ({ src: randomArray(s.rows * s.srcWidth, s.rows + s.width), dst: randomArray(s.rows * s.dstWidth, s.rows + s.width + 1) }),
        gpu: async (g, { src, dst }, s) => {
          const k = await g.kernel(ColumnsKernel.create(g.rt, s));
          const bDst = g.buffer('t.dst', dst);
          g.submit((pass) => k.encode(pass, g.buffer('t.src', src), bDst));
          return { dst: await g.read(bDst) };
        },
        // Columns outside the block keep their values exactly.
        twin: ({ src, dst }, s) => ({ dst: columnsRef(src, Float64Array.from(dst), s) }),
        tol: { dst: [1e-7, 1e-6] },
      }),
    );
  }

  it('refuses a block past the row and short buffers', async () => {
    expect(() => columnsRef([], new Float32Array(4), { rows: 1, width: 3, srcWidth: 3, srcOffset: 0, dstWidth: 4, dstOffset: 2 })).toThrow(
      /pass dst's width 4/,
    );
    await withScope(await gpuRuntime(), async (g) => {
      const k = await g.kernel(ColumnsKernel.create(g.rt, { rows: 4, width: 2, srcWidth: 2, srcOffset: 0, dstWidth: 8, dstOffset: 6 }));
      const small = g.buffer('t.small', 8 * 4);
      const dst = g.buffer('t.dst', 16 * 4);
      g.submit((pass) => expect(() => k.encode(pass, small, dst)).toThrow(/dst holds 16 elements, needs 32/));
    });
  });
});
