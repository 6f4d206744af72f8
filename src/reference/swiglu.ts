// Plain-TypeScript twin of shaders/swiglu.wgsl: Llama's gated MLP activation. The up-projection
// writes h [rows, 2F] = [gate (F) | up (F)] (one fused matmul); the activation is
//   out[r, c] = silu(gate[r, c]) · up[r, c],   silu(g) = g·σ(g)
// and its backward, from dout [rows, F]:
//   dgate = dout · up · σ(g)·(1 + g·(1 − σ(g))),   dup = dout · silu(g).
// f64 arithmetic; results are f32 unless the caller passes `out` (f64 in the reference model).

type Floats = Float32Array | Float64Array;

export interface SwigluShape {
  rows: number;
  /** hidden width F (h has 2F columns) */
  F: number;
}

export function checkSwigluShape(s: SwigluShape): void {
  for (const [k, v] of Object.entries(s)) {
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`swiglu: ${k} must be a positive integer, got ${v}`);
  }
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

export function silu(x: number): number {
  return x * sigmoid(x);
}

/** out [rows, F] = silu(gate) · up from h [rows, 2F]. */
export function swigluForwardRef<A extends Floats = Float32Array>(h: ArrayLike<number>, s: SwigluShape, out = new Float32Array(s.rows * s.F) as A): A {
  checkSwigluShape(s);
  const { rows, F } = s;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < F; c++) out[r * F + c] = silu(h[r * 2 * F + c]) * h[r * 2 * F + F + c];
  }
  return out;
}

/** dh [rows, 2F] = [dgate | dup] from dout [rows, F] and h. */
export function swigluBackwardRef<A extends Floats = Float32Array>(
  h: ArrayLike<number>,
  dout: ArrayLike<number>,
  s: SwigluShape,
  out = new Float32Array(s.rows * 2 * s.F) as A,
): A {
  checkSwigluShape(s);
  const { rows, F } = s;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < F; c++) {
      const g = h[r * 2 * F + c];
      const u = h[r * 2 * F + F + c];
      const sg = sigmoid(g);
      const d = dout[r * F + c];
      out[r * 2 * F + c] = d * u * sg * (1 + g * (1 - sg));
      out[r * 2 * F + F + c] = d * g * sg;
    }
  }
  return out;
}
