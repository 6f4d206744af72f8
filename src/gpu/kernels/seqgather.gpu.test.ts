import { describe, expect, it } from 'vitest';
import { seqGatherRef, seqScatterRef } from '../../reference/seqgather.ts';
import { randomArray } from '../testing/compare.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { SeqGatherKernel } from './seqgather.ts';
import { submit } from './common.ts';

describe('seqgather kernel vs reference', () => {
  it('gathers responses into [S, L] and scatters them back, zero elsewhere', async () => {
    const rt = await gpuRuntime();
    const S = 3;
    const T = 37;
    const L = 20;
    const k = await SeqGatherKernel.create(rt, { S, T, L });
    const rowsBuf = rt.storage('t.rows', randomArray(S * T, 1));
    const packedBuf = rt.storage('t.packed', S * L * 4);
    const backBuf = rt.storage('t.back', S * T * 4);
    try {
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
        submit(rt, 'test', (pass) => {
          k.encodeGather(pass, rowsBuf, packedBuf);
          k.encodeScatter(pass, packedBuf, backBuf);
        });
        const rows = await rt.readF32(rowsBuf);
        const packed = seqGatherRef(rows, spans, T, L);
        expect(Array.from(await rt.readF32(packedBuf))).toEqual(Array.from(packed));
        expect(Array.from(await rt.readF32(backBuf))).toEqual(Array.from(seqScatterRef(packed, spans, T, L)));
      }
      expect(() =>
        k.setSpans([
          { start: 30, len: 10 },
          { start: 0, len: 1 },
          { start: 0, len: 1 },
        ]),
      ).toThrow(/runs past T/);
    } finally {
      k.dispose();
      rt.release(rowsBuf, packedBuf, backBuf);
    }
  });
});
