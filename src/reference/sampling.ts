// Plain-TypeScript twin of shaders/sampling.wgsl: seedable sampling of one token per row of
// logits [N, V] with temperature, top-k and top-p (nucleus).
//
//   temperature 0, or top-k = 1: argmax, ties to the lowest id.
//   otherwise, with z = logits / τ and e_v = exp(z_v − max z):
//     top-k (k ≥ 1): keep tokens whose logit is ≥ the k-th largest logit (ties at the threshold
//                    are all kept, so ties can keep more than k); k = 0 keeps all.
//     top-p (p < 1): of those, keep the tokens whose logit is ≥ θ, θ the largest value for which
//                    the kept mass Σ_{x_v ≥ θ} e_v is ≥ p · (mass kept by top-k): the smallest
//                    set of most likely tokens holding at least p of the probability.
//     draw:          u = uniform(seed, step, row) in [0, 1); the token is the first id (in id
//                    order) at which the running sum of kept e_v exceeds u · (kept mass).
//
// uniform(seed, step, row) is a counter-based hash, so any row of any step can be redrawn
// without state: the GPU and this twin compute the same bits.

export interface SampleOptions {
  /** 0 = greedy (argmax) */
  temperature: number;
  /** 0 = off */
  topK?: number;
  /** 1 = off */
  topP?: number;
  seed: number;
  /** decode step (or any counter): the same (seed, step, row) draws the same number */
  step: number;
}

/** A 32-bit integer finaliser (xor-shift-multiply): spreads every input bit over the output. */
export function mix32(x: number): number {
  x >>>= 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/** The random number for (seed, step, row): a multiple of 2^-24 in [0, 1). */
export function sampleUniform(seed: number, step: number, row: number): number {
  let h = mix32((row + 0x9e3779b9) >>> 0);
  h = mix32((h ^ (step + 0x85ebca6b)) >>> 0);
  h = mix32((h ^ (seed + 0xc2b2ae35)) >>> 0);
  return (h >>> 8) / 16777216;
}

export function checkSampleOptions(N: number, V: number, o: SampleOptions): void {
  if (!Number.isInteger(N) || N < 1) throw new RangeError(`sampling: rows N must be a positive integer, got ${N}`);
  if (!Number.isInteger(V) || V < 1) throw new RangeError(`sampling: vocabulary V must be a positive integer, got ${V}`);
  if (!(o.temperature >= 0)) throw new RangeError(`sampling: temperature must be ≥ 0, got ${o.temperature}`);
  const k = o.topK ?? 0;
  if (!Number.isInteger(k) || k < 0) throw new RangeError(`sampling: topK must be a non-negative integer, got ${k}`);
  const p = o.topP ?? 1;
  if (!(p > 0 && p <= 1)) throw new RangeError(`sampling: topP must be in (0, 1], got ${p}`);
  for (const [name, v] of [
    ['seed', o.seed],
    ['step', o.step],
  ] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`sampling: ${name} must be a 32-bit unsigned integer, got ${v}`);
  }
}

export interface SampleResult {
  tokens: Uint32Array;
  /** per row, how many tokens survived top-k and top-p (1 for argmax) */
  kept: Uint32Array;
  /**
   * per row, distance of u · mass from the nearest running-sum boundary, relative to the mass:
   * where it is ~1e-6 or less, f32 rounding on the GPU may legitimately pick a neighbour.
   */
  margin: Float64Array;
}

export function sampleRef(logits: ArrayLike<number>, N: number, V: number, o: SampleOptions): SampleResult {
  checkSampleOptions(N, V, o);
  const tokens = new Uint32Array(N);
  const kept = new Uint32Array(N);
  const margin = new Float64Array(N).fill(Infinity);
  const topK = o.topK ?? 0;
  const topP = o.topP ?? 1;
  for (let r = 0; r < N; r++) {
    const row = Array.from({ length: V }, (_, v) => logits[r * V + v]);
    if (o.temperature === 0 || topK === 1) {
      let best = 0;
      for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
      tokens[r] = best;
      kept[r] = 1;
      continue;
    }
    const sorted = row.slice().sort((a, b) => b - a);
    const kThreshold = topK > 0 && topK < V ? sorted[topK - 1] : -Infinity;
    const m = sorted[0] / o.temperature;
    const e = row.map((x) => (x >= kThreshold ? Math.exp(x / o.temperature - m) : 0));
    const massK = e.reduce((a, b) => a + b, 0);
    let threshold = kThreshold;
    if (topP < 1) {
      // Walk the distinct logit values downwards until the mass at or above one reaches p.
      let mass = 0;
      for (let i = 0; i < V; i++) {
        const x = sorted[i];
        if (x < kThreshold) break;
        if (i > 0 && sorted[i - 1] === x) continue;
        for (let v = 0; v < V; v++) if (row[v] === x) mass += e[v];
        if (mass >= topP * massK) {
          threshold = x;
          break;
        }
      }
    }
    let mass = 0;
    let count = 0;
    for (let v = 0; v < V; v++) {
      if (row[v] < threshold) e[v] = 0;
      else count++;
      mass += e[v];
    }
    const target = sampleUniform(o.seed, o.step, r) * mass;
    let cum = 0;
    let chosen = -1;
    let last = 0;
    let nearest = Infinity;
    for (let v = 0; v < V; v++) {
      if (e[v] === 0 && row[v] < threshold) continue;
      last = v;
      cum += e[v];
      nearest = Math.min(nearest, Math.abs(target - cum));
      if (chosen < 0 && target < cum) chosen = v;
    }
    tokens[r] = chosen < 0 ? last : chosen;
    kept[r] = count;
    margin[r] = nearest / mass;
  }
  return { tokens, kept, margin };
}
