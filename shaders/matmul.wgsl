// matmul.wgsl — batched f32 matrix product with the layouts a transformer needs.
//
//   C[b] = alpha * op(A[b]) · op(B[b]) + beta * C[b]      op(X) = X or Xᵀ (TRANS_A, TRANS_B)
//
// Shapes (row-major, per batch b, starting at element offsetX + b*strideX of each buffer; a
// stride of 0 broadcasts one matrix over the batch, e.g. a weight):
//   A: M×K (TRANS_A = false) or K×M (TRANS_A = true)
//   B: K×N (TRANS_B = false) or N×K (TRANS_B = true)
//   C: M×N
// Bindings: 0 A (read), 1 B (read), 2 C (read_write), 3 Params (uniform).
// Dispatch: (ceil(N/64), ceil(M/64), batch) workgroups of 16×16 threads.
//
// Each workgroup computes a 64×64 tile of C; each thread a 4×4 block held in four vec4
// registers. K advances 16 at a time through two workgroup tiles, As[k][m] and Bs[k][n], so the
// inner loop reads one vec4 of each and does 16 FMAs. Versions:
//   matmul       scalar global loads with bounds checks: any M, N, K, any offset.
//   matmul_vec4  vec4 global loads, for when every operand's contiguous dimension and every
//                batch stride is a multiple of 4 (the host checks); rows and columns past the
//                edge are still bounds-checked, a vec4 being wholly in or wholly out.
// beta = 0 never reads C, so C may start as garbage.

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
}

override TRANS_A: bool = false;
override TRANS_B: bool = false;

const TILE_M: u32 = 64u;
const TILE_N: u32 = 64u;
const TILE_K: u32 = 16u;

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> As: array<vec4<f32>, 256>; // [TILE_K][TILE_M / 4]
var<workgroup> Bs: array<vec4<f32>, 256>; // [TILE_K][TILE_N / 4]

fn a_at(base: u32, m: u32, k: u32) -> f32 {
  if (m >= p.M || k >= p.K) { return 0.0; }
  if (TRANS_A) { return A[base + k * p.M + m]; }
  return A[base + m * p.K + k];
}

fn b_at(base: u32, k: u32, n: u32) -> f32 {
  if (k >= p.K || n >= p.N) { return 0.0; }
  if (TRANS_B) { return B[base + n * p.K + k]; }
  return B[base + k * p.N + n];
}

// Multiplies the two tiles into acc: thread (tx, ty) owns rows ty*4.. and columns tx*4...
fn tile_fma(tx: u32, ty: u32, acc: ptr<function, array<vec4<f32>, 4>>) {
  for (var kk = 0u; kk < TILE_K; kk++) {
    let a = As[kk * 16u + ty];
    let b = Bs[kk * 16u + tx];
    (*acc)[0] += a.x * b;
    (*acc)[1] += a.y * b;
    (*acc)[2] += a.z * b;
    (*acc)[3] += a.w * b;
  }
}

fn store(acc: array<vec4<f32>, 4>, base: u32, row0: u32, col0: u32) {
  for (var i = 0u; i < 4u; i++) {
    let row = row0 + i;
    if (row >= p.M) { break; }
    for (var j = 0u; j < 4u; j++) {
      let col = col0 + j;
      if (col >= p.N) { break; }
      let idx = base + row * p.N + col;
      var v = p.alpha * acc[i][j];
      if (p.beta != 0.0) { v += p.beta * C[idx]; }
      C[idx] = v;
    }
  }
}

