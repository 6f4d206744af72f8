// elementwise.wgsl — the cheap per-element pieces of a transformer block and their gradients.
//
// Activations are row-major [rows, C]; n = rows·C. Parameters (biases) and their gradients sit
// in flat buffers at element offsets given in Params, so one binding can be the whole parameter
// (or gradient) buffer. Binding 0 is always the uniform Params; storage bindings follow.
// Element-wise entry points run one thread per element in workgroups of 256, on a grid of
// (gx, gy) workgroups with linear id wg.x + wg.y·gx (the host splits large counts over y because
// one dimension holds at most 65535 workgroups); threads past n return at once.
//
// GELU is the tanh form: gelu(x) = ½·x·(1 + tanh(k·(x + 0.044715·x³))), k = √(2/π).
//
// Versions / entry points:
//   add              out = a + b
//   add_inplace      acc += b                     (residual stream accumulation)
//   bias_add         x[r,c] += bias[c]           (in place)
//   bias_gelu        h[r,c] += bias[c] (HAS_BIAS); out = gelu(h)   (h is kept for the backward)
//   gelu_backward    g *= gelu'(h)                (in place: dout becomes dh)
//   colsum_partial   partial[blk, c] = Σ_{r in blk} g[r, c]             stage 1 of a bias gradient
//   gelu_colsum_partial  g *= gelu'(h) in place, then as colsum_partial  (GELU backward fused)
//   colsum_final     grad[gradOffset + c] (+)= Σ_blk partial[blk, c]     stage 2, fixed block order
//   add_vec4, add_inplace_vec4, bias_add_vec4, bias_gelu_vec4, gelu_backward_vec4
//                    the same on vec4s, 16 floats per thread (see "vec4 versions" below)
//   colsum_partial_vec4, gelu_colsum_partial_vec4
//                    stage 1 with a thread per 4 adjacent columns (C a multiple of 4)
// The bias gradient is a two-stage column sum: no float atomics, and the summation order is fixed
// by (block, row) indices, so results are bit-identical run to run.
//
// Napkin maths (per call; bench/napkin.ts, measured by `npm run bench -- --suite kernels`):
// every entry point here is memory-bound (≤ 1.5 FLOPs per byte). `add` is the plainest kernel
// there is (1 FLOP, 12 bytes per element), so its best GB/s is the ceiling the suite holds
// every memory-bound kernel against. bias_gelu: bias add + tanh GELU ≈ 10 FLOPs per element,
// h read and written, out written; gelu_backward ≈ 14 FLOPs, g and h read, g written.
// napkin(add): flops = n; bytes = 4*3*n
// napkin(bias_gelu): flops = 10*rows*C; bytes = 4*(3*rows*C + C)
// napkin(gelu_backward): flops = 14*n; bytes = 4*3*n

// #include "grid.wgsl"

struct Params {
  n: u32,            // elements, rows·C
  C: u32,            // columns (features)
  rows: u32,
  biasOffset: u32,   // element offset of the bias in the weights binding
  gradOffset: u32,   // element offset of the bias gradient in the grads binding
  rowsPerBlock: u32, // colsum: rows summed by one stage-1 workgroup
  numBlocks: u32,    // colsum: ceil(rows / rowsPerBlock)
  _pad: u32,
}

override HAS_BIAS: bool = true;
override ACCUMULATE: bool = true; // colsum_final: add into grad (true) or overwrite it (false)

const GELU_K: f32 = 0.7978845608028654;
const GELU_C: f32 = 0.044715;

@group(0) @binding(0) var<uniform> p: Params;

// gelu, gelu_grad (f32) and gelu4, gelu_grad4 (vec4f): one body, shaders/gelu.wgsl.
// #include "gelu.wgsl" T=f32 GELU=gelu GELU_GRAD=gelu_grad
// #include "gelu.wgsl" T=vec4f GELU=gelu4 GELU_GRAD=gelu_grad4

// ---- add: bindings 1 a (read), 2 b (read), 3 out (read_write); n threads -------------------
@group(0) @binding(1) var<storage, read> add_a: array<f32>;
@group(0) @binding(2) var<storage, read> add_b: array<f32>;
@group(0) @binding(3) var<storage, read_write> add_out: array<f32>;

@compute @workgroup_size(256)
fn add(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = flat_thread(wg, nwg, lid, 256u);
  if (i >= p.n) { return; }
  add_out[i] = add_a[i] + add_b[i];
}

// ---- add_inplace: bindings 1 acc (read_write), 2 b (read); n threads ------------------------
@group(0) @binding(1) var<storage, read_write> acc_x: array<f32>;

