// attention_common.wgsl — the part attention.wgsl and prefix_attention.wgsl share, spliced into
// each by `// #include "attention_common.wgsl"` (src/gpu/shaders.ts). Not a module by itself: the
// including file declares `p` (with D4, C4, KV4, scale, H), `qkv`, `dout`, `lse`, `dvec`, and
//   fn seq_len() -> u32           rows per sequence (query rows of one b or completion g)
//   fn qkv_row(s, t) -> u32       vec4 offset of row t of sequence s in qkv
//   fn group() -> u32             query heads per key/value head
//
// The per-tile inner loops (forward, dq, dkv) take the thread's per-row arrays by pointer and
// read the workgroup tiles; they are the same code for every entry point of both files.

// Loop bounds come from the uniform, not from override constants: SwiftShader unrolls
// constant-bound loops, and fully unrolled head loops nested in tile loops took it tens of
// seconds per pipeline to compile (D = 128). FIXED_D4 > 0 re-specialises the head size for
// real GPUs, where unrolling keeps the per-row arrays in registers.
override FIXED_D4: u32 = 0u;
override BR: u32 = 32u;    // rows (threads) per workgroup in the training kernels

const MAX_D4: u32 = 32u;   // head size ≤ 128
const MAX_BC: u32 = 32u;
const TILE_VEC4: u32 = 448u; // two tiles of 448 vec4 + tileS fit the 16 KiB minimum
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
