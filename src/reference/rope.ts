// Plain-TypeScript twin of shaders/rope.wgsl: rotary position embedding, rotate-half (NeoX)
// form, applied in place to the q and k parts of a fused QKV buffer [rows, 3C] (C = H·D).
//
// For head h and pair i < D/2, the elements (i, i + D/2) of that head's q (and k) at position
// pos are rotated by θ = pos · base^(−2i/D):
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
  /** default 10000 */
  base?: number;
}

export function checkRopeShape(s: RopeShape): void {
  for (const k of ['rows', 'T', 'H', 'D'] as const) {
    const v = s[k];
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`rope: ${k} must be a positive integer, got ${v}`);
  }
  if (s.D % 2 !== 0) throw new RangeError(`rope: head size D must be even, got ${s.D}`);
  if (s.rows % s.T !== 0) throw new RangeError(`rope: rows (${s.rows}) must be a multiple of T (${s.T})`);
}

/** cos and sin of θ for every position < maxPos and pair i < D/2, interleaved [pos][i][cos, sin]. */
export function ropeTable(D: number, maxPos: number, base = 10000): Float64Array {
  const half = D / 2;
  const table = new Float64Array(maxPos * half * 2);
  for (let pos = 0; pos < maxPos; pos++) {
    for (let i = 0; i < half; i++) {
      const theta = pos * Math.pow(base, (-2 * i) / D);
      table[(pos * half + i) * 2] = Math.cos(theta);
      table[(pos * half + i) * 2 + 1] = Math.sin(theta);
    }
  }
  return table;
}

/** Rotates q and k of `x` ([rows, 3C]) in place by +θ (forward) or −θ (backward, on dqkv). */
export function ropeRef<A extends Float64Array | Float32Array>(x: A, s: RopeShape, offset = 0, direction: 1 | -1 = 1): A {
  checkRopeShape(s);
  const { rows, T, H, D } = s;
  const base = s.base ?? 10000;
  const C = H * D;
  const half = D / 2;
  for (let r = 0; r < rows; r++) {
    const pos = offset + (r % T);
    for (let part = 0; part < 2; part++) {
      for (let h = 0; h < H; h++) {
        const o = r * 3 * C + part * C + h * D;
        for (let i = 0; i < half; i++) {
          const theta = pos * Math.pow(base, (-2 * i) / D);
          const c = Math.cos(theta);
          const sn = direction * Math.sin(theta);
          const a = x[o + i];
          const b = x[o + i + half];
          x[o + i] = a * c - b * sn;
          x[o + i + half] = a * sn + b * c;
        }
      }
    }
  }
  return x;
}
