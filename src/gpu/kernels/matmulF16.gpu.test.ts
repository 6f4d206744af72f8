// The f16-weight matmul (B packed two f16 per u32 word, shaders/matmul.wgsl "f16 weights") against
// its twin (src/reference/matmul.ts matmulF16BRef) on awkward shapes: odd K and N (a padded half
// at the end of every stored row), N and M not multiples of the 64-wide tile, batches with word
// strides and offsets, column blocks (lda, ldc), in every layout and entry point.
import { describe, expect, it } from 'vitest';
import { matmulExtents, matmulF16BRef, matmulRef, packedBExtent, resolvePackedBShape, type MatmulShape } from '../../reference/matmul.ts';
import { packF16Rows, unpackF16Rows } from '../../reference/f16.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { matmul, MatmulKernel, type MatmulVariant } from './matmul.ts';

const LAYOUTS = [
  { name: 'A·B', transA: false, transB: false },
  { name: 'A·Bᵀ', transA: false, transB: true },
  { name: 'Aᵀ·B', transA: true, transB: false },
  { name: 'Aᵀ·Bᵀ', transA: true, transB: true },
];

/** A packed B for `shape`: every batch's matrix packed at its word offset, the words between them a loud value (1000). */
function packedB(shape: MatmulShape, seed: number): Uint32Array {
  const s = resolvePackedBShape(shape);
  const [rows, cols] = s.transB ? [s.N, s.K] : [s.K, s.N];
  const out = new Uint32Array(packedBExtent(shape)).fill(0x63d063d0); // f16 1000 in both halves
  for (let b = 0; b < (s.strideB === 0 ? 1 : s.batch); b++) packF16Rows(randomArray(rows * cols, seed + b), rows, cols, 0, out, s.offsetB + b * s.strideB);
  return out;
}

async function check(shape: MatmulShape, seed: number, variant?: MatmulVariant) {
  const rt = await gpuRuntime();
  const ext = matmulExtents(shape);
  const a = randomArray(ext.a, seed);
  const b = packedB(shape, seed + 1);
  const c0 = randomArray(ext.c, seed + 2);
  const got = await matmul(rt, a, b, shape, { c: c0, variant });
  const want = matmulF16BRef(a, b, c0.slice(), shape);
  expectClose(got, want, 1e-4, 1e-4, `C (${JSON.stringify(shape)}, ${variant ?? 'default'})`);
}

describe('matmul with f16 weights (B packed) vs its twin', () => {
  for (const layout of LAYOUTS) {
    const t = { transA: layout.transA, transB: layout.transB };
    it(`${layout.name}: odd K and N, N past the tile, every entry point`, async () => {
      for (const [M, N, K] of [
        [1, 1, 1],
        [17, 33, 65],
        [3, 130, 7],
        [68, 12, 21],
        [70, 67, 33],
      ]) {
        for (const variant of ['scalar', 'rows'] as MatmulVariant[]) await check({ M, N, K, ...t }, M * 7 + N * 3 + K, variant);
      }
      // vec4 reads of A need A's contiguous dimension a multiple of 4; B's may be anything.
      await check({ M: 20, N: 37, K: 44, ...t, ...(layout.transA && { M: 24 }) }, 5, 'vec4');
      await check({ M: 68, N: 65, K: 12, ...t }, 6, 'vec4');
    });
  }

  it('batches with word strides, a broadcast B, offsets, alpha and beta, column blocks', async () => {
    await check({ M: 9, N: 11, K: 13, batch: 3 }, 11);
    await check({ M: 9, N: 11, K: 13, batch: 3, transB: true }, 12, 'rows');
    await check({ M: 8, N: 12, K: 15, batch: 4, strideB: 0, transB: true }, 13);
    await check({ M: 5, N: 7, K: 3, batch: 2, offsetA: 3, offsetB: 5, strideB: 11, offsetC: 2, alpha: 0.5, beta: 1 }, 14);
    for (const variant of ['scalar', 'rows', 'vec4'] as MatmulVariant[]) {
      await check({ M: 8, N: 13, K: 16, offsetA: 4, lda: 20, offsetB: 3, offsetC: 5, ldc: 19, beta: 1 }, 15, variant);
      await check({ M: 8, N: 13, K: 16, offsetA: 4, lda: 20, offsetB: 3, offsetC: 5, ldc: 19, transB: true }, 16, variant);
    }
    // The last row of each sequence (generation's logits): a batch of 1-row products, B shared.
    await check({ M: 1, N: 9, K: 7, batch: 3, offsetA: 14, strideA: 21, strideB: 0, strideC: 9, transB: true }, 17);
  });

  it('picks entry points as the f32 matmul does, A alone deciding vec4', async () => {
    const rt = await gpuRuntime();
    const kinds = await Promise.all([
      MatmulKernel.create(rt, { M: 1, N: 1024, K: 63, transB: true }, { f16B: true }),
      MatmulKernel.create(rt, { M: 20, N: 37, K: 44, offsetB: 3 }, { f16B: true }),
      MatmulKernel.create(rt, { M: 20, N: 36, K: 45 }, { f16B: true }),
    ]);
    expect(kinds.map((k) => k.variant)).toEqual(['rows', 'vec4', 'scalar']);
    expect(kinds[1].bExtent).toBe(3 + 44 * 19);
    for (const k of kinds) k.dispose();
    await expect(matmul(rt, new Float32Array(4), new Uint32Array(1), { M: 2, N: 3, K: 2 })).rejects.toThrow(/B needs 4 packed words \(has 1\)/);
  });

  it('is the f32 product of the weights rounded to f16, within f16 rounding of the f32 product', async () => {
    const rt = await gpuRuntime();
    const shape = { M: 33, N: 45, K: 63, transB: true };
    const a = randomArray(33 * 63, 41);
    const bf = randomArray(45 * 63, 42);
    const b = packF16Rows(bf, 45, 63);
    const got = await matmul(rt, a, b, shape);
    expectClose(got, matmulRef(a, unpackF16Rows(b, 45, 63), new Float32Array(33 * 45), shape), 1e-4, 1e-4, 'f16 B');
    const exact = matmulRef(a, bf, new Float64Array(33 * 45), shape);
    const scale = exact.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    const worst = got.reduce((m, v, i) => Math.max(m, Math.abs(v - exact[i])), 0) / scale;
    console.log(`[matmul f16] max |f16-weight product − f32 product| / max |product| = ${worst.toExponential(2)} (33×45×63)`);
    expect(worst).toBeLessThan(2e-3);
  });
});
