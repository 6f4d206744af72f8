// Tolerant array comparison for GPU-vs-reference tests, with a message that says where.
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): { max: number; at: number } {
  if (a.length !== b.length) throw new Error(`length mismatch: ${a.length} vs ${b.length}`);
  let max = 0;
  let at = -1;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= max)) {
      max = d;
      at = i;
    }
  }
  return { max, at };
}

/** Throws unless |got - want| <= atol + rtol·|want| everywhere. */
export function expectClose(got: ArrayLike<number>, want: ArrayLike<number>, atol = 1e-4, rtol = 1e-4, what = 'value'): void {
  if (got.length !== want.length) throw new Error(`${what}: length ${got.length}, expected ${want.length}`);
  for (let i = 0; i < got.length; i++) {
    const tol = atol + rtol * Math.abs(want[i]);
    if (!(Math.abs(got[i] - want[i]) <= tol)) {
      throw new Error(`${what}[${i}] = ${got[i]}, expected ${want[i]} (tolerance ${tol.toExponential(2)})`);
    }
  }
}

/** Deterministic pseudo-random floats in [-1, 1) (mulberry32). */
export function randomArray(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return out;
}
