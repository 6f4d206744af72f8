// `train` suite: one optimizer step of the bench model (2 layers, d_model 64, 4 heads, context
// 64, vocab 256) on 8 × 64 tokens, in our engine and in the same network written in tfjs on
// its WebGPU and WASM backends. Every engine starts from the same initParams weights, sees the
// same sequence of toy-corpus batches, and reads its loss back after every step (what a
// training loop that logs does); the step time is the median after warm-up steps.
// Static imports, unlike the matmul suite's dynamic ones: Vite's dev server finds a dependency
// first seen in a dynamic import only when the page asks for it, re-bundles, and reloads the
// page mid-run; statically imported ones are bundled before the page starts.
import * as tf from '@tensorflow/tfjs-core';
// tfjs-core alone has no gradients; the union package @tensorflow/tfjs registers them this way.
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import '@tensorflow/tfjs-backend-webgpu';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { GpuTrainer } from '../src/model/trainer.ts';
import { presetConfig, trainStepFlops } from '../src/core/model/config.ts';
import { initParams } from '../src/model/init.ts';
import { toyBatch, toyCorpus } from '../src/reference/tinyData.ts';
import type { TokenBatch } from '../src/reference/gpt.ts';
import { countDispatches, median, spread, type BenchRecord, type Suite } from './common.ts';
import { TfjsGpt } from './tfjs-gpt.ts';

const B = 8;
const T = 64;
// Constant: the schedule is not what is measured, and every engine must take the same steps.
const LR = 1e-3;

interface EngineRun {
  /** Per timed step, ms. */
  times: number[];
  /** Loss of every step, warm-up included, for the parity line in the log. */
  losses: number[];
  launches?: { metric: string; value: number; unit: string };
}

type Tf = typeof tf;

async function runOurs(
  rt: Parameters<Suite>[0],
  init: Float32Array,
  batches: TokenBatch[],
  warmup: number,
  reps: number,
  log: (s: string) => void,
): Promise<EngineRun> {
  const model = await GpuTrainer.create(rt, presetConfig('bench'), { batch: B, T });
  try {
    model.setParams(init);
    const times: number[] = [];
    const losses: number[] = [];
    for (let i = 0; i < warmup + reps; i++) {
      const t0 = performance.now();
      const r = await model.trainStep(batches[i], LR, { loss: true });
      const dt = performance.now() - t0;
      losses.push(r.loss ?? NaN);
      if (i >= warmup) times.push(dt);
    }
    // Counted on a real step (after the timed ones) rather than taken from the model's own tally.
    const counted = await countDispatches(async () => void (await model.trainStep(batches[0], LR, { loss: true })));
    if (counted !== model.dispatchesPerStep)
      log(`train lwm-wgsl: WARNING dispatchesPerStep = ${model.dispatchesPerStep} but ${counted} dispatches were counted`);
    return { times, losses, launches: { metric: 'dispatches_per_step', value: counted, unit: 'dispatches' } };
  } finally {
    model.dispose();
  }
}

async function runTfjs(
  tf: Tf,
  backend: 'webgpu' | 'wasm',
  init: Float32Array,
  batches: TokenBatch[],
  warmup: number,
  reps: number,
  log: (s: string) => void,
): Promise<EngineRun> {
  if (!(await tf.setBackend(backend))) throw new Error(`tfjs backend '${backend}' failed to initialise`);
  await tf.ready();
  const model = new TfjsGpt(tf, presetConfig('bench'), init, T, LR);
  const step = async (b: TokenBatch) => {
    const loss = model.step(b.inputs, b.targets, B);
    const value = (await loss.data())[0];
    loss.dispose();
    return value;
  };
  try {
    const times: number[] = [];
    const losses: number[] = [];
    let tensorsAfterWarmup = 0;
    for (let i = 0; i < warmup + reps; i++) {
      if (i === warmup) tensorsAfterWarmup = tf.memory().numTensors;
      const t0 = performance.now();
      losses.push(await step(batches[i]));
      const dt = performance.now() - t0;
      if (i >= warmup) times.push(dt);
    }
    // A leak would slow later steps and flatter nobody; say so if tensors pile up.
    const grew = tf.memory().numTensors - tensorsAfterWarmup;
    if (grew !== 0) log(`train tfjs-${backend}: WARNING ${grew} tensors leaked over ${reps} steps`);
    let launches: EngineRun['launches'];
    if (backend === 'webgpu') {
      // GPU dispatches, counted the same way as ours.
      launches = { metric: 'kernel_launches_per_step', value: await countDispatches(async () => void (await step(batches[0]))), unit: 'dispatches' };
    } else {
      // WASM has no dispatches; tf.profile lists every kernel the step ran.
      const info = await tf.profile(async () => void (await step(batches[0])));
      launches = { metric: 'kernel_launches_per_step', value: info.kernels.length, unit: 'kernels' };
    }
    return { times, losses, launches };
  } finally {
    model.dispose();
  }
}

