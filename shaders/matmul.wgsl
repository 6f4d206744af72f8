// matmul.wgsl — batched f32 matrix product with the layouts a transformer needs.
//
//   C[b] = alpha * op(A[b]) · op(B[b]) + beta * C[b]      op(X) = X or Xᵀ (TRANS_A, TRANS_B)
//
// Shapes (row-major, per batch b, starting at element offsetX + b*strideX of each buffer; a
// stride of 0 broadcasts one matrix over the batch, e.g. a weight):
//   A: M×K (TRANS_A = false) or K×M (TRANS_A = true)
//   B: K×N (TRANS_B = false) or N×K (TRANS_B = true)
//   C: M×N
// Rows of A and C are lda and ldc elements apart (defaults: A's contiguous extent, K or M, and
// N), so a product can read or write a column block of a wider matrix: the LM head split by
// vocabulary rows writes logits[:, lo:hi] of a [rows, V] buffer and reads dlogits[:, lo:hi].
// Bindings: 0 A (read), 1 B (read), 2 C (read_write), 3 Params (uniform).
// Dispatch: (ceil(N/64), ceil(M/64), batch) workgroups of 8×8 threads.
//
// Each workgroup computes a 64×64 tile of C; each thread an 8×8 block held in sixteen vec4
// registers. K advances 16 at a time through two workgroup tiles, As[k][m] and Bs[k][n]; per k
// the inner loop reads two vec4 of each and does 64 FMAs. Version history (512³ on SwiftShader,
// Dawn, same run): 16×16 threads × 4×4 outputs 0.78 GFLOP/s; 8×8 threads × 8×8 outputs 2.2 —
// on a CPU-emulated GPU workgroup-memory reads are per-lane gathers, so outputs per read rule.
// Entry points:
//   matmul       scalar global loads with bounds checks: any M, N, K, any offset.
//   matmul_vec4  vec4 global loads, for when every operand's contiguous dimension, lda and every
//                batch stride is a multiple of 4 (the host checks); rows and columns past the
//                edge are still bounds-checked, a vec4 being wholly in or wholly out.
//   matmul_rows  few rows (a decode step's 1×K · K×N): one thread per output element, a plain
//                dot product over K, ROWS_N columns per workgroup, grid (ceil(N/ROWS_N), M,
//                batch). The tiled entry points spend a 64-row tile on one row (63/64 of their
//                FMAs wasted); this one does M·N·K of them. The host picks it for M ≤ 4.
//   matmul_f16b, matmul_f16b_vec4, matmul_f16b_rows
//                the same three with B stored as f16 (the weights of inference): see "f16 weights"
//                below. A, C and every product and sum stay f32.
// beta = 0 never reads C, so C may start as garbage.
//
// Napkin maths (per call; bench/napkin.ts, measured by `npm run bench -- --suite kernels`):
// napkin(matmul): flops = 2*M*N*K*batch; bytes = 4*(M*K + K*N + M*N)*batch
// Arithmetic intensity is 2·M·N·K / (4·(MK + KN + MN)) FLOPs per byte, n/6 for n³: already ~10
// at the bench model's 512×192×64, so every shape the model uses is compute-bound and the
// best matmul's GFLOP/s is the ceiling the suite holds compute-bound kernels against.
// With f16 weights B takes 2 bytes an element (padding of odd rows left out):
// napkin(matmul_f16b): flops = 2*M*N*K*batch; bytes = (4*M*K + 2*K*N + 4*M*N)*batch
// which matters where B dominates the bytes: a decode step's 1×K · K×N reads B and little else.

struct Params {
  M: u32,
  N: u32,
  K: u32,
  strideA: u32,
  strideB: u32,
  strideC: u32,
  offsetA: u32,
  offsetB: u32,
  offsetC: u32,
  alpha: f32,
  beta: f32,
  lda: u32,
  ldc: u32,
}

