// Python's float arithmetic where the public AgentWorldBench scorer's figures depend on it:
// `statistics.mean` (an exact sum, rounded once) and `"{:.2f}"` (round half to even on the
// exact binary value; JavaScript's toFixed rounds such ties up). Exact via BigInt, so the text
// we print is the text the public scorer prints for the same file.

/** The double as sign · m · 2^e with m an integer (exact). */
function decompose(x: number): { neg: boolean; m: bigint; e: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const neg = hi >>> 31 === 1;
  const bits = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e: number;
  if (bits === 0) e = -1074;
  else {
    m |= 1n << 52n;
    e = bits - 1075;
  }
  return { neg, m, e };
}

const bitLength = (n: bigint): number => n.toString(2).length;

/** num / den · 2^exp2 rounded to the nearest double, ties to even (num, den > 0; normal range). */
function ratioToDouble(num: bigint, den: bigint, exp2: number): number {
  // q = floor(num / den · 2^k) with 2^53 ≤ q < 2^54: 53 bits plus a rounding bit.
  let k = 54 - (bitLength(num) - bitLength(den));
  const quot = (kk: number) => (kk >= 0 ? { n: num << BigInt(kk), d: den } : { n: num, d: den << BigInt(-kk) });
  let { n, d } = quot(k);
  let q = n / d;
  while (q >= 1n << 54n) ({ n, d } = quot(--k)), (q = n / d);
  while (q < 1n << 53n) ({ n, d } = quot(++k)), (q = n / d);
  const sticky = n % d !== 0n;
  const roundBit = q & 1n;
  let mant = q >> 1n;
  if (roundBit === 1n && (sticky || (mant & 1n) === 1n)) mant += 1n;
  return Number(mant) * 2 ** (exp2 - k + 1);
}

/** The arithmetic mean as Python's `statistics.mean` gives it for floats: exact sum, one rounding. */
export function exactMean(values: readonly number[]): number {
  if (!values.length) throw new RangeError('exactMean of no values');
  const parts = values.map((v) => {
    if (!Number.isFinite(v)) throw new RangeError(`exactMean of a non-finite value (${v})`);
    return decompose(v);
  });
  const minE = Math.min(...parts.map((p) => p.e));
  let sum = 0n;
  for (const p of parts) sum += (p.neg ? -p.m : p.m) << BigInt(p.e - minE);
  if (sum === 0n) return 0;
  const neg = sum < 0n;
  const r = ratioToDouble(neg ? -sum : sum, BigInt(values.length), minE);
  return neg ? -r : r;
}

/** `f"{x:.{digits}f}"` in Python: the exact value rounded half to even. */
export function pyFixed(x: number, digits: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  const { neg, m, e } = decompose(x);
  const scaled = m * 10n ** BigInt(digits);
  let q: bigint;
  if (e >= 0) q = scaled << BigInt(e);
  else {
    const den = 1n << BigInt(-e);
    q = scaled / den;
    const twice = (scaled % den) * 2n;
    if (twice > den || (twice === den && (q & 1n) === 1n)) q += 1n;
  }
  let s = q.toString().padStart(digits + 1, '0');
  if (digits > 0) s = `${s.slice(0, -digits)}.${s.slice(-digits)}`;
  return neg ? `-${s}` : s;
}

/** Python's `round(x)` for a float: to the nearest integer, ties to even. */
export function pyRound(x: number): number {
  const f = Math.floor(x);
  const diff = x - f;
  if (diff > 0.5) return f + 1;
  if (diff < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}
