// attention.wgsl — causal multi-head attention over a fused QKV buffer, flash-attention style,
// plus KV-cache inference. Twin: src/reference/attention.ts. Launcher: src/gpu/kernels/attention.ts.
//
// Layouts (row-major f32, C = H·D, KV = KVH·D, D = 4·D4 ≤ 128 with D4 = p.D4, everything read as vec4):
//   qkv   [B, T, C + 2KV]   row = [q (H·D) | k (KVH·D) | v (KVH·D)]; head h at h·D inside each
//                      part. Query head h reads key/value head h / G, G = H / KVH (grouped-query
//                      attention; G = 1 is multi-head).
//   out   [B, T, C]
//   lse   [B, H, T]    log-sum-exp of the scaled causal scores of each query row
//   dvec  [B, H, T]    rowsum(dO ∘ O), made by the dq pass for the dkv pass
//   dqkv  [B, T, C + 2KV]
//   cache [S, Tmax, KV] one buffer for K, one for V
// Scores are scale·q·k with scale = 1/sqrt(D); q is pre-multiplied by scale when loaded.
//
// Entry points and versions (the bodies of the three training passes, their tile loads and
// inner loops are in attention_common.wgsl, shared with prefix_attention.wgsl):
//   attn_forward       one thread per query row, BR rows per workgroup; K/V stream through
//                      workgroup memory in tiles of BC = p.BC rows; each tile updates the row's running
//                      max m, sum l and output accumulator (online softmax), so no T×T matrix
//                      ever exists. Writes out and lse = m + log l.
//   attn_backward_dq   one thread per query row: D_t = dO_t·O_t (written to dvec), then over
//                      the K/V tiles recomputes p = exp(s − lse) and sums dq += p(dO·v − D)·k.
//                      Writes the q part of dqkv.
//   attn_backward_dkv  one thread per key row j of one k/v head, query tiles (scaled q, dO, lse,
//                      D) of each query head of its group stream through workgroup memory for
//                      i ≥ j: dv += p·dO, dk += p(dO·v − D)·q.
//                      Writes the k and v parts of dqkv. Run after attn_backward_dq (it reads
//                      dvec). Each output element has exactly one writer: deterministic, no
//                      atomics, and dqkv is overwritten, never accumulated.
//   attn_decode        KV-cache attention for new rows: one workgroup of 64 threads per
//                      (new row, head, sequence); keys are split over the threads 64 at a time,
//                      with workgroup max/sum reductions and a per-tile online-softmax update.
//   kv_append          copies the k and v parts of new QKV rows into the caches.
//
// Bindings (numbers are fixed across the file; each entry point binds only those it uses):
//   0 params (uniform)   1 qkv   2 out   3 lse   4 dout   5 dvec   6 dqkv
//   7 kCache   8 vCache   9 prefixK   10 prefixV
//
// Napkin maths (per call, training kernels; bench/napkin.ts, measured by `npm run bench --
// --suite kernels`): causal attention touches T(T+1)/2 (query, key) pairs per (b, h); the
// forward does q·k and p·v (2·D FLOPs each per pair, softmax exps not counted), the backward
// recomputes s and dO·v in both passes and adds dq (dq pass) and dk, dv (dkv pass): 14·D per
// pair. Bytes: qkv, out, lse once (forward); qkv, out, lse, dout, dqkv, dvec twice (backward).
// napkin(attn_forward): flops = 2*B*H*D*T*(T + 1); bytes = 4*B*T*(4*C + H)
// napkin(attn_backward): flops = 7*B*H*D*T*(T + 1); bytes = 4*B*T*(8*C + 3*H)
// Intensity (forward, C = H·D) ≈ 2·C·T² / (16·C·T) = T/8 FLOPs per byte: compute-bound once T
// is a few dozen, so held against the matmul ceiling.

