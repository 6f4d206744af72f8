// prefix_attention.wgsl — causal attention of G completions over one shared prompt prefix (docs/method.md §10:
// a GSPO group's prompt is processed once). Twin: src/reference/prefixAttention.ts. Launcher:
// src/gpu/kernels/prefixAttention.ts.
//
// Layouts (row-major f32, C = H·D, KV = KVH·D, W = C + 2KV, D = 4·D4 ≤ 128, everything read as vec4):
//   pqkv   [Tp, W]      the prefix's q | k | v rows (after RoPE); rows ≥ p.P are not attended
//   qkv    [G, Tc, W]   the completions' rows (completion row t sits at position P + t)
//   out    [G, Tc, C]
//   lse    [G, H, Tc]   log-sum-exp over the keys a row sees: the P prefix rows, then its own rows ≤ t
//   dvec   [G, H, Tc]   rowsum(dO ∘ O), made by the dq pass for both dkv passes
//   dqkv   [G, Tc, W]   the completions' gradient (overwritten)
//   dpkv   [Tp, W]      the prefix's k and v gradient summed over every completion row of the
//                       group and every query head of the k/v head's group (overwritten, q part
//                       and rows ≥ P written as 0)
// Grouped-query attention (as attention.wgsl): query head h reads key/value head h / GQ, GQ = H / KVH.
// Row t of completion g sees the virtual key sequence u = 0 .. P + t: u < P is prefix row u,
// u ≥ P is its own row u − P. Scores are scale·q·k with scale = 1/sqrt(D).
//
// Entry points (one thread per row, BR rows per workgroup, key or query tiles of BC rows
// through workgroup memory, online softmax — the scheme of attention.wgsl; pa_forward,
// pa_backward_dq and pa_backward_dkv run the passes of attention_common.wgsl, with keys from
// load_kv_tile below: the P prefix rows, then the completion's own):
//   pa_forward           thread = completion row: writes out and lse.
//   pa_backward_dq       thread = completion row: writes dvec and the q part of dqkv.
//   pa_backward_dkv      thread = completion key row j of k/v head hk: queries i ≥ j of its own
//                        completion, over the query heads of hk's group; writes the k and v parts of dqkv.
//   pa_backward_dkv_prefix  thread = prefix key row j of k/v head hk: every query row of every
//                        completion and every query head of the group; writes dpkv. Each output
//                        element has one writer: no atomics.
//
// Bindings: 0 params   1 pqkv   2 qkv   3 out   4 lse   5 dout   6 dvec   7 dqkv   8 dpkv
//
// Napkin maths: the G·Tc query rows see P + (t + 1) keys each: pairs = G·(P·Tc + Tc(Tc+1)/2),
// 4·D FLOPs per pair forward, 14·D backward, against G·(P+Tc)(P+Tc+1)/2 pairs unshared.
// napkin(prefix_attn_forward): flops = 2*G*H*D*Tc*(2*P + Tc + 1); bytes = 4*(2*KVH*D*P + G*Tc*(2*H*D + 2*KVH*D + H))
// napkin(prefix_attn_backward): flops = 7*G*H*D*Tc*(2*P + Tc + 1); bytes = 4*(G*Tc*(4*H*D + 4*KVH*D + 3*H) + P*(H*D + 4*KVH*D))

struct Params {
  Tc: u32,     // rows per completion
  Tp: u32,     // rows of the prefix buffer
  P: u32,      // live prefix rows (0 = no prefix)
  H: u32,
  C4: u32,     // C / 4
  scale: f32,
  D4: u32,     // head size / 4
  BC: u32,     // rows per tile: min(MAX_BC, TILE_VEC4 / D4)
  G: u32,      // completions
  KV4: u32,    // KV / 4: width of the k part and of the v part (0: = C4)
  GQ: u32,     // query heads per key/value head (0: 1)
  _pad2: u32,
}

// #include "attention_common.wgsl"

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> pqkv: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> qkv: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> lse: array<f32>;
@group(0) @binding(5) var<storage, read> dout: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> dvec: array<f32>;
@group(0) @binding(7) var<storage, read_write> dqkv: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> dpkv: array<vec4<f32>>;

fn group() -> u32 {
  return max(p.GQ, 1u);
}

