import { describe, expect, it } from 'vitest';
import { headNormBackwardRef, headNormForwardRef, type HeadNormShape } from '../../reference/headnorm.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { HeadNormKernel } from './headnorm.ts';
import { submit } from './common.ts';

// Gains at offsets that are not multiples of 4 or 64; one row; more rows than one stage-1 block;
// head sizes 4 to 128; one k/v head, and as many k/v heads as q heads.
const SHAPES: HeadNormShape[] = [
  { rows: 1, H: 2, kvH: 1, D: 4, eps: 1e-6, qOffset: 3, kOffset: 9 },
  { rows: 37, H: 4, kvH: 2, D: 12, eps: 1e-6, qOffset: 70, kOffset: 5 },
  { rows: 600, H: 3, kvH: 3, D: 16, eps: 1e-5, qOffset: 0, kOffset: 16 },
  { rows: 5, H: 1, kvH: 1, D: 128, eps: 1e-6, qOffset: 1, kOffset: 200 },
];

describe('headnorm kernel vs reference', () => {
  for (const s of SHAPES) {
    it(`forward and backward ${JSON.stringify(s)}`, async () => {
      const rt = await gpuRuntime();
      const W = (s.H + 2 * s.kvH) * s.D;
      const x = randomArray(s.rows * W, s.rows + s.D);
      const dy = randomArray(s.rows * W, s.rows + s.D + 1);
      const weights = randomArray(400, 3).map((v) => 1 + 0.5 * v);
      const grads0 = randomArray(400, 4);
      const k = await HeadNormKernel.create(rt, s);
      const bx = rt.storage('t.x', x);
      const bw = rt.storage('t.w', weights);
      const braw = rt.storage('t.raw', k.rawSize * 4);
      const bstats = rt.storage('t.stats', k.statsSize * 4);
      const bdy = rt.storage('t.dy', dy);
      const bg = rt.storage('t.g', grads0);
      try {
        submit(rt, 'test', (pass) => {
          k.encodeForward(pass, bx, bw, braw, bstats);
          k.encodeBackward(pass, bdy, bw, braw, bstats, bg);
        });
        const y = Float64Array.from(x);
        const { raw, stats } = headNormForwardRef(y, weights, s);
        expectClose(await rt.readF32(bx), y, 1e-5, 1e-5, 'normalised qkv');
        expectClose(await rt.readF32(braw), raw, 0, 0, 'raw');
        expectClose(await rt.readF32(bstats), stats, 1e-6, 1e-5, 'rstd');
        const dx = Float64Array.from(dy);
        const dgain = headNormBackwardRef(dx, raw, stats, weights, s);
        expectClose(await rt.readF32(bdy), dx, 1e-5, 1e-4, 'dqkv');
        const want = Float64Array.from(grads0);
        for (let d = 0; d < s.D; d++) {
          want[s.qOffset + d] += dgain[d];
          want[s.kOffset + d] += dgain[s.D + d];
        }
        expectClose(await rt.readF32(bg), want, 1e-4, 1e-4, 'grads (gains accumulated, the rest untouched)');
      } finally {
        rt.release(bx, bw, braw, bstats, bdy, bg);
        k.dispose();
      }
    });
  }

  it('leaves no buffers behind', async () => {
    const rt = await gpuRuntime();
    expect(rt.stats().live).toBe(0);
  });
});
