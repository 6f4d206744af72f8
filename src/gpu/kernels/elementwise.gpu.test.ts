import { describe, expect, it } from 'vitest';
import { addRef, biasAddRef, biasGradRef, geluBackwardRef, geluForwardRef } from '../../reference/elementwise.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { withGridLimit } from '../testing/submit.ts';
import { submit } from './common.ts';
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
  it('add and in-place add', async () => {
    const rt = await gpuRuntime();
    for (const [rows, C] of SHAPES) {
      const n = rows * C;
      const a = randomArray(n, n);
      const b = randomArray(n, n + 1);
      const [k1, k2] = await Promise.all([AddKernel.create(rt, { n }), AddKernel.create(rt, { n, inPlace: true })]);
      expect(k1.vec4).toBe(n % 4 === 0);
      const A = rt.storage('t.a', a);
      const B = rt.storage('t.b', b);
      const O = rt.storage('t.o', n * 4);
      submit(rt, 'test', (pass) => {
        k1.encode(pass, A, B, O);
        k2.encode(pass, A, B); // A = a + b
        k2.encode(pass, A, B); // A = a + 2b
      });
      const want = addRef(a, b);
      expect(Array.from(await rt.readF32(O, n))).toEqual(Array.from(want));
      expectClose(await rt.readF32(A, n), addRef(want, b), 1e-6, 1e-6, `a+2b ${rows}×${C}`);
      rt.release(A, B, O);
      k1.dispose();
      k2.dispose();
    }
  });

  it('bias add, and bias + GELU forward (keeps h for the backward)', async () => {
    const rt = await gpuRuntime();
    for (const [rows, C] of SHAPES) {
      const n = rows * C;
      const x = randomArray(n, 3 * n).map((v) => v * 4);
      const weights = randomArray(BIAS_OFFSET + C + 5, 7);
      const add = await BiasActKernel.create(rt, { rows, C, biasOffset: BIAS_OFFSET, activation: 'none' });
      const fused = await BiasActKernel.create(rt, { rows, C, biasOffset: BIAS_OFFSET, activation: 'gelu' });
      const plain = await BiasActKernel.create(rt, { rows, C, biasOffset: null, activation: 'gelu' });
      expect(fused.vec4).toBe(C % 4 === 0);
      const X1 = rt.storage('t.x1', x);
      const X2 = rt.storage('t.x2', x);
      const X3 = rt.storage('t.x3', x);
      const W = rt.storage('t.w', weights);
      const O2 = rt.storage('t.o2', n * 4);
      const O3 = rt.storage('t.o3', n * 4);
      submit(rt, 'test', (pass) => {
        add.encode(pass, X1, W);
        fused.encode(pass, X2, W, O2);
        plain.encode(pass, X3, W, O3);
      });
      const h = biasAddRef(x, weights, rows, C, BIAS_OFFSET);
      expectClose(await rt.readF32(X1, n), h, 0, 0, 'x + b');
      expectClose(await rt.readF32(X2, n), h, 0, 0, 'h (bias_gelu)');
      expectClose(await rt.readF32(O2, n), geluForwardRef(h), 1e-5, 1e-5, `gelu(x + b) ${rows}×${C}`);
      expectClose(await rt.readF32(X3, n), x, 0, 0, 'h untouched without bias');
      expectClose(await rt.readF32(O3, n), geluForwardRef(x), 1e-5, 1e-5, `gelu(x) ${rows}×${C}`);
      rt.release(X1, X2, X3, W, O2, O3);
      add.dispose();
      fused.dispose();
      plain.dispose();
    }
  });

  it('GELU backward, bias gradient (accumulate / overwrite) and the fused GELU + bias gradient', async () => {
    const rt = await gpuRuntime();
    for (const [rows, C] of SHAPES) {
      const n = rows * C;
      const h = randomArray(n, 11 * n).map((v) => v * 5);
      const dout = randomArray(n, 13 * n);
      const grads0 = randomArray(BIAS_OFFSET + C + 3, 17);
      const gb = await GeluBackwardKernel.create(rt, { n });
      const accum = await BiasGradKernel.create(rt, { rows, C, gradOffset: BIAS_OFFSET });
      // the scalar stage 1, also where vec4 would apply
      const over = await BiasGradKernel.create(rt, { rows, C, gradOffset: BIAS_OFFSET, accumulate: false, forceScalar: true });
      const fused = await BiasGradKernel.create(rt, { rows, C, gradOffset: BIAS_OFFSET, gelu: true });
      const Hb = rt.storage('t.h', h);
      const G1 = rt.storage('t.g1', dout);
      const G2 = rt.storage('t.g2', dout);
      const D1 = rt.storage('t.d1', grads0);
      const D2 = rt.storage('t.d2', grads0);
      const D3 = rt.storage('t.d3', grads0);
      submit(rt, 'test', (pass) => {
        over.encode(pass, G1, D2); // plain column sums of dout, before G1 is rewritten
        gb.encode(pass, G1, Hb);
        accum.encode(pass, G1, D1);
        fused.encode(pass, G2, D3, Hb);
      });
      const dh = geluBackwardRef(h, dout);
      expectClose(await rt.readF32(G1, n), dh, 1e-6, 1e-5, `dh ${rows}×${C}`);
      expectClose(await rt.readF32(G2, n), dh, 1e-6, 1e-5, `dh fused ${rows}×${C}`);
      const want1 = Float32Array.from(grads0);
      const want2 = Float32Array.from(grads0);
      const sdh = biasGradRef(dh, rows, C);
      const sdout = biasGradRef(dout, rows, C);
      for (let c = 0; c < C; c++) {
        want1[BIAS_OFFSET + c] += sdh[c];
        want2[BIAS_OFFSET + c] = sdout[c];
      }
      expectClose(await rt.readF32(D1), want1, 1e-5, 1e-5, `dbias accumulated ${rows}×${C}`);
      expectClose(await rt.readF32(D3), want1, 1e-5, 1e-5, `dbias fused ${rows}×${C}`);
      expectClose(await rt.readF32(D2), want2, 1e-5, 1e-5, `dbias overwritten ${rows}×${C}`);
      rt.release(Hb, G1, G2, D1, D2, D3);
      for (const k of [gb, accum, over, fused]) k.dispose();
    }
  });

  it('refuses bindings too small for the shape', async () => {
    const rt = await gpuRuntime();
    const k = await BiasGradKernel.create(rt, { rows: 4, C: 8, gradOffset: 64 });
    const dout = rt.storage('t.dout', 32 * 4);
    const grads = rt.storage('t.grads', 70 * 4); // needs 64 + 8
    submit(rt, 'test', (pass) => {
      expect(() => k.encode(pass, dout, grads)).toThrow(/bias grad: grads holds 70 elements, needs 72/);
      expect(() => k.encode(pass, { buffer: dout, offset: 0, size: 64 }, grads)).toThrow(/dout holds 16 elements, needs 32/);
    });
    rt.release(dout, grads);
    k.dispose();
  });

  it('spills large grids into y', async () => {
    const base = await gpuRuntime();
    const rt = withGridLimit(base, 5);
    for (const n of [6000 /* vec4: 6 workgroups */, 4101 /* scalar: 17 */]) {
      const a = randomArray(n, 1);
      const b = randomArray(n, 2);
      const k = await AddKernel.create(rt, { n });
      const A = base.storage('t.a', a);
      const B = base.storage('t.b', b);
      const O = base.storage('t.o', n * 4);
      submit(base, 'test', (pass) => k.encode(pass, A, B, O));
      expect(Array.from(await base.readF32(O))).toEqual(Array.from(addRef(a, b)));
      base.release(A, B, O);
      k.dispose();
    }
  });

  it('is deterministic and leaves no buffers behind', async () => {
    const rt = await gpuRuntime();
    const before = rt.stats().live;
    const rows = 70;
    const C = 130;
    const dout = randomArray(rows * C, 5);
    const k = await BiasGradKernel.create(rt, { rows, C, gradOffset: 0, accumulate: false });
    const G = rt.storage('t.g', dout);
    const D = rt.storage('t.d', C * 4);
    const results: Float32Array[] = [];
    for (let i = 0; i < 2; i++) {
      submit(rt, 'test', (pass) => k.encode(pass, G, D));
      results.push(await rt.readF32(D));
    }
    expect(Array.from(results[1])).toEqual(Array.from(results[0]));
    rt.release(G, D);
    k.dispose();
    expect(rt.stats().live).toBe(before);
  });
});
