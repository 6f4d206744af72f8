import { describe, expect, it } from 'vitest';
import { headNormBackwardRef, headNormForwardRef, type HeadNormShape } from '../../reference/headnorm.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { checkOp } from '../testing/checkOp.ts';
import { randomArray } from '../testing/compare.ts';
import { HeadNormKernel } from './headnorm.ts';

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
    it(`forward and backward ${JSON.stringify(s)}`, () =>
      checkOp([s], {
        inputs: (s) => {
          const W = (s.H + 2 * s.kvH) * s.D;
          return {
            x: randomArray(s.rows * W, s.rows + s.D),
            dy: randomArray(s.rows * W, s.rows + s.D + 1),
            weights: randomArray(400, 3).map((v) => 1 + 0.5 * v),
            grads0: randomArray(400, 4),
          };
        },
        gpu: async (g, { x, dy, weights, grads0 }, s) => {
          const k = await g.kernel(HeadNormKernel.create(g.rt, s));
          const bx = g.buffer('t.x', x);
          const bw = g.buffer('t.w', weights);
          const braw = g.buffer('t.raw', k.rawSize * 4);
          const bstats = g.buffer('t.stats', k.statsSize * 4);
          const bdy = g.buffer('t.dy', dy);
          const bg = g.buffer('t.g', grads0);
          g.submit((pass) => {
            k.encodeForward(pass, bx, bw, braw, bstats);
            k.encodeBackward(pass, bdy, bw, braw, bstats, bg);
          });
          return {
            'normalised qkv': await g.read(bx),
            raw: await g.read(braw),
            rstd: await g.read(bstats),
            dqkv: await g.read(bdy),
            'grads (gains accumulated, the rest untouched)': await g.read(bg),
          };
        },
        twin: ({ x, dy, weights, grads0 }, s) => {
          const y = Float64Array.from(x);
          const { raw, stats } = headNormForwardRef(y, weights, s);
          const dx = Float64Array.from(dy);
          const dgain = headNormBackwardRef(dx, raw, stats, weights, s);
          const want = Float64Array.from(grads0);
          for (let d = 0; d < s.D; d++) {
            want[s.qOffset + d] += dgain[d];
            want[s.kOffset + d] += dgain[s.D + d];
          }
          return { 'normalised qkv': y, raw, rstd: stats, dqkv: dx, 'grads (gains accumulated, the rest untouched)': want };
        },
        tol: {
          'normalised qkv': [1e-5, 1e-5],
          raw: [0, 0],
          rstd: [1e-6, 1e-5],
          dqkv: [1e-5, 1e-4],
          'grads (gains accumulated, the rest untouched)': [1e-4, 1e-4],
        },
      }));
  }

  it('leaves no buffers behind', async () => {
    const rt = await gpuRuntime();
    expect(rt.stats().live).toBe(0);
  });
});
