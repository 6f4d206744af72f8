// GSPO (docs/method.md §6): group advantages and the sequence-level clipped objective, the plain-TypeScript
// twin of shaders/gspo.wgsl.
//
// Per-token log-probabilities are laid out [numSeqs, Lmax]; sequence i has lengths[i] valid
// tokens (the rest is padding and is ignored). With Δ_i = (1/len_i) Σ_{t<len_i} (logp_new − logp_old):
//   s_i    = exp(Δ_i)                                   sequence importance ratio
//   term_i = min(s_i A_i, clip(s_i, 1 − ε_low, 1 + ε_high) A_i)
//   J      = (1/numSeqs) Σ_i term_i                      maximised
//   L      = −J                                          what an optimizer minimises
// Sequence i is "clipped" when the clipped branch is the one taken and differs from the
// unclipped one: A_i > 0 and s_i > 1 + ε_high, or A_i < 0 and s_i < 1 − ε_low. A clipped
// sequence's term is constant in θ, so it passes no gradient. Otherwise
//   dL/dlogp_new[i, t] = −(1/numSeqs) · A_i · s_i / len_i     for t < len_i, and 0 on padding.
// A sequence of length 0 has s = 1, no tokens and so no gradient; it still counts in the means.

export interface GspoInput {
  logpNew: ArrayLike<number>;
  logpOld: ArrayLike<number>;
  lengths: ArrayLike<number>;
  advantages: ArrayLike<number>;
  numSeqs: number;
  Lmax: number;
  epsLow: number;
  epsHigh: number;
}

export interface GspoResult {
  /** the objective J (maximised) */
  objective: number;
  /** L = −J */
  loss: number;
  /** share of sequences whose clipped branch is taken and differs */
  clipFraction: number;
  /** mean of s_i */
  meanRatio: number;
  /** per sequence: s_i */
  ratios: Float64Array;
  /** per sequence: whether it is clipped */
  clipped: boolean[];
  /** dL/dlogp_new, [numSeqs, Lmax] */
  grad: Float64Array;
}

/** The method's clip range (docs/method.md §6). */
export const GSPO_EPS_LOW = 3e-4;
export const GSPO_EPS_HIGH = 4e-4;

export function checkGspoInput(x: GspoInput): void {
  if (!Number.isInteger(x.numSeqs) || x.numSeqs < 1) throw new RangeError(`gspo: numSeqs must be a positive integer, got ${x.numSeqs}`);
  if (!Number.isInteger(x.Lmax) || x.Lmax < 1) throw new RangeError(`gspo: Lmax must be a positive integer, got ${x.Lmax}`);
  if (!(x.epsLow >= 0 && x.epsLow < 1) || !(x.epsHigh >= 0)) throw new RangeError(`gspo: need 0 ≤ ε_low < 1 and ε_high ≥ 0, got ${x.epsLow}, ${x.epsHigh}`);
  for (let i = 0; i < x.numSeqs; i++) {
    const len = x.lengths[i];
    if (!Number.isInteger(len) || len < 0 || len > x.Lmax) throw new RangeError(`gspo: lengths[${i}] = ${len} is outside 0..${x.Lmax}`);
  }
}

export function gspoRef(x: GspoInput): GspoResult {
  checkGspoInput(x);
  const { numSeqs, Lmax, epsLow, epsHigh } = x;
  const grad = new Float64Array(numSeqs * Lmax);
  const ratios = new Float64Array(numSeqs);
  const clipped: boolean[] = [];
  let sumTerm = 0;
  let sumRatio = 0;
  let nClipped = 0;
  for (let i = 0; i < numSeqs; i++) {
    const len = x.lengths[i];
    let delta = 0;
    for (let t = 0; t < len; t++) delta += x.logpNew[i * Lmax + t] - x.logpOld[i * Lmax + t];
    const s = Math.exp(len > 0 ? delta / len : 0);
    const A = x.advantages[i];
    const sClip = Math.min(Math.max(s, 1 - epsLow), 1 + epsHigh);
    const isClipped = (A > 0 && s > 1 + epsHigh) || (A < 0 && s < 1 - epsLow);
    sumTerm += Math.min(s * A, sClip * A);
    sumRatio += s;
    ratios[i] = s;
    clipped.push(isClipped);
    if (isClipped) {
      nClipped++;
    } else {
      for (let t = 0; t < len; t++) grad[i * Lmax + t] = (-A * s) / (len * numSeqs);
    }
  }
  const objective = sumTerm / numSeqs;
  return { objective, loss: -objective, clipFraction: nClipped / numSeqs, meanRatio: sumRatio / numSeqs, ratios, clipped, grad };
}

/**
 * A_i = (r_i − mean(r)) / (std(r) + eps) within each group of `groupSize` consecutive rewards.
 *
 * std convention: the population standard deviation, sqrt(Σ (r − mean)² / G) (divide by G, not
 * G − 1). It is defined for G = 1 (giving A = 0) and is what docs/method.md §6's "std(r)" means for a group
 * taken as the whole population it describes. A group whose rewards are all equal gets A = 0.
 * eps defaults to 1e-6: it only guards the division and is small next to any real reward spread
 * on the [0, 25] reward scale.
 */
export function groupAdvantages(rewards: ArrayLike<number>, groupSize: number, eps = 1e-6): Float64Array {
  if (!Number.isInteger(groupSize) || groupSize < 1) throw new RangeError(`advantages: group size must be a positive integer, got ${groupSize}`);
  if (rewards.length % groupSize !== 0) throw new RangeError(`advantages: ${rewards.length} rewards do not split into groups of ${groupSize}`);
  const out = new Float64Array(rewards.length);
  for (let g0 = 0; g0 < rewards.length; g0 += groupSize) {
    let mean = 0;
    let allEqual = true;
    for (let i = 0; i < groupSize; i++) {
      mean += rewards[g0 + i];
      allEqual &&= rewards[g0 + i] === rewards[g0];
    }
    // Rounding in the mean would leave ±1e-17 "advantages" in an all-equal group; it has
    // nothing to learn from, so its advantages are exactly 0.
    if (allEqual) continue;
    mean /= groupSize;
    let v = 0;
    for (let i = 0; i < groupSize; i++) v += (rewards[g0 + i] - mean) ** 2;
    const std = Math.sqrt(v / groupSize);
    for (let i = 0; i < groupSize; i++) out[g0 + i] = (rewards[g0 + i] - mean) / (std + eps);
  }
  return out;
}
