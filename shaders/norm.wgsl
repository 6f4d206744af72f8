// norm.wgsl — LayerNorm (gamma, beta) or RMSNorm (gamma only, RMS = true) over the last
// dimension of row-major [rows, C] activations, forward and backward.
//
// gamma/beta (and their gradients) sit in flat buffers at element offsets given in Params.
// stats [rows, 2]: stats[2r] = mean (0 for RMSNorm), stats[2r + 1] = rstd = 1/√(var + eps)
// (RMSNorm: 1/√(mean(x²) + eps)); the forward writes them, the backward reads them.
// Binding 0 is always the uniform Params. Workgroups of 64 threads; grids are split over x, y
// (linear workgroup id wg.x + wg.y·gx) and threads past the end return.
//
// Why one thread per row rather than a workgroup tree reduction: on SwiftShader (the CPU WebGPU
// every CI machine has) a workgroupBarrier costs about a microsecond per invocation, so a
// 64-thread tree over 512 rows took ~90 ms where these barrier-free loops take ~1 ms; on a GPU a
// thread walking one contiguous row of C ≤ a few thousand floats is cache-friendly.
//
// Entry points:
//   norm_forward    bindings 1 x (read), 2 weights (read), 3 y (read_write), 4 stats
//                   (read_write). Dispatch: ceil(rows/64) workgroups; thread = row: the mean
//                   (summing x − x[row, 0]), then Σ(x − mean)² (two passes, no cancellation),
//                   then y = x̂·gamma (+ beta).
//   norm_backward   bindings 1 dy (read), 2 x (read), 3 weights (read), 4 stats (read),
//                   5 dx (read_write), 6 partial [numBlocks, 2C] (read_write).
//                   Dispatch: rowGroups + colGroups·numBlocks workgroups, two roles:
//                   - workgroup w < rowGroups: thread = row r: with dx̂ = dy·gamma,
//                     dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂))  (RMSNorm drops mean(dx̂)),
//                     written, or added when ACCUM_DX (into the residual stream's gradient);
//                   - the others: thread = (column c, row block b): Σ dy·x̂ and Σ dy over the
//                     block's rows in order → partial[b, c] and partial[b, C + c] (stage 1 of
//                     dgamma / dbeta).
//                   rowGroups = ceil(rows/64), colGroups = ceil(C/64).
//   norm_param_grad bindings 1 partial (read), 2 grads (read_write). Dispatch ceil(C/64)
//                   workgroups: thread c sums partial over blocks in order (stage 2) into
//                   grads[dgammaOffset + c] and (LayerNorm) grads[dbetaOffset + c], added when
//                   ACCUMULATE, else overwritten.
// No atomics, no barriers; every sum has a fixed order, so results are bit-identical run to run.
//
// Napkin maths (per call, LayerNorm; bench/napkin.ts, measured by `npm run bench -- --suite
// kernels`): forward ≈ 8 FLOPs per element (mean, variance, normalise·gamma + beta) against
// 8 bytes (x in, y out); backward ≈ 15 FLOPs (dx 10, dgamma/dbeta 5) against 12 bytes (dy, x
// in, dx out). About 1 FLOP per byte: memory-bound, held against the add kernel's GB/s.
// napkin(norm_forward): flops = 8*rows*C; bytes = 4*(2*rows*C + 2*C + 2*rows)
// napkin(norm_backward): flops = 15*rows*C; bytes = 4*(3*rows*C + 2*rows + 3*C)

// #include "grid.wgsl"

struct Params {
  rows: u32,
  C: u32,
  eps: f32,
  gammaOffset: u32,
  betaOffset: u32,
  dgammaOffset: u32,
  dbetaOffset: u32,
  rowsPerBlock: u32,
  numBlocks: u32,
}

override RMS: bool = false;
override ACCUM_DX: bool = false;
override ACCUMULATE: bool = true;

@group(0) @binding(0) var<uniform> p: Params;

// ---- forward -------------------------------------------------------------------------
@group(0) @binding(1) var<storage, read> f_x: array<f32>;
@group(0) @binding(2) var<storage, read> f_w: array<f32>;
@group(0) @binding(3) var<storage, read_write> f_y: array<f32>;
@group(0) @binding(4) var<storage, read_write> f_stats: array<f32>;