export const trainSuite: Suite = async (rt, log) => {
  const config = presetConfig('bench');
  const init = initParams(config, 0);
  const corpus = toyCorpus();
  const batches = Array.from({ length: 16 }, (_, i) => toyBatch(corpus, B, T, i));
  const flops = trainStepFlops(config, B, T);
  const caseName = `bench-${B}x${T}`;
  // Served by the local Vite server; never fetched from a CDN.
  setWasmPaths(new URL('/node_modules/@tensorflow/tfjs-backend-wasm/dist/', location.href).href);

  // tfjs-webgpu takes seconds per step on SwiftShader, so it gets fewer timed steps.
  const engines: [string, () => Promise<EngineRun>][] = [
    ['lwm-wgsl', () => runOurs(rt, init, batches, 3, 10, log)],
    ['tfjs-webgpu', () => runTfjs(tf, 'webgpu', init, batches, 2, 5, log)],
    ['tfjs-wasm', () => runTfjs(tf, 'wasm', init, batches, 3, 10, log)],
  ];
  const records: BenchRecord[] = [];
  const rec = (engine: string, metric: string, value: number, unit: string) => records.push({ suite: 'train', case: caseName, engine, metric, value, unit });
  let ourLosses: number[] | null = null;
  for (const [engine, run] of engines) {
    try {
      const r = await run();
      // Same weights, same batches, same optimizer: every engine should follow our loss curve
      // (the reference's). One that does not is not doing the same work, and its time says less.
      if (engine === 'lwm-wgsl') ourLosses = r.losses;
      else if (ourLosses) {
        const n = Math.min(ourLosses.length, r.losses.length);
        let worst = 0;
        for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(r.losses[i] - ourLosses[i]) / ourLosses[i]);
        log(
          `train ${caseName} ${engine}: loss curve vs lwm-wgsl over ${n} steps: max relative difference ${worst.toExponential(2)}${worst > 1e-3 ? ' — NOT the same computation' : ''}`,
        );
        rec(engine, 'loss_rel_diff_vs_lwm', worst, 'ratio');
      }
      const ms = median(r.times);
      log(
        `train ${caseName} ${engine}: ${ms.toFixed(1)} ms/step (median of ${r.times.length}, range ${spread(r.times)}), ${((B * T) / (ms / 1000)).toFixed(0)} tokens/s`,
      );
      log(
        `train ${caseName} ${engine}: losses ${r.losses
          .slice(0, 5)
          .map((l) => l.toFixed(5))
          .join(' ')}${r.launches ? `; ${r.launches.metric} ${r.launches.value}` : ''}`,
      );
      rec(engine, 'ms_per_step', ms, 'ms');
      rec(engine, 'tokens_per_s', (B * T) / (ms / 1000), 'tokens/s');
      rec(engine, 'gflops', flops / (ms * 1e6), 'GFLOP/s');
      if (r.launches) rec(engine, r.launches.metric, r.launches.value, r.launches.unit);
    } catch (e) {
      log(`train ${caseName} ${engine}: FAILED ${(e as Error).message}`);
      rec(engine, 'error', NaN, (e as Error).message.slice(0, 200));
    }
  }
  return records;
};
