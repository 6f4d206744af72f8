// logprob.wgsl — per-token log-probabilities of given targets, and their gradient wrt logits.
// Twin: src/reference/logprob.ts. Launcher: src/gpu/kernels/logprob.ts.
//
// Bindings: 0 params (uniform), 1 logits [N, V] f32, 2 targets [N] u32, 3 logp [N] f32,
//           4 lse [N] f32, 5 g [N] f32 (upstream dL/dlogp), 6 dlogits [N, V] f32.
//
// logprob_forward
//   Dispatch: (N) workgroups of 256; one workgroup per row (V up to any size, 8192 and beyond).
//   Computes: z = logits[r] · invTemp; lse[r] = max z + log Σ exp(z − max z) (two strided
//             passes with tree reductions, a fixed order: deterministic);
//             logp[r] = z[target[r]] − lse[r].
// logprob_backward
//   Dispatch: (ceil(V/256), N) workgroups of 256; one thread per logit.
//   Computes: dlogits[r, v] = g[r] · invTemp · (onehot(target[r])_v − exp(z_v − lse[r])),
//             overwriting dlogits. Needs lse from logprob_forward.

struct Params {
  N: u32,
  V: u32,
  invTemp: f32,
  _pad: u32,
}

const WG: u32 = 256u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<u32>;
@group(0) @binding(3) var<storage, read_write> logp: array<f32>;
@group(0) @binding(4) var<storage, read_write> lse: array<f32>;
@group(0) @binding(5) var<storage, read> g: array<f32>;
@group(0) @binding(6) var<storage, read_write> dlogits: array<f32>;

var<workgroup> red: array<f32, WG>;

@compute @workgroup_size(256)
fn logprob_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let r = wg.x;
  let base = r * p.V;
  var m = -3.0e38;
  for (var v = tid; v < p.V; v += WG) { m = max(m, logits[base + v] * p.invTemp); }
  red[tid] = m;
  workgroupBarrier();
  for (var st = WG / 2u; st > 0u; st >>= 1u) {
    if (tid < st) { red[tid] = max(red[tid], red[tid + st]); }
    workgroupBarrier();
  }
  m = red[0];
  workgroupBarrier();
  var sum = 0.0;
  for (var v = tid; v < p.V; v += WG) { sum += exp(logits[base + v] * p.invTemp - m); }
  red[tid] = sum;
  workgroupBarrier();
  for (var st = WG / 2u; st > 0u; st >>= 1u) {
    if (tid < st) { red[tid] += red[tid + st]; }
    workgroupBarrier();
  }
  if (tid == 0u) {
    let l = m + log(red[0]);
    lse[r] = l;
    logp[r] = logits[base + targets[r]] * p.invTemp - l;
  }
}

@compute @workgroup_size(256)
fn logprob_backward(@builtin(global_invocation_id) gid: vec3<u32>) {
  let v = gid.x;
  let r = gid.y;
  if (v >= p.V) { return; }
  let i = r * p.V + v;
  var d = -exp(logits[i] * p.invTemp - lse[r]);
  if (v == targets[r]) { d += 1.0; }
  dlogits[i] = g[r] * p.invTemp * d;
}