@compute @workgroup_size(16, 16, 1)
fn matmul(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let t = lid.y * 16u + lid.x;
  let m0 = wg.y * TILE_M;
  let n0 = wg.x * TILE_N;
  let baseA = p.offsetA + wg.z * p.strideA;
  let baseB = p.offsetB + wg.z * p.strideB;
  var acc: array<vec4<f32>, 4>;
  for (var k0 = 0u; k0 < p.K; k0 += TILE_K) {
    // 256 threads fill 256 vec4 slots of each tile. The thread→element map follows the
    // operand's contiguous dimension so neighbouring threads read neighbouring addresses.
    if (TRANS_A) {
      let kk = t / 16u; let mq = t % 16u; let m = m0 + mq * 4u;
      As[kk * 16u + mq] = vec4(a_at(baseA, m, k0 + kk), a_at(baseA, m + 1u, k0 + kk), a_at(baseA, m + 2u, k0 + kk), a_at(baseA, m + 3u, k0 + kk));
    } else {
      let mm = t / 4u; let kq = t % 4u; let k = k0 + kq * 4u; let m = m0 + mm;
      let v = vec4(a_at(baseA, m, k), a_at(baseA, m, k + 1u), a_at(baseA, m, k + 2u), a_at(baseA, m, k + 3u));
      As[(kq * 4u + 0u) * 16u + mm / 4u][mm % 4u] = v.x;
      As[(kq * 4u + 1u) * 16u + mm / 4u][mm % 4u] = v.y;
      As[(kq * 4u + 2u) * 16u + mm / 4u][mm % 4u] = v.z;
      As[(kq * 4u + 3u) * 16u + mm / 4u][mm % 4u] = v.w;
    }
    if (TRANS_B) {
      let nn = t / 4u; let kq = t % 4u; let k = k0 + kq * 4u; let n = n0 + nn;
      let v = vec4(b_at(baseB, k, n), b_at(baseB, k + 1u, n), b_at(baseB, k + 2u, n), b_at(baseB, k + 3u, n));
      Bs[(kq * 4u + 0u) * 16u + nn / 4u][nn % 4u] = v.x;
      Bs[(kq * 4u + 1u) * 16u + nn / 4u][nn % 4u] = v.y;
      Bs[(kq * 4u + 2u) * 16u + nn / 4u][nn % 4u] = v.z;
      Bs[(kq * 4u + 3u) * 16u + nn / 4u][nn % 4u] = v.w;
    } else {
      let kk = t / 16u; let nq = t % 16u; let n = n0 + nq * 4u;
      Bs[kk * 16u + nq] = vec4(b_at(baseB, k0 + kk, n), b_at(baseB, k0 + kk, n + 1u), b_at(baseB, k0 + kk, n + 2u), b_at(baseB, k0 + kk, n + 3u));
    }
    workgroupBarrier();
    tile_fma(lid.x, lid.y, &acc);
    workgroupBarrier();
  }
  store(acc, p.offsetC + wg.z * p.strideC, m0 + lid.y * 4u, n0 + lid.x * 4u);
}

// ---- vec4 loads ------------------------------------------------------------------------
// Same bindings, A and B seen as vec4 arrays. Index arithmetic is in vec4 units along the
// contiguous dimension, which the host guarantees is a multiple of 4 (as are the strides).

@group(0) @binding(0) var<storage, read> A4: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> B4: array<vec4<f32>>;

@compute @workgroup_size(16, 16, 1)
fn matmul_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let t = lid.y * 16u + lid.x;
  let m0 = wg.y * TILE_M;
  let n0 = wg.x * TILE_N;
  let baseA = (p.offsetA + wg.z * p.strideA) / 4u;
  let baseB = (p.offsetB + wg.z * p.strideB) / 4u;
  let zero = vec4<f32>(0.0);
  var acc: array<vec4<f32>, 4>;
  for (var k0 = 0u; k0 < p.K; k0 += TILE_K) {
    if (TRANS_A) {
      // A is K×M, contiguous in m: one vec4 = 4 consecutive m at one k.
      let kk = t / 16u; let mq = t % 16u; let k = k0 + kk; let m = m0 + mq * 4u;
      var v = zero;
      if (k < p.K && m < p.M) { v = A4[baseA + (k * p.M + m) / 4u]; }
      As[kk * 16u + mq] = v;
    } else {
      // A is M×K, contiguous in k: one vec4 = 4 consecutive k at one m, scattered over As.
      let mm = t / 4u; let kq = t % 4u; let k = k0 + kq * 4u; let m = m0 + mm;
      var v = zero;
      if (k < p.K && m < p.M) { v = A4[baseA + (m * p.K + k) / 4u]; }
      As[(kq * 4u + 0u) * 16u + mm / 4u][mm % 4u] = v.x;
      As[(kq * 4u + 1u) * 16u + mm / 4u][mm % 4u] = v.y;
      As[(kq * 4u + 2u) * 16u + mm / 4u][mm % 4u] = v.z;
      As[(kq * 4u + 3u) * 16u + mm / 4u][mm % 4u] = v.w;
    }
    if (TRANS_B) {
      let nn = t / 4u; let kq = t % 4u; let k = k0 + kq * 4u; let n = n0 + nn;
      var v = zero;
      if (k < p.K && n < p.N) { v = B4[baseB + (n * p.K + k) / 4u]; }
      Bs[(kq * 4u + 0u) * 16u + nn / 4u][nn % 4u] = v.x;
      Bs[(kq * 4u + 1u) * 16u + nn / 4u][nn % 4u] = v.y;
      Bs[(kq * 4u + 2u) * 16u + nn / 4u][nn % 4u] = v.z;
      Bs[(kq * 4u + 3u) * 16u + nn / 4u][nn % 4u] = v.w;
    } else {
      let kk = t / 16u; let nq = t % 16u; let k = k0 + kk; let n = n0 + nq * 4u;
      var v = zero;
      if (k < p.K && n < p.N) { v = B4[baseB + (k * p.N + n) / 4u]; }
      Bs[kk * 16u + nq] = v;
    }
    workgroupBarrier();
    tile_fma(lid.x, lid.y, &acc);
    workgroupBarrier();
  }
  store(acc, p.offsetC + wg.z * p.strideC, m0 + lid.y * 4u, n0 + lid.x * 4u);
}