@compute @workgroup_size(256)
fn add_inplace(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = flat_thread(wg, nwg, lid, 256u);
  if (i >= p.n) { return; }
  acc_x[i] = acc_x[i] + add_b[i];
}

// ---- bias_add: bindings 1 x [rows, C] (read_write), 2 weights (read, bias at biasOffset) ----
@group(0) @binding(2) var<storage, read> weights: array<f32>;

@compute @workgroup_size(256)
fn bias_add(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = flat_thread(wg, nwg, lid, 256u);
  if (i >= p.n) { return; }
  acc_x[i] = acc_x[i] + weights[p.biasOffset + i % p.C];
}

// ---- bias_gelu: bindings 1 h [rows, C] (read_write), 2 weights (read), 3 out [rows, C] -----
// h holds x·W on entry and x·W + bias on exit (what gelu_backward needs); out = gelu(h).
// With HAS_BIAS = false h is only read and weights is not touched (bind any buffer).
@compute @workgroup_size(256)
fn bias_gelu(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = flat_thread(wg, nwg, lid, 256u);
  if (i >= p.n) { return; }
  var h = acc_x[i];
  if (HAS_BIAS) {
    h += weights[p.biasOffset + i % p.C];
    acc_x[i] = h;
  }
  add_out[i] = gelu(h);
}

// ---- gelu_backward: bindings 1 g (read_write, dout in, dh out), 2 h (read); n threads -------
@compute @workgroup_size(256)
fn gelu_backward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = flat_thread(wg, nwg, lid, 256u);
  if (i >= p.n) { return; }
  acc_x[i] = acc_x[i] * gelu_grad(add_b[i]);
}

// ---- colsum_partial: bindings 1 g [rows, C] (read), 2 partial [numBlocks, C] (read_write) --
// Dispatch (ceil(C/64), numBlocks) workgroups of 64: thread = one column of one row block,
// summing its rows in order (neighbouring threads read neighbouring addresses).
@group(0) @binding(1) var<storage, read> cs_g: array<f32>;
@group(0) @binding(2) var<storage, read_write> cs_partial: array<f32>;

@compute @workgroup_size(64)
fn colsum_partial(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let c = wg.x * 64u + lid;
  if (c >= p.C) { return; }
  let r0 = wg.y * p.rowsPerBlock;
  let r1 = min(r0 + p.rowsPerBlock, p.rows);
  var s = 0.0;
  for (var r = r0; r < r1; r++) { s += cs_g[r * p.C + c]; }
  cs_partial[wg.y * p.C + c] = s;
}

// ---- gelu_colsum_partial: bindings 1 g (read_write), 2 h (read), 3 partial (read_write) ----
// The MLP backward's "dout of GELU → dh, and db of the bias before it" in one pass.
@group(0) @binding(2) var<storage, read> gc_h: array<f32>;
@group(0) @binding(3) var<storage, read_write> gc_partial: array<f32>;

@compute @workgroup_size(64)
fn gelu_colsum_partial(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let c = wg.x * 64u + lid;
  if (c >= p.C) { return; }
  let r0 = wg.y * p.rowsPerBlock;
  let r1 = min(r0 + p.rowsPerBlock, p.rows);
  var s = 0.0;
  for (var r = r0; r < r1; r++) {
    let i = r * p.C + c;
    let d = acc_x[i] * gelu_grad(gc_h[i]);
    acc_x[i] = d;
    s += d;
  }
  gc_partial[wg.y * p.C + c] = s;
}

// ---- vec4 column sums: the same bindings and grids, a thread owning 4 adjacent columns -------
// For C a multiple of 4: dispatch (ceil(C/256), numBlocks); partial layout unchanged.
@group(0) @binding(1) var<storage, read> cs_g4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> gc_h4: array<vec4<f32>>;

fn store_quad(buf_offset: u32, s: vec4<f32>) {
  gc_partial[buf_offset] = s.x;
  gc_partial[buf_offset + 1u] = s.y;
  gc_partial[buf_offset + 2u] = s.z;
  gc_partial[buf_offset + 3u] = s.w;
}

@compute @workgroup_size(64)
fn colsum_partial_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let C4 = p.C / 4u;
  let q = wg.x * 64u + lid;
  if (q >= C4) { return; }
  let r0 = wg.y * p.rowsPerBlock;
  let r1 = min(r0 + p.rowsPerBlock, p.rows);
  var s = vec4<f32>(0.0);
  for (var r = r0; r < r1; r++) { s += cs_g4[r * C4 + q]; }
  let o = wg.y * p.C + 4u * q;
  cs_partial[o] = s.x;
  cs_partial[o + 1u] = s.y;
  cs_partial[o + 2u] = s.z;
  cs_partial[o + 3u] = s.w;
}

