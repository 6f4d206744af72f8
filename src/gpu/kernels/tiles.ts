// Sizes a WGSL shader and its TypeScript launcher must agree on: the launcher computes grids and
// per-tile row counts from them, the shader sizes its workgroup arrays and loops by them. They are
// written here only: each *_CONSTS block below is spliced into its shader as `const NAME: u32 = Nu;`
// lines by an `// #include "<op>_consts.wgsl"` line (consts() in src/gpu/shaders.ts), so the two
// sides cannot drift apart.
import { consts } from '../shaders.ts';

const FROM = 'src/gpu/kernels/tiles.ts';

/** shaders/matmul.wgsl: output rows and columns of one workgroup's tile (TILE_M, TILE_N). */
export const MATMUL_TILE_M = 64;
export const MATMUL_TILE_N = 64;
/** shaders/matmul.wgsl matmul_rows: output columns of one workgroup (ROWS_N). */
export const MATMUL_ROWS_N = 64;

/** shaders/attention_common.wgsl (included by attention.wgsl and prefix_attention.wgsl): vec4s per workgroup tile (TILE_VEC4) and the most rows a tile holds (MAX_BC). */
export const ATTENTION_TILE_VEC4 = 448;
export const ATTENTION_MAX_BC = 32;

/** shaders/xent.wgsl: columns per thread segment (SEG). */
export const XENT_SEGMENT = 512;

/** shaders/adamw.wgsl sumsq_partial: elements each of a workgroup's 64 threads sums (PER_THREAD), so 64·PER_THREAD per workgroup (CHUNK). */
export const ADAMW_PER_THREAD = 32;
export const ADAMW_CHUNK = 64 * ADAMW_PER_THREAD;

/** The includes that declare the sizes above in their shaders, by include name. */
export const MATMUL_CONSTS = { 'matmul_consts.wgsl': consts(FROM, { TILE_M: MATMUL_TILE_M, TILE_N: MATMUL_TILE_N, ROWS_N: MATMUL_ROWS_N }) };
export const ATTENTION_CONSTS = { 'attention_consts.wgsl': consts(FROM, { TILE_VEC4: ATTENTION_TILE_VEC4, MAX_BC: ATTENTION_MAX_BC }) };
export const XENT_CONSTS = { 'xent_consts.wgsl': consts(FROM, { SEG: XENT_SEGMENT }) };
export const ADAMW_CONSTS = { 'adamw_consts.wgsl': consts(FROM, { PER_THREAD: ADAMW_PER_THREAD, CHUNK: ADAMW_CHUNK }) };
