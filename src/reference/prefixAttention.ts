// Plain-TypeScript twin of shaders/prefix_attention.wgsl: causal attention of G completions over
// one shared prefix (a GSPO group's prompt, docs/method.md §10). Completion row t of completion g attends
// to the P live prefix rows and to its own rows 0..t; the backward gives each completion's dqkv
// and the prefix's k/v gradient summed over every completion row. Accumulates in f64; written the
// direct way (whole score rows), not the tiled way.
//
// Layouts (row-major, C = H·D, KV = KVH·D, W = C + 2KV; KVH = H unless grouped-query):
//   pqkv [Tp, W]      prefix rows [q | k | v] (rows ≥ P are ignored)
//   qkv  [G, Tc, W]   completion rows
//   out  [G, Tc, C]   lse [G, H, Tc]
//   dqkv [G, Tc, W]   dpkv [Tp, W] (its q part and rows ≥ P are 0)
// Scale is 1/sqrt(D). Query head h reads key/value head h / (H / KVH) (grouped-query attention),
// so a prefix k/v head's gradient sums over the G completions and the query heads of its group.

export interface PrefixAttentionShape {
  /** Completions sharing the prefix. */
  G: number;
  /** Rows per completion. */
  Tc: number;
  /** Rows of the prefix buffer (capacity; the live rows are P ≤ Tp, set per call). */
  Tp: number;
  H: number;
  D: number;
  /** Key/value heads (grouped-query attention; must divide H). Default H. */
  kvH?: number;
}

export function checkPrefixAttentionShape(s: PrefixAttentionShape): void {
  for (const [k, v] of Object.entries(s)) {
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`prefix attention: ${k} must be a positive integer, got ${v}`);
  }
  if (s.D % 4 !== 0 || s.D > 128) throw new RangeError(`prefix attention: head size D must be a multiple of 4 and at most 128, got ${s.D}`);
  if (s.H % (s.kvH ?? s.H) !== 0) throw new RangeError(`prefix attention: kvH (${s.kvH}) must divide H (${s.H})`);
}

/** Row width of the fused q | k | v rows: C + 2·KVH·D. */
export function prefixQkvWidth(s: PrefixAttentionShape): number {
  return (s.H + 2 * (s.kvH ?? s.H)) * s.D;
}

export function checkPrefixLength(s: PrefixAttentionShape, P: number): void {
  if (!Number.isInteger(P) || P < 0 || P > s.Tp) throw new RangeError(`prefix attention: prefix length must be an integer in 0..${s.Tp}, got ${P}`);
}

/** Offsets of row t's q (part 0) of query head h, or k (1) or v (2) of its key/value head, in the prefix or completion g. */
function at(s: PrefixAttentionShape, g: number, t: number, part: number, h: number): number {
  const C = s.H * s.D;
  const kvH = s.kvH ?? s.H;
  const KV = kvH * s.D;
  const row = (g < 0 ? t : g * s.Tc + t) * (C + 2 * KV);
  if (part === 0) return row + h * s.D;
  return row + C + (part - 1) * KV + Math.floor(h / (s.H / kvH)) * s.D;
}

/** The keys completion row t sees, as (completion, or −1 for the prefix; row) pairs. */
function keysOf(P: number, g: number, t: number): [number, number][] {
  const keys: [number, number][] = [];
  for (let j = 0; j < P; j++) keys.push([-1, j]);
  for (let j = 0; j <= t; j++) keys.push([g, j]);
  return keys;
}

/** Softmax probabilities of completion row t of g, head h, over keysOf(P, g, t); and the lse. */
function probs(pqkv: ArrayLike<number>, qkv: ArrayLike<number>, s: PrefixAttentionShape, P: number, g: number, t: number, h: number) {
  const keys = keysOf(P, g, t);
  const scale = 1 / Math.sqrt(s.D);
  const sc = keys.map(([kg, j]) => {
    const src = kg < 0 ? pqkv : qkv;
    let dot = 0;
    for (let d = 0; d < s.D; d++) dot += qkv[at(s, g, t, 0, h) + d] * src[at(s, kg, j, 1, h) + d];
    return dot * scale;
  });
  const m = Math.max(...sc);
  const e = sc.map((x) => Math.exp(x - m));
  const l = e.reduce((a, b) => a + b, 0);
  return { keys, p: e.map((x) => x / l), lse: m + Math.log(l) };
}

/** out [G, Tc, C] and lse [G, H, Tc] of the completions over prefix length P. */
export function prefixAttentionForwardRef(
  pqkv: ArrayLike<number>,
  qkv: ArrayLike<number>,
  s: PrefixAttentionShape,
  P: number,
): { out: Float64Array; lse: Float64Array } {
  checkPrefixAttentionShape(s);
  checkPrefixLength(s, P);
  const { G, Tc, H, D } = s;
  const C = H * D;
  const out = new Float64Array(G * Tc * C);
  const lse = new Float64Array(G * H * Tc);
  for (let g = 0; g < G; g++) {
    for (let h = 0; h < H; h++) {
      for (let t = 0; t < Tc; t++) {
        const r = probs(pqkv, qkv, s, P, g, t, h);
        lse[(g * H + h) * Tc + t] = r.lse;
        r.keys.forEach(([kg, j], i) => {
          const src = kg < 0 ? pqkv : qkv;
          for (let d = 0; d < D; d++) out[(g * Tc + t) * C + h * D + d] += r.p[i] * src[at(s, kg, j, 2, h) + d];
        });
      }
    }
  }
  return { out, lse };
}

/** Gradient of Σ dout ∘ out with respect to the completions' qkv (dqkv) and the prefix's qkv (dpkv). */
export function prefixAttentionBackwardRef(
  pqkv: ArrayLike<number>,
  qkv: ArrayLike<number>,
  dout: ArrayLike<number>,
  s: PrefixAttentionShape,
  P: number,
): { dqkv: Float64Array; dpkv: Float64Array } {
  checkPrefixAttentionShape(s);
  checkPrefixLength(s, P);
  const { G, Tc, Tp, H, D } = s;
  const C = H * D;
  const W = prefixQkvWidth(s);
  const scale = 1 / Math.sqrt(D);
  const dqkv = new Float64Array(G * Tc * W);
  const dpkv = new Float64Array(Tp * W);
  for (let g = 0; g < G; g++) {
    for (let h = 0; h < H; h++) {
      for (let t = 0; t < Tc; t++) {
        const { keys, p } = probs(pqkv, qkv, s, P, g, t, h);
        const o = (g * Tc + t) * C + h * D;
        // dP = dO·v; dS = P ∘ (dP − Σ P dP).
        const dp = keys.map(([kg, j]) => {
          const src = kg < 0 ? pqkv : qkv;
          let x = 0;
          for (let d = 0; d < D; d++) x += dout[o + d] * src[at(s, kg, j, 2, h) + d];
          return x;
        });
        const rowDot = dp.reduce((a, x, i) => a + x * p[i], 0);
        keys.forEach(([kg, j], i) => {
          const ds = p[i] * (dp[i] - rowDot) * scale;
          const src = kg < 0 ? pqkv : qkv;
          const dst = kg < 0 ? dpkv : dqkv;
          for (let d = 0; d < D; d++) {
            dqkv[at(s, g, t, 0, h) + d] += ds * src[at(s, kg, j, 1, h) + d];
            dst[at(s, kg, j, 1, h) + d] += ds * qkv[at(s, g, t, 0, h) + d];
            dst[at(s, kg, j, 2, h) + d] += p[i] * dout[o + d];
          }
        });
      }
    }
  }
  return { dqkv, dpkv };
}
