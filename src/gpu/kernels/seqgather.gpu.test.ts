import { describe, expect, it } from 'vitest';
import { seqGatherRef, seqScatterRef } from '../../reference/seqgather.ts';
import { withScope } from '../testing/checkOp.ts';
import { randomArray } from '../testing/compare.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { SeqGatherKernel } from './seqgather.ts';

describe('seqgather kernel vs reference', () => {
  it('gathers responses into [S, L] and scatters them back, zero elsewhere', async () => {
    const S = 3;
    const T = 37;
    const L = 20;
    await withScope(await gpuRuntime(), async (g) => {
      const k = await g.kernel(SeqGatherKernel.create(g.rt, { S, T, L }));
      const rowsBuf = g.buffer('t.rows', randomArray(S * T, 1));
      const packedBuf = g.buffer('t.packed', S * L * 4);
      const backBuf = g.buffer('t.back', S * T * 4);
      for (const spans of [
        [
          { start: 0, len: 20 },
          { start: 17, len: 20 },
          { start: 36, len: 1 },
        ],
        [
          { start: 5, len: 0 },
          { start: 30, len: 7 },
          { start: 1, len: 13 },
        ],
      ]) {
        k.setSpans(spans);
        g.submit((pass) => {
          k.encodeGather(pass, rowsBuf, packedBuf);
          k.encodeScatter(pass, packedBuf, backBuf);
        });
        const rows = await g.read(rowsBuf);
        const packed = seqGatherRef(rows, spans, T, L);
        expect(Array.from(await g.read(packedBuf))).toEqual(Array.from(packed));
        expect(Array.from(await g.read(backBuf))).toEqual(Array.from(seqScatterRef(packed, spans, T, L)));
      }
      expect(() =>
        k.setSpans([
          { start: 30, len: 10 },
          { start: 0, len: 1 },
          { start: 0, len: 1 },
        ]),
      ).toThrow(/runs past T/);
    });
  });
});
