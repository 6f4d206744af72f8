// Tolerant array comparison for GPU-vs-reference tests, with a message that says where.
export { maxAbsDiff } from '../numeric.ts';
export { randomArray } from '../../core/random.ts';

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
