// adamw.wgsl — AdamW over the flat parameter buffer, with global gradient-norm clipping, in
// three dispatches and no CPU round trip.
//
// Shapes: params, grads, m, v: [n] f32, one flat layout (tensors at multiples of 64 elements).
// mask: u32 bits, one per 64-element block, 1 = apply weight decay. gnorm: [4] f32 =
// (‖g‖ before clipping, clip factor, 1 − β1^t, 1 − β2^t). partials: [numPartials] f32. Binding 0 is the uniform
// Params, which the host rewrites before each step's submission (step, lr).
//
// Entry points:
//   sumsq_partial  bindings 1 grads (read), 2 partials (read_write). Dispatch: ceil(n/2048)
//                  workgroups of 64 (split over x, y; linear id wg.x + wg.y·gx). Thread t of
//                  workgroup w sums g² over elements w·2048 + t + 64·k, k < 32, in order, into
//                  partials[w·64 + t]. No barrier: on SwiftShader a workgroupBarrier costs about
//                  a microsecond per invocation, more than the whole sum.
//   sumsq_partial_vec4  the same on vec4s, for n a multiple of 4.
//   sumsq_final    bindings 1 partials (read), 2 gnorm (read_write). Dispatch: 1 workgroup of 64.
//                  Thread t sums its contiguous share of the partials in order; after one barrier
//                  thread 0 adds the 64 sums in order: norm = √Σ, and writes
//                  gnorm = (norm, clip = min(1, maxNorm/(norm + 1e-6)) or 1 when maxNorm ≤ 0,
//                           1 − β1^t, 1 − β2^t), t = step + 1.
//   adamw_update   bindings 1 params (read_write), 2 grads (read_write), 3 m (read_write),
//                  4 v (read_write), 5 gnorm (read), 6 mask (read). Dispatch: ceil(n/256)
//                  workgroups of 256 (split over x, y), one thread per element:
//                    g = grad·clip;  m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²
//                    p −= lr·wd·p  (masked blocks only, decoupled from the gradient)
//                    p −= lr·(m/(1−β1^t)) / (√(v/(1−β2^t)) + eps)
//                  With ZERO_GRAD the gradient is cleared after use (saves the next step's clear).
//   adamw_update_vec4  the same on vec4s, 16 elements per thread, for n a multiple of 4.
// Parameters held in several buffers (shards, src/model/shards.ts: each under one storage
// binding) run sumsq_partial and the update once per shard, each with its own Params (n, its
// partials' count and partialBase) and decay mask; the shards' partials sit side by side, so
// one sumsq_final over all of them gives the norm of the whole gradient.
// Every reduction has a fixed order: bit-identical results run to run.
//
// Napkin maths (per step over n parameters; bench/napkin.ts, measured by `npm run bench --
// --suite kernels`): Σ g² is 2 FLOPs per element and the update ≈ 16 (clip, two moments,
// decay, bias corrections, sqrt, divide); the bytes are g read twice (sumsq, update), p, m, v
// read and written: 32 bytes per element. Under 1 FLOP per byte: memory-bound, held against
// the add kernel's GB/s.
// napkin(adamw): flops = 18*n; bytes = 4*8*n

// #include "grid.wgsl"

struct Params {
  n: u32,
  step: u32,        // 0-based index of this optimizer step
  numPartials: u32, // ceil(n / 2048)·64 (sumsq_final: of every shard together)
  partialBase: u32, // where this shard's partials start

  lr: f32,
  beta1: f32,
  beta2: f32,
  eps: f32,
  weightDecay: f32,
  maxNorm: f32,
}

override ZERO_GRAD: bool = false;

// PER_THREAD and CHUNK = 64 threads × PER_THREAD: src/gpu/kernels/tiles.ts (the launcher sizes the partials by them too).
// #include "adamw_consts.wgsl"

@group(0) @binding(0) var<uniform> p: Params;

// ---- stage 1: Σ g² per thread ----------------------------------------------------------
@group(0) @binding(1) var<storage, read> s_grads: array<f32>;
@group(0) @binding(2) var<storage, read_write> s_partials: array<f32>;

@compute @workgroup_size(64)
fn sumsq_partial(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let w = flat_group(wg, nwg);
  if (w * 64u >= p.numPartials) { return; }
  let base = w * CHUNK + lid;
  var s = 0.0;
  for (var k = 0u; k < PER_THREAD; k++) {
    let i = base + k * 64u;
    if (i < p.n) {
      let g = s_grads[i];
      s += g * g;
    }
  }
  s_partials[p.partialBase + w * 64u + lid] = s;
}

