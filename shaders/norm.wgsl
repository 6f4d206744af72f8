// norm.wgsl — LayerNorm (gamma, beta) or RMSNorm (gamma only, RMS = true) over the last
// dimension of row-major [rows, C] activations, forward and backward.
//
// gamma/beta (and their gradients) sit in flat buffers at element offsets given in Params.
// stats [rows, 2]: stats[2r] = mean (0 for RMSNorm), stats[2r + 1] = rstd = 1/√(var + eps)
// (RMSNorm: 1/√(mean(x²) + eps)); the forward writes them, the backward reads them.
// Binding 0 is always the uniform Params. WG (a power of two, 32..256) threads per workgroup;
// a thread owns columns lid, lid + WG, … (at most 8 of them, so C ≤ 8·WG).
//
// Entry points:
//   norm_forward       bindings 1 x (read), 2 weights (read), 3 y (read_write), 4 stats
//                      (read_write). Dispatch: rows workgroups (split over x, y; linear id
//                      wg.x + wg.y·gx). One workgroup per row: a single tree reduction of
//                      (Σ d, Σ d²) with d = x − x[row, 0] (the shift keeps E[d²] − E[d]² from
//                      cancelling when the row's mean is large), then y.
//   norm_backward      bindings 1 dy (read), 2 x (read), 3 weights (read), 4 stats (read),
//                      5 dx (read_write), 6 partial [numBlocks, 2C] (read_write).
//                      Dispatch: numBlocks workgroups (split over x, y). Workgroup b handles rows
//                      [b·rowsPerBlock, …) in order: per row one tree reduction of
//                      (Σ dx̂, Σ dx̂·x̂), dx̂ = dy·gamma, then
//                      dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂))   (RMSNorm drops mean(dx̂)),
//                      written or, ACCUM_DX, added (into the residual stream's gradient).
//                      It also sums dy·x̂ and dy over its rows per column into partial[b]
//                      (stage 1 of dgamma / dbeta).
//   norm_param_grad    bindings 1 partial (read), 2 grads (read_write). Dispatch ceil(C/64)
//                      workgroups of 64: thread c sums partial over blocks in order (stage 2)
//                      into grads[dgammaOffset + c] and (LayerNorm) grads[dbetaOffset + c],
//                      added when ACCUMULATE, else overwritten.
// No atomics; every sum has a fixed order, so results are bit-identical run to run.

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
override WG: u32 = 64u;
override ACCUM_DX: bool = false;
override ACCUMULATE: bool = true;

const MAX_COLS_PER_THREAD: u32 = 8u;

@group(0) @binding(0) var<uniform> p: Params;

var<workgroup> red: array<vec2<f32>, WG>;

// Sum of v over the workgroup, returned to every thread. Call in uniform control flow.
fn reduce2(lid: u32, v: vec2<f32>) -> vec2<f32> {
  red[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) { red[lid] = red[lid] + red[lid + s]; }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier(); // everyone has read red[0] before the next call overwrites it
  return total;
}

// ---- forward -------------------------------------------------------------------------
@group(0) @binding(1) var<storage, read> f_x: array<f32>;
@group(0) @binding(2) var<storage, read> f_w: array<f32>;
@group(0) @binding(3) var<storage, read_write> f_y: array<f32>;
@group(0) @binding(4) var<storage, read_write> f_stats: array<f32>;

@compute @workgroup_size(WG)
fn norm_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let row = wg.x + wg.y * nwg.x;
  if (row >= p.rows) { return; }
  let C = p.C;
  let base = row * C;
  var shift = 0.0;
  if (!RMS) { shift = f_x[base]; }
  var s = vec2<f32>(0.0);
  for (var c = lid; c < C; c += WG) {
    let d = f_x[base + c] - shift;
    s += vec2<f32>(d, d * d);
  }
  let t = reduce2(lid, s) / f32(C);
  var mean = 0.0;
  var rstd = 0.0;
  if (RMS) {
    rstd = 1.0 / sqrt(t.y + p.eps);
  } else {
    mean = shift + t.x;
    rstd = 1.0 / sqrt(max(t.y - t.x * t.x, 0.0) + p.eps);
  }
  for (var c = lid; c < C; c += WG) {
    var y = (f_x[base + c] - mean) * rstd * f_w[p.gammaOffset + c];
    if (!RMS) { y += f_w[p.betaOffset + c]; }
    f_y[base + c] = y;
  }
  if (lid == 0u) {
    f_stats[2u * row] = mean;
    f_stats[2u * row + 1u] = rstd;
  }
}

// ---- backward: dx and per-block parameter partials ----------------------------------------
@group(0) @binding(1) var<storage, read> b_dy: array<f32>;
@group(0) @binding(2) var<storage, read> b_x: array<f32>;
@group(0) @binding(3) var<storage, read> b_w: array<f32>;
@group(0) @binding(4) var<storage, read> b_stats: array<f32>;
@group(0) @binding(5) var<storage, read_write> b_dx: array<f32>;
@group(0) @binding(6) var<storage, read_write> b_partial: array<f32>;

@compute @workgroup_size(WG)
fn norm_backward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let blk = wg.x + wg.y * nwg.x;
  if (blk >= p.numBlocks) { return; }
  let C = p.C;
  let invC = 1.0 / f32(C);
  var pg: array<f32, MAX_COLS_PER_THREAD>;
  var pb: array<f32, MAX_COLS_PER_THREAD>;
  let r0 = blk * p.rowsPerBlock;
  let r1 = min(r0 + p.rowsPerBlock, p.rows);
  for (var row = r0; row < r1; row++) {
    let base = row * C;
    let mean = b_stats[2u * row];
    let rstd = b_stats[2u * row + 1u];
    var s = vec2<f32>(0.0);
    for (var j = 0u; j < MAX_COLS_PER_THREAD; j++) {
      let c = lid + j * WG;
      if (c < C) {
        let xhat = (b_x[base + c] - mean) * rstd;
        let dxhat = b_dy[base + c] * b_w[p.gammaOffset + c];
        s += vec2<f32>(dxhat, dxhat * xhat);
      }
    }
    let t = reduce2(lid, s) * invC;
    var meanD = t.x;
    if (RMS) { meanD = 0.0; }
    for (var j = 0u; j < MAX_COLS_PER_THREAD; j++) {
      let c = lid + j * WG;
      if (c < C) {
        let dy = b_dy[base + c];
        let xhat = (b_x[base + c] - mean) * rstd;
        let dxhat = dy * b_w[p.gammaOffset + c];
        var dx = rstd * (dxhat - meanD - xhat * t.y);
        if (ACCUM_DX) { dx += b_dx[base + c]; }
        b_dx[base + c] = dx;
        pg[j] += dy * xhat;
        pb[j] += dy;
      }
    }
  }
  for (var j = 0u; j < MAX_COLS_PER_THREAD; j++) {
    let c = lid + j * WG;
    if (c < C) {
      b_partial[blk * 2u * C + c] = pg[j];
      b_partial[blk * 2u * C + C + c] = pb[j];
    }
  }
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