override TRANS_A: bool = false;
override TRANS_B: bool = false;

// TILE_M, TILE_N, ROWS_N: src/gpu/kernels/tiles.ts (the launcher's grid uses them too).
// #include "matmul_consts.wgsl"
const TILE_K: u32 = 16u;

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> As: array<vec4<f32>, 256>; // [TILE_K][TILE_M / 4]: As[k * 16 + m / 4][m % 4]
var<workgroup> Bs: array<vec4<f32>, 256>; // [TILE_K][TILE_N / 4]

fn a_at(base: u32, m: u32, k: u32) -> f32 {
  if (m >= p.M || k >= p.K) { return 0.0; }
  if (TRANS_A) { return A[base + k * p.lda + m]; }
  return A[base + m * p.lda + k];
}

fn b_at(base: u32, k: u32, n: u32) -> f32 {
  if (k >= p.K || n >= p.N) { return 0.0; }
  if (TRANS_B) { return B[base + n * p.K + k]; }
  return B[base + k * p.N + n];
}

// The thread→element maps below follow each operand's contiguous dimension, so a thread's
// four elements are neighbours in memory (one vec4 load on the aligned path). Tile slot
// `idx` in 0..255 covers 4 elements: for a k-contiguous operand, row idx/4 and k (idx%4)*4..+3;
// for an m- or n-contiguous one, k idx/16 and columns (idx%16)*4..+3.

// Element j of a k-contiguous operand's vec4 at slot idx (row idx/4, k (idx%4)*4 + j) lands at
// tile slot k4_slot(idx, j), lane (idx/4) % 4.
fn k4_slot(idx: u32, j: u32) -> u32 {
  return ((idx % 4u) * 4u + j) * 16u + idx / 16u;
}

fn put_a_k4(idx: u32, v: vec4<f32>) {
  for (var j = 0u; j < 4u; j++) { As[k4_slot(idx, j)][(idx / 4u) % 4u] = v[j]; }
}

fn put_b_k4(idx: u32, v: vec4<f32>) {
  for (var j = 0u; j < 4u; j++) { Bs[k4_slot(idx, j)][(idx / 4u) % 4u] = v[j]; }
}

// acc[i * 2 + h] holds row ty*8 + i, columns tx*8 + h*4 .. +3.
fn tile_fma(tx: u32, ty: u32, acc: ptr<function, array<vec4<f32>, 16>>) {
  for (var kk = 0u; kk < TILE_K; kk++) {
    let a0 = As[kk * 16u + ty * 2u];
    let a1 = As[kk * 16u + ty * 2u + 1u];
    let b0 = Bs[kk * 16u + tx * 2u];
    let b1 = Bs[kk * 16u + tx * 2u + 1u];
    (*acc)[0] += a0.x * b0; (*acc)[1] += a0.x * b1;
    (*acc)[2] += a0.y * b0; (*acc)[3] += a0.y * b1;
    (*acc)[4] += a0.z * b0; (*acc)[5] += a0.z * b1;
    (*acc)[6] += a0.w * b0; (*acc)[7] += a0.w * b1;
    (*acc)[8] += a1.x * b0; (*acc)[9] += a1.x * b1;
    (*acc)[10] += a1.y * b0; (*acc)[11] += a1.y * b1;
    (*acc)[12] += a1.z * b0; (*acc)[13] += a1.z * b1;
    (*acc)[14] += a1.w * b0; (*acc)[15] += a1.w * b1;
  }
}

fn store(acc: array<vec4<f32>, 16>, base: u32, row0: u32, col0: u32) {
  for (var i = 0u; i < 8u; i++) {
    let row = row0 + i;
    if (row >= p.M) { break; }
    for (var j = 0u; j < 8u; j++) {
      let col = col0 + j;
      if (col >= p.N) { break; }
      let idx = base + row * p.ldc + col;
      var v = p.alpha * acc[i * 2u + j / 4u][j % 4u];
      if (p.beta != 0.0) { v += p.beta * C[idx]; }
      C[idx] = v;
    }
  }
}

