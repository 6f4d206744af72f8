// Plain-TypeScript twin of shaders/logprob.wgsl: per-token log-probabilities of given targets.
//
//   logp[r] = log_softmax(logits[r] / τ)[target[r]]
//   lse[r]  = log Σ_v exp(logits[r, v] / τ)           (saved for the backward)
//   dlogits[r, v] = g[r] · (1/τ) · (onehot(target[r])_v − softmax(logits[r] / τ)_v)
//
// τ (temperature) defaults to 1; the 1/τ factor is the chain rule through logits/τ.

export function checkLogprobShape(N: number, V: number, temperature: number): void {
  if (!Number.isInteger(N) || N < 1) throw new RangeError(`logprob: rows N must be a positive integer, got ${N}`);
  if (!Number.isInteger(V) || V < 1) throw new RangeError(`logprob: vocabulary V must be a positive integer, got ${V}`);
  if (!(temperature > 0)) throw new RangeError(`logprob: temperature must be > 0, got ${temperature}`);
}

export function logprobRef(
  logits: ArrayLike<number>,
  targets: ArrayLike<number>,
  N: number,
  V: number,
  temperature = 1,
): { logp: Float64Array; lse: Float64Array } {
  checkLogprobShape(N, V, temperature);
  const logp = new Float64Array(N);
  const lse = new Float64Array(N);
  for (let r = 0; r < N; r++) {
    const y = targets[r];
    if (!(y >= 0 && y < V)) throw new RangeError(`logprob: target[${r}] = ${y} is outside the vocabulary 0..${V - 1}`);
    let m = -Infinity;
    for (let v = 0; v < V; v++) m = Math.max(m, logits[r * V + v] / temperature);
    let sum = 0;
    for (let v = 0; v < V; v++) sum += Math.exp(logits[r * V + v] / temperature - m);
    lse[r] = m + Math.log(sum);
    logp[r] = logits[r * V + y] / temperature - lse[r];
  }
  return { logp, lse };
}

export function logprobBackwardRef(
  logits: ArrayLike<number>,
  targets: ArrayLike<number>,
  g: ArrayLike<number>,
  N: number,
  V: number,
  temperature = 1,
): Float64Array {
  const { lse } = logprobRef(logits, targets, N, V, temperature);
  const d = new Float64Array(N * V);
  for (let r = 0; r < N; r++) {
    for (let v = 0; v < V; v++) {
      const p = Math.exp(logits[r * V + v] / temperature - lse[r]);
      d[r * V + v] = (g[r] / temperature) * ((v === targets[r] ? 1 : 0) - p);
    }
  }
  return d;
}
