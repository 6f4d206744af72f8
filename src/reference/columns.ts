// Plain-TypeScript twin of shaders/columns.wgsl: a block of columns of one row-major matrix,
// scaled, written or added into a block of columns of another.
//   dst[r·dstWidth + dstOffset + c] (+)= alpha · src[r·srcWidth + srcOffset + c]

export interface ColumnsShape {
  rows: number;
  /** Columns moved. */
  width: number;
  /** Row length of src and the first column taken. */
  srcWidth: number;
  srcOffset: number;
  /** Row length of dst and the first column written. */
  dstWidth: number;
  dstOffset: number;
  /** Scale (default 1). */
  alpha?: number;
  /** Add into dst instead of overwriting (default false). */
  accumulate?: boolean;
}

export function checkColumnsShape(s: ColumnsShape): void {
  for (const k of ['rows', 'width', 'srcWidth', 'dstWidth'] as const) {
    if (!Number.isInteger(s[k]) || s[k] < 1) throw new RangeError(`columns: ${k} must be a positive integer, got ${s[k]}`);
  }
  for (const k of ['srcOffset', 'dstOffset'] as const) {
    if (!Number.isInteger(s[k]) || s[k] < 0) throw new RangeError(`columns: ${k} must be a non-negative integer, got ${s[k]}`);
  }
  if (s.srcOffset + s.width > s.srcWidth) throw new RangeError(`columns: columns ${s.srcOffset}..${s.srcOffset + s.width} pass src's width ${s.srcWidth}`);
  if (s.dstOffset + s.width > s.dstWidth) throw new RangeError(`columns: columns ${s.dstOffset}..${s.dstOffset + s.width} pass dst's width ${s.dstWidth}`);
}

/** In place on `dst`; returns it. */
export function columnsRef<A extends Float32Array | Float64Array>(src: ArrayLike<number>, dst: A, s: ColumnsShape): A {
  checkColumnsShape(s);
  const alpha = s.alpha ?? 1;
  for (let r = 0; r < s.rows; r++) {
    for (let c = 0; c < s.width; c++) {
      const j = r * s.dstWidth + s.dstOffset + c;
      const v = alpha * src[r * s.srcWidth + s.srcOffset + c];
      dst[j] = s.accumulate ? dst[j] + v : v;
    }
  }
  return dst;
}
