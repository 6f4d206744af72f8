// The ONNX decoder's KV-cache bookkeeping: which outputs become the next cache, where they arrived,
// and that every cache tensor is freed exactly once (after each step, when generation ends, stops
// or is aborted, on dispose). On WebGPU the cache tensors are GPU buffers that leak unless freed;
// the same bookkeeping runs here over onnxruntime-web's WASM (CPU) tensors and counted doubles.
import { describe, expect, it } from 'vitest';
import { presetConfig, type ModelConfig } from '../../core/model/config.ts';
import { initParams } from '../init.ts';
import { decoderModel } from './decoder.ts';
import { CacheTracker, OnnxDecoder, splitOutputs, type CacheTensor } from './session.ts';

class Counted implements CacheTensor {
  disposed = 0;
  constructor(readonly location: string) {}
  dispose(): void {
    this.disposed++;
  }
}

describe('splitOutputs', () => {
  it('renames present.N.* to past_key_values.N.*, keeps the logits and hands back anything else', () => {
    const logits = new Counted('cpu');
    const extra = new Counted('gpu-buffer');
    const kv = Array.from({ length: 4 }, () => new Counted('gpu-buffer'));
    const out = { logits, 'present.0.key': kv[0], 'present.0.value': kv[1], 'present.1.key': kv[2], 'present.1.value': kv[3], attentions: extra };
    const r = splitOutputs(out, 2);
    expect(r.logits).toBe(logits);
    expect([...r.cache.keys()]).toEqual(['past_key_values.0.key', 'past_key_values.0.value', 'past_key_values.1.key', 'past_key_values.1.value']);
    expect([...r.cache.values()]).toEqual(kv);
    expect(r.other).toEqual([extra]);
  });

  it('names a missing output', () => {
    expect(() => splitOutputs({ logits: 1, 'present.0.key': 2 }, 1)).toThrow(/no present\.0\.value/);
    expect(() => splitOutputs({ 'present.0.key': 2, 'present.0.value': 3 }, 1)).toThrow(/no logits/);
  });
});

describe('CacheTracker', () => {
  it('counts where tensors arrived and frees each tracked one once', () => {
    const tr = new CacheTracker<Counted>();
    const gpu = [new Counted('gpu-buffer'), new Counted('gpu-buffer')];
    const cpu = [new Counted('cpu')];
    tr.add(gpu);
    tr.add(cpu);
    expect([tr.kvOnGpu, tr.kvOnCpu, tr.size]).toEqual([2, 1, 3]);
    tr.release(gpu);
    tr.release(gpu);
    expect(gpu.map((t) => t.disposed)).toEqual([1, 1]);
    const untracked = new Counted('cpu');
    tr.release([untracked]);
    expect(untracked.disposed).toBe(0);
    tr.releaseAll();
    expect(cpu[0].disposed).toBe(1);
    expect(tr.size).toBe(0);
  });
});

describe('OnnxDecoder on WASM: cache bookkeeping', () => {
  const config: ModelConfig = presetConfig('micro', { positions: 'rope', vocabSize: 40, dModel: 16, heads: 2 });
  const params = initParams(config, 5);
  const model = decoderModel(config, params).model;
  const perPass = 2 * config.layers;
  const prompt = [1, 7, 39, 0, 22];

  async function take(gen: AsyncGenerator<number>, n: number): Promise<number[]> {
    const ids: number[] = [];
    for await (const id of gen) {
      ids.push(id);
      if (ids.length === n) break;
    }
    return ids;
  }

  it('frees every cache by the end of generation, a consumer that stops early, and an abort', async () => {
    const dec = await OnnxDecoder.create(model, { executionProvider: 'wasm' });
    const all = await take(dec.generate(prompt, { maxNewTokens: 6, sampling: { temperature: 0 } }), 99);
    expect(all).toHaveLength(6);
    // A prefill and 5 one-token passes, each cache output on the CPU (WASM), none alive after.
    expect(dec.stats).toEqual({ runs: 6, kvOnCpu: 6 * perPass, kvOnGpu: 0, liveKv: 0 });
    expect(await take(dec.generate(prompt, { maxNewTokens: 6, sampling: { temperature: 0 } }), 3)).toEqual(all.slice(0, 3));
    expect(dec.stats.liveKv).toBe(0);
    const abort = new AbortController();
    const got: number[] = [];
    for await (const id of dec.generate(prompt, { maxNewTokens: 6, sampling: { temperature: 0 }, signal: abort.signal })) {
      got.push(id);
      if (got.length === 2) abort.abort();
    }
    expect(got).toEqual(all.slice(0, 2));
    expect(dec.stats.liveKv).toBe(0);
    dec.dispose();
  });

  it('forward() leaves the cache it was given usable until released; dispose() frees what is still alive', async () => {
    const dec = await OnnxDecoder.create(model, { executionProvider: 'wasm' });
    const first = await dec.forward(prompt);
    expect(first.cache.length).toBe(prompt.length);
    expect(dec.stats.liveKv).toBe(perPass);
    // Two continuations from the same cache give the same logits.
    const a = await dec.forward([3], first.cache);
    const b = await dec.forward([3], first.cache);
    expect(b.logits).toEqual(a.logits);
    expect(dec.stats.liveKv).toBe(3 * perPass);
    dec.releaseCache(first.cache);
    dec.releaseCache(first.cache);
    dec.releaseCache(dec.emptyCache());
    expect(dec.stats.liveKv).toBe(2 * perPass);
    const held = [...a.cache.tensors.values(), ...b.cache.tensors.values()];
    dec.dispose();
    expect(dec.stats.liveKv).toBe(0);
    // A disposed CPU tensor has let go of its data.
    expect(() => held[0].data).toThrow();
  });
});
