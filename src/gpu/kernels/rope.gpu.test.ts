import { describe, expect, it } from 'vitest';
import { ropeRef, type RopeShape } from '../../reference/rope.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { checkOp, withScope } from '../testing/checkOp.ts';
import { randomArray } from '../testing/compare.ts';
import { RopeKernel } from './rope.ts';

const CASES: [RopeShape, number][] = [
  [{ rows: 74, T: 37, H: 3, D: 8 }, 0],
  [{ rows: 1, T: 1, H: 2, D: 24 }, 1000],
  [{ rows: 10, T: 5, H: 2, D: 64 }, 7],
  [{ rows: 3, T: 3, H: 1, D: 128 }, 900],
  // Grouped-query rows (4 q heads, 2 k heads) with scaled frequencies of their own.
  [{ rows: 10, T: 5, H: 4, kvH: 2, D: 12, freqs: [1, 0.3, 0.1, 0.03, 0.01, 0.003] }, 40],
];

describe('rope kernel vs reference', () => {
  for (const [s, offset] of CASES) {
    it(`forward and backward ${JSON.stringify(s)} at offset ${offset}`, () =>
      checkOp([s], {
        inputs: (s) => {
          const n = s.rows * (s.H + 2 * (s.kvH ?? s.H)) * s.D;
          return { x: randomArray(n, s.rows + s.D), dy: randomArray(n, s.rows + s.D + 1) };
        },
        gpu: async (g, { x, dy }, s) => {
          const k = await g.kernel(RopeKernel.create(g.rt, s, { maxPositions: 1024 }));
          const bx = g.buffer('t.x', x);
          const bd = g.buffer('t.dy', dy);
          g.submit((pass) => {
            k.encode(pass, bx, offset);
            k.encodeBackward(pass, bd, offset);
          });
          return { 'rotated qkv': await g.read(bx), dqkv: await g.read(bd) };
        },
        twin: ({ x, dy }, s) => ({ 'rotated qkv': ropeRef(Float64Array.from(x), s, offset), dqkv: ropeRef(Float64Array.from(dy), s, offset, -1) }),
        tol: { 'rotated qkv': [1e-6, 1e-5], dqkv: [1e-6, 1e-5] },
      }));
  }

  it('rejects positions past the table', async () => {
    const rt = await gpuRuntime();
    await withScope(rt, async (g) => {
      const k = await g.kernel(RopeKernel.create(g.rt, { rows: 2, T: 2, H: 1, D: 8 }, { maxPositions: 16 }));
      const b = g.buffer('t.x', 2 * 24 * 4);
      g.submit((pass) => expect(() => k.encode(pass, b, 15)).toThrow(/outside the table/));
    });
    expect(rt.stats().live).toBe(0);
  });
});
