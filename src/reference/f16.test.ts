import { describe, expect, it } from 'vitest';
import { f16Bits, f16round, f16Value, packedWords, packF16Rows, unpackF16Rows } from './f16.ts';

describe('f16 rounding and packing', () => {
  it('rounds normals to nearest, ties to even', () => {
    expect(f16round(1)).toBe(1);
    expect(f16round(1 / 3)).toBe(0.333251953125);
    // Halfway between 1 and 1 + 2^-10: ties to the even mantissa (1); just above goes up.
    expect(f16round(1 + 2 ** -11)).toBe(1);
    expect(f16round(1 + 2 ** -11 + 2 ** -20)).toBe(1 + 2 ** -10);
    // Halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): up.
    expect(f16round(1 + 3 * 2 ** -11)).toBe(1 + 2 ** -9);
    expect(f16round(-2.5)).toBe(-2.5);
    // A carry out of the mantissa bumps the exponent.
    expect(f16round(2 - 2 ** -12)).toBe(2);
  });

  it('overflows to infinity past the largest finite value, keeps inf and NaN', () => {
    expect(f16round(65504)).toBe(65504);
    expect(f16round(65519.99)).toBe(65504);
    expect(f16round(65520)).toBe(Infinity); // the tie rounds to the even side, which is past the top
    expect(f16round(-1e6)).toBe(-Infinity);
    expect(f16round(Infinity)).toBe(Infinity);
    expect(f16Bits(-Infinity)).toBe(0xfc00);
    expect(Number.isNaN(f16round(NaN))).toBe(true);
  });

  it('rounds into and out of the subnormals', () => {
    const tiny = 2 ** -24; // the smallest subnormal
    expect(f16round(tiny)).toBe(tiny);
    expect(f16round(2 ** -25)).toBe(0); // tie with 0 and 2^-24: even is 0
    expect(f16round(1.5 * 2 ** -25)).toBe(tiny);
    expect(f16round(3 * 2 ** -25)).toBe(2 * tiny); // tie between 1 and 2 units: even is 2
    expect(f16round(5 * 2 ** -25)).toBe(2 * tiny); // tie between 2 and 3 units: even is 2
    expect(f16round(1023 * tiny)).toBe(1023 * tiny); // the largest subnormal
    expect(f16round(1023.5 * tiny)).toBe(2 ** -14); // tie: rounds up into the smallest normal
    expect(f16Bits(1023.5 * tiny)).toBe(0x0400);
    expect(f16round(1e-10)).toBe(0);
    expect(Object.is(f16round(-1e-10), -0)).toBe(true);
    expect(f16Bits(-0)).toBe(0x8000);
  });

  it('agrees with the exhaustive decoding: every finite f16 rounds to itself, and midpoints to the even neighbour', () => {
    for (let h = 0; h < 0x7c00; h++) {
      const v = f16Value(h);
      expect(f16Bits(v)).toBe(h);
      expect(f16Bits(-v)).toBe(h | 0x8000);
      if (h + 1 < 0x7c00) {
        const mid = (v + f16Value(h + 1)) / 2;
        expect(f16Bits(mid)).toBe(h & 1 ? h + 1 : h);
      }
    }
  });

  it('packs rows padded to an even length, even elements in the low half', () => {
    // 2 rows of 3: words [r0: (a,b) (c,0)] [r1: (d,e) (f,0)]
    const m = [1, 2, 3, -1, 0.5, 65504];
    const w = packF16Rows(m, 2, 3);
    expect(w.length).toBe(packedWords(2, 3));
    expect(w.length).toBe(4);
    expect(w[0]).toBe((0x3c00 | (0x4000 << 16)) >>> 0);
    expect(w[1] >>> 16).toBe(0);
    expect(w[2] & 0xffff).toBe(0xbc00);
    expect(Array.from(unpackF16Rows(w, 2, 3))).toEqual(m);
    // Into a larger array at a word offset, reading from an element offset.
    const out = new Uint32Array(10);
    packF16Rows([9, 9, ...m], 2, 3, 2, out, 5);
    expect(Array.from(unpackF16Rows(out, 2, 3, 5))).toEqual(m);
    expect(out[4]).toBe(0);
    expect(out[9]).toBe(0);
  });
});