struct Params {
  T: u32,          // rows per sequence in qkv (training: T; decode: Tn new rows)
  H: u32,
  C4: u32,         // C / 4
  scale: f32,
  Tmax: u32,       // rows per sequence in a cache
  pastLen: u32,    // rows already in each sequence's cache before this step
  prefixLen: u32,  // rows in the shared prefix (0 = none)
  D4: u32,         // head size / 4
  BC: u32,         // rows per tile: min(MAX_BC, TILE_VEC4 / D4)
  KV4: u32,        // KV / 4: width of the k part, the v part and a cache row (0: = C4)
  G: u32,          // query heads per key/value head (0: 1)
}

// #include "attention_common.wgsl"

const DEC_WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> qkv: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> lse: array<f32>;
@group(0) @binding(4) var<storage, read> dout: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> dvec: array<f32>;
@group(0) @binding(6) var<storage, read_write> dqkv: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> kCache: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> vCache: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read> prefixK: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read> prefixV: array<vec4<f32>>;

fn group() -> u32 {
  return max(p.G, 1u);
}

fn seq_len() -> u32 {
  return p.T;
}

// Row t of a sequence sees keys 0 .. t (no prefix in the training kernels).
fn key_offset() -> u32 {
  return 0u;
}

fn qkv_row(b: u32, t: u32) -> u32 {
  return (b * p.T + t) * (p.C4 + 2u * kv4());
}

// Threads of the workgroup together copy keys k0 .. k0+BC of query head h's k/v head into
// tileA (K) and tileB (V); rows past T are zero (and never used).
fn load_kv_tile(b: u32, h: u32, k0: u32, tid: u32) {
  let D4 = head4();
  let BC = p.BC;
  for (var i = tid; i < BC * D4; i += BR) {
    let j = k0 + i / D4;
    var kv = vec4<f32>(0.0);
    var vv = vec4<f32>(0.0);
    if (j < p.T) {
      let o = qkv_row(b, j) + p.C4 + (h / group()) * D4 + i % D4;
      kv = qkv[o];
      vv = qkv[o + kv4()];
    }
    tileA[i] = kv;
    tileB[i] = vv;
  }
}

// attn_forward: dispatch (ceil(T/BR), H, B), workgroup BR threads; thread = query row t.
// Reads qkv; writes out[b, t, h·D..] and lse[b, h, t].
@compute @workgroup_size(BR)
fn attn_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  forward_rows(wg.z, wg.y, wg.x * BR, tid);
}

// attn_backward_dq: dispatch (ceil(T/BR), H, B), workgroup BR threads; thread = query row t.
// Reads qkv, out, lse, dout; writes dvec[b, h, t] and the q part of dqkv.
@compute @workgroup_size(BR)
fn attn_backward_dq(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  dq_rows(wg.z, wg.y, wg.x * BR, tid);
}

// attn_backward_dkv: dispatch (ceil(T/BR), KVH, B), workgroup BR threads; thread = key row j
// of k/v head hk. Reads qkv, lse, dout, dvec; writes the k and v parts of dqkv.
@compute @workgroup_size(BR)
fn attn_backward_dkv(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  dkv_rows(wg.z, wg.y, wg.x * BR, tid);
}

// ---- KV-cache inference ------------------------------------------------------------------

var<workgroup> decQ: array<vec4<f32>, MAX_D4>;
var<workgroup> decP: array<f32, DEC_WG>;
var<workgroup> decRed: array<f32, DEC_WG>;
var<workgroup> decAcc: array<vec4<f32>, DEC_WG>;

// Two-barrier reductions: every thread folds the 64 partials in the same order (so all agree,
// deterministically); on CPU WebGPU a log-depth tree's extra barriers cost far more.
fn dec_reduce_max(tid: u32, x: f32) -> f32 {
  decRed[tid] = x;
  workgroupBarrier();
  var r = decRed[0];
  for (var i = 1u; i < DEC_WG; i++) { r = max(r, decRed[i]); }
  workgroupBarrier();
  return r;
}

