import { describe, expect, it } from 'vitest';
import { ropeRef, type RopeShape } from '../../reference/rope.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { RopeKernel } from './rope.ts';
import { submit } from './common.ts';

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
    it(`forward and backward ${JSON.stringify(s)} at offset ${offset}`, async () => {
      const rt = await gpuRuntime();
      const n = s.rows * (s.H + 2 * (s.kvH ?? s.H)) * s.D;
      const x = randomArray(n, s.rows + s.D);
      const dy = randomArray(n, s.rows + s.D + 1);
      const k = await RopeKernel.create(rt, s, { maxPositions: 1024 });
      const bx = rt.storage('t.x', x);
      const bd = rt.storage('t.dy', dy);
      try {
        submit(rt, 'test', (pass) => {
          k.encode(pass, bx, offset);
          k.encodeBackward(pass, bd, offset);
        });
        expectClose(await rt.readF32(bx), ropeRef(Float64Array.from(x), s, offset), 1e-6, 1e-5, 'rotated qkv');
        expectClose(await rt.readF32(bd), ropeRef(Float64Array.from(dy), s, offset, -1), 1e-6, 1e-5, 'dqkv');
      } finally {
        rt.release(bx, bd);
        k.dispose();
      }
    });
  }

  it('rejects positions past the table', async () => {
    const rt = await gpuRuntime();
    const k = await RopeKernel.create(rt, { rows: 2, T: 2, H: 1, D: 8 }, { maxPositions: 16 });
    const b = rt.storage('t.x', 2 * 24 * 4);
    submit(rt, 'test', (pass) => expect(() => k.encode(pass, b, 15)).toThrow(/outside the table/));
    rt.release(b);
    k.dispose();
    expect(rt.stats().live).toBe(0);
  });
});