@compute @workgroup_size(64)
fn gelu_colsum_partial_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let C4 = p.C / 4u;
  let q = wg.x * 64u + lid;
  if (q >= C4) { return; }
  let r0 = wg.y * p.rowsPerBlock;
  let r1 = min(r0 + p.rowsPerBlock, p.rows);
  var s = vec4<f32>(0.0);
  for (var r = r0; r < r1; r++) {
    let i = r * C4 + q;
    let d = acc_x4[i] * gelu_grad4(gc_h4[i]);
    acc_x4[i] = d;
    s += d;
  }
  store_quad(wg.y * p.C + 4u * q, s);
}

// ---- colsum_final: bindings 1 partial [numBlocks, C] (read), 2 grads (read_write) ----------
// Dispatch ceil(C/64) workgroups of 64: thread c sums the blocks in order into
// grads[gradOffset + c] (added when ACCUMULATE, else overwritten).
@group(0) @binding(1) var<storage, read> cf_partial: array<f32>;
@group(0) @binding(2) var<storage, read_write> cf_grads: array<f32>;

@compute @workgroup_size(64)
fn colsum_final(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let c = wg.x * 64u + lid;
  if (c >= p.C) { return; }
  var s = 0.0;
  for (var b = 0u; b < p.numBlocks; b++) { s += cf_partial[b * p.C + c]; }
  let idx = p.gradOffset + c;
  if (ACCUMULATE) { s += cf_grads[idx]; }
  cf_grads[idx] = s;
}

// ---- vec4 versions ------------------------------------------------------------------------
// The same bindings seen as vec4 arrays, for when n (and, with a bias, C and biasOffset) are
// multiples of 4 — the host checks. SwiftShader bounds-checks every access and pays a fixed cost
// per invocation, so 16 floats per thread as 4 vec4 loads run ~4× faster than 1 float per thread.
// Dispatch: ceil(n / 1024) workgroups of 64 (split over x, y); thread lid of workgroup w handles
// vec4 indices w·256 + lid + 64·j, j < 4.

@group(0) @binding(1) var<storage, read> add_a4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> add_b4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> add_out4: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> acc_x4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> weights4: array<vec4<f32>>;

@compute @workgroup_size(64)
fn add_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let n4 = p.n / 4u;
  let b = flat_thread(wg, nwg, lid, 256u);
  for (var j = 0u; j < 4u; j++) {
    let i = b + j * 64u;
    if (i < n4) { add_out4[i] = add_a4[i] + add_b4[i]; }
  }
}

@compute @workgroup_size(64)
fn add_inplace_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let n4 = p.n / 4u;
  let b = flat_thread(wg, nwg, lid, 256u);
  for (var j = 0u; j < 4u; j++) {
    let i = b + j * 64u;
    if (i < n4) { acc_x4[i] = acc_x4[i] + add_b4[i]; }
  }
}

@compute @workgroup_size(64)
fn bias_add_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let n4 = p.n / 4u;
  let C4 = p.C / 4u;
  let off4 = p.biasOffset / 4u;
  let b = flat_thread(wg, nwg, lid, 256u);
  for (var j = 0u; j < 4u; j++) {
    let i = b + j * 64u;
    if (i < n4) { acc_x4[i] = acc_x4[i] + weights4[off4 + i % C4]; }
  }
}

@compute @workgroup_size(64)
fn bias_gelu_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let n4 = p.n / 4u;
  let C4 = p.C / 4u;
  let off4 = p.biasOffset / 4u;
  let b = flat_thread(wg, nwg, lid, 256u);
  for (var j = 0u; j < 4u; j++) {
    let i = b + j * 64u;
    if (i < n4) {
      var h = acc_x4[i];
      if (HAS_BIAS) {
        h += weights4[off4 + i % C4];
        acc_x4[i] = h;
      }
      add_out4[i] = gelu4(h);
    }
  }
}

@compute @workgroup_size(64)
fn gelu_backward_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let n4 = p.n / 4u;
  let b = flat_thread(wg, nwg, lid, 256u);
  for (var j = 0u; j < 4u; j++) {
    let i = b + j * 64u;
    if (i < n4) { acc_x4[i] = acc_x4[i] * gelu_grad4(add_b4[i]); }
  }
}
