// swiglu.wgsl — Llama's gated MLP activation and its gradient. Twin: src/reference/swiglu.ts.
// Launcher: src/gpu/kernels/swiglu.ts.
//
// h [rows, 2F] is the fused up-projection, [gate (F) | up (F)] per row; out [rows, F].
//   swiglu_forward   bindings 1 h (read), 2 out (read_write): out = silu(gate) · up.
//   swiglu_backward  bindings 1 h (read), 3 dout (read), 4 dh (read_write):
//                    dgate = dout · up · σ(g)(1 + g(1 − σ(g))),  dup = dout · silu(g).
// Dispatch: one thread per element of out (n = rows·F), workgroups of 256 on a (gx, gy) grid with
// linear id wg.x + wg.y·gx; threads past n return. σ(g) = 1/(1 + exp(−g)) overflows to 0 for
// very negative g, which is its limit.
//
// napkin(swiglu_forward): flops = 6*rows*F; bytes = 4*3*rows*F
// napkin(swiglu_backward): flops = 12*rows*F; bytes = 4*5*rows*F

// #include "grid.wgsl"

struct Params {
  n: u32,  // rows·F
  F: u32,
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> h: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<storage, read> dout: array<f32>;
@group(0) @binding(4) var<storage, read_write> dh: array<f32>;

fn sigmoid(x: f32) -> f32 {
  return 1.0 / (1.0 + exp(-x));
}

@compute @workgroup_size(256)
fn swiglu_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = flat_thread(wg, nwg, lid, 256u);
  if (i >= p.n) { return; }
  let r = i / p.F;
  let c = i % p.F;
  let g = h[r * 2u * p.F + c];
  let u = h[r * 2u * p.F + p.F + c];
  out[i] = g * sigmoid(g) * u;
}

@compute @workgroup_size(256)
fn swiglu_backward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = flat_thread(wg, nwg, lid, 256u);
  if (i >= p.n) { return; }
  let r = i / p.F;
  let c = i % p.F;
  let o = r * 2u * p.F + c;
  let g = h[o];
  let u = h[o + p.F];
  let s = sigmoid(g);
  let d = dout[i];
  dh[o] = d * u * s * (1.0 + g * (1.0 - s));
  dh[o + p.F] = d * g * s;
}
