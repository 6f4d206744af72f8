import { describe, expect, it } from 'vitest';
import { matmulExtents, matmulRef, type MatmulShape } from '../../reference/matmul.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { matmul, MatmulKernel, type MatmulVariant } from './matmul.ts';

const LAYOUTS = [
  { name: 'A·B', transA: false, transB: false },
  { name: 'A·Bᵀ', transA: false, transB: true },
  { name: 'Aᵀ·B', transA: true, transB: false },
  { name: 'Aᵀ·Bᵀ', transA: true, transB: true },
];

const SHAPES: [number, number, number][] = [
  [1, 1, 1],
  [17, 33, 65],
  [64, 64, 64],
  [3, 130, 7],
  [68, 12, 20],
];

async function check(shape: MatmulShape, seed: number, forceScalar = false, variant?: MatmulVariant) {
  const rt = await gpuRuntime();
  const ext = matmulExtents(shape);
  const a = randomArray(ext.a, seed);
  const b = randomArray(ext.b, seed + 1);
  const c0 = randomArray(ext.c, seed + 2);
  const got = await matmul(rt, a, b, shape, { c: c0, forceScalar, variant });
  const want = matmulRef(a, b, c0.slice(), shape);
  expectClose(got, want, 1e-4, 1e-4, `C (${JSON.stringify(shape)})`);
}

describe('matmul kernel vs reference', () => {
  for (const layout of LAYOUTS) {
    for (const [M, N, K] of SHAPES) {
      it(`${layout.name} ${M}×${N}×${K}`, async () => {
        await check({ M, N, K, transA: layout.transA, transB: layout.transB }, M * 7 + N * 3 + K);
      });
    }
  }

  it('picks the vec4 path only when aligned, and both paths agree', async () => {
    const rt = await gpuRuntime();
    const aligned = await MatmulKernel.create(rt, { M: 20, N: 36, K: 44 });
    const odd = await MatmulKernel.create(rt, { M: 20, N: 36, K: 45 });
    expect(aligned.variant).toBe('vec4');
    expect(odd.variant).toBe('scalar');
    aligned.dispose();
    odd.dispose();
    await check({ M: 20, N: 36, K: 44 }, 5, true);
    await check({ M: 20, N: 36, K: 44, transA: true, transB: true }, 6);
  });

  it('takes the one-thread-per-output path for a few rows (a decode step), which matches the reference in every layout', async () => {
    const rt = await gpuRuntime();
    const decode = await MatmulKernel.create(rt, { M: 1, N: 1024, K: 64, transB: true });
    const four = await MatmulKernel.create(rt, { M: 4, N: 64, K: 64 });
    const five = await MatmulKernel.create(rt, { M: 5, N: 64, K: 64 });
    expect([decode.variant, four.variant, five.variant]).toEqual(['rows', 'rows', 'vec4']);
    for (const k of [decode, four, five]) k.dispose();
    for (const layout of LAYOUTS) {
      await check({ M: 1, N: 130, K: 67, transA: layout.transA, transB: layout.transB }, 21, false, 'rows');
      await check({ M: 7, N: 65, K: 5, transA: layout.transA, transB: layout.transB }, 22, false, 'rows');
    }
    await check({ M: 3, N: 70, K: 9, batch: 3, strideB: 0, offsetA: 3, offsetB: 1, offsetC: 2, alpha: 0.5, beta: 1 }, 23, false, 'rows');
  });

  it('batched, with a broadcast operand (stride 0), offsets and accumulation (beta = 1)', async () => {
    await check({ M: 9, N: 10, K: 11, batch: 3 }, 11);
    await check({ M: 8, N: 12, K: 16, batch: 4, strideB: 0, transB: true }, 12);
    await check({ M: 5, N: 7, K: 3, batch: 2, offsetA: 3, offsetB: 1, offsetC: 2, alpha: 0.5, beta: 1 }, 13);
    await check({ M: 16, N: 16, K: 16, batch: 2, offsetA: 4, offsetB: 8, offsetC: 4, beta: 1, transA: true }, 14);
  });

  it('reads and writes column blocks of wider matrices (lda, ldc), leaving the rest of C alone, in every variant and layout', async () => {
    // The LM head split by vocabulary rows: logits[:, lo:hi] of a [rows, V] buffer, and dlogits read back the same way.
    for (const layout of LAYOUTS) {
      const t = { transA: layout.transA, transB: layout.transB };
      for (const variant of ['scalar', 'rows', 'vec4'] as MatmulVariant[]) {
        if (variant !== 'vec4') await check({ M: 3, N: 7, K: 5, ...t, offsetA: 2, lda: 13, offsetC: 3, ldc: 11 }, 31, false, variant);
        await check({ M: 8, N: 12, K: 16, ...t, offsetA: 4, lda: 20, offsetC: 5, ldc: 19, beta: 1 }, 32, false, variant);
      }
      await check({ M: 67, N: 70, K: 33, ...t, offsetA: 1, lda: 71, offsetC: 9, ldc: 77 }, 33);
    }
    const rt = await gpuRuntime();
    const k = await MatmulKernel.create(rt, { M: 8, N: 8, K: 8, lda: 10 });
    expect(k.variant).toBe('scalar');
    k.dispose();
    await expect(MatmulKernel.create(rt, { M: 8, N: 8, K: 8, ldc: 7 })).rejects.toThrow(/ldc must be an integer ≥ 8/);
  });

  it('leaves no buffers behind', async () => {
    const rt = await gpuRuntime();
    const before = rt.stats().live;
    await check({ M: 33, N: 17, K: 9 }, 21);
    expect(rt.stats().live).toBe(before);
  });
});
