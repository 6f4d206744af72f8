// Plain-TypeScript twins of shaders/elementwise.wgsl: GELU (tanh form), residual adds, bias add
// and the bias gradient. f64 arithmetic throughout, so the reference is the more accurate side of
// every comparison. Results are f32 (as on the GPU) unless the caller passes an `out` array (f64
// in the reference GPT; out may be an input, for the in-place forms the kernels have).

type Floats = Float32Array | Float64Array;

/** sqrt(2/π), the tanh-GELU scale. */
export const GELU_K = Math.sqrt(2 / Math.PI);
/** The cubic coefficient of the tanh approximation (Hendrycks & Gimpel). */
export const GELU_C = 0.044715;

export function gelu(x: number): number {
  return 0.5 * x * (1 + Math.tanh(GELU_K * (x + GELU_C * x * x * x)));
}

/** d gelu(x) / dx of the tanh form. */
export function geluGrad(x: number): number {
  const t = Math.tanh(GELU_K * (x + GELU_C * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_K * (1 + 3 * GELU_C * x * x);
}

/** out = a + b elementwise. */
export function addRef<A extends Floats = Float32Array>(a: ArrayLike<number>, b: ArrayLike<number>, out = new Float32Array(a.length) as A): A {
  for (let i = 0; i < a.length; i++) out[i] = a[i] + b[i];
  return out;
}

/** x[r, c] + bias[biasOffset + c] over a row-major [rows, C] matrix. */
export function biasAddRef<A extends Floats = Float32Array>(
  x: ArrayLike<number>,
  weights: ArrayLike<number>,
  rows: number,
  C: number,
  biasOffset = 0,
  out = new Float32Array(rows * C) as A,
): A {
  for (let r = 0; r < rows; r++) for (let c = 0; c < C; c++) out[r * C + c] = x[r * C + c] + weights[biasOffset + c];
  return out;
}

/** gelu(h) elementwise. */
export function geluForwardRef<A extends Floats = Float32Array>(h: ArrayLike<number>, out = new Float32Array(h.length) as A): A {
  for (let i = 0; i < h.length; i++) out[i] = gelu(h[i]);
  return out;
}

/** dh = dout · gelu'(h). */
export function geluBackwardRef<A extends Floats = Float32Array>(h: ArrayLike<number>, dout: ArrayLike<number>, out = new Float32Array(h.length) as A): A {
  for (let i = 0; i < h.length; i++) out[i] = dout[i] * geluGrad(h[i]);
  return out;
}

/** Column sums of a row-major [rows, C] matrix: the gradient of a bias added over rows. */
export function biasGradRef(dout: ArrayLike<number>, rows: number, C: number): Float64Array {
  const out = new Float64Array(C);
  for (let r = 0; r < rows; r++) for (let c = 0; c < C; c++) out[c] += dout[r * C + c];
  return out;
}
