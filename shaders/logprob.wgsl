// logprob.wgsl — per-token log-probabilities of given targets, and their gradient wrt logits.
// Twin: src/reference/logprob.ts. Launcher: src/gpu/kernels/logprob.ts.
//
// Bindings: 0 params (uniform), 1 logits [N, V] f32, 2 targets [N] u32, 3 logp [N] f32,
//           4 lse [N] f32, 5 g [N] f32 (upstream dL/dlogp), 6 dlogits [N, V] f32.
//
// logprob_forward
//   Dispatch: (N) workgroups of 64; one workgroup per row (V up to any size, 8192 and beyond).
//   Computes: z = logits[r] · invTemp; lse[r] = max z + log Σ exp(z − max z): each thread an
//             online (max, sum) over a strided share of the row in one pass, merged by thread 0
//             in thread order (deterministic);
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

// 64 threads and one two-barrier reduction: barriers dominate on CPU WebGPU (SwiftShader).
const WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<u32>;
@group(0) @binding(3) var<storage, read_write> logp: array<f32>;
@group(0) @binding(4) var<storage, read_write> lse: array<f32>;
@group(0) @binding(5) var<storage, read> g: array<f32>;
@group(0) @binding(6) var<storage, read_write> dlogits: array<f32>;

var<workgroup> red: array<vec2<f32>, WG>;

// Merges two (max, Σ exp(z − max)) pairs.
fn merge(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let m = max(a.x, b.x);
  return vec2<f32>(m, a.y * exp(a.x - m) + b.y * exp(b.x - m));
}

@compute @workgroup_size(64)
fn logprob_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let r = wg.x;
  let base = r * p.V;
  // Each thread keeps an online (max, sum) over its strided logits: one pass over the row.
  var acc = vec2<f32>(-3.0e38, 0.0);
  for (var v = tid; v < p.V; v += WG) {
    let z = logits[base + v] * p.invTemp;
    if (z > acc.x) {
      acc = vec2<f32>(z, acc.y * exp(acc.x - z) + 1.0);
    } else {
      acc.y += exp(z - acc.x);
    }
  }
  red[tid] = acc;
  workgroupBarrier();
  if (tid == 0u) {
    var t = red[0];
    for (var i = 1u; i < WG; i++) { t = merge(t, red[i]); }
    let l = t.x + log(t.y);
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