// ---- tile loads -------------------------------------------------------------------------
// Each fills tile slot idx of As or Bs for the tile at (m0 or n0, k0); the entry points below
// pair one A load with one B load. Scalar loads are bounds-checked per element.

fn load_a(idx: u32, m0: u32, k0: u32, baseA: u32) {
  if (TRANS_A) {
    let k = k0 + idx / 16u; let m = m0 + (idx % 16u) * 4u;
    As[idx] = vec4(a_at(baseA, m, k), a_at(baseA, m + 1u, k), a_at(baseA, m + 2u, k), a_at(baseA, m + 3u, k));
  } else {
    let m = m0 + idx / 4u; let k = k0 + (idx % 4u) * 4u;
    put_a_k4(idx, vec4(a_at(baseA, m, k), a_at(baseA, m, k + 1u), a_at(baseA, m, k + 2u), a_at(baseA, m, k + 3u)));
  }
}

fn load_b(idx: u32, k0: u32, n0: u32, baseB: u32) {
  if (TRANS_B) {
    let n = n0 + idx / 4u; let k = k0 + (idx % 4u) * 4u;
    put_b_k4(idx, vec4(b_at(baseB, k, n), b_at(baseB, k + 1u, n), b_at(baseB, k + 2u, n), b_at(baseB, k + 3u, n)));
  } else {
    let k = k0 + idx / 16u; let n = n0 + (idx % 16u) * 4u;
    Bs[idx] = vec4(b_at(baseB, k, n), b_at(baseB, k, n + 1u), b_at(baseB, k, n + 2u), b_at(baseB, k, n + 3u));
  }
}

// ---- vec4 loads ------------------------------------------------------------------------
// Same bindings, A and B seen as vec4 arrays. Index arithmetic is in vec4 units along the
// contiguous dimension, which the host guarantees is a multiple of 4 (as are strides and
// offsets), so a vec4 is wholly inside or wholly outside the matrix.

@group(0) @binding(0) var<storage, read> A4: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> B4: array<vec4<f32>>;

fn load_a4(idx: u32, m0: u32, k0: u32, baseA: u32) {
  var v = vec4<f32>(0.0);
  if (TRANS_A) {
    let k = k0 + idx / 16u; let m = m0 + (idx % 16u) * 4u;
    if (k < p.K && m < p.M) { v = A4[(baseA + k * p.lda + m) / 4u]; }
    As[idx] = v;
  } else {
    let m = m0 + idx / 4u; let k = k0 + (idx % 4u) * 4u;
    if (k < p.K && m < p.M) { v = A4[(baseA + m * p.lda + k) / 4u]; }
    put_a_k4(idx, v);
  }
}

fn load_b4(idx: u32, k0: u32, n0: u32, baseB: u32) {
  var v = vec4<f32>(0.0);
  if (TRANS_B) {
    let n = n0 + idx / 4u; let k = k0 + (idx % 4u) * 4u;
    if (k < p.K && n < p.N) { v = B4[(baseB + n * p.K + k) / 4u]; }
    put_b_k4(idx, v);
  } else {
    let k = k0 + idx / 16u; let n = n0 + (idx % 16u) * 4u;
    if (k < p.K && n < p.N) { v = B4[(baseB + k * p.N + n) / 4u]; }
    Bs[idx] = v;
  }
}

// Few rows: row m of A times column n of B, a plain dot product over K.
fn dot_b(baseA: u32, baseB: u32, m: u32, n: u32) -> f32 {
  var acc = 0.0;
  for (var k = 0u; k < p.K; k++) {
    acc += a_at(baseA, m, k) * b_at(baseB, k, n);
  }
  return acc;
}

