// grid.wgsl — the workgroup grid maths every spilling kernel shares, spliced in by
// `// #include "grid.wgsl"` (src/gpu/shaders.ts). One grid dimension holds at most
// maxComputeWorkgroupsPerDimension workgroups, so the host (grid() in src/gpu/kernels/common.ts)
// spills a large count into y; a shader takes the flat index back and returns past its end.

// The flat index of workgroup wg in a 2-D grid of nwg (wg.x + wg.y·nwg.x; the last row may run past the count).
fn flat_group(wg: vec3u, nwg: vec3u) -> u32 {
  return wg.x + wg.y * nwg.x;
}

// The flat index of thread lid of workgroup wg, for workgroups of `size` threads (or of `size` items, a thread per item).
fn flat_thread(wg: vec3u, nwg: vec3u, lid: u32, size: u32) -> u32 {
  return flat_group(wg, nwg) * size + lid;
}
