// Plain-TypeScript twin of shaders/rope.wgsl: rotary position embedding, rotate-half (NeoX)
// form, applied in place to the q and k parts of a fused QKV buffer [rows, (H + 2·KVH)·D]:
// H query heads, then KVH key heads, then KVH value heads (KVH = H unless grouped-query).
//
// For head h and pair i < D/2, the elements (i, i + D/2) of that head's q (and k) at position
// pos are rotated by θ = pos · freq_i, with freq_i = base^(−2i/D) unless the shape gives its own
// frequencies (RoPE scaling: src/core/model/config.ts's ropeFrequencies):
//   x_i'       = x_i cos θ − x_{i+D/2} sin θ
//   x_{i+D/2}' = x_i sin θ + x_{i+D/2} cos θ
// Row r is token t = r mod T of its sequence, at position offset + t (offset > 0 when decoding
// after a cache of that many rows). The map is a rotation, so its backward is the rotation by −θ
// applied to dq and dk; dv passes through.

export interface RopeShape {
  /** rows = sequences × T */
  rows: number;
  /** tokens per sequence in this buffer */
  T: number;
  H: number;
  D: number;
  /** key/value heads; default H */
  kvH?: number;
  /** default 10000 */
  base?: number;
  /** D/2 frequencies that replace base^(−2i/D) (scaled RoPE) */
  freqs?: ArrayLike<number>;
}

/** The frequency of each pair: the shape's own, or base^(−2i/D). */
export function ropeFreqs(s: Pick<RopeShape, 'D' | 'base' | 'freqs'>): Float64Array {
  if (s.freqs) return Float64Array.from(s.freqs);
  const base = s.base ?? 10000;
  return Float64Array.from({ length: s.D / 2 }, (_, i) => base ** ((-2 * i) / s.D));
}

export function checkRopeShape(s: RopeShape): void {
  for (const k of ['rows', 'T', 'H', 'D'] as const) {
    const v = s[k];
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`rope: ${k} must be a positive integer, got ${v}`);
  }
  if (s.D % 2 !== 0) throw new RangeError(`rope: head size D must be even, got ${s.D}`);
  if (s.rows % s.T !== 0) throw new RangeError(`rope: rows (${s.rows}) must be a multiple of T (${s.T})`);
  const kvH = s.kvH ?? s.H;
  if (!Number.isInteger(kvH) || kvH < 1) throw new RangeError(`rope: kvH must be a positive integer, got ${kvH}`);
  if (s.freqs && s.freqs.length !== s.D / 2) throw new RangeError(`rope: ${s.freqs.length} frequencies for ${s.D / 2} pairs`);
}

/** cos and sin of θ for every position < maxPos and pair i < D/2, interleaved [pos][i][cos, sin]. */
export function ropeTable(D: number, maxPos: number, base = 10000, freqs: ArrayLike<number> = ropeFreqs({ D, base })): Float64Array {
  const half = D / 2;
  const table = new Float64Array(maxPos * half * 2);
  for (let pos = 0; pos < maxPos; pos++) {
    for (let i = 0; i < half; i++) {
      const theta = pos * freqs[i];
      table[(pos * half + i) * 2] = Math.cos(theta);
      table[(pos * half + i) * 2 + 1] = Math.sin(theta);
    }
  }
  return table;
}

/** Rotates q and k of `x` ([rows, (H + 2·KVH)·D]) in place by +θ (forward) or −θ (backward, on dqkv). */
export function ropeRef<A extends Float64Array | Float32Array>(x: A, s: RopeShape, offset = 0, direction: 1 | -1 = 1): A {
  checkRopeShape(s);
  const { rows, T, H, D } = s;
  const kvH = s.kvH ?? H;
  const freqs = ropeFreqs(s);
  const W = (H + 2 * kvH) * D;
  const half = D / 2;
  for (let r = 0; r < rows; r++) {
    const pos = offset + (r % T);
    // q heads then k heads: H + kvH heads of D from the row's start.
    for (let h = 0; h < H + kvH; h++) {
      const o = r * W + h * D;
      for (let i = 0; i < half; i++) {
        const theta = pos * freqs[i];
        const c = Math.cos(theta);
        const sn = direction * Math.sin(theta);
        const a = x[o + i];
        const b = x[o + i + half];
        x[o + i] = a * c - b * sn;
        x[o + i + half] = a * sn + b * c;
      }
    }
  }
  return x;
}
