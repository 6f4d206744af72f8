// embedding.wgsl — token embedding (+ learned positions) and its deterministic backward.
//
// Shapes: tokens [rows] u32, rows = B·T, row r at position r mod T; wte [vocab, C] and wpe [T, C]
// at element offsets of parameter buffers; activations [rows, C] row-major. Binding 0 is
// always the uniform Params.
//
// A token table larger than one storage binding is split by rows (src/model/shards.ts): each
// piece holds the rows of tokens tokenStart ≤ tok < tokenEnd at wteOffset of its own buffer,
// and one dispatch per piece touches only the rows whose token it holds (row tok − tokenStart of
// the piece). An unsplit table is the one piece [0, vocab).
//
// Entry points:
//   embed_forward   bindings 1 tokens (read), 2 weights (read: the wte piece), 3 out [rows, C]
//                   (read_write), 4 positions (read: wpe; may be the same buffer as 2).
//                   Dispatch: ceil(rows·C / 256) workgroups of 256 (split over x, y; linear id
//                   wg.x + wg.y·gx), one thread per output element of a row whose token is in the
//                   piece: out[r, c] = wte[tok[r], c] (+ wpe[r mod T, c] when LEARNED_POS).
//   embed_forward_vec4  the same on vec4s, 16 floats per thread (C and offsets multiples of 4).
//   embed_forward_f16   the same with the wte piece in f16, packed two per u32 word (the even
//                   element in the low half, each row padded to an even length: ceil(C/2) words a
//                   row, wteOffset in words; src/reference/f16.ts), read with the core builtin
//                   unpack2x16float (no shader-f16 needed); wpe stays f32. Inference only.
//   embed_backward  bindings 1 csr (read, u32), 2 dout [rows, C] (read), 3 grads (read_write).
//                   Dispatch: maxDistinct workgroups of 64 (split over x, y). Workgroup
//                   w < maxDistinct owns the w-th distinct token of the batch (returns if
//                   w ≥ csr[0] or the token is not in the piece) and sums the dout rows holding
//                   it, in ascending row order, into dwte[token] — each token's row is written by
//                   exactly one workgroup, so no atomics are needed.
//   embed_backward_pos  bindings 2 dout (read), 3 grads (read_write: the buffer holding dwpe).
//                   Dispatch: T workgroups of 64 (split over x, y); workgroup t sums dout rows
//                   t, t+T, t+2T, ... into dwpe[t] (LEARNED_POS models only).
//                   Both backward entry points ADD to grads (the model zeroes gradients once per
//                   step): an overwrite mode would leave the rows of tokens absent from the batch
//                   stale, so there is none.
//
// csr layout (u32), built on the host from the batch's tokens (buildTokenCsr):
//   [0]                                  n = number of distinct tokens
//   [1 .. 1+maxDistinct)                 distinct token ids, ascending (first n valid)
//   [1+maxDistinct .. 2+2·maxDistinct)   starts: rows of token i are list[starts[i] .. starts[i+1])
//   [2+2·maxDistinct .. +rows)           list: row indices grouped by token, ascending within a token
// maxDistinct = min(rows, vocab), so the buffer size and dispatch are fixed per shape.

// #include "grid.wgsl"

struct Params {
  rows: u32,
  C: u32,
  T: u32,
  maxDistinct: u32,
  wteOffset: u32,
  wpeOffset: u32,
  dwteOffset: u32,
  dwpeOffset: u32,
  tokenStart: u32,
  tokenEnd: u32,
}

override LEARNED_POS: bool = false;

@group(0) @binding(0) var<uniform> p: Params;

// ---- forward -------------------------------------------------------------------------
@group(0) @binding(1) var<storage, read> tokens: array<u32>;
@group(0) @binding(2) var<storage, read> weights: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read> positions: array<f32>;

// Where output element i of a [rows, width] view (width C, or C/4 vec4s) comes from: its row r,
// its column c, and the row of its token in the piece; ok is false past the end and for a token
// the piece does not hold (that element is left alone).
struct Site {
  r: u32,
  c: u32,
  row: u32,
  ok: bool,
}

