// headnorm.wgsl — RMSNorm over each head of q and k (Qwen3's q_norm / k_norm), in place on a
// fused QKV buffer, forward and backward. Twin: src/reference/headnorm.ts. Launcher:
// src/gpu/kernels/headnorm.ts.
//
// Layouts: qkv / dqkv [rows, W], W = (H + 2·KVH)·D (q heads, k heads, v heads); the first
// NH = H + KVH heads of a row are normalised, q heads with the gain at qOffset, k heads with the
// gain at kOffset (each [D], in the weights binding; their gradients at the same offsets of the
// grads binding). raw [rows, NH·D] keeps the heads before the norm, stats [rows, NH] their rstd.
//
// Entry points (workgroups of 64, threads past the end return; one thread walks one head of D
// contiguous floats, as norm.wgsl does for rows, with no barriers):
//   headnorm_forward   bindings 1 x (read_write), 2 weights (read), 3 raw (read_write),
//                      4 stats (read_write). Dispatch (ceil(rows·NH / 64)) on a (gx, gy) grid.
//                      rstd = 1/√(mean(x²) + eps); raw = x; x = x·rstd·gain.
//   headnorm_partial   bindings 1 dy (read), 3 raw, 4 stats, 5 partial [numBlocks, 2D]
//                      (read_write). Dispatch (ceil(2D / 64), numBlocks): thread = (column j of
//                      [q gain | k gain], row block): Σ over its rows and that part's heads of
//                      dy·x̂ (stage 1 of dgain). Run before headnorm_backward, which overwrites dy.
//   headnorm_backward  bindings 1 dx (read_write: dy in, dx out), 2 weights, 3 raw, 4 stats.
//                      Same grid as the forward: dx = rstd·(g − x̂·mean(g·x̂)), g = dy·gain.
//   headnorm_grad      bindings 5 partial, 6 grads (read_write). Dispatch ceil(2D / 64): the sum
//                      over blocks in order, added into the gain gradients.
// Every sum has a fixed order: results are bit-identical run to run.
//
// napkin(headnorm_forward): flops = rows*(H + KVH)*(4*D + 4); bytes = 4*(3*rows*(H + KVH)*D + rows*(H + KVH) + 2*D)

// #include "grid.wgsl"

struct Params {
  rows: u32,
  H: u32,
  KVH: u32,
  D: u32,
  eps: f32,
  qOffset: u32,
  kOffset: u32,
  rowsPerBlock: u32,
  numBlocks: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read> weights: array<f32>;
@group(0) @binding(3) var<storage, read_write> raw: array<f32>;
@group(0) @binding(4) var<storage, read_write> stats: array<f32>;
@group(0) @binding(5) var<storage, read_write> partial: array<f32>;
@group(0) @binding(6) var<storage, read_write> grads: array<f32>;

fn gain_offset(head: u32) -> u32 {
  if (head < p.H) { return p.qOffset; }
  return p.kOffset;
}

@compute @workgroup_size(64)
fn headnorm_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let NH = p.H + p.KVH;
  let i = flat_thread(wg, nwg, lid, 64u);
  if (i >= p.rows * NH) { return; }
  let r = i / NH;
  let head = i % NH;
  let o = r * (NH + p.KVH) * p.D + head * p.D;
  let g0 = gain_offset(head);
  var ss = 0.0;
  for (var d = 0u; d < p.D; d++) {
    let v = x[o + d];
    ss += v * v;
  }
  let rstd = 1.0 / sqrt(ss / f32(p.D) + p.eps);
  stats[i] = rstd;
  for (var d = 0u; d < p.D; d++) {
    let v = x[o + d];
    raw[i * p.D + d] = v;
    x[o + d] = v * rstd * weights[g0 + d];
  }
}

@compute @workgroup_size(64)
fn headnorm_partial(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let j = wg.x * 64u + lid;
  let blk = wg.y;
  if (j >= 2u * p.D || blk >= p.numBlocks) { return; }
  let NH = p.H + p.KVH;
  let d = j % p.D;
  var h0 = 0u;
  var h1 = p.H;
  if (j >= p.D) { h0 = p.H; h1 = NH; }
  let r0 = blk * p.rowsPerBlock;
  let r1 = min(r0 + p.rowsPerBlock, p.rows);
  var s = 0.0;
  for (var r = r0; r < r1; r++) {
    for (var head = h0; head < h1; head++) {
      let i = r * NH + head;
      s += x[r * (NH + p.KVH) * p.D + head * p.D + d] * raw[i * p.D + d] * stats[i];
    }
  }
  partial[blk * 2u * p.D + j] = s;
}

@compute @workgroup_size(64)
fn headnorm_backward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let NH = p.H + p.KVH;
  let i = flat_thread(wg, nwg, lid, 64u);
  if (i >= p.rows * NH) { return; }
  let r = i / NH;
  let head = i % NH;
  let o = r * (NH + p.KVH) * p.D + head * p.D;
  let g0 = gain_offset(head);
  let rstd = stats[i];
  var sgx = 0.0;
  for (var d = 0u; d < p.D; d++) {
    sgx += x[o + d] * weights[g0 + d] * raw[i * p.D + d] * rstd;
  }
  let mean = sgx / f32(p.D);
  for (var d = 0u; d < p.D; d++) {
    let xhat = raw[i * p.D + d] * rstd;
    x[o + d] = rstd * (x[o + d] * weights[g0 + d] - xhat * mean);
  }
}

@compute @workgroup_size(64)
fn headnorm_grad(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let j = wg.x * 64u + lid;
  if (j >= 2u * p.D) { return; }
  var s = 0.0;
  for (var b = 0u; b < p.numBlocks; b++) { s += partial[b * 2u * p.D + j]; }
  var g = p.qOffset + j;
  if (j >= p.D) { g = p.kOffset + j - p.D; }
  grads[g] += s;
}
