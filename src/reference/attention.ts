// Plain-TypeScript twins of shaders/attention.wgsl: causal multi-head attention over a fused
// QKV buffer (training forward and backward), KV-cache decode attention with an optional shared
// prefix, and the cache append. Accumulates in f64; written the direct way (whole score rows),
// not the tiled way, so it checks the kernels' tiling and online softmax rather than copying it.
//
// Layouts (row-major, C = H·D, KV = KVH·D; KVH = H unless grouped-query):
//   qkv   [B, T, C + 2KV]  each row [q (H·D) | k (KVH·D) | v (KVH·D)], head h at h·D within each part
//   out   [B, T, C]
//   lse   [B, H, T]   log Σ_j exp(scale · q_t·k_j) over the causal keys j ≤ t
//   dqkv  [B, T, C + 2KV]  same layout as qkv
// Scale is 1/sqrt(D). Query head h reads key/value head h / (H / KVH) (grouped-query attention),
// so a k/v head's gradient sums over the query heads of its group.

export interface AttentionShape {
  B: number;
  T: number;
  H: number;
  D: number;
  /** key/value heads (a divisor of H); default H */
  kvH?: number;
}

export function checkAttentionShape(s: AttentionShape): void {
  for (const [k, v] of Object.entries(s)) {
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`attention: ${k} must be a positive integer, got ${v}`);
  }
  if (s.D % 4 !== 0 || s.D > 128) throw new RangeError(`attention: head size D must be a multiple of 4 and at most 128, got ${s.D}`);
  if (s.H % (s.kvH ?? s.H) !== 0) throw new RangeError(`attention: kvH (${s.kvH}) must divide H (${s.H})`);
}

/** Row width of the fused qkv buffer, k's offset in it, and the k/v head of query head h. */
function qkvLayout(s: { H: number; D: number; kvH?: number }) {
  const kvH = s.kvH ?? s.H;
  const C = s.H * s.D;
  const KV = kvH * s.D;
  const G = s.H / kvH;
  return { C, KV, W: C + 2 * KV, kvHead: (h: number) => Math.floor(h / G) };
}

/** Returns the attention output [B, T, C] and the row statistics lse [B, H, T]. */
export function attentionForwardRef(qkv: ArrayLike<number>, s: AttentionShape): { out: Float64Array; lse: Float64Array } {
  checkAttentionShape(s);
  const { B, T, H, D } = s;
  const { C, KV, W, kvHead } = qkvLayout(s);
  const scale = 1 / Math.sqrt(D);
  const out = new Float64Array(B * T * C);
  const lse = new Float64Array(B * H * T);
  const sc = new Float64Array(T);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const hk = kvHead(h);
      for (let t = 0; t < T; t++) {
        const qo = (b * T + t) * W + h * D;
        let m = -Infinity;
        for (let j = 0; j <= t; j++) {
          const ko = (b * T + j) * W + C + hk * D;
          let dot = 0;
          for (let d = 0; d < D; d++) dot += qkv[qo + d] * qkv[ko + d];
          sc[j] = dot * scale;
          m = Math.max(m, sc[j]);
        }
        let l = 0;
        for (let j = 0; j <= t; j++) l += Math.exp(sc[j] - m);
        const oo = (b * T + t) * C + h * D;
        for (let j = 0; j <= t; j++) {
          const p = Math.exp(sc[j] - m) / l;
          const vo = (b * T + j) * W + C + KV + hk * D;
          for (let d = 0; d < D; d++) out[oo + d] += p * qkv[vo + d];
        }
        lse[(b * H + h) * T + t] = m + Math.log(l);
      }
    }
  }
  return { out, lse };
}

/** Gradient of Σ dout ∘ attention(qkv) with respect to qkv, in the QKV layout. */
export function attentionBackwardRef(qkv: ArrayLike<number>, dout: ArrayLike<number>, s: AttentionShape): Float64Array {
  checkAttentionShape(s);
  const { B, T, H, D } = s;
  const { C, KV, W, kvHead } = qkvLayout(s);
  const scale = 1 / Math.sqrt(D);
  const dqkv = new Float64Array(B * T * W);
  const P = new Float64Array(T * T);
  const dS = new Float64Array(T * T);
  const q = (b: number, t: number, h: number) => (b * T + t) * W + h * D;
  const k = (b: number, t: number, h: number) => (b * T + t) * W + C + kvHead(h) * D;
  const v = (b: number, t: number, h: number) => (b * T + t) * W + C + KV + kvHead(h) * D;
  const o = (b: number, t: number, h: number) => (b * T + t) * C + h * D;
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      // P = softmax(scale · Q Kᵀ) under the causal mask.
      P.fill(0);
      for (let t = 0; t < T; t++) {
        let m = -Infinity;
        for (let j = 0; j <= t; j++) {
          let dot = 0;
          for (let d = 0; d < D; d++) dot += qkv[q(b, t, h) + d] * qkv[k(b, j, h) + d];
          P[t * T + j] = dot * scale;
          m = Math.max(m, P[t * T + j]);
        }
        let l = 0;
        for (let j = 0; j <= t; j++) l += P[t * T + j] = Math.exp(P[t * T + j] - m);
        for (let j = 0; j <= t; j++) P[t * T + j] /= l;
      }
      // dP = dO Vᵀ; dS = P ∘ (dP − rowsum(dP ∘ P)); the row sum equals rowsum(dO ∘ O).
      dS.fill(0);
      for (let t = 0; t < T; t++) {
        let rowDot = 0;
        for (let j = 0; j <= t; j++) {
          let dp = 0;
          for (let d = 0; d < D; d++) dp += dout[o(b, t, h) + d] * qkv[v(b, j, h) + d];
          dS[t * T + j] = dp;
          rowDot += dp * P[t * T + j];
        }
        for (let j = 0; j <= t; j++) dS[t * T + j] = P[t * T + j] * (dS[t * T + j] - rowDot);
      }
      for (let t = 0; t < T; t++) {
        for (let j = 0; j <= t; j++) {
          const ds = dS[t * T + j] * scale;
          const p = P[t * T + j];
          for (let d = 0; d < D; d++) {
            dqkv[q(b, t, h) + d] += ds * qkv[k(b, j, h) + d];
            dqkv[k(b, j, h) + d] += ds * qkv[q(b, t, h) + d];
            dqkv[v(b, j, h) + d] += p * dout[o(b, t, h) + d];
          }
        }
      }
    }
  }
  return dqkv;
}

