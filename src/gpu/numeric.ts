// Small numeric helpers shared by the self-test, the benchmarks and the kernel tests.

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
