// Diagnostic, not a suite: where the time of one bench-model training step goes, per kernel.
// Records every dispatch of a real GpuTrainer.trainStep (pipeline, bind groups, grid), then replays
// each one alone, `REPEAT` times in its own submission, and reports wall time per dispatch
// grouped by pipeline label (shader file : entry point). On SwiftShader the GPU is the CPU, so
// wall time to onSubmittedWorkDone is the kernel's cost plus a small submission overhead,
// which the empty-submission line measures.
// Run in Node through Dawn, with scripts/chromium.mjs gpuEnv() in the environment:
//   npx tsx --import ./bin/raw-hook.mjs bench/profile-train.ts [--batch 8] [--T 64] [--detail]
import { parseArgs } from 'node:util';
import { installNodeGpu } from '../src/gpu/node.ts';
import { GpuRuntime } from '../src/gpu/runtime.ts';
import { GpuTrainer } from '../src/model/trainer.ts';
import { presetConfig } from '../src/core/model/config.ts';
import { initParams } from '../src/model/init.ts';
import { toyBatch, toyCorpus } from '../src/reference/tinyData.ts';
import { median } from './common.ts';

const { values } = parseArgs({
  options: {
    batch: { type: 'string', default: '8' },
    T: { type: 'string', default: '64' },
    repeat: { type: 'string', default: '3' },
    detail: { type: 'boolean', default: false },
  },
});
const B = Number(values.batch);
const T = Number(values.T);
const REPEAT = Number(values.repeat);

interface Dispatch {
  pipeline: GPUComputePipeline;
  groups: (GPUBindGroup | null)[];
  grid: [number, number, number];
}

await installNodeGpu();
const rt = await GpuRuntime.create();
console.log(`adapter: ${rt.describe()}`);
const model = await GpuTrainer.create(rt, presetConfig('bench'), { batch: B, T });
model.setParams(initParams(model.config, 0));
const corpus = toyCorpus();
const batch = (i: number) => toyBatch(corpus, B, T, i);

const stepTimes: number[] = [];
for (let i = 0; i < 6; i++) {
  const t0 = performance.now();
  await model.trainStep(batch(i), 1e-3, { loss: true });
  if (i >= 2) stepTimes.push(performance.now() - t0);
}
console.log(`whole step (median of ${stepTimes.length}): ${median(stepTimes).toFixed(1)} ms; dispatches per step: ${model.dispatchesPerStep}`);

// Record the dispatches of one step through a wrapped compute pass.
const recorded: Dispatch[] = [];
const encProto = Object.getPrototypeOf(rt.device.createCommandEncoder()) as GPUCommandEncoder;
const realBegin = encProto.beginComputePass;
encProto.beginComputePass = function (this: GPUCommandEncoder, desc?: GPUComputePassDescriptor) {
  const pass = realBegin.call(this, desc);
  let pipeline: GPUComputePipeline | null = null;
  const groups: (GPUBindGroup | null)[] = [];
  return new Proxy(pass, {
    get(target, prop) {
      const v = Reflect.get(target, prop) as unknown;
      if (typeof v !== 'function') return v;
      if (prop === 'setPipeline') return (p: GPUComputePipeline) => ((pipeline = p), target.setPipeline(p));
      if (prop === 'setBindGroup') return (i: number, g: GPUBindGroup | null) => ((groups[i] = g), target.setBindGroup(i, g));
      if (prop === 'dispatchWorkgroups')
        return (x: number, y = 1, z = 1) => {
          recorded.push({ pipeline: pipeline!, groups: [...groups], grid: [x, y, z] });
          target.dispatchWorkgroups(x, y, z);
        };
      return (v as (...a: unknown[]) => unknown).bind(target);
    },
  });
};
await model.trainStep(batch(0), 1e-3, { loss: true });
encProto.beginComputePass = realBegin;
console.log(`recorded ${recorded.length} dispatches`);

async function timeSubmission(fill: (pass: GPUComputePassEncoder) => void): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < 3; r++) {
    const enc = rt.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    fill(pass);
    pass.end();
    const t0 = performance.now();
    rt.device.queue.submit([enc.finish()]);
    await rt.device.queue.onSubmittedWorkDone();
    times.push(performance.now() - t0);
  }
  return median(times);
}

const empty = await timeSubmission(() => {});
const byLabel = new Map<string, { n: number; ms: number; grids: Set<string> }>();
let total = 0;
for (const d of recorded) {
  const ms =
    (await timeSubmission((pass) => {
      pass.setPipeline(d.pipeline);
      d.groups.forEach((g, i) => g && pass.setBindGroup(i, g));
      for (let r = 0; r < REPEAT; r++) pass.dispatchWorkgroups(...d.grid);
    })) / REPEAT;
  total += ms;
  if (values.detail) console.log(`${ms.toFixed(2).padStart(8)} ms  ${d.pipeline.label}  grid ${d.grid.join('×')}`);
  const e = byLabel.get(d.pipeline.label) ?? { n: 0, ms: 0, grids: new Set<string>() };
  e.n++;
  e.ms += ms;
  e.grids.add(d.grid.join('×'));
  byLabel.set(d.pipeline.label, e);
}
console.log(`empty submission: ${empty.toFixed(2)} ms; sum of dispatches timed alone: ${total.toFixed(1)} ms`);
const rows = [...byLabel.entries()].sort((a, b) => b[1].ms - a[1].ms);
for (const [label, e] of rows) {
  console.log(
    `${e.ms.toFixed(1).padStart(8)} ms ${((100 * e.ms) / total).toFixed(1).padStart(5)}%  ${String(e.n).padStart(3)}×  ${label}  grids ${[...e.grids].join(', ')}`,
  );
}
model.dispose();
rt.dispose();
process.exit(0);
