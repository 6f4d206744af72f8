// f16 weight storage without the shader-f16 extension: IEEE binary16 values packed two per u32
// word, the even element in the low 16 bits, which is what WGSL's core builtin unpack2x16float
// reads back as .x (and the odd one as .y). A matrix is packed row by row, each row padded to an
// even length (a zero half at its end when it is odd), so row r starts at word r·ceil(cols/2) and
// no pair straddles two rows: a kernel splitting the matrix by rows, or reading an odd-length row,
// never needs the neighbouring row's half. The host rounds f32 → f16 to nearest, ties to even
// (what Math.f16round does, which Node 20 lacks); the GPU only ever unpacks, which is exact.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The binary16 bits of x rounded to f32 and then to f16 (nearest, ties to even; overflow → ±inf; NaN stays NaN). */
export function f16Bits(x: number): number {
  f32[0] = x;
  const b = u32[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  const mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 112; // the f16 biased exponent (127 − 15)
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal (or zero): the 24-bit significand, implicit bit included, shifted to units of 2^-24.
    const shift = 14 - e;
    if (shift > 24) return sign;
    const m = mant | 0x800000;
    let h = m >>> shift;
    const rem = m & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && h & 1)) h++;
    return sign | h; // a carry into bit 10 is the smallest normal: the right bits
  }
  let h = sign | (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++; // a carry into the exponent is right too, up to inf
  return h;
}

/** The value of binary16 bits `h`. */
export function f16Value(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** x rounded to f32, then to the nearest f16 (ties to even), as a number. */
export function f16round(x: number): number {
  return f16Value(f16Bits(x));
}

/** u32 words a [rows, cols] matrix takes packed: each row padded to an even length. */
export function packedWords(rows: number, cols: number): number {
  return rows * Math.ceil(cols / 2);
}

/**
 * Packs the [rows, cols] row-major matrix at `offset` of `src` into `out` at word `outOffset`
 * (default: a new array of packedWords words). Returns `out`.
 */
export function packF16Rows(src: ArrayLike<number>, rows: number, cols: number, offset = 0, out?: Uint32Array, outOffset = 0): Uint32Array {
  const per = Math.ceil(cols / 2);
  const dst = out ?? new Uint32Array(rows * per);
  for (let r = 0; r < rows; r++) {
    const row = offset + r * cols;
    const at = outOffset + r * per;
    for (let j = 0; j < per; j++) {
      const lo = f16Bits(src[row + 2 * j]);
      const hi = 2 * j + 1 < cols ? f16Bits(src[row + 2 * j + 1]) : 0;
      dst[at + j] = (lo | (hi << 16)) >>> 0;
    }
  }
  return dst;
}

/** The [rows, cols] matrix packed at word `offset` of `words`, as f32 (every value an f16 one). */
export function unpackF16Rows(words: ArrayLike<number>, rows: number, cols: number, offset = 0): Float32Array {
  const per = Math.ceil(cols / 2);
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const w = words[offset + r * per + (c >> 1)];
      out[r * cols + c] = f16Value(c & 1 ? w >>> 16 : w & 0xffff);
    }
  }
  return out;
}