@compute @workgroup_size(64)
fn norm_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let row = flat_group(wg, nwg) * 64u + lid;
  if (row >= p.rows) { return; }
  let C = p.C;
  let base = row * C;
  let invC = 1.0 / f32(C);
  var mean = 0.0;
  if (!RMS) {
    // Summing x − x[row, 0] keeps the f32 sum small when the row's mean is far from 0
    // (residual streams drift), so the mean stays accurate to the inputs' own rounding.
    let shift = f_x[base];
    var s = 0.0;
    for (var c = 0u; c < C; c++) { s += f_x[base + c] - shift; }
    mean = shift + s * invC;
  }
  var ss = 0.0;
  for (var c = 0u; c < C; c++) {
    let d = f_x[base + c] - mean;
    ss += d * d;
  }
  let rstd = 1.0 / sqrt(ss * invC + p.eps);
  for (var c = 0u; c < C; c++) {
    var y = (f_x[base + c] - mean) * rstd * f_w[p.gammaOffset + c];
    if (!RMS) { y += f_w[p.betaOffset + c]; }
    f_y[base + c] = y;
  }
  f_stats[2u * row] = mean;
  f_stats[2u * row + 1u] = rstd;
}

// ---- backward: dx rows and per-block parameter partials ------------------------------------
@group(0) @binding(1) var<storage, read> b_dy: array<f32>;
@group(0) @binding(2) var<storage, read> b_x: array<f32>;
@group(0) @binding(3) var<storage, read> b_w: array<f32>;
@group(0) @binding(4) var<storage, read> b_stats: array<f32>;
@group(0) @binding(5) var<storage, read_write> b_dx: array<f32>;
@group(0) @binding(6) var<storage, read_write> b_partial: array<f32>;

@compute @workgroup_size(64)
fn norm_backward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let w = flat_group(wg, nwg);
  let C = p.C;
  let rowGroups = (p.rows + 63u) / 64u;
  if (w < rowGroups) {
    let row = w * 64u + lid;
    if (row >= p.rows) { return; }
    let base = row * C;
    let mean = b_stats[2u * row];
    let rstd = b_stats[2u * row + 1u];
    var sD = 0.0;
    var sDX = 0.0;
    for (var c = 0u; c < C; c++) {
      let xhat = (b_x[base + c] - mean) * rstd;
      let dxhat = b_dy[base + c] * b_w[p.gammaOffset + c];
      sD += dxhat;
      sDX += dxhat * xhat;
    }
    let invC = 1.0 / f32(C);
    var meanD = sD * invC;
    if (RMS) { meanD = 0.0; }
    let meanDX = sDX * invC;
    for (var c = 0u; c < C; c++) {
      let xhat = (b_x[base + c] - mean) * rstd;
      let dxhat = b_dy[base + c] * b_w[p.gammaOffset + c];
      var dx = rstd * (dxhat - meanD - xhat * meanDX);
      if (ACCUM_DX) { dx += b_dx[base + c]; }
      b_dx[base + c] = dx;
    }
    return;
  }
  let colGroups = (C + 63u) / 64u;
  let k = w - rowGroups;
  let blk = k / colGroups;
  let c = (k - blk * colGroups) * 64u + lid;
  if (blk >= p.numBlocks || c >= C) { return; }
  let r0 = blk * p.rowsPerBlock;
  let r1 = min(r0 + p.rowsPerBlock, p.rows);
  var sg = 0.0;
  var sb = 0.0;
  for (var r = r0; r < r1; r++) {
    let dy = b_dy[r * C + c];
    sg += dy * (b_x[r * C + c] - b_stats[2u * r]) * b_stats[2u * r + 1u];
    sb += dy;
  }
  b_partial[blk * 2u * C + c] = sg;
  b_partial[blk * 2u * C + C + c] = sb;
}

// ---- backward stage 2: dgamma, dbeta --------------------------------------------------------
@group(0) @binding(1) var<storage, read> g_partial: array<f32>;
@group(0) @binding(2) var<storage, read_write> g_grads: array<f32>;

@compute @workgroup_size(64)
fn norm_param_grad(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let c = wg.x * 64u + lid;
  let C = p.C;
  if (c >= C) { return; }
  var sg = 0.0;
  var sb = 0.0;
  for (var b = 0u; b < p.numBlocks; b++) {
    sg += g_partial[b * 2u * C + c];
    sb += g_partial[b * 2u * C + C + c];
  }
  let ig = p.dgammaOffset + c;
  if (ACCUMULATE) { sg += g_grads[ig]; }
  g_grads[ig] = sg;
  if (!RMS) {
    let ib = p.dbetaOffset + c;
    if (ACCUMULATE) { sb += g_grads[ib]; }
    g_grads[ib] = sb;
  }
}

