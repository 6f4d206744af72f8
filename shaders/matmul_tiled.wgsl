// matmul_tiled.wgsl — the tiled entry point of matmul.wgsl, a template (src/gpu/shaders.ts)
// included once per pair of tile loads: ENTRY is its name, LOAD_A one of load_a / load_a4
// (scalar or vec4 A), LOAD_B one of load_b / load_b4 / load_bh (f32, vec4 or packed-f16 B).
// #template ENTRY LOAD_A LOAD_B
//
// Dispatch (ceil(N/TILE_N), ceil(M/TILE_M), batch) workgroups of 8×8 threads: the workgroup's
// TILE_M×TILE_N tile of C, K advancing TILE_K at a time through the As and Bs tiles.
@compute @workgroup_size(8, 8, 1)
fn ENTRY(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let t = lid.y * 8u + lid.x;
  let m0 = wg.y * TILE_M;
  let n0 = wg.x * TILE_N;
  let baseA = p.offsetA + wg.z * p.strideA;
  let baseB = p.offsetB + wg.z * p.strideB;
  var acc: array<vec4<f32>, 16>;
  for (var k0 = 0u; k0 < p.K; k0 += TILE_K) {
    for (var r = 0u; r < 4u; r++) {
      LOAD_A(t + r * 64u, m0, k0, baseA);
      LOAD_B(t + r * 64u, k0, n0, baseB);
    }
    workgroupBarrier();
    tile_fma(lid.x, lid.y, &acc);
    workgroupBarrier();
  }
  store(acc, p.offsetC + wg.z * p.strideC, m0 + lid.y * 8u, n0 + lid.x * 8u);
}
