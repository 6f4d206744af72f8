// checkOp and withScope: they free what a test makes, catch a leak, and compare every output by its own tolerance.
import { describe, expect, it } from 'vitest';
import { AddKernel } from '../kernels/elementwise.ts';
import { checkOp, expectOutput, type GpuScope, withScope } from './checkOp.ts';
import { randomArray } from './compare.ts';
import { gpuRuntime } from './runtime.ts';

const addOp = (perturb = 0) => ({
  inputs: (n: number) => ({ a: randomArray(n, n), b: randomArray(n, n + 1) }),
  gpu: async (g: GpuScope, { a, b }: { a: Float32Array; b: Float32Array }, n: number) => {
    const k = await g.kernel(AddKernel.create(g.rt, { n }));
    const out = g.buffer('t.out', n * 4);
    g.submit((pass) => k.encode(pass, g.buffer('t.a', a), g.buffer('t.b', b), out));
    return { sum: await g.read(out) };
  },
  twin: ({ a, b }: { a: Float32Array; b: Float32Array }) => ({ sum: a.map((x, i) => x + b[i] + perturb) }),
});

describe('checkOp', () => {
  it('passes a kernel that matches its twin, and frees its buffers and kernels', async () => {
    const rt = await gpuRuntime();
    const before = rt.stats().live;
    await checkOp([1, 7, 1024, 1029], { ...addOp(), tol: { sum: 'exact' } });
    expect(rt.stats().live).toBe(before);
  });

  it('fails where an output is off by more than its tolerance, naming it and the shape', async () => {
    await expect(checkOp([5], { ...addOp(1e-3), tol: { sum: [1e-4, 0] } })).rejects.toThrow(/sum 5\[0\]/);
    await checkOp([5], { ...addOp(1e-3), tol: { sum: [2e-3, 0] } });
    await expect(checkOp([5], { ...addOp(), tol: {} })).rejects.toThrow(/no tolerance for sum 5/);
    expect(() => expectOutput([0], [-0], 'exact', 'zero')).toThrow();
    expect(() => expectOutput([1, 2], [1], [1, 1], 'short')).toThrow(/length 2, expected 1/);
  });

  it('withScope frees everything when the body throws, and fails a body that leaks', async () => {
    const rt = await gpuRuntime();
    const before = rt.stats().live;
    let disposed = 0;
    await expect(
      withScope(rt, async (g) => {
        g.buffer('t.x', 64);
        g.own({ dispose: () => disposed++ });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(disposed).toBe(1);
    expect(rt.stats().live).toBe(before);
    let leaked: GPUBuffer | undefined;
    await expect(
      withScope(rt, async () => {
        leaked = rt.storage('t.leak', 64);
      }),
    ).rejects.toThrow(/buffers left behind/);
    rt.release(leaked);
    expect(rt.stats().live).toBe(before);
  });
});
