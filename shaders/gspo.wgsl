// gspo.wgsl — the GSPO sequence-level clipped objective and its gradient (docs/method.md §6).
// Twin: src/reference/gspo.ts (definitions, clip rule and conventions). Launcher:
// src/gpu/kernels/gspo.ts.
//
// gspo_loss
//   Bindings: 0 params (uniform: numSeqs, Lmax, ε_low, ε_high),
//             1 logpNew [numSeqs, Lmax] f32, 2 logpOld [numSeqs, Lmax] f32,
//             3 lengths [numSeqs] u32, 4 advantages [numSeqs] f32,
//             5 grad [numSeqs, Lmax] f32 (dL/dlogp_new for L = −J; overwritten, 0 on padding),
//             6 seqStats [numSeqs] vec4 (s_i, per-token gradient of i, clipped 0/1, term_i),
//             7 stats vec4 (J, clipped fraction, mean ratio, L).
//   Dispatch: (1) workgroup of 256 threads.
//   Computes: phase 1, thread per sequence (strided): Δ_i = mean_{t<len} (new − old) summed in
//             token order, s_i = exp(Δ_i), term_i = min(s_i A_i, clip(s_i) A_i), clipped when
//             A_i > 0 ∧ s_i > 1+ε_high or A_i < 0 ∧ s_i < 1−ε_low; sums by a tree reduction
//             (fixed order: deterministic). Phase 2, thread per token (strided): the
//             sequence's gradient −A_i s_i / (len_i · numSeqs), or 0 if clipped or padding.

struct Params {
  numSeqs: u32,
  Lmax: u32,
  epsLow: f32,
  epsHigh: f32,
}

const WG: u32 = 256u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logpNew: array<f32>;
@group(0) @binding(2) var<storage, read> logpOld: array<f32>;
@group(0) @binding(3) var<storage, read> lengths: array<u32>;
@group(0) @binding(4) var<storage, read> advantages: array<f32>;
@group(0) @binding(5) var<storage, read_write> grad: array<f32>;
@group(0) @binding(6) var<storage, read_write> seqStats: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> stats: vec4<f32>;

var<workgroup> red: array<vec3<f32>, WG>;

@compute @workgroup_size(256)
fn gspo_loss(@builtin(local_invocation_index) tid: u32) {
  let n = p.numSeqs;
  var part = vec3<f32>(0.0); // (Σ term, Σ clipped, Σ s)
  for (var i = tid; i < n; i += WG) {
    let len = min(lengths[i], p.Lmax);
    var delta = 0.0;
    for (var t = 0u; t < len; t++) { delta += logpNew[i * p.Lmax + t] - logpOld[i * p.Lmax + t]; }
    var s = 1.0;
    if (len > 0u) { s = exp(delta / f32(len)); }
    let a = advantages[i];
    let sClip = clamp(s, 1.0 - p.epsLow, 1.0 + p.epsHigh);
    let term = min(s * a, sClip * a);
    let clipped = (a > 0.0 && s > 1.0 + p.epsHigh) || (a < 0.0 && s < 1.0 - p.epsLow);
    var coeff = 0.0;
    if (!clipped && len > 0u) { coeff = -a * s / (f32(len) * f32(n)); }
    seqStats[i] = vec4<f32>(s, coeff, select(0.0, 1.0, clipped), term);
    part += vec3<f32>(term, select(0.0, 1.0, clipped), s);
  }
  red[tid] = part;
  workgroupBarrier();
  for (var st = WG / 2u; st > 0u; st >>= 1u) {
    if (tid < st) { red[tid] += red[tid + st]; }
    workgroupBarrier();
  }
  if (tid == 0u) {
    let tot = red[0] / f32(n);
    stats = vec4<f32>(tot.x, tot.y, tot.z, -tot.x);
  }
  // Phase 2 reads the per-sequence gradients phase 1 wrote (other threads' writes).
  storageBarrier();
  workgroupBarrier();
  let total = n * p.Lmax;
  for (var idx = tid; idx < total; idx += WG) {
    let i = idx / p.Lmax;
    let t = idx % p.Lmax;
    var gv = 0.0;
    if (t < lengths[i]) { gv = seqStats[i].y; }
    grad[idx] = gv;
  }
}
