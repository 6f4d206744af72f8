// xent.wgsl — softmax cross-entropy with a per-token loss weight, fused with its gradient.
//
// Shapes: logits [N, V] row-major (V up to 8192 and beyond), targets [N] u32, weights [N] f32
// (≥ 0), nll [N] f32, out [2] f32. W = Σ weights (host-computed, in Params). A target ≥ V marks a
// padding row: it counts as weight 0 (nll 0, zero gradient). Binding 0 is the uniform Params.
// Workgroups of 64 threads; grids split over x, y (linear workgroup id wg.x + wg.y·gx).
//
// A row is cut into S = ceil(V / SEG) segments of SEG = 512 columns, and each thread owns one
// (row, segment). No workgroup barriers on the per-row path: on SwiftShader a barrier costs about
// a microsecond per invocation, which made a workgroup-per-row tree reduction ~90 ms at 512×256;
// splitting long rows into segments keeps enough threads busy on a GPU.
//
// Entry points:
//   xent_rows     (S = 1) bindings 1 logits (read_write), 2 targets (read), 3 weights (read),
//                 4 nll (read_write). Dispatch ceil(N/64) workgroups; thread = row:
//                 max, Σ exp(l − max) → logsumexp; nll[r] = logsumexp − logits[r, target]
//                 (unweighted); GRAD: logits[r, c] ← (w_r/W)·(softmax_c − [c = target]) in place
//                 (zeros when W = 0 or w_r = 0). GRAD = false (evaluation) leaves logits alone.
//   xent_rows_vec4  the same for V a multiple of 4, reading the logits as vec4s.
//   xent_partial  (S > 1) bindings 1 logits (read), 2 targets (read), 3 scratch (read_write).
//                 Dispatch ceil(N·S/64) workgroups; thread = (row, segment): the segment's
//                 (max, Σ exp(l − max)) → scratch[2·(row·S + seg) ..]; the thread whose segment
//                 holds the target copies its logit to scratch[2·N·S + row] (before pass 2 can
//                 overwrite it).
//   xent_finish   (S > 1) bindings 1 logits (read_write), 2 targets (read), 3 weights (read),
//                 4 nll (read_write), 5 scratch (read). Dispatch as xent_partial; thread =
//                 (row, segment): merges the row's S partials in segment order → logsumexp;
//                 segment 0 writes nll[row]; GRAD: the gradient over the thread's columns.
//   xent_reduce   bindings 1 nll (read), 2 weights (read), 3 out (read_write). Dispatch: 1
//                 workgroup of 64. Thread t sums w·nll over its contiguous ceil(N/64) rows in
//                 order; after one barrier thread 0 adds the 64 sums in order:
//                 out[0] = Σ w·nll / W (0 when W = 0), out[1] = Σ w·nll.
// No atomics; every sum has a fixed order, so results are bit-identical run to run.
//
// Napkin maths (per call with GRAD, no loss reduction; bench/napkin.ts, measured by `npm run
// bench -- --suite kernels`): ≈ 8 FLOPs per logit (max; sub, exp, add; then exp again, scale,
// subtract the one-hot) against 8 bytes (the logit read, its gradient written in place), plus
// targets, weights and nll per row. Memory-bound on a GPU (held against the add kernel's
// GB/s), though on a CPU adapter the exps make it closer to balanced.
// napkin(xent): flops = 8*N*V; bytes = 4*(2*N*V + 3*N)

// #include "grid.wgsl"

struct Params {
  N: u32,
  V: u32,
  W: f32,
  S: u32, // segments per row
}

override GRAD: bool = true;

// SEG: src/gpu/kernels/tiles.ts (the launcher counts segments by it too).
// #include "xent_consts.wgsl"
const NEG_BIG: f32 = -3.0e38;

@group(0) @binding(0) var<uniform> p: Params;

fn grad_scale(valid: bool, w: f32) -> f32 {
  if (valid && p.W > 0.0) { return w / p.W; }
  return 0.0;
}

// ---- whole rows (S = 1) ------------------------------------------------------------------
@group(0) @binding(1) var<storage, read_write> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<u32>;
@group(0) @binding(3) var<storage, read> weights: array<f32>;
@group(0) @binding(4) var<storage, read_write> nll: array<f32>;

@compute @workgroup_size(64)
fn xent_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let row = flat_thread(wg, nwg, lid, 64u);
  if (row >= p.N) { return; }
  let V = p.V;
  let base = row * V;
  let tgt = targets[row];
  let valid = tgt < V;
  var m = NEG_BIG;
  for (var c = 0u; c < V; c++) { m = max(m, logits[base + c]); }
  var s = 0.0;
  for (var c = 0u; c < V; c++) { s += exp(logits[base + c] - m); }
  let lse = m + log(s);
  var l = 0.0;
  if (valid) { l = lse - logits[base + tgt]; }
  nll[row] = l;
  if (GRAD) {
    let scale = grad_scale(valid, weights[row]);
    if (scale == 0.0) {
      for (var c = 0u; c < V; c++) { logits[base + c] = 0.0; }
    } else {
      for (var c = 0u; c < V; c++) { logits[base + c] = scale * exp(logits[base + c] - lse); }
      logits[base + tgt] -= scale;
    }
  }
}

