// Test inputs shared by the reference twins' tests: a seeded uniform array in [-1, 1) from a
// linear congruential generator, so every test file draws the same values for the same seed.
export function rand(n: number, seed: number): Float64Array {
  const out = new Float64Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32) * 2 - 1;
  }
  return out;
}