fn dec_reduce_sum(tid: u32, x: f32) -> f32 {
  decRed[tid] = x;
  workgroupBarrier();
  var r = 0.0;
  for (var i = 0u; i < DEC_WG; i++) { r += decRed[i]; }
  workgroupBarrier();
  return r;
}

// attn_decode: dispatch (Tn, H, S), workgroup 64 threads.
// Reads qkv [S, Tn, C + 2KV] (new rows, rotated), prefixK/prefixV [prefixLen, KV] (bind any buffer
// when prefixLen = 0), kCache/vCache [S, Tmax, KV] which already hold the new rows (kv_append
// first). New row n of sequence s sees prefix rows 0..prefixLen and own rows 0..pastLen+n.
// Writes out [S, Tn, C].
@compute @workgroup_size(64)
fn attn_decode(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let D4 = head4();
  let n = wg.x;
  let h = wg.y;
  let s = wg.z;
  let hk = (h / group()) * D4;
  if (tid < D4) { decQ[tid] = qkv[qkv_row(s, n) + h * D4 + tid] * p.scale; }
  workgroupBarrier();
  let P = p.prefixLen;
  let nKeys = P + p.pastLen + n + 1u;
  // For the P·V sum, thread = (column c of the head, slice of the tile's keys).
  let col = tid % D4;
  let nSlices = DEC_WG / D4;
  let slice = tid / D4;
  var m = NEG_BIG;
  var l = 0.0;
  var acc = vec4<f32>(0.0);
  for (var k0 = 0u; k0 < nKeys; k0 += DEC_WG) {
    let j = k0 + tid;
    var x = NEG_BIG;
    if (j < nKeys) {
      x = 0.0;
      if (j < P) {
        let o = j * kv4() + hk;
        for (var d = 0u; d < D4; d++) { x += dot(decQ[d], prefixK[o + d]); }
      } else {
        let o = (s * p.Tmax + j - P) * kv4() + hk;
        for (var d = 0u; d < D4; d++) { x += dot(decQ[d], kCache[o + d]); }
      }
    }
    let mt = max(m, dec_reduce_max(tid, x));
    var pj = 0.0;
    if (j < nKeys) { pj = exp(x - mt); }
    decP[tid] = pj;
    let alpha = exp(m - mt);
    l = l * alpha + dec_reduce_sum(tid, pj);
    m = mt;
    acc *= alpha;
    if (slice < nSlices) {
      let kEnd = min(DEC_WG, nKeys - k0);
      for (var jj = slice; jj < kEnd; jj += nSlices) {
        let key = k0 + jj;
        var vv: vec4<f32>;
        if (key < P) {
          vv = prefixV[key * kv4() + hk + col];
        } else {
          vv = vCache[(s * p.Tmax + key - P) * kv4() + hk + col];
        }
        acc += decP[jj] * vv;
      }
    }
    workgroupBarrier();
  }
  decAcc[tid] = acc;
  workgroupBarrier();
  if (tid < D4) {
    var total = vec4<f32>(0.0);
    for (var sl = 0u; sl < nSlices; sl++) { total += decAcc[sl * D4 + tid]; }
    out[(s * p.T + n) * p.C4 + h * D4 + tid] = total / l;
  }
}

// kv_append: dispatch (ceil(Tn·KV/4 / 64), S), workgroup 64 threads; thread = one vec4.
// Copies k and v of qkv [S, Tn, C + 2KV] into kCache/vCache [S, Tmax, KV] at rows pastLen.. .
@compute @workgroup_size(64)
fn kv_append(@builtin(global_invocation_id) gid: vec3<u32>) {
  let s = gid.y;
  let idx = gid.x;
  if (idx >= p.T * kv4()) { return; }
  let n = idx / kv4();
  let c = idx % kv4();
  let src = qkv_row(s, n) + p.C4 + c;
  let dst = (s * p.Tmax + p.pastLen + n) * kv4() + c;
  kCache[dst] = qkv[src];
  vCache[dst] = qkv[src + kv4()];
}