// ---- whole rows on vec4s (S = 1, V a multiple of 4) -----------------------------------------
// Same bindings as xent_rows with the logits seen as vec4s: SwiftShader pays per access, so a
// quarter of the accesses runs the row passes several times faster. Same dispatch.
@group(0) @binding(1) var<storage, read_write> logits4: array<vec4<f32>>;

@compute @workgroup_size(64)
fn xent_rows_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let row = flat_thread(wg, nwg, lid, 64u);
  if (row >= p.N) { return; }
  let V4 = p.V / 4u;
  let base = row * V4;
  let tgt = targets[row];
  let valid = tgt < p.V;
  var m4 = vec4<f32>(NEG_BIG);
  for (var c = 0u; c < V4; c++) { m4 = max(m4, logits4[base + c]); }
  let m = max(max(m4.x, m4.y), max(m4.z, m4.w));
  var s4 = vec4<f32>(0.0);
  for (var c = 0u; c < V4; c++) { s4 += exp(logits4[base + c] - m); }
  let lse = m + log((s4.x + s4.y) + (s4.z + s4.w));
  var l = 0.0;
  if (valid) { l = lse - logits4[base + tgt / 4u][tgt % 4u]; }
  nll[row] = l;
  if (GRAD) {
    let scale = grad_scale(valid, weights[row]);
    if (scale == 0.0) {
      for (var c = 0u; c < V4; c++) { logits4[base + c] = vec4<f32>(0.0); }
    } else {
      for (var c = 0u; c < V4; c++) { logits4[base + c] = scale * exp(logits4[base + c] - lse); }
      logits4[base + tgt / 4u][tgt % 4u] -= scale;
    }
  }
}

// ---- long rows, pass 1: per-segment (max, Σ exp) ---------------------------------------------
@group(0) @binding(1) var<storage, read> pl_logits: array<f32>;
@group(0) @binding(3) var<storage, read_write> pl_scratch: array<f32>;

@compute @workgroup_size(64)
fn xent_partial(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let id = flat_thread(wg, nwg, lid, 64u);
  if (id >= p.N * p.S) { return; }
  let row = id / p.S;
  let seg = id - row * p.S;
  let V = p.V;
  let base = row * V;
  let c0 = seg * SEG;
  let c1 = min(c0 + SEG, V);
  var m = NEG_BIG;
  for (var c = c0; c < c1; c++) { m = max(m, pl_logits[base + c]); }
  var s = 0.0;
  for (var c = c0; c < c1; c++) { s += exp(pl_logits[base + c] - m); }
  pl_scratch[2u * id] = m;
  pl_scratch[2u * id + 1u] = s;
  let tgt = targets[row];
  if (tgt >= c0 && tgt < c1) { pl_scratch[2u * p.N * p.S + row] = pl_logits[base + tgt]; }
}

// ---- long rows, pass 2: logsumexp, nll, gradient --------------------------------------------
@group(0) @binding(5) var<storage, read> fin_scratch: array<f32>;

@compute @workgroup_size(64)
fn xent_finish(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let id = flat_thread(wg, nwg, lid, 64u);
  if (id >= p.N * p.S) { return; }
  let row = id / p.S;
  let seg = id - row * p.S;
  let V = p.V;
  let first = row * p.S;
  var m = NEG_BIG;
  for (var j = 0u; j < p.S; j++) { m = max(m, fin_scratch[2u * (first + j)]); }
  var s = 0.0;
  for (var j = 0u; j < p.S; j++) { s += fin_scratch[2u * (first + j) + 1u] * exp(fin_scratch[2u * (first + j)] - m); }
  let lse = m + log(s);
  let tgt = targets[row];
  let valid = tgt < V;
  if (seg == 0u) {
    var l = 0.0;
    if (valid) { l = lse - fin_scratch[2u * p.N * p.S + row]; }
    nll[row] = l;
  }
  if (GRAD) {
    let base = row * V;
    let c0 = seg * SEG;
    let c1 = min(c0 + SEG, V);
    let scale = grad_scale(valid, weights[row]);
    if (scale == 0.0) {
      for (var c = c0; c < c1; c++) { logits[base + c] = 0.0; }
    } else {
      for (var c = c0; c < c1; c++) { logits[base + c] = scale * exp(logits[base + c] - lse); }
      if (tgt >= c0 && tgt < c1) { logits[base + tgt] -= scale; }
    }
  }
}

// ---- weighted mean ---------------------------------------------------------------------
@group(0) @binding(1) var<storage, read> r_nll: array<f32>;
@group(0) @binding(2) var<storage, read> r_w: array<f32>;
@group(0) @binding(3) var<storage, read_write> r_out: array<f32>;

var<workgroup> sums: array<f32, 64>;

@compute @workgroup_size(64)
fn xent_reduce(@builtin(local_invocation_index) lid: u32) {
  let chunk = (p.N + 63u) / 64u;
  let r0 = lid * chunk;
  let r1 = min(r0 + chunk, p.N);
  var s = 0.0;
  for (var r = r0; r < r1; r++) { s += r_w[r] * r_nll[r]; }
  sums[lid] = s;
  workgroupBarrier();
  if (lid == 0u) {
    var total = 0.0;
    for (var t = 0u; t < 64u; t++) { total += sums[t]; }
    var mean = 0.0;
    if (p.W > 0.0) { mean = total / p.W; }
    r_out[0] = mean;
    r_out[1] = total;
  }
}
