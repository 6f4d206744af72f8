// Small numeric helpers shared by the self-test, the benchmarks and the kernel tests. Their seeded
// inputs (randomArray) come from core/random.ts.

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
