// gelu.wgsl — tanh GELU and its derivative, for f32 and for vec4f: a template
// (src/gpu/shaders.ts) that elementwise.wgsl includes once per type,
// `// #include "gelu.wgsl" T=f32 GELU=gelu GELU_GRAD=gelu_grad`. The including file declares
// GELU_K = √(2/π) and GELU_C = 0.044715.
// #template T GELU GELU_GRAD
//
// tanh is never called: with e = exp(−2|u|), 1 + tanh(u) = 2/(1 + e) for u ≥ 0 and 2e/(1 + e)
// for u < 0, and 1 − tanh²(u) = 4e/(1 + e)². Both stay accurate where tanh → ±1 (the f32
// expressions 1 + t and 1 − t² lose every digit there, e.g. gelu'(−4)), and nothing overflows.

fn GELU(x: T) -> T {
  let u = GELU_K * (x + GELU_C * x * x * x);
  let e = exp(-2.0 * abs(u));
  let d = 1.0 / (1.0 + e);
  return 0.5 * x * select(2.0 * e * d, 2.0 * d, u >= T(0.0));
}

fn GELU_GRAD(x: T) -> T {
  let u = GELU_K * (x + GELU_C * x * x * x);
  let e = exp(-2.0 * abs(u));
  let d = 1.0 / (1.0 + e);
  let one_plus_t = select(2.0 * e * d, 2.0 * d, u >= T(0.0));
  let sech2 = 4.0 * e * d * d;
  return 0.5 * one_plus_t + 0.5 * x * sech2 * GELU_K * (1.0 + 3.0 * GELU_C * x * x);
}
