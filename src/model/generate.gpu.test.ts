// KV-cache generation follows full recomputation (the reference GPT) token for token, and a
// group rollout over a shared prefix gives the same continuations as separate prefills.
import { describe, expect, it } from 'vitest';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { generateRef } from '../reference/gpt.ts';
import { presetConfig } from '../core/model/config.ts';
import { GpuGenerator, sharedPrefixLength } from './generate.ts';
import { initParams } from './init.ts';

async function collect(it: AsyncIterable<number>): Promise<number[]> {
  const out: number[] = [];
  for await (const t of it) out.push(t);
  return out;
}

describe('GPU generation', () => {
  for (const positions of ['learned', 'rope'] as const) {
    it(`greedy decoding with the KV cache equals the reference and the no-cache path (${positions} positions)`, async () => {
      const rt = await gpuRuntime();
      const config = presetConfig('micro', { positions });
      const params = initParams(config, 11);
      const buf = rt.storage('test.params', params);
      const gen = new GpuGenerator(rt, config, buf, { maxSequences: 4, maxLength: 40 });
      try {
        const prompt = [5, 9, 200, 13, 13, 77, 1];
        const want = generateRef(params, config, prompt, { maxNewTokens: 12, temperature: 0 });
        const cached = await collect(gen.generate(prompt, { maxNewTokens: 12, sampling: { temperature: 0 } }));
        const uncached = await collect(gen.generate(prompt, { maxNewTokens: 12, sampling: { temperature: 0 }, useCache: false }));
        expect(cached).toEqual(want);
        expect(uncached).toEqual(want);
      } finally {
        gen.dispose();
        rt.release(buf);
      }
    });
  }

  it('sampling is seeded and follows the reference sampler', async () => {
    const rt = await gpuRuntime();
    const config = presetConfig('micro');
    const params = initParams(config, 4);
    const buf = rt.storage('test.params', params);
    const gen = new GpuGenerator(rt, config, buf, { maxSequences: 2, maxLength: 32 });
    try {
      const prompt = [1, 2, 3];
      const sampling = { temperature: 1.3, topK: 50, topP: 0.9, seed: 42 };
      const a = await collect(gen.generate(prompt, { maxNewTokens: 10, sampling }));
      const b = await collect(gen.generate(prompt, { maxNewTokens: 10, sampling }));
      const ref = generateRef(params, config, prompt, { maxNewTokens: 10, ...sampling });
      expect(a).toEqual(b);
      expect(a).toEqual(ref);
    } finally {
      gen.dispose();
      rt.release(buf);
    }
  });

  it('a group over a shared prefix equals separate prefills, and stops at a stop token', async () => {
    const rt = await gpuRuntime();
    const config = presetConfig('micro', { positions: 'rope' });
    const params = initParams(config, 8);
    const buf = rt.storage('test.params', params);
    const gen = new GpuGenerator(rt, config, buf, { maxSequences: 4, maxLength: 48 });
    try {
      const prompt = Array.from({ length: 20 }, (_, i) => (i * 37) % 256);
      const sampling = { temperature: 1, seed: 3 };
      const shared = await gen.generateGroup(prompt, 4, { maxNewTokens: 8, sampling, shared: true });
      const separate = await gen.generateGroup(prompt, 4, { maxNewTokens: 8, sampling, shared: false });
      expect(shared).toEqual(separate);
      expect(shared.every((s) => s.length === 8)).toBe(true);
      expect(new Set(shared.map((s) => s.join(','))).size).toBeGreaterThan(1); // different rows draw differently
      // Each continuation equals the reference's with its row index.
      for (let g = 0; g < 4; g++) expect(shared[g]).toEqual(generateRef(params, config, prompt, { maxNewTokens: 8, ...sampling, row: g }));
      const stopAt = shared[0][2];
      const stopped = await gen.generateGroup(prompt, 4, { maxNewTokens: 8, sampling, stop: [stopAt] });
      expect(stopped[0]).toEqual(shared[0].slice(0, 3));
    } finally {
      gen.dispose();
      rt.release(buf);
    }
  });

  it('a batch of different prompts of one length: each row follows the reference with its row index, greedy or sampled', async () => {
    const rt = await gpuRuntime();
    const config = presetConfig('micro', { positions: 'learned' });
    const params = initParams(config, 9).map((x) => 4 * x);
    const buf = rt.storage('test.params', params);
    const gen = new GpuGenerator(rt, config, buf, { maxSequences: 3, maxLength: 32 });
    try {
      const prompts = [0, 1, 2].map((r) => Array.from({ length: 9 }, (_, i) => (i * 31 + r * 101 + 5) % 256));
      prompts[2] = [...prompts[0]]; // two equal prompts: sampled on their own rows
      const greedy = await gen.generateBatch(prompts, { maxNewTokens: 7, sampling: { temperature: 0 } });
      for (let r = 0; r < 3; r++) expect(greedy[r]).toEqual(generateRef(params, config, prompts[r], { maxNewTokens: 7, temperature: 0 }));
      const sampling = { temperature: 1.5, seed: 12 };
      const sampled = await gen.generateBatch(prompts, { maxNewTokens: 7, sampling });
      for (let r = 0; r < 3; r++) expect(sampled[r]).toEqual(generateRef(params, config, prompts[r], { maxNewTokens: 7, ...sampling, row: r }));
      expect(sampled[2]).not.toEqual(sampled[0]);
      // A stop token ends its row only.
      const stopAt = greedy[1][1];
      const stopped = await gen.generateBatch(prompts, { maxNewTokens: 7, sampling: { temperature: 0 }, stop: [stopAt] });
      expect(stopped[1]).toEqual(greedy[1].slice(0, 2));
      expect(await gen.generateBatch([], { maxNewTokens: 3, sampling: { temperature: 0 } })).toEqual([]);
      await expect(gen.generateBatch([prompts[0], prompts[1].slice(1)], { maxNewTokens: 3, sampling: { temperature: 0 } })).rejects.toThrow(
        /prompt 1 has 8 tokens, prompt 0 has 9/,
      );
      await expect(gen.generateBatch([...prompts, prompts[0]], { maxNewTokens: 3, sampling: { temperature: 0 } })).rejects.toThrow(/4 sequences exceed/);
    } finally {
      gen.dispose();
      rt.release(buf);
    }
  });

  it('reuses the KV rows of kept prompts and generates exactly the tokens of a full prefill', async () => {
    const rt = await gpuRuntime();
    const config = presetConfig('micro', { positions: 'rope' });
    // Weights 10× the initial scale: a sharp model, whose tokens turn on any wrong row of the cache.
    const params = initParams(config, 21).map((x) => 10 * x);
    const buf = rt.storage('test.params', params);
    const plain = new GpuGenerator(rt, config, buf, { maxSequences: 1, maxLength: 64 });
    const one = new GpuGenerator(rt, config, buf, { maxSequences: 1, maxLength: 64, prefixSlots: 1 });
    const two = new GpuGenerator(rt, config, buf, { maxSequences: 1, maxLength: 64, prefixSlots: 2 });
    try {
      const A = Array.from({ length: 30 }, (_, i) => (i * 53 + 7) % 256);
      const B = [A[0] + 1, ...A.slice(1, 20)]; // shares nothing (differs at the first token)
      const C = [...A, 9, 8, 7, 6, 5]; // a strict extension of A
      const D = [...A.slice(0, 12), 100, 101, 102, 103]; // leaves A mid-way
      const E = A.slice(0, 9); // shorter than the kept prompt it starts like
      const F = [...C, 1, 2]; // extends C again
      // Requests, and the least each two-slot generator must reuse: C survives D and E there (the
      // rows they share are copied into the other slot), so F extends it again.
      const plan: [number[], number][] = [
        [A, 0],
        [B, 0],
        [C, A.length],
        [D, 12],
        [E, E.length - 1],
        [A, A.length - 1],
        [F, C.length],
        [F, F.length - 1],
      ];
      for (const sampling of [{ temperature: 0 }, { temperature: 1.1, topK: 40, topP: 0.95, seed: 5 }]) {
        let kept: number[] = []; // what a one-slot generator holds: the last prompt and the tokens fed back
        for (const [k, [prompt, leastTwo]] of plan.entries()) {
          const o = { maxNewTokens: 6, sampling };
          const want = await collect(plain.generate(prompt, o));
          const before = [one.stats.reusedTokens, two.stats.reusedTokens];
          expect(await collect(one.generate(prompt, o)), `one slot, request ${k}`).toEqual(want);
          expect(await collect(two.generate(prompt, o)), `two slots, request ${k}`).toEqual(want);
          if (sampling.temperature === 0) expect(want).toEqual(generateRef(params, config, prompt, { maxNewTokens: 6, temperature: 0 }));
          expect(one.stats.reusedTokens - before[0], `one slot reuses, request ${k}`).toBe(Math.min(sharedPrefixLength(kept, prompt), prompt.length - 1));
          const two_ = two.stats.reusedTokens - before[1];
          expect(two_, `two slots reuse, request ${k}`).toBeGreaterThanOrEqual(leastTwo);
          expect(two_).toBeLessThan(prompt.length);
          kept = [...prompt, ...want.slice(0, -1)];
        }
        one.forgetPrefixes();
        two.forgetPrefixes();
      }
      expect(plain.stats.reusedTokens).toBe(0);
      expect(two.stats).toMatchObject({ prompts: 2 * plan.length, decodeTokens: 2 * plan.length * 5 });
      // reusePrefix: false prefills everything, and leaves the kept prompts alone.
      const r = two.stats.reusedTokens;
      await collect(two.generate(A, { maxNewTokens: 2, sampling: { temperature: 0 }, reusePrefix: false }));
      expect(two.stats.reusedTokens).toBe(r);
    } finally {
      for (const g of [plain, one, two]) g.dispose();
      rt.release(buf);
    }
  });

  it('rejects prompts it cannot hold', async () => {
    const rt = await gpuRuntime();
    const config = presetConfig('micro');
    const buf = rt.storage('test.params', initParams(config, 1));
    const gen = new GpuGenerator(rt, config, buf, { maxSequences: 1, maxLength: 16 });
    try {
      await expect(collect(gen.generate(Array(10).fill(1), { maxNewTokens: 10, sampling: { temperature: 0 } }))).rejects.toThrow(/exceed/);
      await expect(collect(gen.generate([999], { maxNewTokens: 1, sampling: { temperature: 0 } }))).rejects.toThrow(/vocabulary/);
      expect(() => new GpuGenerator(rt, config, buf, { maxSequences: 1, maxLength: 65 })).toThrow(/learned positions/);
    } finally {
      gen.dispose();
      rt.release(buf);
    }
  });
});
