// columns.wgsl — a block of columns from one row-major matrix into another, scaled, overwriting or
// adding. Twin: src/reference/columns.ts. Launcher: src/gpu/kernels/columns.ts.
//
//   dst[r·dstWidth + dstOffset + c] (+)= alpha · src[r·srcWidth + srcOffset + c]   r < rows, c < width
//
// LoRA (src/model/lora.ts) uses it on the fused projections: the forward adds a low-rank update
// [rows, width] into its columns of qkv ([q | k | v]) or of the SwiGLU's [gate | up], and the
// backward copies those columns of the gradient out, scaled by alpha/r, for the two small matmuls.
// Bindings: 0 params (uniform), 1 src (read), 2 dst (read_write). ACCUMULATE: add instead of write.
// Dispatch: one thread per element of the block (n = rows·width), workgroups of 256 on a (gx, gy)
// grid with linear id wg.x + wg.y·gx; threads past n return.
//
// Napkin maths: memory-bound, 8 bytes read and 4 written per element (12 with ACCUMULATE).

// #include "grid.wgsl"

struct Params {
  rows: u32,
  width: u32,
  srcWidth: u32,
  srcOffset: u32,
  dstWidth: u32,
  dstOffset: u32,
  alpha: f32,
  _pad: u32,
}

override ACCUMULATE: bool = false;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(256)
fn columns(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = flat_thread(wg, nwg, lid, 256u);
  if (i >= p.rows * p.width) { return; }
  let r = i / p.width;
  let c = i % p.width;
  let v = p.alpha * src[r * p.srcWidth + p.srcOffset + c];
  let j = r * p.dstWidth + p.dstOffset + c;
  if (ACCUMULATE) {
    dst[j] = dst[j] + v;
  } else {
    dst[j] = v;
  }
}
