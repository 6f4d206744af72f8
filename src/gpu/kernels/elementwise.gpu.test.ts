import { describe, expect, it } from 'vitest';
import { addRef, biasAddRef, biasGradRef, geluBackwardRef, geluForwardRef } from '../../reference/elementwise.ts';
import { checkOp, withScope } from '../testing/checkOp.ts';
import { randomArray } from '../testing/compare.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { withGridLimit } from '../testing/submit.ts';
import { AddKernel, BiasActKernel, BiasGradKernel, GeluBackwardKernel } from './elementwise.ts';

// Awkward shapes: 1 element, C below/above the 64-thread column groups, rows spanning several
// 16-row blocks with a ragged last one, n not a multiple of 256.
// Shapes with n and C multiples of 4 take the vec4 kernels: one vec4, a partial workgroup, and
// more than one 1024-float workgroup.
const SHAPES: [number, number][] = [
  [1, 1],
  [7, 5],
  [3, 130],
  [70, 3],
  [1, 4],
  [5, 12],
  [33, 64],
  [3, 260], // vec4 column sums over two workgroups of 64 quads
];
const BIAS_OFFSET = 64; // biases and their gradients live inside flat parameter buffers

describe('elementwise kernels vs reference', () => {
  const name = ([rows, C]: [number, number]) => `${rows}×${C}`;

  it('add and in-place add', () =>
    checkOp(SHAPES, {
      name,
      inputs: ([rows, C]) => ({ a: randomArray(rows * C, rows * C), b: randomArray(rows * C, rows * C + 1) }),
      gpu: async (g, { a, b }) => {
        const n = a.length;
        const [k1, k2] = await Promise.all([g.kernel(AddKernel.create(g.rt, { n })), g.kernel(AddKernel.create(g.rt, { n, inPlace: true }))]);
        expect(k1.vec4).toBe(n % 4 === 0);
        const A = g.buffer('t.a', a);
        const B = g.buffer('t.b', b);
        const O = g.buffer('t.o', n * 4);
        g.submit((pass) => {
          k1.encode(pass, A, B, O);
          k2.encode(pass, A, B); // A = a + b
          k2.encode(pass, A, B); // A = a + 2b
        });
        return { 'a+b': await g.read(O, n), 'a+2b': await g.read(A, n) };
      },
      twin: ({ a, b }) => {
        const sum = addRef(a, b);
        return { 'a+b': sum, 'a+2b': addRef(sum, b) };
      },
      tol: { 'a+b': 'exact', 'a+2b': [1e-6, 1e-6] },
    }));

  it('bias add, and bias + GELU forward (keeps h for the backward)', () =>
    checkOp(SHAPES, {
      name,
      inputs: ([rows, C]) => ({ x: randomArray(rows * C, 3 * rows * C).map((v) => v * 4), weights: randomArray(BIAS_OFFSET + C + 5, 7) }),
      gpu: async (g, { x, weights }, [rows, C]) => {
        const n = rows * C;
        const add = await g.kernel(BiasActKernel.create(g.rt, { rows, C, biasOffset: BIAS_OFFSET, activation: 'none' }));
        const fused = await g.kernel(BiasActKernel.create(g.rt, { rows, C, biasOffset: BIAS_OFFSET, activation: 'gelu' }));
        const plain = await g.kernel(BiasActKernel.create(g.rt, { rows, C, biasOffset: null, activation: 'gelu' }));
        expect(fused.vec4).toBe(C % 4 === 0);
        const [X1, X2, X3] = [1, 2, 3].map((i) => g.buffer(`t.x${i}`, x));
        const W = g.buffer('t.w', weights);
        const O2 = g.buffer('t.o2', n * 4);
        const O3 = g.buffer('t.o3', n * 4);
        g.submit((pass) => {
          add.encode(pass, X1, W);
          fused.encode(pass, X2, W, O2);
          plain.encode(pass, X3, W, O3);
        });
        return {
          'x + b': await g.read(X1, n),
          'h (bias_gelu)': await g.read(X2, n),
          'gelu(x + b)': await g.read(O2, n),
          'h untouched without bias': await g.read(X3, n),
          'gelu(x)': await g.read(O3, n),
        };
      },
      twin: ({ x, weights }, [rows, C]) => {
        const h = biasAddRef(x, weights, rows, C, BIAS_OFFSET);
        return { 'x + b': h, 'h (bias_gelu)': h, 'gelu(x + b)': geluForwardRef(h), 'h untouched without bias': x, 'gelu(x)': geluForwardRef(x) };
      },
      tol: { 'x + b': [0, 0], 'h (bias_gelu)': [0, 0], 'gelu(x + b)': [1e-5, 1e-5], 'h untouched without bias': [0, 0], 'gelu(x)': [1e-5, 1e-5] },
    }));

  it('GELU backward, bias gradient (accumulate / overwrite) and the fused GELU + bias gradient', () =>
    checkOp(SHAPES, {
      name,
      inputs: ([rows, C]) => ({
        h: randomArray(rows * C, 11 * rows * C).map((v) => v * 5),
        dout: randomArray(rows * C, 13 * rows * C),
        grads0: randomArray(BIAS_OFFSET + C + 3, 17),
      }),
      gpu: async (g, { h, dout, grads0 }, [rows, C]) => {
        const n = rows * C;
        const gb = await g.kernel(GeluBackwardKernel.create(g.rt, { n }));
        const accum = await g.kernel(BiasGradKernel.create(g.rt, { rows, C, gradOffset: BIAS_OFFSET }));
        // the scalar stage 1, also where vec4 would apply
        const over = await g.kernel(BiasGradKernel.create(g.rt, { rows, C, gradOffset: BIAS_OFFSET, accumulate: false, forceScalar: true }));
        const fused = await g.kernel(BiasGradKernel.create(g.rt, { rows, C, gradOffset: BIAS_OFFSET, gelu: true }));
        const Hb = g.buffer('t.h', h);
        const G1 = g.buffer('t.g1', dout);
        const G2 = g.buffer('t.g2', dout);
        const [D1, D2, D3] = [1, 2, 3].map((i) => g.buffer(`t.d${i}`, grads0));
        g.submit((pass) => {
          over.encode(pass, G1, D2); // plain column sums of dout, before G1 is rewritten
          gb.encode(pass, G1, Hb);
          accum.encode(pass, G1, D1);
          fused.encode(pass, G2, D3, Hb);
        });
        return {
          dh: await g.read(G1, n),
          'dh fused': await g.read(G2, n),
          'dbias accumulated': await g.read(D1),
          'dbias fused': await g.read(D3),
          'dbias overwritten': await g.read(D2),
        };
      },
      twin: ({ h, dout, grads0 }, [rows, C]) => {
        const dh = geluBackwardRef(h, dout);
        const want1 = Float32Array.from(grads0);
        const want2 = Float32Array.from(grads0);
        const sdh = biasGradRef(dh, rows, C);
        const sdout = biasGradRef(dout, rows, C);
        for (let c = 0; c < C; c++) {
          want1[BIAS_OFFSET + c] += sdh[c];
          want2[BIAS_OFFSET + c] = sdout[c];
        }
        return { dh, 'dh fused': dh, 'dbias accumulated': want1, 'dbias fused': want1, 'dbias overwritten': want2 };
      },
      tol: { dh: [1e-6, 1e-5], 'dh fused': [1e-6, 1e-5], 'dbias accumulated': [1e-5, 1e-5], 'dbias fused': [1e-5, 1e-5], 'dbias overwritten': [1e-5, 1e-5] },
    }));

  it('refuses bindings too small for the shape', async () =>
    withScope(await gpuRuntime(), async (g) => {
      const k = await g.kernel(BiasGradKernel.create(g.rt, { rows: 4, C: 8, gradOffset: 64 }));
      const dout = g.buffer('t.dout', 32 * 4);
      const grads = g.buffer('t.grads', 70 * 4); // needs 64 + 8
      g.submit((pass) => {
        expect(() => k.encode(pass, dout, grads)).toThrow(/bias grad: grads holds 70 elements, needs 72/);
        expect(() => k.encode(pass, { buffer: dout, offset: 0, size: 64 }, grads)).toThrow(/dout holds 16 elements, needs 32/);
      });
    }));

  it('spills large grids into y', async () => {
    const small = withGridLimit(await gpuRuntime(), 5);
    await checkOp([6000 /* vec4: 6 workgroups */, 4101 /* scalar: 17 */], {
      inputs: (n) => ({ a: randomArray(n, 1), b: randomArray(n, 2) }),
      gpu: async (g, { a, b }, n) => {
        const k = await g.kernel(AddKernel.create(small, { n }));
        const O = g.buffer('t.o', n * 4);
        g.submit((pass) => k.encode(pass, g.buffer('t.a', a), g.buffer('t.b', b), O));
        return { 'a+b': await g.read(O) };
      },
      twin: ({ a, b }) => ({ 'a+b': addRef(a, b) }),
      tol: { 'a+b': 'exact' },
    });
  });

  it('is deterministic and leaves no buffers behind', async () => {
    // withScope fails the test if the runtime holds more buffers after it than before.
    await withScope(await gpuRuntime(), async (g) => {
      const rows = 70;
      const C = 130;
      const k = await g.kernel(BiasGradKernel.create(g.rt, { rows, C, gradOffset: 0, accumulate: false }));
      const G = g.buffer('t.g', randomArray(rows * C, 5));
      const D = g.buffer('t.d', C * 4);
      const results: Float32Array[] = [];
      for (let i = 0; i < 2; i++) {
        g.submit((pass) => k.encode(pass, G, D));
        results.push(await g.read(D));
      }
      expect(Array.from(results[1])).toEqual(Array.from(results[0]));
    });
  });
});
