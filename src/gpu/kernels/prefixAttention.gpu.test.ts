import { describe, expect, it } from 'vitest';
import { prefixAttentionBackwardRef, prefixAttentionForwardRef, prefixQkvWidth, type PrefixAttentionShape } from '../../reference/prefixAttention.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { submit } from './common.ts';
import { PrefixAttentionKernel } from './prefixAttention.ts';

// Prefix and completion lengths off the 32-row blocks and the tiles (and a prefix over more than
// one of each), a live prefix shorter than its buffer, an empty prefix, G = 1 and G = 3, several
// heads, two head sizes, grouped-query attention with 2 and 4 query heads per key/value head
// (the prefix k/v gradient sums over G and the group); two shapes run the pipelines specialised
// for their head size. The
// backward against finite differences is in src/reference/prefixAttention.test.ts.
const CASES: [PrefixAttentionShape, number, boolean][] = [
  [{ G: 3, Tc: 13, Tp: 37, H: 2, D: 8 }, 35, false],
  [{ G: 1, Tc: 5, Tp: 7, H: 3, D: 8 }, 7, false],
  [{ G: 3, Tc: 3, Tp: 70, H: 1, D: 24 }, 67, false],
  [{ G: 2, Tc: 34, Tp: 4, H: 2, D: 8 }, 0, false],
  [{ G: 3, Tc: 9, Tp: 11, H: 2, D: 16 }, 10, true],
  [{ G: 3, Tc: 13, Tp: 37, H: 4, D: 8, kvH: 2 }, 35, false],
  [{ G: 2, Tc: 5, Tp: 7, H: 4, D: 8, kvH: 1 }, 6, false],
  [{ G: 2, Tc: 9, Tp: 11, H: 4, D: 16, kvH: 2 }, 10, true],
];

describe('prefix attention kernels vs reference', () => {
  for (const [s, P, specialise] of CASES) {
    it(`forward and backward ${JSON.stringify(s)}, P = ${P}${specialise ? ' (specialised)' : ''}`, async () => {
      const rt = await gpuRuntime();
      const C = s.H * s.D;
      const W = prefixQkvWidth(s);
      const pqkv = randomArray(s.Tp * W, s.Tp * 7 + s.D);
      const qkv = randomArray(s.G * s.Tc * W, s.Tc * 31 + s.D);
      // Spread the scores so the softmax is far from uniform.
      for (const x of [pqkv, qkv]) for (let i = 0; i < x.length; i++) x[i] *= 2;
      const dout = randomArray(s.G * s.Tc * C, s.Tc * 17 + s.D);
      const k = await PrefixAttentionKernel.create(rt, s, { specialise });
      const bufs = {
        pqkv: rt.storage('t.pqkv', pqkv),
        qkv: rt.storage('t.qkv', qkv),
        out: rt.storage('t.out', s.G * s.Tc * C * 4),
        lse: rt.storage('t.lse', s.G * s.H * s.Tc * 4),
        dout: rt.storage('t.dout', dout),
        // Garbage in both gradients proves the backward overwrites every element.
        dqkv: rt.storage('t.dqkv', randomArray(qkv.length, 98)),
        dpkv: rt.storage('t.dpkv', randomArray(pqkv.length, 99)),
      };
      try {
        k.setPrefixLength(P);
        submit(rt, 'test', (pass) => {
          k.encodeForward(pass, bufs.pqkv, bufs.qkv, bufs.out, bufs.lse);
          k.encodeBackward(pass, bufs);
        });
        const want = prefixAttentionForwardRef(pqkv, qkv, s, P);
        expectClose(await rt.readF32(bufs.out), want.out, 2e-5, 1e-4, 'out');
        expectClose(await rt.readF32(bufs.lse), want.lse, 2e-5, 1e-4, 'lse');
        const grad = prefixAttentionBackwardRef(pqkv, qkv, dout, s, P);
        expectClose(await rt.readF32(bufs.dqkv), grad.dqkv, 5e-5, 2e-4, 'dqkv');
        expectClose(await rt.readF32(bufs.dpkv), grad.dpkv, 5e-5, 2e-4, 'dpkv');
      } finally {
        rt.release(...Object.values(bufs));
        k.dispose();
      }
    });
  }

  it('leaves no buffers behind', async () => {
    const rt = await gpuRuntime();
    expect(rt.stats().live).toBe(0);
  });
});
