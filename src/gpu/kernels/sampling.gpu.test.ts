import { describe, expect, it } from 'vitest';
import { sampleRef, type SampleOptions } from '../../reference/sampling.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { randomArray } from '../testing/compare.ts';
import { SamplingKernel, type SamplingShape } from './sampling.ts';
import { submit } from './common.ts';

async function sample(logits: Float32Array, shape: SamplingShape, o: SampleOptions, outLen = shape.N): Promise<Uint32Array> {
  const rt = await gpuRuntime();
  const k = await SamplingKernel.create(rt, shape, o);
  const bl = rt.storage('t.logits', logits);
  const bt = rt.storage('t.tokens', new Uint32Array(outLen).fill(0xdead));
  try {
    submit(rt, 'test', (pass) => {
      k.encode(pass, bl, bt, o.step);
    });
    return await rt.readU32(bt, outLen);
  } finally {
    rt.release(bl, bt);
    k.dispose();
  }
}

/** Same tokens as the twin, except where the draw sits within f32 rounding of a boundary. */
function expectSameTokens(got: Uint32Array, logits: Float32Array, N: number, V: number, o: SampleOptions) {
  const want = sampleRef(logits, N, V, o);
  let mismatches = 0;
  for (let r = 0; r < N; r++) {
    if (got[r] !== want.tokens[r]) {
      mismatches++;
      if (want.margin[r] > 1e-5) throw new Error(`row ${r}: GPU drew ${got[r]}, reference ${want.tokens[r]} (margin ${want.margin[r]})`);
    }
  }
  expect(mismatches).toBeLessThanOrEqual(Math.max(1, N / 100));
  return want;
}

describe('sampling kernel vs reference', () => {
  it('greedy is an exact argmax, ties to the lowest id; top-k = 1 is greedy', async () => {
    const N = 6,
      V = 3000;
    const logits = randomArray(N * V, 1);
    logits[0 * V + 2999] = 5; // max at the end
    logits[1 * V + 7] = 5;
    logits[1 * V + 2000] = 5; // tie
    logits[2 * V + 0] = 5;
    logits.fill(-1, 3 * V, 4 * V); // all equal: id 0
    const want = sampleRef(logits, N, V, { temperature: 0, seed: 0, step: 0 }).tokens;
    expect(Array.from(want.slice(0, 4))).toEqual([2999, 7, 0, 0]);
    expect(await sample(logits, { N, V }, { temperature: 0, seed: 0, step: 0 })).toEqual(want);
    expect(await sample(logits, { N, V }, { temperature: 0.8, topK: 1, seed: 5, step: 9 })).toEqual(want);
  });

  for (const o of [
    { temperature: 1, seed: 7, step: 0 },
    { temperature: 0.7, topK: 40, seed: 7, step: 1 },
    { temperature: 1.3, topP: 0.9, seed: 8, step: 2 },
    { temperature: 1, topK: 100, topP: 0.5, seed: 9, step: 3 },
    { temperature: 0.9, topK: 300, topP: 0.95, seed: 10, step: 4 },
  ] as SampleOptions[]) {
    it(`matches the twin token for token (${JSON.stringify(o)}), V = 8192`, async () => {
      const N = 12,
        V = 8192;
      const logits = randomArray(N * V, o.seed + o.step);
      for (let i = 0; i < logits.length; i++) logits[i] *= 6;
      expectSameTokens(await sample(logits, { N, V }, o), logits, N, V, o);
    });
  }

  it('top-p excludes the tail; strided rows and output', async () => {
    // p = (0.5, 0.3, 0.15, 0.05): top-p 0.7 keeps ids 0 and 1 only. Rows are the last of
    // 2 positions each, tokens written every 2nd element.
    const N = 512,
      V = 4;
    const logits = new Float32Array(N * 2 * V).fill(-50);
    for (let r = 0; r < N; r++) [0.5, 0.3, 0.15, 0.05].forEach((q, v) => (logits[(r * 2 + 1) * V + v] = Math.log(q)));
    const o = { temperature: 1, topP: 0.7, seed: 3, step: 4 };
    const got = await sample(logits, { N, V, rowStride: 2 * V, rowOffset: V, outOffset: 1, outStride: 2 }, o, 2 * N + 1);
    const drawn = got.filter((_, i) => i % 2 === 1);
    expect(got[0]).toBe(0xdead);
    expect(drawn.every((t) => t === 0 || t === 1)).toBe(true);
    const share0 = drawn.filter((t) => t === 0).length / N;
    expect(Math.abs(share0 - 0.5 / 0.8)).toBeLessThan(4 * Math.sqrt((0.625 * 0.375) / N));
  });

  it('draws follow the softmax (many rows, fixed seed), and the same seed gives the same tokens', async () => {
    const N = 1024,
      V = 5;
    const q = [0.05, 0.4, 0.1, 0.25, 0.2];
    const logits = new Float32Array(N * V);
    for (let r = 0; r < N; r++) q.forEach((x, v) => (logits[r * V + v] = Math.log(x) * 2)); // τ = 2 undoes the ×2
    const o = { temperature: 2, seed: 1234, step: 77 };
    const a = await sample(logits, { N, V }, o);
    const counts = new Array(V).fill(0);
    a.forEach((t) => counts[t]++);
    q.forEach((x, v) => expect(Math.abs(counts[v] / N - x)).toBeLessThan(4 * Math.sqrt((x * (1 - x)) / N)));
    expect(await sample(logits, { N, V }, o)).toEqual(a);
    expect(await sample(logits, { N, V }, { ...o, step: 78 })).not.toEqual(a);
    expectSameTokens(a, logits, N, V, o);
  });

  it('leaves no buffers behind', async () => {
    expect((await gpuRuntime()).stats().live).toBe(0);
  });
});
