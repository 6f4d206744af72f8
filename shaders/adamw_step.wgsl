// adamw_step.wgsl — the AdamW step of one element (f32) or of four (vec4f), a template
// (src/gpu/shaders.ts) that adamw.wgsl includes once per view of its update bindings:
// the element type, the function's name, and the params, grads and two moment arrays.
// #template T STEP PARAMS GRADS M V
//
// i: the element (or vec4) index; block: its 64-element decay block; clip, bc1, bc2: gnorm[1..3].
fn STEP(i: u32, block: u32, clip: f32, bc1: f32, bc2: f32) {
  let g = GRADS[i] * clip;
  if (ZERO_GRAD) { GRADS[i] = T(0.0); }
  let m = p.beta1 * M[i] + (1.0 - p.beta1) * g;
  let v = p.beta2 * V[i] + (1.0 - p.beta2) * g * g;
  M[i] = m;
  V[i] = v;
  var param = PARAMS[i];
  if (decays(block)) {
    param -= p.lr * p.weightDecay * param;
  }
  param -= p.lr * (m / bc1) / (sqrt(v / bc2) + p.eps);
  PARAMS[i] = param;
}
