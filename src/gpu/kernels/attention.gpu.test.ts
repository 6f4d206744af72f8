import { describe, expect, it } from 'vitest';
import {
  attentionBackwardRef,
  attentionDecodeRef,
  attentionForwardRef,
  kvAppendRef,
  type AttentionShape,
  type DecodeShape,
} from '../../reference/attention.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { AttentionBackwardKernel, AttentionDecodeKernel, AttentionForwardKernel, KvAppendKernel } from './attention.ts';
import { submit } from './common.ts';
import { ATTENTION_MAX_BC, ATTENTION_TILE_VEC4 } from './tiles.ts';

// T not a multiple of the 32-row blocks or the tiles, T = 1, several blocks and tiles, and every
// head size the model may use (8, 24, 64, 128; 128 also gets the smaller tiles it needs). These
// share the generic pipelines (head size from the uniform); one shape also runs the pipelines
// specialised for its head size, which SwiftShader uses for D ≤ 32 (each set of pipelines
// costs seconds to compile there, so the file keeps to two sets).
const SHAPES: [AttentionShape, boolean][] = [
  [{ B: 2, T: 37, H: 3, D: 8 }, false],
  [{ B: 1, T: 70, H: 1, D: 8 }, false],
  [{ B: 1, T: 1, H: 2, D: 24 }, false],
  [{ B: 2, T: 5, H: 2, D: 24 }, false],
  [{ B: 1, T: 20, H: 1, D: 64 }, false],
  [{ B: 1, T: 33, H: 1, D: 128 }, false],
  [{ B: 2, T: 45, H: 2, D: 16 }, true],
  // Long context: 1030 rows, 33 blocks, many tiles.
  [{ B: 1, T: 1030, H: 1, D: 8 }, false],
  // Grouped-query attention: 2 and 3 query heads per k/v head.
  [{ B: 2, T: 37, H: 4, D: 8, kvH: 2 }, false],
  [{ B: 2, T: 45, H: 3, D: 16, kvH: 1 }, true],
];

async function run(encode: (pass: GPUComputePassEncoder) => void) {
  submit(await gpuRuntime(), 'test', encode);
}