// Stage 1 on vec4s (n a multiple of 4): the same 2048-element chunk per workgroup, thread lid
// summing vec4 indices w·512 + lid + 64·k, k < 8; same partials layout.
@group(0) @binding(1) var<storage, read> s_grads4: array<vec4<f32>>;

@compute @workgroup_size(64)
fn sumsq_partial_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let w = flat_group(wg, nwg);
  if (w * 64u >= p.numPartials) { return; }
  let n4 = p.n / 4u;
  let base = w * (CHUNK / 4u) + lid;
  var s = vec4<f32>(0.0);
  for (var k = 0u; k < PER_THREAD / 4u; k++) {
    let i = base + k * 64u;
    if (i < n4) {
      let g = s_grads4[i];
      s += g * g;
    }
  }
  s_partials[p.partialBase + w * 64u + lid] = (s.x + s.y) + (s.z + s.w);
}

// ---- stage 2: the norm, the clip factor, the bias corrections ----------------------------------
@group(0) @binding(1) var<storage, read> f_partials: array<f32>;
@group(0) @binding(2) var<storage, read_write> f_gnorm: array<f32>;

var<workgroup> sums: array<f32, 64>;

@compute @workgroup_size(64)
fn sumsq_final(@builtin(local_invocation_index) lid: u32) {
  let share = (p.numPartials + 63u) / 64u;
  let i0 = lid * share;
  let i1 = min(i0 + share, p.numPartials);
  var s = 0.0;
  for (var i = i0; i < i1; i++) { s += f_partials[i]; }
  sums[lid] = s;
  workgroupBarrier();
  if (lid == 0u) {
    var total = 0.0;
    for (var t = 0u; t < 64u; t++) { total += sums[t]; }
    let norm = sqrt(total);
    var clip = 1.0;
    if (p.maxNorm > 0.0) { clip = min(1.0, p.maxNorm / (norm + 1e-6)); }
    let t = f32(p.step + 1u);
    f_gnorm[0] = norm;
    f_gnorm[1] = clip;
    f_gnorm[2] = 1.0 - pow(p.beta1, t);
    f_gnorm[3] = 1.0 - pow(p.beta2, t);
  }
}

// ---- the update --------------------------------------------------------------------------
@group(0) @binding(1) var<storage, read_write> u_params: array<f32>;
@group(0) @binding(2) var<storage, read_write> u_grads: array<f32>;
@group(0) @binding(3) var<storage, read_write> u_m: array<f32>;
@group(0) @binding(4) var<storage, read_write> u_v: array<f32>;
@group(0) @binding(5) var<storage, read> u_gnorm: array<f32>;
@group(0) @binding(6) var<storage, read> u_mask: array<u32>;

// Whether block (64 elements) takes weight decay: its bit in the mask.
fn decays(block: u32) -> bool {
  return ((u_mask[block >> 5u] >> (block & 31u)) & 1u) == 1u;
}

// #include "adamw_step.wgsl" T=f32 STEP=adamw_at PARAMS=u_params GRADS=u_grads M=u_m V=u_v

@compute @workgroup_size(256)
fn adamw_update(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = flat_thread(wg, nwg, lid, 256u);
  if (i >= p.n) { return; }
  adamw_at(i, i / 64u, u_gnorm[1], u_gnorm[2], u_gnorm[3]);
}

// ---- the update on vec4s ------------------------------------------------------------------
// Same bindings as vec4 arrays, for n a multiple of 4 (the host checks); 4 vec4 per thread, as
// SwiftShader pays per access and per invocation. A vec4 never straddles a 64-element decay
// block. Dispatch: ceil(n/1024) workgroups of 64 (split over x, y); thread lid of workgroup w
// handles vec4 indices w·256 + lid + 64·j, j < 4.
@group(0) @binding(1) var<storage, read_write> u_params4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> u_grads4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> u_m4: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> u_v4: array<vec4<f32>>;

// #include "adamw_step.wgsl" T=vec4f STEP=adamw_at4 PARAMS=u_params4 GRADS=u_grads4 M=u_m4 V=u_v4

@compute @workgroup_size(64)
fn adamw_update_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let n4 = p.n / 4u;
  let base = flat_thread(wg, nwg, lid, 256u);
  let clip = u_gnorm[1];
  let bc1 = u_gnorm[2];
  let bc2 = u_gnorm[3];
  for (var j = 0u; j < 4u; j++) {
    let i = base + j * 64u;
    if (i >= n4) { break; }
    adamw_at4(i, i / 16u, clip, bc1, bc2);
  }
}
