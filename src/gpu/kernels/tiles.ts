// Sizes a WGSL shader and its TypeScript launcher must agree on: the launcher computes grids and
// per-tile row counts from them, the shader sizes its workgroup arrays by them. WGSL cannot
// import, so each value is written twice; tiles.test.ts reads every shader's
// `const NAME: u32 = Nu;` and fails when the two differ.

/** shaders/matmul.wgsl: output rows and columns of one workgroup's tile (TILE_M, TILE_N). */
export const MATMUL_TILE_M = 64;
export const MATMUL_TILE_N = 64;
/** shaders/matmul.wgsl matmul_rows: output columns of one workgroup (ROWS_N). */
export const MATMUL_ROWS_N = 64;

/** shaders/attention_common.wgsl (included by attention.wgsl and prefix_attention.wgsl): vec4s per workgroup tile (TILE_VEC4) and the most rows a tile holds (MAX_BC). */
export const ATTENTION_TILE_VEC4 = 448;
export const ATTENTION_MAX_BC = 32;