describe('attention kernels vs reference', () => {
  for (const [s, specialise] of SHAPES) {
    it(`forward and backward ${JSON.stringify(s)}${specialise ? ' (specialised)' : ''}`, async () => {
      const rt = await gpuRuntime();
      const C = s.H * s.D;
      const qkv = randomArray(s.B * s.T * (C + 2 * (s.kvH ?? s.H) * s.D), s.T * 31 + s.D);
      // Spread the scores (|s| up to a few units) so the softmax is far from uniform.
      for (let i = 0; i < qkv.length; i++) qkv[i] *= 2;
      const dout = randomArray(s.B * s.T * C, s.T * 17 + s.D);
      const fwd = await AttentionForwardKernel.create(rt, s, { specialise });
      const bwd = await AttentionBackwardKernel.create(rt, s, { specialise });
      const bQkv = rt.storage('t.qkv', qkv);
      const bOut = rt.storage('t.out', s.B * s.T * C * 4);
      const bLse = rt.storage('t.lse', s.B * s.H * s.T * 4);
      const bDout = rt.storage('t.dout', dout);
      // Garbage in dqkv proves the backward overwrites every element.
      const bDqkv = rt.storage('t.dqkv', randomArray(qkv.length, 99));
      try {
        await run((pass) => {
          fwd.encode(pass, bQkv, bOut, bLse);
          bwd.encode(pass, bQkv, bOut, bLse, bDout, bDqkv);
        });
        const want = attentionForwardRef(qkv, s);
        expectClose(await rt.readF32(bOut), want.out, 2e-5, 1e-4, 'out');
        expectClose(await rt.readF32(bLse), want.lse, 2e-5, 1e-4, 'lse');
        expectClose(await rt.readF32(bDqkv), attentionBackwardRef(qkv, dout, s), 5e-5, 2e-4, 'dqkv');
      } finally {
        rt.release(bQkv, bOut, bLse, bDout, bDqkv);
        fwd.dispose();
        bwd.dispose();
      }
    });
  }

  it('is deterministic: the same inputs give bit-identical gradients', async () => {
    const rt = await gpuRuntime();
    const s = SHAPES[0][0];
    const C = s.H * s.D;
    const fwd = await AttentionForwardKernel.create(rt, s, { specialise: false });
    const bwd = await AttentionBackwardKernel.create(rt, s, { specialise: false });
    const bufs = [
      rt.storage('t.qkv', randomArray(s.B * s.T * 3 * C, 1)),
      rt.storage('t.out', s.B * s.T * C * 4),
      rt.storage('t.lse', s.B * s.H * s.T * 4),
      rt.storage('t.dout', randomArray(s.B * s.T * C, 2)),
      rt.storage('t.dqkv', s.B * s.T * 3 * C * 4),
    ];
    const once = async () => {
      await run((pass) => {
        fwd.encode(pass, bufs[0], bufs[1], bufs[2]);
        bwd.encode(pass, bufs[0], bufs[1], bufs[2], bufs[3], bufs[4]);
      });
      return rt.readF32(bufs[4]);
    };
    expect(await once()).toEqual(await once());
    rt.release(...bufs);
    fwd.dispose();
    bwd.dispose();
  });

  for (const [D, H, kvH] of [
    [8, 2, 2],
    [24, 2, 2],
    [128, 1, 1],
    [8, 4, 2],
  ]) {
    it(`KV-cache decode with a shared prefix, then plain decode (D = ${D}${D === 8 ? ', specialised' : ''}${kvH < H ? `, ${H} query heads on ${kvH} k/v heads` : ''})`, async () => {
      const rt = await gpuRuntime();
      const C = H * D,
        KV = kvH * D,
        S = 3,
        Tmax = 80,
        P = 9;
      const prefK = randomArray(P * KV, D + 1);
      const prefV = randomArray(P * KV, D + 2);
      const kCache = new Float32Array(S * Tmax * KV);
      const vCache = new Float32Array(S * Tmax * KV);
      const bPK = rt.storage('t.pk', prefK);
      const bPV = rt.storage('t.pv', prefV);
      const bKC = rt.storage('t.kc', kCache);
      const bVC = rt.storage('t.vc', vCache);
      const kernels: { release(): void }[] = [];
      try {
        // Continuation prefill of 67 rows (more than one 64-key tile), then two single-row steps.
        let past = 0;
        for (const [Tn, withPrefix] of [
          [67, true],
          [1, true],
          [1, false],
        ] as [number, boolean][]) {
          const shape: DecodeShape = { S, Tn, H, D, kvH, Tmax };
          const step = { pastLen: past, prefixLen: withPrefix ? P : 0 };
          const qkv = randomArray(S * Tn * (C + 2 * KV), Tn * 5 + past + D);
          const dec = await AttentionDecodeKernel.create(rt, shape, { specialise: D === 8 });
          const app = await KvAppendKernel.create(rt, shape);
          const bQkv = rt.storage('t.qkv', qkv);
          const bOut = rt.storage('t.out', S * Tn * C * 4);
          kernels.push({ release: () => (dec.dispose(), app.dispose(), rt.release(bQkv, bOut)) });
          await run((pass) => {
            app.encode(pass, bQkv, bKC, bVC, past);
            dec.encode(pass, { qkv: bQkv, kCache: bKC, vCache: bVC, out: bOut, prefixK: bPK, prefixV: bPV }, step);
          });
          kvAppendRef(qkv, kCache, vCache, shape, past);
          expectClose(await rt.readF32(bKC), kCache, 0, 0, 'kCache');
          expectClose(await rt.readF32(bVC), vCache, 0, 0, 'vCache');
          const want = attentionDecodeRef(qkv, kCache, vCache, withPrefix ? prefK : null, withPrefix ? prefV : null, shape, step);
          expectClose(await rt.readF32(bOut), want, 2e-5, 1e-4, `decode out (Tn ${Tn})`);
          past += Tn;
        }
      } finally {
        for (const k of kernels) k.release();
        rt.release(bPK, bPV, bKC, bVC);
      }
    });
  }

  it('a Params block with the grouped-query words zero (padding before) is multi-head attention', async () => {
    const rt = await gpuRuntime();
    const s: AttentionShape = { B: 1, T: 9, H: 2, D: 8 };
    const qkv = randomArray(s.T * 3 * 16, 5);
    const fwd = await AttentionForwardKernel.create(rt, s, { specialise: false });
    // The block as it was laid out before: T, H, C/4, scale, Tmax, pastLen, prefixLen, D/4, BC, then padding.
    const words = new Uint32Array(12);
    words.set([s.T, s.H, 4, 0, 0, 0, 0, 2, Math.min(ATTENTION_MAX_BC, Math.floor(ATTENTION_TILE_VEC4 / 2)), 0, 0]);
    new Float32Array(words.buffer)[3] = 1 / Math.sqrt(s.D);
    rt.write((fwd as unknown as { params: GPUBuffer }).params, words);
    const bufs = [rt.storage('t.qkv', qkv), rt.storage('t.out', s.T * 16 * 4), rt.storage('t.lse', 2 * s.T * 4)];
    try {
      await run((pass) => fwd.encode(pass, bufs[0], bufs[1], bufs[2]));
      expectClose(await rt.readF32(bufs[1]), attentionForwardRef(qkv, s).out, 2e-5, 1e-4, 'out');
    } finally {
      rt.release(...bufs);
      fwd.dispose();
    }
  });

  it('leaves no buffers behind', async () => {
    const rt = await gpuRuntime();
    expect(rt.stats().live).toBe(0);
  });
});
