// `generate` and `rollout` suites: inference with our GPU generator on the bench model widened
// to a 256-token context (learned positions, like the training benchmark's model), from
// initParams weights (speed does not depend on what the weights say).
//
// generate: one greedy continuation of a 128-token prompt by 64 tokens, with the KV cache
//   (prefill once, then one single-row forward per token) against recomputing the whole
//   sequence for every token (useCache: false). Timed from the call to the last token.
// rollout: a GSPO group of G = 8 samples of 32 tokens at temperature 1 for one 200-token
//   prompt, the prompt prefilled once into a shared prefix cache against 8 separate prefills.
//
// Both engines of a suite run on the same generator and the same prompt, with the same sync:
// every submission ends in the read-back of the sampled token ids. Repetitions alternate
// between the engines so that a burst of load on the machine hits both alike.
import { presetConfig } from '../src/core/model/config.ts';
import { GpuGenerator } from '../src/model/generate.ts';
import { initParams } from '../src/model/init.ts';
import { toyCorpus } from '../src/reference/tinyData.ts';
import { median, spread, type BenchRecord, type Suite } from './common.ts';

const CONTEXT = 256;

function promptOf(length: number): number[] {
  // Byte-level toy text (vocab 256), repeated as needed.
  return Array.from(toyCorpus(Math.ceil(length / 60) + 1).subarray(0, length));
}

/** Runs `fns` round-robin, `warmup` untimed rounds then `reps` timed ones; results per fn. */
async function interleaved<R>(fns: (() => Promise<R>)[], warmup: number, reps: number): Promise<R[][]> {
  const out: R[][] = fns.map(() => []);
  for (let r = 0; r < warmup + reps; r++) {
    for (let i = 0; i < fns.length; i++) {
      const x = await fns[i]();
      if (r >= warmup) out[i].push(x);
    }
  }
  return out;
}

export const generateSuite: Suite = async (rt, log) => {
  const config = presetConfig('bench', { contextLength: CONTEXT });
  const P = 128;
  const NEW = 64;
  const params = rt.storage('bench.gen.params', initParams(config, 0));
  const gen = new GpuGenerator(rt, config, params, { maxSequences: 1, maxLength: CONTEXT });
  const prompt = promptOf(P);
  const caseName = `ctx${CONTEXT}-p${P}-n${NEW}`;
  const records: BenchRecord[] = [];
  try {
    const once = async (useCache: boolean, maxNewTokens = NEW) => {
      const tokens: number[] = [];
      const t0 = performance.now();
      let firstMs = 0;
      for await (const t of gen.generate(prompt, { maxNewTokens, sampling: { temperature: 0 }, useCache })) {
        if (tokens.length === 0) firstMs = performance.now() - t0;
        tokens.push(t);
      }
      return { totalMs: performance.now() - t0, firstMs, tokens };
    };
    // Warm-up: a few tokens each compile every pipeline both paths use. A full-length no-cache
    // warm-up would buy nothing more (its per-length graphs are evicted again) for ~30 s.
    await once(true, 8);
    await once(false, 8);
    const [kv, nocache] = await interleaved([() => once(true), () => once(false)], 0, 3);
    // Greedy decoding of the same weights: both paths should pick the same tokens (a float
    // near-tie could split them late in the sequence, which is worth knowing, not fatal).
    const a = kv[0].tokens;
    const b = nocache[0].tokens;
    const agree = a.findIndex((t, i) => t !== b[i]);
    log(`generate ${caseName}: KV and no-cache greedy outputs ${agree < 0 ? 'identical' : `diverge at token ${agree}`}`);
    for (const [engine, runs] of [
      ['lwm-wgsl-kv', kv],
      ['nocache-baseline', nocache],
    ] as const) {
      const total = median(runs.map((r) => r.totalMs));
      const first = median(runs.map((r) => r.firstMs));
      const decode = median(runs.map((r) => (r.totalMs - r.firstMs) / (NEW - 1)));
      log(
        `generate ${caseName} ${engine}: ${total.toFixed(0)} ms for ${NEW} tokens (range ${spread(runs.map((r) => r.totalMs))}), first token ${first.toFixed(1)} ms, then ${decode.toFixed(1)} ms/token`,
      );
      const rec = (metric: string, value: number, unit: string) => records.push({ suite: 'generate', case: caseName, engine, metric, value, unit });
      rec('tokens_per_s', NEW / (total / 1000), 'tokens/s');
      rec('ms_per_token', total / NEW, 'ms');
      rec('first_token_ms', first, 'ms');
      rec('decode_ms_per_token', decode, 'ms');
    }
    // Without the cache every token is a prefill of a new length, and the generator builds (and
    // keeps at most 8 of) its kernels per shape: part of the baseline's cost is that set-up, not
    // arithmetic. Measure it: the same length twice, the second time with its graph built.
    const probe = promptOf(P + NEW / 2);
    const oneToken = async () => {
      const t0 = performance.now();
      for await (const _ of gen.generate(probe, { maxNewTokens: 1, sampling: { temperature: 0 }, useCache: false })) void _;
      return performance.now() - t0;
    };
    const cold = await oneToken();
    const warm = median([await oneToken(), await oneToken(), await oneToken()]);
    log(
      `generate ${caseName}: one ${probe.length}-token forward ${cold.toFixed(1)} ms with graph set-up, ${warm.toFixed(1)} ms with it built (set-up ≈ ${(cold - warm).toFixed(1)} ms per no-cache token)`,
    );
  } finally {
    gen.dispose();
    rt.release(params);
  }
  return records;
};

