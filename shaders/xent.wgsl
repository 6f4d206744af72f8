// xent.wgsl — softmax cross-entropy with a per-token loss weight, fused with its gradient.
//
// Shapes: logits [N, V] row-major (V up to 8192 and beyond), targets [N] u32, weights [N] f32
// (≥ 0), nll [N] f32, out [2] f32. W = Σ weights (host-computed, in Params). A target ≥ V marks a
// padding row: it counts as weight 0 (nll 0, zero gradient). Binding 0 is the uniform Params.
//
// Entry points:
//   xent_rows    bindings 1 logits (read_write), 2 targets (read), 3 weights (read), 4 nll
//                (read_write). Dispatch: N workgroups (split over x, y; linear id wg.x + wg.y·gx)
//                of WG threads (a power of two, 32..256). One workgroup per row:
//                  pass 1: each thread keeps an online (max, Σ exp) over its columns
//                          lid, lid + WG, …; one tree reduction merges them → logsumexp;
//                  nll[r] = logsumexp − logits[r, target] (unweighted);
//                  pass 2 (GRAD): logits[r, c] ← (w_r/W)·(softmax_c − [c = target]) in place
//                          (each thread rewrites only the columns it read), or zeros if W = 0.
//                With GRAD = false (evaluation) the logits are left untouched.
//   xent_reduce  bindings 1 nll (read), 2 weights (read), 3 out (read_write). Dispatch: 1
//                workgroup of 256. Thread t sums w_r·nll[r] for r = t, t+256, … in order, then a
//                tree reduction: out[0] = Σ w·nll / W (0 when W = 0), out[1] = Σ w·nll.
// No atomics; every sum has a fixed order, so results are bit-identical run to run.

struct Params {
  N: u32,
  V: u32,
  W: f32,
  _pad: u32,
}

override WG: u32 = 256u;
override GRAD: bool = true;

const NEG_BIG: f32 = -3.0e38;

@group(0) @binding(0) var<uniform> p: Params;

var<workgroup> red: array<vec2<f32>, 256>;

// ---- per-row loss and gradient ---------------------------------------------------------
@group(0) @binding(1) var<storage, read_write> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<u32>;
@group(0) @binding(3) var<storage, read> weights: array<f32>;
@group(0) @binding(4) var<storage, read_write> nll: array<f32>;

fn merge(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let m = max(a.x, b.x);
  return vec2<f32>(m, a.y * exp(a.x - m) + b.y * exp(b.x - m));
}

@compute @workgroup_size(WG)
fn xent_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let row = wg.x + wg.y * nwg.x;
  if (row >= p.N) { return; }
  let V = p.V;
  let base = row * V;
  let tgt = targets[row];
  let valid = tgt < V;
  var lt = 0.0;
  if (valid) { lt = logits[base + tgt]; }
  // Every thread has read the target's logit before any thread rewrites the row.
  storageBarrier();

  var acc = vec2<f32>(NEG_BIG, 0.0);
  for (var c = lid; c < V; c += WG) {
    let l = logits[base + c];
    if (l > acc.x) {
      acc = vec2<f32>(l, acc.y * exp(acc.x - l) + 1.0);
    } else {
      acc.y += exp(l - acc.x);
    }
  }
  red[lid] = acc;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) { red[lid] = merge(red[lid], red[lid + s]); }
    workgroupBarrier();
  }
  let total = red[0];
  let lse = total.x + log(total.y);
  if (lid == 0u) {
    var v = 0.0;
    if (valid) { v = lse - lt; }
    nll[row] = v;
  }
  if (GRAD) {
    var scale = 0.0;
    if (valid && p.W > 0.0) { scale = weights[row] / p.W; }
    for (var c = lid; c < V; c += WG) {
      var g = 0.0;
      if (scale != 0.0) {
        g = scale * exp(logits[base + c] - lse);
        if (c == tgt) { g -= scale; }
      }
      logits[base + c] = g;
    }
  }
}

// ---- weighted mean ---------------------------------------------------------------------
@group(0) @binding(1) var<storage, read> r_nll: array<f32>;
@group(0) @binding(2) var<storage, read> r_w: array<f32>;
@group(0) @binding(3) var<storage, read_write> r_out: array<f32>;

@compute @workgroup_size(256)
fn xent_reduce(@builtin(local_invocation_index) lid: u32) {
  var s = 0.0;
  for (var r = lid; r < p.N; r += 256u) { s += r_w[r] * r_nll[r]; }
  red[lid] = vec2<f32>(s, 0.0);
  workgroupBarrier();
  for (var k = 128u; k > 0u; k = k >> 1u) {
    if (lid < k) { red[lid] = red[lid] + red[lid + k]; }
    workgroupBarrier();
  }
  if (lid == 0u) {
    let total = red[0].x;
    var mean = 0.0;
    if (p.W > 0.0) { mean = total / p.W; }
    r_out[0] = mean;
    r_out[1] = total;
  }
}
