// Plain-TypeScript twin of shaders/matmul.wgsl: the oracle its tests compare against.
// Accumulates in f64 so the reference is the more accurate side of every comparison.

export interface MatmulShape {
  M: number;
  N: number;
  K: number;
  batch?: number;
  /** A is stored K×M and used transposed. */
  transA?: boolean;
  /** B is stored N×K and used transposed. */
  transB?: boolean;
  /** Elements between consecutive batch matrices; 0 broadcasts. Defaults: M*K, K*N, M*N. */
  strideA?: number;
  strideB?: number;
  strideC?: number;
  /** Element offset of the first matrix in each buffer. */
  offsetA?: number;
  offsetB?: number;
  offsetC?: number;
  alpha?: number;
  /** 0 overwrites C; 1 accumulates into it (gradients). */
  beta?: number;
  /**
   * Elements between rows of A as stored (default its contiguous extent: K, or M when transA) and
   * between rows of C (default N): a column block of a wider matrix (the LM head split by rows).
   */
  lda?: number;
  ldc?: number;
}

export type ResolvedMatmulShape = Required<MatmulShape>;

export function resolveMatmulShape(s: MatmulShape): ResolvedMatmulShape {
  for (const [k, v] of Object.entries({ M: s.M, N: s.N, K: s.K })) {
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`matmul: ${k} must be a positive integer, got ${v}`);
  }
  return {
    M: s.M,
    N: s.N,
    K: s.K,
    batch: s.batch ?? 1,
    transA: s.transA ?? false,
    transB: s.transB ?? false,
    strideA: s.strideA ?? s.M * s.K,
    strideB: s.strideB ?? s.K * s.N,
    strideC: s.strideC ?? s.M * s.N,
    offsetA: s.offsetA ?? 0,
    offsetB: s.offsetB ?? 0,
    offsetC: s.offsetC ?? 0,
    alpha: s.alpha ?? 1,
    beta: s.beta ?? 0,
    lda: leading('lda', s.lda, s.transA ? s.M : s.K),
    ldc: leading('ldc', s.ldc, s.N),
  };
}

function leading(name: string, value: number | undefined, min: number): number {
  if (value === undefined) return min;
  if (!Number.isInteger(value) || value < min) throw new RangeError(`matmul: ${name} must be an integer ≥ ${min}, got ${value}`);
  return value;
}

/** C[b] = alpha · op(A[b]) · op(B[b]) + beta · C[b], in place on `c` (f32 as on the GPU, or f64). */
export function matmulRef<A extends Float32Array | Float64Array>(a: ArrayLike<number>, b: ArrayLike<number>, c: A, shape: MatmulShape): A {
  const s = resolveMatmulShape(shape);
  const { M, N, K, alpha, beta } = s;
  // Element strides of op(A) along m and k, and of op(B) along k and n: one loop for every
  // transpose combination (the reference GPT runs through here, so keep it monomorphic).
  const [am, ak] = s.transA ? [1, s.lda] : [s.lda, 1];
  const [bk, bn] = s.transB ? [1, K] : [N, 1];
  for (let bi = 0; bi < s.batch; bi++) {
    const oa = s.offsetA + bi * s.strideA;
    const ob = s.offsetB + bi * s.strideB;
    const oc = s.offsetC + bi * s.strideC;
    for (let m = 0; m < M; m++) {
      for (let n = 0; n < N; n++) {
        let acc = 0;
        let ia = oa + m * am;
        let ib = ob + n * bn;
        for (let k = 0; k < K; k++, ia += ak, ib += bk) acc += a[ia] * b[ib];
        const idx = oc + m * s.ldc + n;
        c[idx] = alpha * acc + (beta !== 0 ? beta * c[idx] : 0);
      }
    }
  }
  return c;
}

/** Element counts each buffer must hold for `shape`. */
export function matmulExtents(shape: MatmulShape): { a: number; b: number; c: number } {
  const s = resolveMatmulShape(shape);
  const last = s.batch - 1;
  const [aRows, aCols] = s.transA ? [s.K, s.M] : [s.M, s.K];
  return {
    a: s.offsetA + last * s.strideA + (aRows - 1) * s.lda + aCols,
    b: s.offsetB + last * s.strideB + s.K * s.N,
    c: s.offsetC + last * s.strideC + (s.M - 1) * s.ldc + s.N,
  };
}
