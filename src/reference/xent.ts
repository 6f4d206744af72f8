// Plain-TypeScript twin of shaders/xent.wgsl: softmax cross-entropy with a per-token loss weight,
// fused with its gradient wrt the logits. f64 throughout.
//
// Semantics (shared with the kernel):
//   nll[r]  = logsumexp(logits[r]) − logits[r, target[r]]   (unweighted; 0 when target[r] ≥ V)
//   loss    = Σ_r w_r·nll[r] / W,  W as passed by the host (0 when W = 0): training passes the
//             number of target tokens (targetCount), evaluation Σ_r w_r (weightSum)
//   dlogits = (w_r / W)·(softmax(logits[r]) − onehot(target[r]))   (all zeros when W = 0)
// A target ≥ V marks a padding row: it counts as weight 0 (the host's W must not include it).

export interface XentResult {
  nll: Float32Array;
  loss: number;
  /** Weighted sum Σ w_r·nll[r], before dividing by W. */
  weightedSum: number;
  dlogits: Float32Array | null;
}

export function xentRef(
  logits: ArrayLike<number>,
  targets: ArrayLike<number>,
  weights: ArrayLike<number>,
  N: number,
  V: number,
  W: number,
  grad = true,
): XentResult {
  const nll = new Float32Array(N);
  const dlogits = grad ? new Float32Array(N * V) : null;
  let weightedSum = 0;
  for (let r = 0; r < N; r++) {
    const t = targets[r];
    const valid = t < V;
    let m = -Infinity;
    for (let c = 0; c < V; c++) m = Math.max(m, logits[r * V + c]);
    let s = 0;
    for (let c = 0; c < V; c++) s += Math.exp(logits[r * V + c] - m);
    const lse = m + Math.log(s);
    const l = valid ? lse - logits[r * V + t] : 0;
    nll[r] = l;
    if (valid) weightedSum += weights[r] * l;
    if (dlogits) {
      const scale = valid && W > 0 ? weights[r] / W : 0;
      for (let c = 0; c < V; c++) dlogits[r * V + c] = scale * (Math.exp(logits[r * V + c] - lse) - (c === t ? 1 : 0));
    }
  }
  return { nll, loss: W > 0 ? weightedSum / W : 0, weightedSum, dlogits };
}

/** The host side of W: the sum of the weights of rows with a real target. */
export function weightSum(targets: ArrayLike<number>, weights: ArrayLike<number>, V: number): number {
  let W = 0;
  for (let r = 0; r < targets.length; r++) if (targets[r] < V) W += weights[r];
  return W;
}

/**
 * The W that training passes: the number of rows with a real target and a weight > 0. Dividing
 * by it instead of Σ w keeps a token's gradient proportional to its own weight, whatever the
 * weights of the other tokens in the batch (docs/method.md §4: an echo token always gets 5% of a
 * retrieval token's gradient).
 */
export function targetCount(targets: ArrayLike<number>, weights: ArrayLike<number>, V: number): number {
  let n = 0;
  for (let r = 0; r < targets.length; r++) if (targets[r] < V && weights[r] > 0) n++;
  return n;
}