// ---- KV-cache inference ------------------------------------------------------------------
//
// A cache holds K and V of S sequences, each [S, Tmax, KV] (KV = KVH·D: grouped-query attention
// caches only the key/value heads). A decode (or continuation prefill)
// step brings Tn new rows per sequence in a QKV buffer [S, Tn, C + 2KV], already rotated for their
// positions, appends their K and V at rows pastLen.. of each sequence, then attends each new
// row to: an optional shared prefix (K/V [P, KV] of one prompt, read by every sequence: the
// G samples of a GSPO group share their prompt's prefill) followed by the sequence's own rows
// 0 .. pastLen + n. Its position in the whole text is P + pastLen + n.

export interface DecodeShape {
  /** sequences */
  S: number;
  /** new rows per sequence in this step (1 for decode) */
  Tn: number;
  H: number;
  D: number;
  /** key/value heads; default H */
  kvH?: number;
  /** rows each sequence's cache can hold */
  Tmax: number;
}

export interface DecodeStep {
  /** rows of each sequence already in its own cache before this step */
  pastLen: number;
  /** length of the shared prefix (0: none) */
  prefixLen: number;
}

export function checkDecode(s: DecodeShape, step: DecodeStep): void {
  checkAttentionShape({ B: s.S, T: s.Tn, H: s.H, D: s.D, kvH: s.kvH });
  if (!Number.isInteger(s.Tmax) || s.Tmax < 1) throw new RangeError(`decode: Tmax must be a positive integer, got ${s.Tmax}`);
  if (!Number.isInteger(step.pastLen) || step.pastLen < 0 || step.pastLen + s.Tn > s.Tmax) {
    throw new RangeError(`decode: pastLen ${step.pastLen} + ${s.Tn} new rows do not fit a cache of ${s.Tmax} rows`);
  }
  if (!Number.isInteger(step.prefixLen) || step.prefixLen < 0) throw new RangeError(`decode: prefixLen must be a non-negative integer`);
}

/** Copies the K and V parts of qkv [S, Tn, C + 2KV] into rows pastLen.. of the caches [S, Tmax, KV], in place. */
export function kvAppendRef(
  qkv: ArrayLike<number>,
  kCache: Float64Array | Float32Array,
  vCache: Float64Array | Float32Array,
  s: DecodeShape,
  pastLen: number,
): void {
  checkDecode(s, { pastLen, prefixLen: 0 });
  const { C, KV, W } = qkvLayout(s);
  for (let q = 0; q < s.S; q++) {
    for (let n = 0; n < s.Tn; n++) {
      const src = (q * s.Tn + n) * W;
      const dst = (q * s.Tmax + pastLen + n) * KV;
      for (let c = 0; c < KV; c++) {
        kCache[dst + c] = qkv[src + C + c];
        vCache[dst + c] = qkv[src + C + KV + c];
      }
    }
  }
}

/**
 * Attention of the new rows (whose K/V are already appended) over prefix + own cache.
 * Returns out [S, Tn, C].
 */
export function attentionDecodeRef(
  qkv: ArrayLike<number>,
  kCache: ArrayLike<number>,
  vCache: ArrayLike<number>,
  prefixK: ArrayLike<number> | null,
  prefixV: ArrayLike<number> | null,
  s: DecodeShape,
  step: DecodeStep,
): Float64Array {
  checkDecode(s, step);
  const { S, Tn, H, D, Tmax } = s;
  const { pastLen, prefixLen: P } = step;
  const { C, KV, W, kvHead } = qkvLayout(s);
  const scale = 1 / Math.sqrt(D);
  const out = new Float64Array(S * Tn * C);
  for (let q = 0; q < S; q++) {
    for (let n = 0; n < Tn; n++) {
      for (let h = 0; h < H; h++) {
        const qo = (q * Tn + n) * W + h * D;
        const nKeys = P + pastLen + n + 1;
        const hk = kvHead(h) * D;
        const keyAt = (j: number) => (j < P ? { buf: 'p', off: j * KV + hk } : { buf: 'c', off: (q * Tmax + j - P) * KV + hk });
        const sc = new Float64Array(nKeys);
        let m = -Infinity;
        for (let j = 0; j < nKeys; j++) {
          const { buf, off } = keyAt(j);
          const K = buf === 'p' ? prefixK! : kCache;
          let dot = 0;
          for (let d = 0; d < D; d++) dot += qkv[qo + d] * K[off + d];
          sc[j] = dot * scale;
          m = Math.max(m, sc[j]);
        }
        let l = 0;
        for (let j = 0; j < nKeys; j++) l += sc[j] = Math.exp(sc[j] - m);
        const oo = (q * Tn + n) * C + h * D;
        for (let j = 0; j < nKeys; j++) {
          const { buf, off } = keyAt(j);
          const V = buf === 'p' ? prefixV! : vCache;
          for (let d = 0; d < D; d++) out[oo + d] += (sc[j] / l) * V[off + d];
        }
      }
    }
  }
  return out;
}
