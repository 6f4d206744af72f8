// Where a training step's GPU time goes: records every dispatch of one step of a preset, replays
// each in its own compute pass between timestamp queries, and prints the time per kernel.
//   npx tsx --import ./bin/raw-hook.mjs scripts/profile-step.ts [--preset bench] [--batch 8] [--tokens 64]
// (needs the GPU environment of scripts/chromium.mjs gpuEnv() on machines without a GPU).
import { nodeGpu } from '../src/gpu/node.ts';
import { GpuRuntime } from '../src/gpu/runtime.ts';
import { presetConfig, type PresetName } from '../src/core/model/config.ts';
import { GpuTrainer } from '../src/model/trainer.ts';
import { initParams } from '../src/model/init.ts';
import { toyBatch, toyCorpus } from '../src/reference/tinyData.ts';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : dflt;
}
const preset = arg('preset', 'bench') as PresetName;
const B = Number(arg('batch', '8'));
const T = Number(arg('tokens', '64'));

const rt = await GpuRuntime.create({ gpu: await nodeGpu() });
if (!rt.report.features.timestampQuery) throw new Error('this adapter has no timestamp-query');
const config = presetConfig(preset);
const model = await GpuTrainer.create(rt, config, { batch: B, T });
model.setParams(initParams(config, 1));
const batch = toyBatch(toyCorpus(), B, T, 0);
await model.trainStep(batch, 1e-3); // warm: pipelines compiled, uniforms written

type Call = { pipeline: GPUComputePipeline; groups: GPUBindGroup[]; wg: [number, number, number] };
const calls: Call[] = [];
let pipeline: GPUComputePipeline | null = null;
const groups: GPUBindGroup[] = [];
const recorder = {
  setPipeline: (p: GPUComputePipeline) => void (pipeline = p),
  setBindGroup: (i: number, g: GPUBindGroup) => void (groups[i] = g),
  dispatchWorkgroups: (x: number, y = 1, z = 1) => void calls.push({ pipeline: pipeline!, groups: [...groups], wg: [x, y, z] }),
  end: () => {},
} as unknown as GPUComputePassEncoder;
model.encodeTrainStep(recorder);

const qs = rt.device.createQuerySet({ type: 'timestamp', count: calls.length * 2 });
const resolve = rt.createBuffer('profile.ts', calls.length * 16, GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC);
const byKernel = new Map<string, { ms: number; n: number }>();
for (let rep = 0; rep < 3; rep++) {
  const enc = rt.device.createCommandEncoder();
  calls.forEach((c, i) => {
    const pass = enc.beginComputePass({ timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 } });
    pass.setPipeline(c.pipeline);
    c.groups.forEach((g, j) => g && pass.setBindGroup(j, g));
    pass.dispatchWorkgroups(...c.wg);
    pass.end();
  });
  enc.resolveQuerySet(qs, 0, calls.length * 2, resolve, 0);
  rt.device.queue.submit([enc.finish()]);
  const t = new BigUint64Array(await rt.read(resolve));
  if (rep === 0) continue; // first replay warms caches
  calls.forEach((c, i) => {
    const key = c.pipeline.label.includes('matmul') ? `${c.pipeline.label} grid ${c.wg.join('×')}` : c.pipeline.label;
    const e = byKernel.get(key) ?? { ms: 0, n: 0 };
    e.ms += Number(t[2 * i + 1] - t[2 * i]) / 1e6 / 2;
    e.n += 1 / 2;
    byKernel.set(key, e);
  });
}
const total = [...byKernel.values()].reduce((n, e) => n + e.ms, 0);
console.log(`${preset} ${B}×${T}: ${calls.length} dispatches, ${total.toFixed(1)} ms of GPU time (each dispatch timed alone)`);
for (const [k, e] of [...byKernel.entries()].sort((a, b) => b[1].ms - a[1].ms)) {
  console.log(`${e.ms.toFixed(2).padStart(9)} ms  ${((e.ms / total) * 100).toFixed(1).padStart(5)}%  ×${e.n}  ${k}`);
}
model.dispose();
rt.dispose();
process.exit(0);
