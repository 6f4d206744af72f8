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
// beta = 0 never reads C, so C may start as garbage.
//
// Napkin maths (per call; bench/napkin.ts, measured by `npm run bench -- --suite kernels`):
// napkin(matmul): flops = 2*M*N*K*batch; bytes = 4*(M*K + K*N + M*N)*batch
// Arithmetic intensity is 2·M·N·K / (4·(MK + KN + MN)) FLOPs per byte, n/6 for n³: already ~10
// at the bench model's 512×192×64, so every shape the model uses is compute-bound and the
// best matmul's GFLOP/s is the ceiling the suite holds compute-bound kernels against.

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

const TILE_M: u32 = 64u;
const TILE_N: u32 = 64u;
const TILE_K: u32 = 16u;
const ROWS_N: u32 = 64u;

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

fn put_a_k4(idx: u32, v: vec4<f32>) {
  let mm = idx / 4u; let kq = idx % 4u;
  As[(kq * 4u + 0u) * 16u + mm / 4u][mm % 4u] = v.x;
  As[(kq * 4u + 1u) * 16u + mm / 4u][mm % 4u] = v.y;
  As[(kq * 4u + 2u) * 16u + mm / 4u][mm % 4u] = v.z;
  As[(kq * 4u + 3u) * 16u + mm / 4u][mm % 4u] = v.w;
}

fn put_b_k4(idx: u32, v: vec4<f32>) {
  let nn = idx / 4u; let kq = idx % 4u;
  Bs[(kq * 4u + 0u) * 16u + nn / 4u][nn % 4u] = v.x;
  Bs[(kq * 4u + 1u) * 16u + nn / 4u][nn % 4u] = v.y;
  Bs[(kq * 4u + 2u) * 16u + nn / 4u][nn % 4u] = v.z;
  Bs[(kq * 4u + 3u) * 16u + nn / 4u][nn % 4u] = v.w;
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

@compute @workgroup_size(8, 8, 1)
fn matmul(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let t = lid.y * 8u + lid.x;
  let m0 = wg.y * TILE_M;
  let n0 = wg.x * TILE_N;
  let baseA = p.offsetA + wg.z * p.strideA;
  let baseB = p.offsetB + wg.z * p.strideB;
  var acc: array<vec4<f32>, 16>;
  for (var k0 = 0u; k0 < p.K; k0 += TILE_K) {
    for (var r = 0u; r < 4u; r++) {
      let idx = t + r * 64u;
      if (TRANS_A) {
        let k = k0 + idx / 16u; let m = m0 + (idx % 16u) * 4u;
        As[idx] = vec4(a_at(baseA, m, k), a_at(baseA, m + 1u, k), a_at(baseA, m + 2u, k), a_at(baseA, m + 3u, k));
      } else {
        let m = m0 + idx / 4u; let k = k0 + (idx % 4u) * 4u;
        put_a_k4(idx, vec4(a_at(baseA, m, k), a_at(baseA, m, k + 1u), a_at(baseA, m, k + 2u), a_at(baseA, m, k + 3u)));
      }
      if (TRANS_B) {
        let n = n0 + idx / 4u; let k = k0 + (idx % 4u) * 4u;
        put_b_k4(idx, vec4(b_at(baseB, k, n), b_at(baseB, k + 1u, n), b_at(baseB, k + 2u, n), b_at(baseB, k + 3u, n)));
      } else {
        let k = k0 + idx / 16u; let n = n0 + (idx % 16u) * 4u;
        Bs[idx] = vec4(b_at(baseB, k, n), b_at(baseB, k, n + 1u), b_at(baseB, k, n + 2u), b_at(baseB, k, n + 3u));
      }
    }
    workgroupBarrier();
    tile_fma(lid.x, lid.y, &acc);
    workgroupBarrier();
  }
  store(acc, p.offsetC + wg.z * p.strideC, m0 + lid.y * 8u, n0 + lid.x * 8u);
}

// ---- vec4 loads ------------------------------------------------------------------------
// Same bindings, A and B seen as vec4 arrays. Index arithmetic is in vec4 units along the
// contiguous dimension, which the host guarantees is a multiple of 4 (as are strides and
// offsets), so a vec4 is wholly inside or wholly outside the matrix.

@group(0) @binding(0) var<storage, read> A4: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> B4: array<vec4<f32>>;

@compute @workgroup_size(8, 8, 1)
fn matmul_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let t = lid.y * 8u + lid.x;
  let m0 = wg.y * TILE_M;
  let n0 = wg.x * TILE_N;
  let baseA = p.offsetA + wg.z * p.strideA;
  let baseB = p.offsetB + wg.z * p.strideB;
  let zero = vec4<f32>(0.0);
  var acc: array<vec4<f32>, 16>;
  for (var k0 = 0u; k0 < p.K; k0 += TILE_K) {
    for (var r = 0u; r < 4u; r++) {
      let idx = t + r * 64u;
      if (TRANS_A) {
        let k = k0 + idx / 16u; let m = m0 + (idx % 16u) * 4u;
        var v = zero;
        if (k < p.K && m < p.M) { v = A4[(baseA + k * p.lda + m) / 4u]; }
        As[idx] = v;
      } else {
        let m = m0 + idx / 4u; let k = k0 + (idx % 4u) * 4u;
        var v = zero;
        if (k < p.K && m < p.M) { v = A4[(baseA + m * p.lda + k) / 4u]; }
        put_a_k4(idx, v);
      }
      if (TRANS_B) {
        let n = n0 + idx / 4u; let k = k0 + (idx % 4u) * 4u;
        var v = zero;
        if (k < p.K && n < p.N) { v = B4[(baseB + n * p.K + k) / 4u]; }
        put_b_k4(idx, v);
      } else {
        let k = k0 + idx / 16u; let n = n0 + (idx % 16u) * 4u;
        var v = zero;
        if (k < p.K && n < p.N) { v = B4[(baseB + k * p.N + n) / 4u]; }
        Bs[idx] = v;
      }
    }
    workgroupBarrier();
    tile_fma(lid.x, lid.y, &acc);
    workgroupBarrier();
  }
  store(acc, p.offsetC + wg.z * p.strideC, m0 + lid.y * 8u, n0 + lid.x * 8u);
}

@compute @workgroup_size(64, 1, 1)
fn matmul_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let n = wg.x * ROWS_N + lid.x;
  let m = wg.y;
  if (n >= p.N || m >= p.M) { return; }
  let baseA = p.offsetA + wg.z * p.strideA;
  let baseB = p.offsetB + wg.z * p.strideB;
  var acc = 0.0;
  for (var k = 0u; k < p.K; k++) {
    acc += a_at(baseA, m, k) * b_at(baseB, k, n);
  }
  let idx = p.offsetC + wg.z * p.strideC + m * p.ldc + n;
  var v = p.alpha * acc;
  if (p.beta != 0.0) { v += p.beta * C[idx]; }
  C[idx] = v;
}
