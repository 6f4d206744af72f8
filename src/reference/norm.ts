// Plain-TypeScript twin of shaders/norm.wgsl: LayerNorm (gamma, beta) or RMSNorm (gamma only)
// over the last dimension of a row-major [rows, C] matrix, forward and backward, in f64.
// Outputs are stored as f32 (as on the GPU) unless the caller passes f64 arrays to fill (the
// reference GPT does, so its finite differences see no f32 rounding).

type Floats = Float32Array | Float64Array;

export type NormKind = 'layer' | 'rms';

export interface NormShape {
  rows: number;
  C: number;
  kind: NormKind;
  /** Added to the variance (LayerNorm) or mean square (RMSNorm); default 1e-5. */
  eps?: number;
  /** Element offsets of gamma and beta (beta unused for RMSNorm) in the parameter buffer. */
  gammaOffset?: number;
  betaOffset?: number;
  /** Element offsets of their gradients in the gradient buffer (default: same layout as the parameters). */
  dgammaOffset?: number;
  dbetaOffset?: number;
}

export type ResolvedNormShape = Required<NormShape>;

export function resolveNormShape(s: NormShape): ResolvedNormShape {
  for (const [k, v] of Object.entries({ rows: s.rows, C: s.C })) {
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`norm: ${k} must be a positive integer, got ${v}`);
  }
  if (s.kind !== 'layer' && s.kind !== 'rms') throw new RangeError(`norm: kind must be 'layer' or 'rms', got ${String(s.kind)}`);
  const gammaOffset = s.gammaOffset ?? 0;
  const betaOffset = s.betaOffset ?? gammaOffset + s.C;
  return {
    ...s,
    eps: s.eps ?? 1e-5,
    gammaOffset,
    betaOffset,
    dgammaOffset: s.dgammaOffset ?? gammaOffset,
    dbetaOffset: s.dbetaOffset ?? betaOffset,
  };
}

/**
 * y = (x − mean)·rstd·gamma + beta (LayerNorm) or x·rstd·gamma (RMSNorm).
 * stats[2r] = mean (0 for RMSNorm), stats[2r + 1] = rstd: what the backward needs.
 */
export function normForwardRef(x: ArrayLike<number>, weights: ArrayLike<number>, shape: NormShape): { y: Float32Array; stats: Float32Array };
export function normForwardRef<A extends Floats>(
  x: ArrayLike<number>,
  weights: ArrayLike<number>,
  shape: NormShape,
  out: { y: A; stats: A },
): { y: A; stats: A };
export function normForwardRef(
  x: ArrayLike<number>,
  weights: ArrayLike<number>,
  shape: NormShape,
  out?: { y: Floats; stats: Floats },
): { y: Floats; stats: Floats } {
  const s = resolveNormShape(shape);
  const { rows, C } = s;
  const y = out?.y ?? new Float32Array(rows * C);
  const stats = out?.stats ?? new Float32Array(2 * rows);
  for (let r = 0; r < rows; r++) {
    let mean = 0;
    if (s.kind === 'layer') {
      for (let c = 0; c < C; c++) mean += x[r * C + c];
      mean /= C;
    }
    let v = 0;
    for (let c = 0; c < C; c++) v += (x[r * C + c] - mean) ** 2;
    v /= C;
    const rstd = 1 / Math.sqrt(v + s.eps);
    for (let c = 0; c < C; c++) {
      const xhat = (x[r * C + c] - mean) * rstd;
      y[r * C + c] = xhat * weights[s.gammaOffset + c] + (s.kind === 'layer' ? weights[s.betaOffset + c] : 0);
    }
    stats[2 * r] = mean;
    stats[2 * r + 1] = rstd;
  }
  return { y, stats };
}

/** dx, dgamma and dbeta (zeros for RMSNorm) from dy, using the saved stats. dx fills `dxOut` when given. */
export function normBackwardRef<A extends Floats = Float32Array>(
  dy: ArrayLike<number>,
  x: ArrayLike<number>,
  weights: ArrayLike<number>,
  stats: ArrayLike<number>,
  shape: NormShape,
  dxOut?: A,
): { dx: A; dgamma: Float64Array; dbeta: Float64Array } {
  const s = resolveNormShape(shape);
  const { rows, C } = s;
  const dx = dxOut ?? (new Float32Array(rows * C) as A);
  const dgamma = new Float64Array(C);
  const dbeta = new Float64Array(C);
  const xhat = new Float64Array(C);
  const dxhat = new Float64Array(C);
  for (let r = 0; r < rows; r++) {
    const mean = stats[2 * r];
    const rstd = stats[2 * r + 1];
    let sumD = 0;
    let sumDX = 0;
    for (let c = 0; c < C; c++) {
      const g = dy[r * C + c];
      xhat[c] = (x[r * C + c] - mean) * rstd;
      dxhat[c] = g * weights[s.gammaOffset + c];
      sumD += dxhat[c];
      sumDX += dxhat[c] * xhat[c];
      dgamma[c] += g * xhat[c];
      dbeta[c] += g;
    }
    const meanD = s.kind === 'layer' ? sumD / C : 0;
    const meanDX = sumDX / C;
    for (let c = 0; c < C; c++) dx[r * C + c] = rstd * (dxhat[c] - meanD - xhat[c] * meanDX);
  }
  if (s.kind === 'rms') dbeta.fill(0);
  return { dx, dgamma, dbeta };
}
