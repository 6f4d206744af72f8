// seqgather.wgsl — moves per-token values between the model's row layout [S, T] (one row per
// position of each sequence) and the packed layout [S, L] of a sequence's response tokens, which
// is what the GSPO kernel reads. Sequence i's response sits at positions start_i .. start_i+len_i.
//
// Bindings: 0 Params (uniform: S, T, L), 1 spans [S] of (start, len) u32 pairs, 2 src, 3 dst.
// seq_gather   dst [S, L]  = src [S, T] at each response position, 0 past len_i.
//              Dispatch: ceil(S·L / 256) workgroups of 256 (x, spilling into y).
// seq_scatter  dst [S, T]  = src [S, L] at each response position, 0 elsewhere (overwrite).
//              Dispatch: ceil(S·T / 256) workgroups of 256 (x, spilling into y).

// #include "grid.wgsl"

struct Params {
  S: u32,
  T: u32,
  L: u32,
  _pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> spans: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> src: array<f32>;
@group(0) @binding(3) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(256)
fn seq_gather(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let idx = flat_thread(wg, nwg, lid, 256u);
  if (idx >= p.S * p.L) { return; }
  let i = idx / p.L;
  let t = idx % p.L;
  let span = spans[i];
  var v = 0.0;
  if (t < span.y) { v = src[i * p.T + span.x + t]; }
  dst[idx] = v;
}

@compute @workgroup_size(256)
fn seq_scatter(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let idx = flat_thread(wg, nwg, lid, 256u);
  if (idx >= p.S * p.T) { return; }
  let i = idx / p.T;
  let q = idx % p.T;
  let span = spans[i];
  var v = 0.0;
  if (q >= span.x && q < span.x + span.y) { v = src[i * p.L + q - span.x]; }
  dst[idx] = v;
}
