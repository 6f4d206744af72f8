// attention_common.wgsl — the part attention.wgsl and prefix_attention.wgsl share, spliced into
// each by `// #include "attention_common.wgsl"` (src/gpu/shaders.ts). Not a module by itself: the
// including file declares `p` (with D4, C4, KV4, scale, H), `qkv`, `dout`, `lse`, `dvec`, and
//   fn seq_len() -> u32           rows per sequence (query rows of one b or completion g)
//   fn qkv_row(s, t) -> u32       vec4 offset of row t of sequence s in qkv
//   fn group() -> u32             query heads per key/value head
//   fn key_offset() -> u32        keys before a sequence's own rows (a shared prefix; 0 = none)
//   fn load_kv_tile(s, h, k0, tid)  keys k0 .. k0+BC of query head h's k/v head into tileA/tileB
// and the bindings `out` and `dqkv`.
//
// The per-tile inner loops (forward, dq, dkv) take the thread's per-row arrays by pointer and
// read the workgroup tiles; the whole forward, dq and dkv passes (forward_rows, dq_rows, dkv_rows)
// are the bodies of both files' entry points, and dkv_tile also serves pa_backward_dkv_prefix.

// Loop bounds come from the uniform, not from override constants: SwiftShader unrolls
// constant-bound loops, and fully unrolled head loops nested in tile loops took it tens of
// seconds per pipeline to compile (D = 128). FIXED_D4 > 0 re-specialises the head size for
// real GPUs, where unrolling keeps the per-row arrays in registers.
override FIXED_D4: u32 = 0u;
override BR: u32 = 32u;    // rows (threads) per workgroup in the training kernels

const MAX_D4: u32 = 32u;   // head size ≤ 128
// TILE_VEC4 (vec4s per tile: two tiles of 448 vec4 + tileS fit the 16 KiB minimum) and MAX_BC:
// src/gpu/kernels/tiles.ts (the launchers size a tile's rows by them too).
// #include "attention_consts.wgsl"
const NEG_BIG: f32 = -3.0e38;

// One thread's row of a head (q, k, v, or an accumulator), D4 vec4s used.
alias HeadRow = array<vec4<f32>, MAX_D4>;

// Forward and dq: K and V tiles. dkv: scaled-Q and dO tiles, plus (lse, D) per query row.
var<workgroup> tileA: array<vec4<f32>, TILE_VEC4>;
var<workgroup> tileB: array<vec4<f32>, TILE_VEC4>;
var<workgroup> tileS: array<vec2<f32>, MAX_BC>;

fn head4() -> u32 {
  if (FIXED_D4 > 0u) { return FIXED_D4; }
  return p.D4;
}

// A Params block with KV4 = 0 (and a zero group size; these words were padding before
// grouped-query attention) means multi-head attention, so a launcher that zero-fills them keeps working.
fn kv4() -> u32 {
  return select(p.KV4, p.C4, p.KV4 == 0u);
}

// Query rows i0 .. i0+BC of sequence s, head h: scaled q into tileA, dO into tileB, (lse, D)
// into tileS; rows past seq_len() are zero (and never used).
fn load_q_tile(s: u32, h: u32, i0: u32, tid: u32) {
  let D4 = head4();
  let BC = p.BC;
  let T = seq_len();
  for (var i = tid; i < BC * D4; i += BR) {
    let row = i0 + i / D4;
    var qv = vec4<f32>(0.0);
    var gv = vec4<f32>(0.0);
    if (row < T) {
      qv = qkv[qkv_row(s, row) + h * D4 + i % D4] * p.scale;
      gv = dout[(s * T + row) * p.C4 + h * D4 + i % D4];
    }
    tileA[i] = qv;
    tileB[i] = gv;
  }
  for (var i = tid; i < BC; i += BR) {
    let row = i0 + i;
    var st = vec2<f32>(0.0);
    if (row < T) {
      let si = (s * p.H + h) * T + row;
      st = vec2<f32>(lse[si], dvec[si]);
    }
    tileS[i] = st;
  }
}

