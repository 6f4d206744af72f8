import { describe, expect, it } from 'vitest';
import { attentionBackwardRef, attentionDecodeRef, attentionForwardRef, kvAppendRef, type AttentionShape } from './attention.ts';
import { rand } from './testing.ts';

describe('attention reference', () => {
  it('T = 1 returns v; a uniform score row averages the values', () => {
    const s: AttentionShape = { B: 1, T: 1, H: 2, D: 4 };
    const qkv = rand(3 * 8, 1);
    const { out, lse } = attentionForwardRef(qkv, s);
    expect(Array.from(out)).toEqual(Array.from(qkv.slice(16, 24)));
    expect(lse[0]).toBeCloseTo(qkv.slice(0, 4).reduce((a, q, d) => a + q * qkv[8 + d], 0) / 2, 12);
    // q = 0: every causal key scores 0, so row t averages v_0..v_t.
    const s2: AttentionShape = { B: 1, T: 3, H: 1, D: 4 };
    const qkv2 = rand(3 * 12, 2);
    for (let t = 0; t < 3; t++) qkv2.fill(0, t * 12, t * 12 + 4);
    const o2 = attentionForwardRef(qkv2, s2).out;
    for (let d = 0; d < 4; d++) expect(o2[2 * 4 + d]).toBeCloseTo((qkv2[8 + d] + qkv2[20 + d] + qkv2[32 + d]) / 3, 12);
  });

  for (const s of [
    { B: 2, T: 5, H: 2, D: 4 },
    { B: 1, T: 1, H: 1, D: 8 },
    { B: 1, T: 4, H: 3, D: 8 },
    { B: 2, T: 5, H: 4, D: 4, kvH: 2 },
    { B: 1, T: 3, H: 3, D: 8, kvH: 1 },
  ] as AttentionShape[]) {
    it(`backward matches central finite differences (${JSON.stringify(s)})`, () => {
      const C = s.H * s.D;
      const W = C + 2 * (s.kvH ?? s.H) * s.D;
      const qkv = rand(s.B * s.T * W, 7 + s.T);
      const dout = rand(s.B * s.T * C, 11 + s.T);
      const f = (x: Float64Array) => attentionForwardRef(x, s).out.reduce((a, o, i) => a + o * dout[i], 0);
      const grad = attentionBackwardRef(qkv, dout, s);
      const h = 1e-6;
      for (let i = 0; i < qkv.length; i++) {
        const xp = qkv.slice();
        const xm = qkv.slice();
        xp[i] += h;
        xm[i] -= h;
        const fd = (f(xp) - f(xm)) / (2 * h);
        expect(Math.abs(grad[i] - fd)).toBeLessThan(1e-7 + 1e-6 * Math.abs(fd));
      }
    });
  }

  it('decode over an appended cache equals full causal attention; a shared prefix equals attending to the concatenation', () => {
    const H = 2,
      D = 4,
      C = H * D,
      T = 6,
      P = 4,
      S = 3,
      Tmax = 8;
    // Full sequences of P + T tokens per sample, all with the same first P rows (the prompt).
    const prompt = rand(P * 3 * C, 21);
    const full: Float64Array[] = [];
    for (let q = 0; q < S; q++) {
      const x = new Float64Array((P + T) * 3 * C);
      x.set(prompt, 0);
      x.set(rand(T * 3 * C, 30 + q), P * 3 * C);
      full.push(x);
    }
    const prefK = new Float64Array(P * C);
    const prefV = new Float64Array(P * C);
    kvAppendRef(prompt, prefK, prefV, { S: 1, Tn: P, H, D, Tmax: P }, 0);
    const kCache = new Float64Array(S * Tmax * C);
    const vCache = new Float64Array(S * Tmax * C);
    // Continuation prefill of 2 rows, then decode the rest one row at a time.
    let past = 0;
    for (const Tn of [2, 1, 1, 1, 1]) {
      const qkv = new Float64Array(S * Tn * 3 * C);
      for (let q = 0; q < S; q++) qkv.set(full[q].slice((P + past) * 3 * C, (P + past + Tn) * 3 * C), q * Tn * 3 * C);
      const shape = { S, Tn, H, D, Tmax };
      kvAppendRef(qkv, kCache, vCache, shape, past);
      const out = attentionDecodeRef(qkv, kCache, vCache, prefK, prefV, shape, { pastLen: past, prefixLen: P });
      for (let q = 0; q < S; q++) {
        const want = attentionForwardRef(full[q], { B: 1, T: P + T, H, D }).out;
        for (let n = 0; n < Tn; n++) {
          for (let c = 0; c < C; c++) expect(out[(q * Tn + n) * C + c]).toBeCloseTo(want[(P + past + n) * C + c], 12);
        }
      }
      past += Tn;
    }
  });

  it('grouped-query attention is multi-head attention with each k/v head repeated over its group', () => {
    const s: AttentionShape = { B: 2, T: 5, H: 6, D: 4, kvH: 2 };
    const { B, T, H, D } = s;
    const C = H * D;
    const KV = 2 * D;
    const gqa = rand(B * T * (C + 2 * KV), 21);
    // Expand to H k/v heads: query head h reads k/v head floor(h / 3).
    const mha = new Float64Array(B * T * 3 * C);
    for (let r = 0; r < B * T; r++) {
      for (let i = 0; i < C; i++) mha[r * 3 * C + i] = gqa[r * (C + 2 * KV) + i];
      for (let h = 0; h < H; h++) {
        for (let d = 0; d < D; d++) {
          mha[r * 3 * C + C + h * D + d] = gqa[r * (C + 2 * KV) + C + Math.floor(h / 3) * D + d];
          mha[r * 3 * C + 2 * C + h * D + d] = gqa[r * (C + 2 * KV) + C + KV + Math.floor(h / 3) * D + d];
        }
      }
    }
    const a = attentionForwardRef(gqa, s);
    const b = attentionForwardRef(mha, { B, T, H, D });
    expect(Array.from(a.out)).toEqual(Array.from(b.out));
    expect(Array.from(a.lse)).toEqual(Array.from(b.lse));
    // The gradient of a shared k/v head is the sum over the query heads that read it.
    const dout = rand(B * T * C, 22);
    const ga = attentionBackwardRef(gqa, dout, s);
    const gb = attentionBackwardRef(mha, dout, { B, T, H, D });
    for (let r = 0; r < B * T; r++) {
      for (let i = 0; i < C; i++) expect(ga[r * (C + 2 * KV) + i]).toBeCloseTo(gb[r * 3 * C + i], 12);
      for (let part = 0; part < 2; part++) {
        for (let j = 0; j < KV; j++) {
          const hk = Math.floor(j / D),
            d = j % D;
          let sum = 0;
          for (let g = 0; g < 3; g++) sum += gb[r * 3 * C + (1 + part) * C + (hk * 3 + g) * D + d];
          expect(ga[r * (C + 2 * KV) + C + part * KV + j]).toBeCloseTo(sum, 12);
        }
      }
    }
    // Decode with a cache of the k/v heads only equals the full causal attention.
    const dec = { S: B, Tn: 2, H, D, kvH: 2, Tmax: 8 };
    const kc = new Float64Array(B * 8 * KV);
    const vc = new Float64Array(B * 8 * KV);
    const rows = (t0: number) => {
      const out = new Float64Array(B * 2 * (C + 2 * KV));
      for (let q = 0; q < B; q++) out.set(gqa.subarray((q * T + t0) * (C + 2 * KV), (q * T + t0 + 2) * (C + 2 * KV)), q * 2 * (C + 2 * KV));
      return out;
    };
    kvAppendRef(rows(0), kc, vc, dec, 0);
    kvAppendRef(rows(2), kc, vc, dec, 2);
    const got = attentionDecodeRef(rows(2), kc, vc, null, null, dec, { pastLen: 2, prefixLen: 0 });
    for (let q = 0; q < B; q++) {
      for (let n = 0; n < 2; n++) {
        for (let i = 0; i < C; i++) expect(got[(q * 2 + n) * C + i]).toBeCloseTo(a.out[(q * T + 2 + n) * C + i], 12);
      }
    }
  });
});
