// rope.wgsl — rotary position embedding (rotate-half / NeoX form), in place on the q and k parts
// of a fused QKV buffer. Twin: src/reference/rope.ts. Launcher: src/gpu/kernels/rope.ts.
//
// rope_apply
//   Bindings: 0 params (uniform), 1 x [rows, (H + 2·KVH)·D] f32 (read_write: qkv forward, dqkv
//             backward), 2 table [maxPos, D/2] vec2 (cos θ, sin θ) with θ = pos · freq_i
//             (freq_i = base^(−2i/D), or the scaled frequencies), made on the CPU in f64 (exact
//             angles at any position; GPU cos/sin of large arguments is not).
//   Shapes:   H query heads, KVH key/value heads (KVH = H: multi-head); row r is token r mod T of
//             its sequence, at position offset + r mod T.
//   Dispatch: (ceil((H + KVH)·D/2 / 64), rows) workgroups of 64; thread i of a row is one pair:
//             head h = i / (D/2) of the row's first H + KVH heads (q heads, then k heads), pair
//             k = i mod D/2.
//   Computes: (x_k, x_{k+D/2}) ← (x_k cos − x_{k+D/2} sin, x_k sin + x_{k+D/2} cos), with sin
//             negated (sign = −1) for the backward, which rotates dq and dk by −θ. v untouched.
//
// napkin(rope): flops = 3*rows*(H + KVH)*D; bytes = 4*(2*rows*(H + KVH)*D + T*D)

struct Params {
  rows: u32,
  T: u32,
  H: u32,
  D: u32,
  offset: u32,
  sign: f32,
  KVH: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read> table: array<vec2<f32>>;

@compute @workgroup_size(64)
fn rope_apply(@builtin(global_invocation_id) gid: vec3<u32>) {
  let half = p.D / 2u;
  let i = gid.x;
  let r = gid.y;
  if (i >= (p.H + p.KVH) * half || r >= p.rows) { return; }
  let h = i / half;
  let k = i % half;
  let W = (p.H + 2u * p.KVH) * p.D;
  let pos = p.offset + r % p.T;
  let cs = table[pos * half + k];
  let sn = p.sign * cs.y;
  let o = r * W + h * p.D + k;
  let a = x[o];
  let b = x[o + half];
  x[o] = a * cs.x - b * sn;
  x[o + half] = a * sn + b * cs.x;
}
