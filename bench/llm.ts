// `llm` suite: a model shaped like SmolLM2-135M (llm-shape.ts; random weights made here, nothing
// downloaded) generating greedily with its KV cache, on our WGSL engine and on onnxruntime-web's
// WebGPU and WASM execution providers running our ONNX export of the same weights (the code path
// of `lwm export --to onnx`), in the same page on the same adapter; plus one LoRA SFT step.
//
//   prefill   the prompt's forward pass and the first token's choice (median ms → tokens/s)
//   decode    one new token's forward with the cache and its choice (median over the steps of
//             every timed repetition → tokens/s)
//
// onnxruntime-web runs through the app's own ONNX decoder (src/model/onnx/session.ts, what the
// Playground, the Bench and `lwm infer` run), so this measures what users get: the onnxruntime-web
// build the app loads (its WebGPU provider is JSEP), graph optimization 'all', and on WebGPU the
// present.N.* outputs left on the GPU and fed back as the next past_key_values, as transformers.js
// does; only the logits come back to the CPU, where the greedy choice is made (our reference
// sampler at temperature 0: an argmax). WASM runs on one thread. Ours samples on the GPU and reads one id.
import { GpuTrainer } from '../src/model/trainer.ts';
import { GpuGenerator } from '../src/model/generate.ts';
import { initLora, loraLayout, loraSettings } from '../src/model/lora.ts';
import { onnxExportFiles } from '../src/model/onnx/export.ts';
import { loadOrt, OnnxDecoder } from '../src/model/onnx/session.ts';
import { useBundledOrtWasm } from '../src/jobs/ortAssets.ts';
import { headSize, kvHeads as kvHeadsOf, type ModelConfig } from '../src/core/model/config.ts';
import type { GpuRuntime } from '../src/gpu/runtime.ts';
import { median, spread, type Suite } from './common.ts';
import { llmParams, llmRecords, llmShape, llmTable, OURS, parseLlmOptions, type EngineMeasurement, type LlmBenchOptions } from './llm-shape.ts';

type Log = (s: string) => void;

/** A prompt of ids spread over the vocabulary (what the tokens say does not change the work). */
function promptOf(n: number, vocab: number): number[] {
  return Array.from({ length: n }, (_, i) => (i * 7919 + 13) % vocab);
}

async function oursGenerate(
  rt: GpuRuntime,
  config: ModelConfig,
  params: Float32Array,
  prompt: number[],
  o: LlmBenchOptions,
  log: Log,
): Promise<EngineMeasurement> {
  const buf = rt.storage('bench.llm.params', params);
  const gen = new GpuGenerator(rt, config, buf, { maxSequences: 1, maxLength: prompt.length + o.decodeTokens });
  try {
    const once = async (n: number) => {
      const before = { ...gen.stats };
      const tokens: number[] = [];
      for await (const t of gen.generate(prompt, { maxNewTokens: n, sampling: { temperature: 0 } })) tokens.push(t);
      const s = gen.stats;
      return { tokens, prefillMs: s.prefillMs - before.prefillMs, decodeMs: (s.decodeMs - before.decodeMs) / (s.decodeTokens - before.decodeTokens) };
    };
    await once(2); // compiles the prefill and decode graphs
    const runs = [];
    for (let r = 0; r < o.reps; r++) {
      runs.push(await once(o.decodeTokens));
      log(`llm ${OURS} repetition ${r + 1}: prefill ${runs[r].prefillMs.toFixed(0)} ms, decode ${runs[r].decodeMs.toFixed(1)} ms/step`);
    }
    return { engine: OURS, prefillMs: median(runs.map((r) => r.prefillMs)), decodeMs: median(runs.map((r) => r.decodeMs)), tokens: runs[0].tokens };
  } finally {
    gen.dispose();
    rt.release(buf);
  }
}

/** The app's ONNX decoder (src/model/onnx/session.ts) generating greedily: the prefill and each decode step timed as its generate() yields them. */
async function ortRun(dec: OnnxDecoder, prompt: number[], n: number) {
  const gen = dec.generate(prompt, { maxNewTokens: n, sampling: { temperature: 0 } });
  const tokens: number[] = [];
  const times: number[] = [];
  for (;;) {
    const t0 = performance.now();
    const r = await gen.next();
    if (r.done) break;
    times.push(performance.now() - t0);
    tokens.push(r.value);
  }
  return { tokens, prefillMs: times[0], decode: times.slice(1) };
}

