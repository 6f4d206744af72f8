// matmul_rows.wgsl — the few-rows entry point of matmul.wgsl, a template (src/gpu/shaders.ts)
// included once per B: ENTRY is its name, ROW_DOT one of dot_b / dot_bh (f32 or packed-f16 B).
// #template ENTRY ROW_DOT
//
// One thread per output element, ROWS_N columns per workgroup: grid (ceil(N/ROWS_N), M, batch).
@compute @workgroup_size(64, 1, 1)
fn ENTRY(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let n = wg.x * ROWS_N + lid.x;
  let m = wg.y;
  if (n >= p.N || m >= p.M) { return; }
  let acc = ROW_DOT(p.offsetA + wg.z * p.strideA, p.offsetB + wg.z * p.strideB, m, n);
  let idx = p.offsetC + wg.z * p.strideC + m * p.ldc + n;
  var v = p.alpha * acc;
  if (p.beta != 0.0) { v += p.beta * C[idx]; }
  C[idx] = v;
}
