import { describe, expect, it } from 'vitest';
import { weightSum, xentRef } from '../../reference/xent.ts';
import type { GpuRuntime } from '../runtime.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { withGridLimit } from '../testing/submit.ts';
import { submit } from './common.ts';
import { XentKernel } from './xent.ts';

function batch(N: number, V: number, seed: number, logitScale: number) {
  const logits = randomArray(N * V, seed).map((v) => v * logitScale);
  const u = randomArray(2 * N, seed + 1);
  const targets = new Uint32Array(N);
  const weights = new Float32Array(N);
  for (let r = 0; r < N; r++) {
    targets[r] = Math.floor(((u[r] + 1) / 2) * V) % V;
    // a mix of full, partial and zero weights (the loss-mask ratios), plus padding rows
    weights[r] = [1, 0.6, 0, 0.05, 0.4][r % 5];
    if (r % 7 === 6) targets[r] = V + 3;
  }
  return { logits, targets, weights };
}

async function check(rt: GpuRuntime, k: XentKernel, N: number, V: number, seed: number, opts: { logitScale?: number; zeroW?: boolean } = {}) {
  const { logits, targets, weights } = batch(N, V, seed, opts.logitScale ?? 3);
  if (opts.zeroW) weights.fill(0);
  const W = weightSum(targets, weights, V);
  k.setWeightSum(W);
  const L = rt.storage('t.logits', logits);
  const T = rt.storage('t.targets', targets);
  const Wb = rt.storage('t.weights', weights);
  const NLL = rt.storage('t.nll', N * 4);
  const OUT = rt.storage('t.out', 8);
  submit(rt, 'test', (pass) => k.encode(pass, L, T, Wb, NLL, OUT));
  const ref = xentRef(logits, targets, weights, N, V, W, k.shape.grad);
  const what = `${N}×${V}${k.shape.grad ? '' : ' (eval)'}`;
  expectClose(await rt.readF32(NLL), ref.nll, 2e-5, 2e-5, `nll ${what}`);
  const out = await rt.readF32(OUT);
  expectClose(out, [ref.loss, ref.weightedSum], 2e-5, 2e-5, `loss ${what}`);
  const after = await rt.readF32(L);
  if (k.shape.grad) expectClose(after, ref.dlogits!, 1e-6, 1e-4, `dlogits ${what}`);
  else expect(Array.from(after)).toEqual(Array.from(logits));
  rt.release(L, T, Wb, NLL, OUT);
  return { out, after };
}

describe('cross-entropy kernel vs reference', () => {
  it('one row, one class', async () => {
    const rt = await gpuRuntime();
    const k = await XentKernel.create(rt, { N: 1, V: 1 });
    const { out, after } = await check(rt, k, 1, 1, 1);
    expect(out[0]).toBe(0); // log-softmax of a single class is 0
    expect(after[0] === 0).toBe(true);
    k.dispose();
  });

  it('vocabularies of one and several segments, ragged rows and columns, weight-0 and padding rows, W = 0', async () => {
    const rt = await gpuRuntime();
    for (const [N, V] of [
      [5, 7],
      [70, 33],
      [3, 250],
      [6, 4], // vec4 rows: one quad
      [70, 256], // vec4 rows: the bench model's vocabulary
      [4, 1000], // two 512-column segments, the second ragged
    ]) {
      const k = await XentKernel.create(rt, { N, V });
      await check(rt, k, N, V, N + V);
      await check(rt, k, N, V, N + V + 1, { zeroW: true });
      k.dispose();
    }
    const scalar = await XentKernel.create(rt, { N: 70, V: 256, forceScalar: true });
    await check(rt, scalar, 70, 256, 3);
    scalar.dispose();
  });

  it('V = 8192 with large logits (online max keeps exp in range)', async () => {
    const rt = await gpuRuntime();
    const k = await XentKernel.create(rt, { N: 3, V: 8192 });
    await check(rt, k, 3, 8192, 5, { logitScale: 60 });
    k.dispose();
  });

  it('evaluation mode leaves the logits alone', async () => {
    const rt = await gpuRuntime();
    for (const V of [33, 256, 1000]) {
      const k = await XentKernel.create(rt, { N: 9, V, grad: false });
      await check(rt, k, 9, V, 6);
      k.dispose();
    }
  });

  it('spills large grids into y', async () => {
    const base = await gpuRuntime();
    const rt = withGridLimit(base, 4); // 5 workgroups for whole rows, 10 for 2 segments
    for (const V of [9, 12, 1000]) {
      const k = await XentKernel.create(rt, { N: 300, V });
      await check(base, k, 300, V, 8);
      k.dispose();
    }
  });

  it('is deterministic and leaves no buffers behind', async () => {
    const rt = await gpuRuntime();
    const before = rt.stats().live;
    const k = await XentKernel.create(rt, { N: 70, V: 700 });
    const a = await check(rt, k, 70, 700, 7);
    const b = await check(rt, k, 70, 700, 7);
    expect(Array.from(b.out)).toEqual(Array.from(a.out));
    expect(Array.from(b.after)).toEqual(Array.from(a.after));
    k.dispose();
    expect(rt.stats().live).toBe(before);
  });
});