fn site(i: u32, width: u32) -> Site {
  if (i >= p.rows * width) { return Site(0u, 0u, 0u, false); }
  let r = i / width;
  let tok = tokens[r];
  return Site(r, i - r * width, tok - p.tokenStart, tok >= p.tokenStart && tok < p.tokenEnd);
}

// v plus the learned position of the element's row (LEARNED_POS), f32 columns.
fn with_position(v: f32, s: Site) -> f32 {
  if (LEARNED_POS) { return v + positions[p.wpeOffset + (s.r % p.T) * p.C + s.c]; }
  return v;
}

@compute @workgroup_size(256)
fn embed_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = flat_thread(wg, nwg, lid, 256u);
  let s = site(i, p.C);
  if (!s.ok) { return; }
  out[i] = with_position(weights[p.wteOffset + s.row * p.C + s.c], s);
}

// Forward on vec4s, for C, wteOffset and wpeOffset multiples of 4 (the host checks): same
// bindings seen as vec4 arrays; dispatch ceil(rows·C / 1024) workgroups of 64 (split over x, y),
// thread lid of workgroup w writing vec4 indices w·256 + lid + 64·j, j < 4.
@group(0) @binding(2) var<storage, read> weights4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out4: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> positions4: array<vec4<f32>>;

@compute @workgroup_size(64)
fn embed_forward_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let C4 = p.C / 4u;
  let base = flat_thread(wg, nwg, lid, 256u);
  for (var j = 0u; j < 4u; j++) {
    let i = base + j * 64u;
    let s = site(i, C4);
    if (!s.ok) { continue; }
    var v = weights4[p.wteOffset / 4u + s.row * C4 + s.c];
    if (LEARNED_POS) { v += positions4[p.wpeOffset / 4u + (s.r % p.T) * C4 + s.c]; }
    out4[i] = v;
  }
}

// f16 token table (packed rows): bindings as embed_forward, 2 seen as u32 words.
@group(0) @binding(2) var<storage, read> weightsH: array<u32>;

@compute @workgroup_size(256)
fn embed_forward_f16(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = flat_thread(wg, nwg, lid, 256u);
  let s = site(i, p.C);
  if (!s.ok) { return; }
  let pair = unpack2x16float(weightsH[p.wteOffset + s.row * ((p.C + 1u) / 2u) + s.c / 2u]);
  out[i] = with_position(select(pair.x, pair.y, (s.c & 1u) == 1u), s);
}

// ---- backward ------------------------------------------------------------------------
@group(0) @binding(1) var<storage, read> csr: array<u32>;
@group(0) @binding(2) var<storage, read> dout: array<f32>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;

@compute @workgroup_size(64)
fn embed_backward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let w = flat_group(wg, nwg);
  let C = p.C;
  if (w >= p.maxDistinct || w >= csr[0]) { return; }
  let tok = csr[1u + w];
  if (tok < p.tokenStart || tok >= p.tokenEnd) { return; }
  let startsAt = 1u + p.maxDistinct;
  let listAt = startsAt + p.maxDistinct + 1u;
  let s = csr[startsAt + w];
  let e = csr[startsAt + w + 1u];
  for (var c = lid; c < C; c += 64u) {
    var acc = 0.0;
    for (var k = s; k < e; k++) { acc += dout[csr[listAt + k] * C + c]; }
    let idx = p.dwteOffset + (tok - p.tokenStart) * C + c;
    grads[idx] = grads[idx] + acc;
  }
}

@compute @workgroup_size(64)
fn embed_backward_pos(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let t = flat_group(wg, nwg);
  let C = p.C;
  if (t >= p.T) { return; }
  for (var c = lid; c < C; c += 64u) {
    var acc = 0.0;
    for (var r = t; r < p.rows; r += p.T) { acc += dout[r * C + c]; }
    let idx = p.dwpeOffset + t * C + c;
    grads[idx] = grads[idx] + acc;
  }
}
