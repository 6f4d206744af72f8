import { describe, expect, it } from 'vitest';
import { logprobBackwardRef, logprobRef } from '../../reference/logprob.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { LogprobKernel } from './logprob.ts';
import { submit } from './common.ts';

const CASES = [
  { N: 1, V: 1, temperature: 1 },
  { N: 3, V: 300, temperature: 1 },
  { N: 5, V: 8192, temperature: 0.7 },
  { N: 70, V: 257, temperature: 1.3 },
];

describe('logprob kernel vs reference', () => {
  for (const s of CASES) {
    it(`forward and backward ${JSON.stringify(s)}`, async () => {
      const rt = await gpuRuntime();
      const logits = randomArray(s.N * s.V, s.N + s.V);
      for (let i = 0; i < logits.length; i++) logits[i] *= 8;
      const targets = Uint32Array.from({ length: s.N }, (_, r) => (r * 7919 + 3) % s.V);
      const g = randomArray(s.N, 5);
      const k = await LogprobKernel.create(rt, s);
      const bufs = {
        logits: rt.storage('t.logits', logits),
        targets: rt.storage('t.targets', targets),
        logp: rt.storage('t.logp', s.N * 4),
        lse: rt.storage('t.lse', s.N * 4),
        g: rt.storage('t.g', g),
        d: rt.storage('t.d', randomArray(s.N * s.V, 9)),
      };
      try {
        submit(rt, 'test', (pass) => {
          k.encode(pass, bufs.logits, bufs.targets, bufs.logp, bufs.lse);
          k.encodeBackward(pass, bufs.logits, bufs.targets, bufs.lse, bufs.g, bufs.d);
        });
        const want = logprobRef(logits, targets, s.N, s.V, s.temperature);
        expectClose(await rt.readF32(bufs.logp), want.logp, 2e-5, 2e-5, 'logp');
        expectClose(await rt.readF32(bufs.lse), want.lse, 2e-5, 2e-5, 'lse');
        expectClose(await rt.readF32(bufs.d), logprobBackwardRef(logits, targets, g, s.N, s.V, s.temperature), 1e-6, 1e-4, 'dlogits');
      } finally {
        rt.release(...Object.values(bufs));
        k.dispose();
      }
    });
  }

  it('leaves no buffers behind', async () => {
    expect((await gpuRuntime()).stats().live).toBe(0);
  });
});
