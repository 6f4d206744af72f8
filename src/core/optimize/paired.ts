// The paired comparison that decides whether a candidate template replaces its parent (issue 16,
// docs/method.md §9). Both templates are scored on the same dev samples, so the question is whether the
// per-sample differences (candidate − parent) are reliably above a margin, not whether one mean
// is higher: a Student-t confidence interval of the mean difference over the pairs, and the rule
// "accept only when the interval's lower end clears the margin". Two means that differ by noise
// give an interval straddling zero and the candidate is rejected.

export interface PairedComparison {
  /** Pairs where both sides have a score. */
  n: number;
  parentMean: number | null;
  candidateMean: number | null;
  /** Mean of (candidate − parent) over the pairs. */
  meanDiff: number | null;
  /** Sample standard deviation of the differences. */
  sdDiff: number | null;
  /** The confidence interval of the mean difference (null with fewer than 2 pairs). */
  ci: [number, number] | null;
  /** Confidence level of `ci`, e.g. 0.95. */
  level: number;
}

export interface PairedDecision {
  accept: boolean;
  /** Why, in one line (numbers included). */
  reason: string;
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9): enough for the incomplete beta below to ~1e-13. */
function logGamma(x: number): number {
  const c = [
    0.9999999999998099, 676.5203681218851, -1259.1392167224028, 771.3234287776531, -176.6150291621406, 12.507343278686905, -0.13857109526572012,
    9.984369578019572e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let a = c[0];
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the regularized incomplete beta (modified Lentz). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = 1 / (Math.abs(d) < tiny ? tiny : d);
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    for (const num of [(m * (b - m) * x) / ((a + m2 - 1) * (a + m2)), (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1))]) {
      d = 1 + num * d;
      d = 1 / (Math.abs(d) < tiny ? tiny : d);
      c = 1 + num / c;
      if (Math.abs(c) < tiny) c = tiny;
      h *= d * c;
    }
    if (Math.abs(d * c - 1) < 1e-15) break;
  }
  return h;
}

/** I_x(a, b), the regularized incomplete beta function. */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  if (x < (a + 1) / (a + b + 2)) return (front * betaFraction(a, b, x)) / a;
  return 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** P(T ≤ t) for Student's t with `df` degrees of freedom. */
export function studentTCdf(t: number, df: number): number {
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** The p-quantile of Student's t with `df` degrees of freedom (bisection on the CDF, to 1e-10). */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`quantile level ${p} is not in (0, 1)`);
  if (!(df > 0)) throw new RangeError(`degrees of freedom ${df} must be positive`);
  if (p === 0.5) return 0;
  let lo = -1;
  let hi = 1;
  while (studentTCdf(lo, df) > p) lo *= 2;
  while (studentTCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-10; i++) {
    const mid = (lo + hi) / 2;
    if (studentTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

const mean = (xs: readonly number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/**
 * Compares two score lists over the same samples (index i is sample i in both). A null on either
 * side drops that pair (a sample the judge could not score says nothing about either template).
 */
export function pairedComparison(parent: readonly (number | null)[], candidate: readonly (number | null)[], level = 0.95): PairedComparison {
  if (parent.length !== candidate.length)
    throw new RangeError(`paired comparison over ${parent.length} and ${candidate.length} samples: the lists must be the same samples`);
  if (!(level > 0 && level < 1)) throw new RangeError(`confidence level ${level} is not in (0, 1)`);
  const ps: number[] = [];
  const cs: number[] = [];
  for (let i = 0; i < parent.length; i++) {
    const p = parent[i];
    const c = candidate[i];
    if (p === null || c === null || !Number.isFinite(p) || !Number.isFinite(c)) continue;
    ps.push(p);
    cs.push(c);
  }
  const diffs = cs.map((c, i) => c - ps[i]);
  const n = diffs.length;
  const meanDiff = mean(diffs);
  const out: PairedComparison = { n, parentMean: mean(ps), candidateMean: mean(cs), meanDiff, sdDiff: null, ci: null, level };
  if (n < 2 || meanDiff === null) return out;
  const sd = Math.sqrt(diffs.reduce((a, d) => a + (d - meanDiff) ** 2, 0) / (n - 1));
  const half = studentTQuantile(1 - (1 - level) / 2, n - 1) * (sd / Math.sqrt(n));
  out.sdDiff = sd;
  out.ci = [meanDiff - half, meanDiff + half];
  return out;
}

const fmt = (x: number): string => (Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));

/** One line: "Δ +3.10 [−0.42, +6.62] (95%, n = 12)". */
export function formatComparison(c: PairedComparison): string {
  if (c.meanDiff === null) return 'no paired samples';
  const sign = (x: number) => (x >= 0 ? `+${fmt(x)}` : `−${fmt(-x)}`);
  const ci = c.ci ? ` [${sign(c.ci[0])}, ${sign(c.ci[1])}]` : '';
  return `Δ ${sign(c.meanDiff)}${ci} (${Math.round(c.level * 100)}%, n = ${c.n})`;
}

/**
 * The acceptance rule: a candidate replaces its parent only when the lower end of the interval of
 * the mean difference is above `margin` (in the scores' own units). A higher mean is not enough.
 */
export function decide(c: PairedComparison, margin = 0): PairedDecision {
  if (c.n < 2 || !c.ci) return { accept: false, reason: `rejected: ${c.n} paired sample(s), too few to compare` };
  const line = formatComparison(c);
  if (c.ci[0] > margin) return { accept: true, reason: `accepted: ${line}, lower bound above the margin ${margin}` };
  if ((c.meanDiff ?? 0) > margin)
    return {
      accept: false,
      reason: `rejected: ${line}: the mean is higher but the interval reaches ${fmt(c.ci[0])}, not above the margin ${margin} (the gain may be noise)`,
    };
  return { accept: false, reason: `rejected: ${line}: no gain above the margin ${margin}` };
}