// Forward: one query row (scaled q) against keys 0 .. n of the K (tileA) / V (tileB) tiles;
// updates the row's running max m, sum l and output accumulator acc (online softmax).
fn forward_tile(q: ptr<function, HeadRow>, acc: ptr<function, HeadRow>, m: ptr<function, f32>, l: ptr<function, f32>, n: u32) {
  let D4 = head4();
  var s: array<f32, MAX_BC>;
  // Scores of the whole tile first, so the rescale by exp(m_old − m_new) happens once per
  // tile rather than once per key.
  var mt = *m;
  for (var j = 0u; j < n; j++) {
    var x = 0.0;
    for (var d = 0u; d < D4; d++) { x += dot((*q)[d], tileA[j * D4 + d]); }
    s[j] = x;
    mt = max(mt, x);
  }
  let alpha = exp(*m - mt);
  var lt = *l * alpha;
  for (var j = 0u; j < n; j++) {
    let pj = exp(s[j] - mt);
    s[j] = pj;
    lt += pj;
  }
  // Column by column into a local: on SwiftShader a write to a private array inside the
  // key loop costs several times the arithmetic, so each acc[d] is written once per tile.
  for (var d = 0u; d < D4; d++) {
    var a = (*acc)[d] * alpha;
    for (var j = 0u; j < n; j++) { a += s[j] * tileB[j * D4 + d]; }
    (*acc)[d] = a;
  }
  *m = mt;
  *l = lt;
}

// dq: one query row (scaled q, dO g, lse rowL, D = dO·O rowD) against keys 0 .. n of the K/V
// tiles: dq += p(dO·v − D)·k with p = exp(s − lse).
fn dq_tile(q: ptr<function, HeadRow>, g: ptr<function, HeadRow>, dq: ptr<function, HeadRow>, rowL: f32, rowD: f32, n: u32) {
  let D4 = head4();
  var s: array<f32, MAX_BC>;
  for (var j = 0u; j < n; j++) {
    var x = 0.0;
    var dp = 0.0;
    for (var d = 0u; d < D4; d++) {
      x += dot((*q)[d], tileA[j * D4 + d]);
      dp += dot((*g)[d], tileB[j * D4 + d]);
    }
    s[j] = exp(x - rowL) * (dp - rowD);
  }
  // Column by column, one private-array write per column per tile (see forward_tile).
  for (var d = 0u; d < D4; d++) {
    var a = (*dq)[d];
    for (var j = 0u; j < n; j++) { a += s[j] * tileA[j * D4 + d]; }
    (*dq)[d] = a;
  }
}

// dkv: one key row (k, v) against query rows i0 .. i1 of the Q/dO/(lse, D) tiles:
// dv += p·dO, dk += p(dO·v − D)·q.
fn dkv_tile(k: ptr<function, HeadRow>, v: ptr<function, HeadRow>, dk: ptr<function, HeadRow>, dv: ptr<function, HeadRow>, i0: u32, i1: u32) {
  let D4 = head4();
  var sp: array<f32, MAX_BC>;
  var sd: array<f32, MAX_BC>;
  for (var i = i0; i < i1; i++) {
    var x = 0.0;
    var dp = 0.0;
    for (var d = 0u; d < D4; d++) {
      x += dot(tileA[i * D4 + d], (*k)[d]);
      dp += dot(tileB[i * D4 + d], (*v)[d]);
    }
    let st = tileS[i];
    let pij = exp(x - st.x);
    sp[i] = pij;
    sd[i] = pij * (dp - st.y);
  }
  // Column by column, one private-array write per column per tile (see forward_tile).
  for (var d = 0u; d < D4; d++) {
    var av = (*dv)[d];
    var ak = (*dk)[d];
    for (var i = i0; i < i1; i++) {
      av += sp[i] * tileB[i * D4 + d];
      ak += sd[i] * tileA[i * D4 + d];
    }
    (*dv)[d] = av;
    (*dk)[d] = ak;
  }
}

// ---- whole passes, one thread per row (the entry points of both files call these) --------------
// Sequence s is a batch row b (attention.wgsl) or a completion g (prefix_attention.wgsl); its
// query row t sees keys 0 .. key_offset() + t of load_kv_tile's key sequence.

