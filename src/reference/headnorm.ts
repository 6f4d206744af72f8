// Plain-TypeScript twin of shaders/headnorm.wgsl: Qwen3's RMSNorm over each head of q and of k,
// in place on a fused QKV buffer [rows, (H + 2·KVH)·D] (q heads, k heads, v heads), before RoPE.
// Every q head shares one gain qGain [D], every k head one gain kGain [D]; v is untouched:
//   y = x · rstd · gain,   rstd = 1/√(mean(x²) + eps)   over the D elements of one head.
// The forward keeps what its backward needs: the q and k heads before the norm, raw
// [rows, (H + KVH)·D], and rstd per head, stats [rows, H + KVH]. The backward, in place on dqkv
// (after RoPE's backward), with g = dy·gain and x̂ = x·rstd:
//   dx = rstd · (g − x̂ · mean(g·x̂)),   dgain[d] = Σ over rows and heads of that part of dy·x̂[d].

export interface HeadNormShape {
  rows: number;
  H: number;
  kvH: number;
  D: number;
  eps: number;
  /** element offsets of the q and k gains in the weights (and of their gradients in the grads) */
  qOffset: number;
  kOffset: number;
}

export function checkHeadNormShape(s: HeadNormShape): void {
  for (const k of ['rows', 'H', 'kvH', 'D'] as const) {
    if (!Number.isInteger(s[k]) || s[k] < 1) throw new RangeError(`headnorm: ${k} must be a positive integer, got ${s[k]}`);
  }
  for (const k of ['qOffset', 'kOffset'] as const) {
    if (!Number.isInteger(s[k]) || s[k] < 0) throw new RangeError(`headnorm: ${k} must be a non-negative integer, got ${s[k]}`);
  }
  if (!(s.eps > 0)) throw new RangeError(`headnorm: eps must be positive, got ${s.eps}`);
}

/** Normalises the q and k heads of qkv in place; returns raw (the heads before) and stats (rstd). */
export function headNormForwardRef<A extends Float32Array | Float64Array>(
  qkv: A,
  weights: ArrayLike<number>,
  s: HeadNormShape,
): { raw: Float64Array; stats: Float64Array } {
  checkHeadNormShape(s);
  const { rows, H, kvH, D } = s;
  const W = (H + 2 * kvH) * D;
  const heads = H + kvH;
  const raw = new Float64Array(rows * heads * D);
  const stats = new Float64Array(rows * heads);
  for (let r = 0; r < rows; r++) {
    for (let h = 0; h < heads; h++) {
      const o = r * W + h * D;
      const g = h < H ? s.qOffset : s.kOffset;
      let ss = 0;
      for (let d = 0; d < D; d++) ss += qkv[o + d] * qkv[o + d];
      const rstd = 1 / Math.sqrt(ss / D + s.eps);
      stats[r * heads + h] = rstd;
      for (let d = 0; d < D; d++) {
        raw[(r * heads + h) * D + d] = qkv[o + d];
        qkv[o + d] = qkv[o + d] * rstd * weights[g + d];
      }
    }
  }
  return { raw, stats };
}

/** dqkv's q and k heads become d(before the norm), in place; returns dgain [2D] = [dqGain | dkGain]. */
export function headNormBackwardRef<A extends Float32Array | Float64Array>(
  dqkv: A,
  raw: ArrayLike<number>,
  stats: ArrayLike<number>,
  weights: ArrayLike<number>,
  s: HeadNormShape,
): Float64Array {
  checkHeadNormShape(s);
  const { rows, H, kvH, D } = s;
  const W = (H + 2 * kvH) * D;
  const heads = H + kvH;
  const dgain = new Float64Array(2 * D);
  for (let r = 0; r < rows; r++) {
    for (let h = 0; h < heads; h++) {
      const o = r * W + h * D;
      const part = h < H ? 0 : 1;
      const g0 = part === 0 ? s.qOffset : s.kOffset;
      const rstd = stats[r * heads + h];
      let sgx = 0;
      for (let d = 0; d < D; d++) {
        const xhat = raw[(r * heads + h) * D + d] * rstd;
        sgx += dqkv[o + d] * weights[g0 + d] * xhat;
        dgain[part * D + d] += dqkv[o + d] * xhat;
      }
      const mean = sgx / D;
      for (let d = 0; d < D; d++) {
        const xhat = raw[(r * heads + h) * D + d] * rstd;
        dqkv[o + d] = rstd * (dqkv[o + d] * weights[g0 + d] - xhat * mean);
      }
    }
  }
  return dgain;
}