// ---- f16 weights -----------------------------------------------------------------------
// B holds f16 values packed two per u32 word, the even element in the low half (what
// unpack2x16float returns as .x). B is packed row by row as stored — K rows of N when TRANS_B
// is false, N rows of K when true — each row padded to an even length, so a row is
// ceil(len / 2) words, a pair never straddles two rows, and offsetB and strideB count words
// (src/reference/f16.ts packs; src/model/halfWeights.ts lays a model out so). unpack2x16float is
// core WGSL: no `enable f16;`, so this runs on every adapter, halving the weights' memory and
// the bytes a product reads; products and sums are f32. (Where the adapter has shader-f16, B
// could be read as array<vec2<f16>> instead; that variant is not built.)
// The tile loads read B two elements at a time: n (or k) is a multiple of 4 there, so a pair's
// first element is always even, and the padding half of an odd row is 0.

@group(0) @binding(1) var<storage, read> Bh: array<u32>;

// Elements (col, col + 1) of row `row` of the packed B whose rows hold `cols` elements (col even).
fn bh_pair(base: u32, row: u32, col: u32, rows: u32, cols: u32) -> vec2<f32> {
  if (row >= rows || col >= cols) { return vec2<f32>(0.0); }
  return unpack2x16float(Bh[base + row * ((cols + 1u) / 2u) + col / 2u]);
}

fn load_bh(idx: u32, k0: u32, n0: u32, baseB: u32) {
  if (TRANS_B) {
    let n = n0 + idx / 4u; let k = k0 + (idx % 4u) * 4u;
    put_b_k4(idx, vec4(bh_pair(baseB, n, k, p.N, p.K), bh_pair(baseB, n, k + 2u, p.N, p.K)));
  } else {
    let k = k0 + idx / 16u; let n = n0 + (idx % 16u) * 4u;
    Bs[idx] = vec4(bh_pair(baseB, k, n, p.K, p.N), bh_pair(baseB, k, n + 2u, p.K, p.N));
  }
}

// Few rows, as dot_b.
fn dot_bh(baseA: u32, baseB: u32, m: u32, n: u32) -> f32 {
  var acc = 0.0;
  if (TRANS_B) {
    // Row n of B is K elements: a word per two of them (a_at gives 0 past K, the padding half is 0).
    let row = baseB + n * ((p.K + 1u) / 2u);
    for (var k = 0u; k < p.K; k += 2u) {
      let w = unpack2x16float(Bh[row + k / 2u]);
      acc += a_at(baseA, m, k) * w.x + a_at(baseA, m, k + 1u) * w.y;
    }
  } else {
    // Column n of B: the same half of one word in every row (neighbouring threads share words).
    let words = (p.N + 1u) / 2u;
    let odd = (n & 1u) == 1u;
    for (var k = 0u; k < p.K; k++) {
      let w = unpack2x16float(Bh[baseB + k * words + n / 2u]);
      acc += a_at(baseA, m, k) * select(w.x, w.y, odd);
    }
  }
  return acc;
}

// ---- entry points ------------------------------------------------------------------------
// One tiled body and one few-rows body (templates, src/gpu/shaders.ts), instantiated per load.
// #include "matmul_tiled.wgsl" ENTRY=matmul LOAD_A=load_a LOAD_B=load_b
// #include "matmul_tiled.wgsl" ENTRY=matmul_vec4 LOAD_A=load_a4 LOAD_B=load_b4
// #include "matmul_rows.wgsl" ENTRY=matmul_rows ROW_DOT=dot_b
// #include "matmul_tiled.wgsl" ENTRY=matmul_f16b LOAD_A=load_a LOAD_B=load_bh
// A read as vec4s (A's contiguous dimension, lda, strideA and offsetA multiples of 4; the host checks).
// #include "matmul_tiled.wgsl" ENTRY=matmul_f16b_vec4 LOAD_A=load_a4 LOAD_B=load_bh
// #include "matmul_rows.wgsl" ENTRY=matmul_f16b_rows ROW_DOT=dot_bh