// vec4 width of one q | k | v row.
fn width4() -> u32 {
  return p.C4 + 2u * kv4();
}

fn seq_len() -> u32 {
  return p.Tc;
}

// Completion row t sees the virtual keys 0 .. P + t (the P prefix rows, then its own rows ≤ t).
fn key_offset() -> u32 {
  return p.P;
}

fn qkv_row(g: u32, t: u32) -> u32 {
  return (g * p.Tc + t) * width4();
}

// Virtual keys u0 .. u0+BC of completion g, query head h's k/v head, into tileA (K) and tileB
// (V); keys past P + Tc are zero (and never used).
fn load_kv_tile(g: u32, h: u32, u0: u32, tid: u32) {
  let D4 = head4();
  let BC = p.BC;
  let kvo = p.C4 + (h / group()) * D4;
  for (var i = tid; i < BC * D4; i += BR) {
    let u = u0 + i / D4;
    var kv = vec4<f32>(0.0);
    var vv = vec4<f32>(0.0);
    if (u < p.P) {
      let o = u * width4() + kvo + i % D4;
      kv = pqkv[o];
      vv = pqkv[o + kv4()];
    } else if (u < p.P + p.Tc) {
      let o = qkv_row(g, u - p.P) + kvo + i % D4;
      kv = qkv[o];
      vv = qkv[o + kv4()];
    }
    tileA[i] = kv;
    tileB[i] = vv;
  }
}

// pa_forward: dispatch (ceil(Tc/BR), H, G); thread = completion row t.
@compute @workgroup_size(BR)
fn pa_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  forward_rows(wg.z, wg.y, wg.x * BR, tid);
}

// pa_backward_dq: dispatch (ceil(Tc/BR), H, G); thread = completion row t.
@compute @workgroup_size(BR)
fn pa_backward_dq(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  dq_rows(wg.z, wg.y, wg.x * BR, tid);
}

// pa_backward_dkv: dispatch (ceil(Tc/BR), KVH, G); thread = completion key row j of k/v head
// hk. Run after pa_backward_dq (it reads dvec).
@compute @workgroup_size(BR)
fn pa_backward_dkv(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  dkv_rows(wg.z, wg.y, wg.x * BR, tid);
}

// pa_backward_dkv_prefix: dispatch (ceil(Tp/BR), KVH); thread = prefix key row j of k/v head hk,
// which every query row of every completion sees in every query head of the group (when j < P).
// Run after pa_backward_dq.
@compute @workgroup_size(BR)
fn pa_backward_dkv_prefix(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let D4 = head4();
  let BC = p.BC;
  let hk = wg.y;
  let j = wg.x * BR + tid;
  let inBuf = j < p.Tp;
  let live = j < p.P;
  var k: HeadRow;
  var v: HeadRow;
  var dk: HeadRow;
  var dv: HeadRow;
  let ko = j * width4() + p.C4 + hk * D4;
  for (var d = 0u; d < D4; d++) {
    dk[d] = vec4<f32>(0.0);
    dv[d] = vec4<f32>(0.0);
  }
  if (live) {
    for (var d = 0u; d < D4; d++) {
      k[d] = pqkv[ko + d];
      v[d] = pqkv[ko + kv4() + d];
    }
  }
  // Every workgroup runs the same loops (barriers stay uniform); rows past P add nothing.
  for (var h = hk * group(); h < (hk + 1u) * group(); h++) {
  for (var g = 0u; g < p.G; g++) {
    for (var q0 = 0u; q0 < p.Tc; q0 += BC) {
      load_q_tile(g, h, q0, tid);
      workgroupBarrier();
      if (live) {
        dkv_tile(&k, &v, &dk, &dv, 0u, min(BC, p.Tc - q0));
      }
      workgroupBarrier();
    }
  }
  }
  if (inBuf) {
    // The q part of the row: this group's query heads.
    let qo = j * width4() + hk * group() * D4;
    for (var d = 0u; d < group() * D4; d++) { dpkv[qo + d] = vec4<f32>(0.0); }
    for (var d = 0u; d < D4; d++) {
      dpkv[ko + d] = dk[d];
      dpkv[ko + kv4() + d] = dv[d];
    }
  }
}