export const rolloutSuite: Suite = async (rt, log) => {
  const config = presetConfig('bench', { contextLength: CONTEXT });
  const G = 8;
  const P = 200;
  const NEW = 32;
  const params = rt.storage('bench.rollout.params', initParams(config, 0));
  const gen = new GpuGenerator(rt, config, params, { maxSequences: G, maxLength: CONTEXT });
  const prompt = promptOf(P);
  const caseName = `G${G}-p${P}-n${NEW}`;
  const sampling = { temperature: 1, seed: 1234 };
  const records: BenchRecord[] = [];
  try {
    const once = async (shared: boolean) => {
      const timing = { prefillMs: 0, decodeMs: 0 };
      const t0 = performance.now();
      const out = await gen.generateGroup(prompt, G, { maxNewTokens: NEW, sampling, shared }, timing);
      return { totalMs: performance.now() - t0, ...timing, out };
    };
    const [sharedRuns, separateRuns] = await interleaved([() => once(true), () => once(false)], 1, 3);
    // Same seed, same logits: both layouts should draw the same samples.
    const same = JSON.stringify(sharedRuns[0].out) === JSON.stringify(separateRuns[0].out);
    log(`rollout ${caseName}: shared-prefix and separate-prefill samples ${same ? 'identical' : 'DIFFER'}`);
    for (const [engine, runs] of [
      ['lwm-shared-prefix', sharedRuns],
      ['separate-prefills', separateRuns],
    ] as const) {
      const total = median(runs.map((r) => r.totalMs));
      const prefill = median(runs.map((r) => r.prefillMs));
      const decode = median(runs.map((r) => r.decodeMs));
      log(
        `rollout ${caseName} ${engine}: total ${total.toFixed(0)} ms (range ${spread(runs.map((r) => r.totalMs))}), prefill ${prefill.toFixed(1)} ms, decode ${decode.toFixed(0)} ms`,
      );
      const rec = (metric: string, value: number, unit: string) => records.push({ suite: 'rollout', case: caseName, engine, metric, value, unit });
      rec('total_ms', total, 'ms');
      rec('prefill_ms', prefill, 'ms');
      rec('decode_ms', decode, 'ms');
      rec('tokens_per_s', (G * NEW) / (total / 1000), 'tokens/s');
    }
  } finally {
    gen.dispose();
    rt.release(params);
  }
  return records;
};
