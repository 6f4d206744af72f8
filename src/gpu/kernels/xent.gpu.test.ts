import { describe, expect, it } from 'vitest';
import { weightSum, xentRef } from '../../reference/xent.ts';
import { type GpuScope, withScope } from '../testing/checkOp.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { withGridLimit } from '../testing/submit.ts';
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

async function check(g: GpuScope, k: XentKernel, N: number, V: number, seed: number, opts: { logitScale?: number; zeroW?: boolean } = {}) {
  const { logits, targets, weights } = batch(N, V, seed, opts.logitScale ?? 3);
  if (opts.zeroW) weights.fill(0);
  const W = weightSum(targets, weights, V);
  k.setWeightSum(W);
  const L = g.buffer('t.logits', logits);
  const T = g.buffer('t.targets', targets);
  const Wb = g.buffer('t.weights', weights);
  const NLL = g.buffer('t.nll', N * 4);
  const OUT = g.buffer('t.out', 8);
  g.submit((pass) => k.encode(pass, L, T, Wb, NLL, OUT));
  const ref = xentRef(logits, targets, weights, N, V, W, k.shape.grad);
  const what = `${N}×${V}${k.shape.grad ? '' : ' (eval)'}`;
  expectClose(await g.read(NLL), ref.nll, 2e-5, 2e-5, `nll ${what}`);
  const out = await g.read(OUT);
  expectClose(out, [ref.loss, ref.weightedSum], 2e-5, 2e-5, `loss ${what}`);
  const after = await g.read(L);
  if (k.shape.grad) expectClose(after, ref.dlogits!, 1e-6, 1e-4, `dlogits ${what}`);
  else expect(Array.from(after)).toEqual(Array.from(logits));
  return { out, after };
}

describe('cross-entropy kernel vs reference', () => {
  it('one row, one class', async () =>
    withScope(await gpuRuntime(), async (g) => {
      const k = await g.kernel(XentKernel.create(g.rt, { N: 1, V: 1 }));
      const { out, after } = await check(g, k, 1, 1, 1);
      expect(out[0]).toBe(0); // log-softmax of a single class is 0
      expect(after[0] === 0).toBe(true);
    }));

  it('vocabularies of one and several segments, ragged rows and columns, weight-0 and padding rows, W = 0', async () => {
    const rt = await gpuRuntime();
    await withScope(rt, async (g) => {
      for (const [N, V] of [
        [5, 7],
        [70, 33],
        [3, 250],
        [6, 4], // vec4 rows: one quad
        [70, 256], // vec4 rows: the bench model's vocabulary
        [4, 1000], // two 512-column segments, the second ragged
      ]) {
        const k = await g.kernel(XentKernel.create(rt, { N, V }));
        await check(g, k, N, V, N + V);
        await check(g, k, N, V, N + V + 1, { zeroW: true });
      }
      const scalar = await g.kernel(XentKernel.create(rt, { N: 70, V: 256, forceScalar: true }));
      await check(g, scalar, 70, 256, 3);
    });
  });

  it('V = 8192 with large logits (online max keeps exp in range)', async () =>
    withScope(await gpuRuntime(), async (g) => {
      const k = await g.kernel(XentKernel.create(g.rt, { N: 3, V: 8192 }));
      await check(g, k, 3, 8192, 5, { logitScale: 60 });
    }));

  it('evaluation mode leaves the logits alone', async () => {
    await withScope(await gpuRuntime(), async (g) => {
      for (const V of [33, 256, 1000]) {
        const k = await g.kernel(XentKernel.create(g.rt, { N: 9, V, grad: false }));
        await check(g, k, 9, V, 6);
      }
    });
  });

  it('spills large grids into y', async () => {
    const base = await gpuRuntime();
    const rt = withGridLimit(base, 4); // 5 workgroups for whole rows, 10 for 2 segments
    await withScope(base, async (g) => {
      for (const V of [9, 12, 1000]) {
        const k = await g.kernel(XentKernel.create(rt, { N: 300, V }));
        await check(g, k, 300, V, 8);
      }
    });
  });

  it('is deterministic and leaves no buffers behind', async () => {
    // withScope fails the test if the runtime holds more buffers after it than before.
    await withScope(await gpuRuntime(), async (g) => {
      const k = await g.kernel(XentKernel.create(g.rt, { N: 70, V: 700 }));
      const a = await check(g, k, 70, 700, 7);
      const b = await check(g, k, 70, 700, 7);
      expect(Array.from(b.out)).toEqual(Array.from(a.out));
      expect(Array.from(b.after)).toEqual(Array.from(a.after));
    });
  });
});
