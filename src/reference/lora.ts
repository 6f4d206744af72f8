// Plain-TypeScript twin of one LoRA-adapted projection (src/model/loraGpu.ts runs the same maths
// with the matmul and columns kernels): y = x·W + s·(x·A)·B, W frozen, and its backward.
//   x [rows, in], W [in, out], A [in, r], B [r, out], s = alpha / r.
//   dB = s·uᵀ·dy (u = x·A),  dA = s·xᵀ·(dy·Bᵀ),  dx = dy·Wᵀ + s·(dy·Bᵀ)·Aᵀ
// f64 throughout.

export interface LoraLinearShape {
  rows: number;
  inDim: number;
  outDim: number;
  rank: number;
  scale: number;
}

function mm(a: ArrayLike<number>, b: ArrayLike<number>, M: number, K: number, N: number, ta = false, tb = false): Float64Array {
  const c = new Float64Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      let acc = 0;
      for (let k = 0; k < K; k++) acc += (ta ? a[k * M + m] : a[m * K + k]) * (tb ? b[n * K + k] : b[k * N + n]);
      c[m * N + n] = acc;
    }
  }
  return c;
}

export function loraLinearForward(x: ArrayLike<number>, W: ArrayLike<number>, A: ArrayLike<number>, B: ArrayLike<number>, s: LoraLinearShape): Float64Array {
  const y = mm(x, W, s.rows, s.inDim, s.outDim);
  const u = mm(x, A, s.rows, s.inDim, s.rank);
  const d = mm(u, B, s.rows, s.rank, s.outDim);
  for (let i = 0; i < y.length; i++) y[i] += s.scale * d[i];
  return y;
}

/** Gradients of Σ dy·y with respect to x, A and B (W frozen: none). */
export function loraLinearBackward(
  x: ArrayLike<number>,
  W: ArrayLike<number>,
  A: ArrayLike<number>,
  B: ArrayLike<number>,
  dy: ArrayLike<number>,
  s: LoraLinearShape,
): { dx: Float64Array; dA: Float64Array; dB: Float64Array } {
  const u = mm(x, A, s.rows, s.inDim, s.rank);
  const g = Float64Array.from(dy, (v) => v * s.scale);
  const dB = mm(u, g, s.rank, s.rows, s.outDim, true);
  const du = mm(g, B, s.rows, s.outDim, s.rank, false, true);
  const dA = mm(x, du, s.inDim, s.rows, s.rank, true);
  const dx = mm(dy, W, s.rows, s.outDim, s.inDim, false, true);
  const dxa = mm(du, A, s.rows, s.rank, s.inDim, false, true);
  for (let i = 0; i < dx.length; i++) dx[i] += dxa[i];
  return { dx, dA, dB };
}