// ---- vec4 versions ------------------------------------------------------------------------
// The same bindings with x, y, dy, dx and the weights seen as vec4 arrays, for C, gammaOffset
// and betaOffset all multiples of 4 (the host checks): a thread walks its row 4 floats per access,
// which SwiftShader (bounds checks and bookkeeping per access) runs several times faster. Same
// dispatch grids and the same arithmetic per element; only the order of the row sums changes
// (four interleaved partial sums, added at the end).
//   norm_forward_vec4   bindings as norm_forward.
//   norm_backward_vec4  bindings as norm_backward; the (column, block) role reads single floats
//                       out of the vec4s.

@group(0) @binding(1) var<storage, read> f_x4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> f_w4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> f_y4: array<vec4<f32>>;

fn hsum(v: vec4<f32>) -> f32 {
  return (v.x + v.y) + (v.z + v.w);
}

@compute @workgroup_size(64)
fn norm_forward_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let row = flat_group(wg, nwg) * 64u + lid;
  if (row >= p.rows) { return; }
  let C4 = p.C / 4u;
  let base = row * C4;
  let invC = 1.0 / f32(p.C);
  var mean = 0.0;
  if (!RMS) {
    let shift = f_x4[base].x;
    var s = vec4<f32>(0.0);
    for (var c = 0u; c < C4; c++) { s += f_x4[base + c] - shift; }
    mean = shift + hsum(s) * invC;
  }
  var ss = vec4<f32>(0.0);
  for (var c = 0u; c < C4; c++) {
    let d = f_x4[base + c] - mean;
    ss += d * d;
  }
  let rstd = 1.0 / sqrt(hsum(ss) * invC + p.eps);
  let g0 = p.gammaOffset / 4u;
  let b0 = p.betaOffset / 4u;
  for (var c = 0u; c < C4; c++) {
    var y = (f_x4[base + c] - mean) * rstd * f_w4[g0 + c];
    if (!RMS) { y += f_w4[b0 + c]; }
    f_y4[base + c] = y;
  }
  f_stats[2u * row] = mean;
  f_stats[2u * row + 1u] = rstd;
}

@group(0) @binding(1) var<storage, read> b_dy4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b_x4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> b_w4: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> b_dx4: array<vec4<f32>>;

@compute @workgroup_size(64)
fn norm_backward_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let w = flat_group(wg, nwg);
  let C = p.C;
  let C4 = C / 4u;
  let rowGroups = (p.rows + 63u) / 64u;
  if (w < rowGroups) {
    let row = w * 64u + lid;
    if (row >= p.rows) { return; }
    let base = row * C4;
    let g0 = p.gammaOffset / 4u;
    let mean = b_stats[2u * row];
    let rstd = b_stats[2u * row + 1u];
    var sD = vec4<f32>(0.0);
    var sDX = vec4<f32>(0.0);
    for (var c = 0u; c < C4; c++) {
      let xhat = (b_x4[base + c] - mean) * rstd;
      let dxhat = b_dy4[base + c] * b_w4[g0 + c];
      sD += dxhat;
      sDX += dxhat * xhat;
    }
    let invC = 1.0 / f32(C);
    var meanD = hsum(sD) * invC;
    if (RMS) { meanD = 0.0; }
    let meanDX = hsum(sDX) * invC;
    for (var c = 0u; c < C4; c++) {
      let xhat = (b_x4[base + c] - mean) * rstd;
      let dxhat = b_dy4[base + c] * b_w4[g0 + c];
      var dx = rstd * (dxhat - meanD - xhat * meanDX);
      if (ACCUM_DX) { dx += b_dx4[base + c]; }
      b_dx4[base + c] = dx;
    }
    return;
  }
  // (column quad, row block): thread = 4 adjacent columns, so the partial sums load vec4s too.
  let quadGroups = (C4 + 63u) / 64u;
  let k = w - rowGroups;
  let blk = k / quadGroups;
  let q = (k - blk * quadGroups) * 64u + lid;
  if (blk >= p.numBlocks || q >= C4) { return; }
  let r0 = blk * p.rowsPerBlock;
  let r1 = min(r0 + p.rowsPerBlock, p.rows);
  var sg = vec4<f32>(0.0);
  var sb = vec4<f32>(0.0);
  for (var r = r0; r < r1; r++) {
    let dy = b_dy4[r * C4 + q];
    sg += dy * (b_x4[r * C4 + q] - b_stats[2u * r]) * b_stats[2u * r + 1u];
    sb += dy;
  }
  let o = blk * 2u * C + 4u * q;
  for (var j = 0u; j < 4u; j++) {
    b_partial[o + j] = sg[j];
    b_partial[o + C + j] = sb[j];
  }
}