// Forward of query row r0 + tid of sequence s, head h: online softmax over the K/V tiles;
// writes out[s, t, h·D..] and lse[s, h, t].
fn forward_rows(s: u32, h: u32, r0: u32, tid: u32) {
  let D4 = head4();
  let BC = p.BC;
  let T = seq_len();
  let t = r0 + tid;
  let live = t < T;
  let last = key_offset() + t; // the row's last key
  var q: HeadRow;
  var acc: HeadRow;
  if (live) {
    let qo = qkv_row(s, t) + h * D4;
    for (var d = 0u; d < D4; d++) {
      q[d] = qkv[qo + d] * p.scale;
      acc[d] = vec4<f32>(0.0);
    }
  }
  var m = NEG_BIG;
  var l = 0.0;
  // The last row of this block needs keys up to its own; tiles past that are skipped.
  let kEnd = key_offset() + min(r0 + BR, T);
  for (var k0 = 0u; k0 < kEnd; k0 += BC) {
    load_kv_tile(s, h, k0, tid);
    workgroupBarrier();
    if (live && last >= k0) {
      forward_tile(&q, &acc, &m, &l, min(BC, last - k0 + 1u));
    }
    workgroupBarrier();
  }
  if (live) {
    let oo = (s * T + t) * p.C4 + h * D4;
    let inv = 1.0 / l;
    for (var d = 0u; d < D4; d++) { out[oo + d] = acc[d] * inv; }
    lse[(s * p.H + h) * T + t] = m + log(l);
  }
}

// dq of query row r0 + tid of sequence s, head h: D = dO·O into dvec, then over the K/V tiles
// dq += p(dO·v − D)·k; writes the q part of dqkv.
fn dq_rows(s: u32, h: u32, r0: u32, tid: u32) {
  let D4 = head4();
  let BC = p.BC;
  let T = seq_len();
  let t = r0 + tid;
  let live = t < T;
  let last = key_offset() + t;
  var q: HeadRow;
  var g: HeadRow;
  var dq: HeadRow;
  var rowD = 0.0;
  var rowL = 0.0;
  let qo = qkv_row(s, t) + h * D4;
  if (live) {
    let oo = (s * T + t) * p.C4 + h * D4;
    for (var d = 0u; d < D4; d++) {
      q[d] = qkv[qo + d] * p.scale;
      g[d] = dout[oo + d];
      rowD += dot(g[d], out[oo + d]);
      dq[d] = vec4<f32>(0.0);
    }
    let si = (s * p.H + h) * T + t;
    rowL = lse[si];
    dvec[si] = rowD;
  }
  let kEnd = key_offset() + min(r0 + BR, T);
  for (var k0 = 0u; k0 < kEnd; k0 += BC) {
    load_kv_tile(s, h, k0, tid);
    workgroupBarrier();
    if (live && last >= k0) {
      dq_tile(&q, &g, &dq, rowL, rowD, min(BC, last - k0 + 1u));
    }
    workgroupBarrier();
  }
  if (live) {
    for (var d = 0u; d < D4; d++) { dqkv[qo + d] = dq[d] * p.scale; }
  }
}

// dk, dv of key row j = r0 + tid of sequence s (its own rows, not a prefix), k/v head hk: query
// tiles of each query head of hk's group, rows i ≥ j; writes the k and v parts of dqkv.
fn dkv_rows(s: u32, hk: u32, r0: u32, tid: u32) {
  let D4 = head4();
  let BC = p.BC;
  let T = seq_len();
  let j = r0 + tid;
  let live = j < T;
  var k: HeadRow;
  var v: HeadRow;
  var dk: HeadRow;
  var dv: HeadRow;
  let ko = qkv_row(s, j) + p.C4 + hk * D4;
  if (live) {
    for (var d = 0u; d < D4; d++) {
      k[d] = qkv[ko + d];
      v[d] = qkv[ko + kv4() + d];
      dk[d] = vec4<f32>(0.0);
      dv[d] = vec4<f32>(0.0);
    }
  }
  // Every query head of the group sees this key; only queries i ≥ r0 see any key of this block.
  for (var h = hk * group(); h < (hk + 1u) * group(); h++) {
  for (var q0 = r0; q0 < T; q0 += BC) {
    load_q_tile(s, h, q0, tid);
    workgroupBarrier();
    if (live) {
      var i0 = 0u;
      if (j > q0) { i0 = j - q0; }
      dkv_tile(&k, &v, &dk, &dv, i0, min(BC, T - q0));
    }
    workgroupBarrier();
  }
  }
  if (live) {
    for (var d = 0u; d < D4; d++) {
      dqkv[ko + d] = dk[d];
      dqkv[ko + kv4() + d] = dv[d];
    }
  }
}
