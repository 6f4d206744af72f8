import { describe, expect, it } from 'vitest';
import { logprobBackwardRef, logprobRef } from '../../reference/logprob.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { checkOp } from '../testing/checkOp.ts';
import { randomArray } from '../testing/compare.ts';
import { LogprobKernel } from './logprob.ts';

const CASES = [
  { N: 1, V: 1, temperature: 1 },
  { N: 3, V: 300, temperature: 1 },
  { N: 5, V: 8192, temperature: 0.7 },
  { N: 70, V: 257, temperature: 1.3 },
];

describe('logprob kernel vs reference', () => {
  for (const s of CASES) {
    it(`forward and backward ${JSON.stringify(s)}`, () =>
      checkOp([s], {
        inputs: (s) => ({
          logits: randomArray(s.N * s.V, s.N + s.V).map((v) => v * 8),
          targets: Uint32Array.from({ length: s.N }, (_, r) => (r * 7919 + 3) % s.V),
          dlogp: randomArray(s.N, 5),
        }),
        gpu: async (g, { logits, targets, dlogp }, s) => {
          const k = await g.kernel(LogprobKernel.create(g.rt, s));
          const bLogits = g.buffer('t.logits', logits);
          const bTargets = g.buffer('t.targets', targets);
          const bLogp = g.buffer('t.logp', s.N * 4);
          const bLse = g.buffer('t.lse', s.N * 4);
          const bD = g.buffer('t.d', randomArray(s.N * s.V, 9));
          g.submit((pass) => {
            k.encode(pass, bLogits, bTargets, bLogp, bLse);
            k.encodeBackward(pass, bLogits, bTargets, bLse, g.buffer('t.g', dlogp), bD);
          });
          return { logp: await g.read(bLogp), lse: await g.read(bLse), dlogits: await g.read(bD) };
        },
        twin: ({ logits, targets, dlogp }, s) => {
          const want = logprobRef(logits, targets, s.N, s.V, s.temperature);
          return { logp: want.logp, lse: want.lse, dlogits: logprobBackwardRef(logits, targets, dlogp, s.N, s.V, s.temperature) };
        },
        tol: { logp: [2e-5, 2e-5], lse: [2e-5, 2e-5], dlogits: [1e-6, 1e-4] },
      }));
  }

  it('leaves no buffers behind', async () => {
    expect((await gpuRuntime()).stats().live).toBe(0);
  });
});