async function ortGenerate(
  ep: 'webgpu' | 'wasm',
  model: Uint8Array,
  config: ModelConfig,
  prompt: number[],
  o: LlmBenchOptions,
  log: Log,
): Promise<EngineMeasurement> {
  const t0 = performance.now();
  const dec = await OnnxDecoder.create(model, { label: 'the ONNX export', executionProvider: ep, kvHeads: kvHeadsOf(config), headDim: headSize(config) });
  log(`llm ort-web-${ep}: session created in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  try {
    await ortRun(dec, prompt, 2); // warm-up: shaders and kernels for both shapes
    const runs = [];
    for (let r = 0; r < o.reps; r++) {
      runs.push(await ortRun(dec, prompt, o.decodeTokens));
      log(`llm ort-web-${ep} repetition ${r + 1}: prefill ${runs[r].prefillMs.toFixed(0)} ms, decode steps ${spread(runs[r].decode)} ms`);
    }
    const s = dec.stats;
    log(`llm ort-web-${ep}: ${s.runs} passes, KV cache outputs ${s.kvOnGpu} left on the GPU and ${s.kvOnCpu} on the CPU, ${s.liveKv} alive after the runs`);
    if (ep === 'webgpu' && s.kvOnCpu > 0) throw new Error(`the WebGPU decoder read ${s.kvOnCpu} KV cache outputs back to the CPU`);
    if (s.liveKv > 0) throw new Error(`${s.liveKv} KV cache tensors were not freed`);
    return {
      engine: `ort-web-${ep}`,
      prefillMs: median(runs.map((r) => r.prefillMs)),
      decodeMs: median(runs.flatMap((r) => r.decode)),
      tokens: runs[0].tokens,
    };
  } finally {
    dec.dispose();
  }
}

/** One LoRA SFT step (GpuTrainer with a LoRA layout, base frozen: the `--lora` training path), median ms after a warm-up step. */
async function loraStep(rt: GpuRuntime, config: ModelConfig, params: Float32Array, o: LlmBenchOptions): Promise<number> {
  const layout = loraLayout(config, loraSettings(o.loraRank));
  const T = o.trainTokens;
  const model = await GpuTrainer.create(rt, config, { batch: 1, T, lora: layout });
  try {
    model.setParams(params);
    model.model.setLora(initLora(layout, 1));
    const ids = promptOf(T + 1, config.vocabSize);
    const batch = { B: 1, T, inputs: ids.slice(0, T), targets: ids.slice(1) };
    const times: number[] = [];
    for (let i = 0; i <= o.reps; i++) {
      const t0 = performance.now();
      await model.trainStep(batch, 1e-4, { loss: true });
      if (i > 0) times.push(performance.now() - t0);
    }
    return median(times);
  } finally {
    model.dispose();
  }
}

/** What adapter onnxruntime-web's WebGPU provider picked (it asks navigator.gpu for its own device). */
async function ortAdapter(): Promise<string> {
  try {
    const ort = await loadOrt();
    const device = (await (ort.env.webgpu.device as unknown as Promise<GPUDevice> | GPUDevice)) as GPUDevice & { adapterInfo?: GPUAdapterInfo };
    const info = device?.adapterInfo ?? (ort.env.webgpu as { adapter?: GPUAdapter }).adapter?.info;
    return info ? [info.vendor, info.architecture, info.description].filter(Boolean).join(' / ') || 'unnamed adapter' : 'not reported';
  } catch (e) {
    return `not reported (${(e as Error).message})`;
  }
}

/** Runs each engine in turn; one that fails is reported as such and the others still run. */
async function measureAll(rt: GpuRuntime, config: ModelConfig, params: Float32Array, onnx: Uint8Array, o: LlmBenchOptions, log: Log) {
  const prompt = promptOf(o.promptTokens, config.vocabSize);
  const engines: EngineMeasurement[] = [];
  const failures: { engine: string; message: string }[] = [];
  const runs: [string, () => Promise<EngineMeasurement>][] = [
    [OURS, () => oursGenerate(rt, config, params, prompt, o, log)],
    ['ort-web-webgpu', () => ortGenerate('webgpu', onnx, config, prompt, o, log)],
    ['ort-web-wasm', () => ortGenerate('wasm', onnx, config, prompt, o, log)],
  ];
  for (const [engine, run] of runs) {
    try {
      const m = await run();
      log(
        `llm ${engine}: prefill ${m.prefillMs.toFixed(0)} ms, decode ${m.decodeMs.toFixed(1)} ms/token; greedy ids ${m.tokens.slice(0, 8).join(' ')}${m.tokens.length > 8 ? ' …' : ''}`,
      );
      if (engine === 'ort-web-webgpu') log(`llm ort-web-webgpu adapter: ${await ortAdapter()}`);
      engines.push(m);
    } catch (e) {
      log(`llm ${engine}: FAILED ${(e as Error).message}`);
      failures.push({ engine, message: (e as Error).message });
    }
  }
  return { engines, failures };
}

export const llmSuite: Suite = async (rt, log, raw = {}) => {
  const o = parseLlmOptions(raw);
  // The app's onnxruntime-web (the build with its WebGPU provider, JSEP), its binary where the app takes it from.
  useBundledOrtWasm();
  const ort = await loadOrt();
  ort.env.wasm.numThreads = 1;
  const shape = llmShape(o);
  log(`llm: ${shape.description}`);
  log(`llm: adapter ${rt.describe()}; onnxruntime-web ${ort.env.versions.web ?? '?'}, WASM on ${ort.env.wasm.numThreads} thread(s)`);
  const params = llmParams(shape.config);
  let t0 = performance.now();
  // `lwm export --to onnx`'s code path: the decoder with its KV cache in Hugging Face's layout.
  const onnx = onnxExportFiles({ config: shape.config, params }, []).find((f) => f.name === 'onnx/model.onnx')!.bytes;
  log(`llm: ONNX export ${(onnx.byteLength / 2 ** 20).toFixed(0)} MiB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const { engines, failures } = await measureAll(rt, shape.config, params, onnx, o, log);
  let lora: { stepMs: number; tokens: number } | null = null;
  try {
    t0 = performance.now();
    lora = { stepMs: await loraStep(rt, shape.config, params, o), tokens: o.trainTokens };
    log(
      `llm LoRA r ${o.loraRank} SFT step on ${o.trainTokens} tokens: ${lora.stepMs.toFixed(0)} ms (set-up and ${o.reps + 1} steps in ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
    );
  } catch (e) {
    log(`llm LoRA SFT step: FAILED ${(e as Error).message}`);
    failures.push({ engine: `${OURS}-lora`, message: (e as Error).message });
  }
  const records = llmRecords(shape.caseName, o.promptTokens, engines, failures, lora);
  log(`\nllm ${shape.caseName}\n${llmTable(records)}`);
  return records;
};
