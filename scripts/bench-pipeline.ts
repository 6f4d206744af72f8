// Training-pipeline throughput on WebGPU in Node (Dawn): tokens/s of each stage, the RL time
// split (rollout, prefill, judging, update), a training step beside its peer, the
// plain-TypeScript reference GPT on the CPU, and a GSPO update pass with the group's prompt
// processed once beside the same pass over G full rows, in the same run.
//   npx tsx --import ./bin/raw-hook.mjs scripts/bench-pipeline.ts [--preset micro] [--steps 6] [--json FILE]
// (`npm run bench -- --suite pipeline` runs it with the GPU environment set.)
import { appendFileSync } from 'node:fs';
import { generateTrajectories } from '../src/envs/generate.ts';
import { nodeGpu } from '../src/gpu/node.ts';
import { GpuRuntime } from '../src/gpu/runtime.ts';
import { presetConfig, type PresetName } from '../src/core/model/config.ts';
import { GpuTrainer } from '../src/model/trainer.ts';
import { initParams } from '../src/model/init.ts';
import { ADAMW_DEFAULTS } from '../src/core/model/optim.ts';
import { ReferenceTrainer } from '../src/reference/gpt.ts';
import { toyBatch, toyCorpus } from '../src/reference/tinyData.ts';
import { SharedPrefixGspo } from '../src/model/sharedPrefix.ts';
import { runTraining, type Stage } from '../src/train/pipeline.ts';
import { rowUpdates } from '../src/train/stages/rl.ts';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : dflt;
}
const preset = arg('preset', 'micro') as PresetName;
const steps = Number(arg('steps', '6'));
const jsonFile = process.argv.includes('--json') ? arg('json', '') : '';
// Each record goes to the --json file as soon as it is measured, so a crash later keeps it.
const record = (c: string, engine: string, metric: string, value: number, unit: string) => {
  const r = { suite: 'pipeline', case: c, engine, metric, value, unit };
  if (jsonFile) appendFileSync(jsonFile, JSON.stringify(r) + '\n');
};

const rt = await GpuRuntime.create({ gpu: await nodeGpu() });
console.log(`adapter: ${rt.describe()}`);
const data = generateTrajectories('terminal', 24, 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// 1. One training step, GPU vs the CPU reference, same model and batch.
{
  const config = presetConfig(preset);
  const B = 4;
  const T = Math.min(64, config.contextLength);
  const corpus = toyCorpus();
  const init = initParams(config, 1);
  const model = await GpuTrainer.create(rt, config, { batch: B, T });
  model.setParams(init);
  const ref = new ReferenceTrainer(config, init, ADAMW_DEFAULTS, { maxLr: 1e-3, minLr: 1e-4, warmupSteps: 1, totalSteps: 100 });
  const gpu: number[] = [];
  const cpu: number[] = [];
  for (let s = 0; s < 6; s++) {
    const batch = toyBatch(corpus, B, T, s);
    let t0 = performance.now();
    await model.trainStep(batch, 1e-3);
    if (s > 0) gpu.push(performance.now() - t0);
    t0 = performance.now();
    ref.step(batch);
    if (s > 0) cpu.push(performance.now() - t0);
  }
  model.dispose();
  const c = `${preset} step ${B}x${T}`;
  for (const [engine, ms] of [
    ['lwm-webgpu-dawn', median(gpu)],
    ['reference-cpu-ts', median(cpu)],
  ] as const) {
    record(c, engine, 'ms_per_step', ms, 'ms');
    record(c, engine, 'tokens_per_s', (B * T) / (ms / 1000), 'tokens/s');
    console.log(`${c} ${engine}: ${ms.toFixed(1)} ms, ${((B * T) / (ms / 1000)).toFixed(0)} tokens/s`);
  }
}

// 2. One GSPO update pass of a group (G responses to one prompt), with the prompt processed once
//    (shared prefix, the RL stage's default) against G full prompt + response rows, same model,
//    same group, same run. The ratio is the gain of docs/method.md §10's prefix sharing in the update.
{
  const config = presetConfig(preset);
  const G = 4;
  const T = Math.min(64, config.contextLength);
  const Lmax = 16;
  const P = T - Lmax;
  const V = config.vocabSize;
  const prompt = Array.from({ length: P }, (_, i) => (i * 37 + 11) % V);
  const responses = Array.from({ length: G }, (_, g) => Array.from({ length: Lmax - g }, (_, i) => (i * 53 + g * 7 + 3) % V));
  const model = await GpuTrainer.create(rt, config, { batch: G, T, rl: { Lmax } });
  const shared = await SharedPrefixGspo.create(model, { G, Lmax, promptMax: P });
  model.setParams(initParams(config, 2));
  const adv = [1, -1, 0.5, -0.5];
  const rows = rowUpdates(model, T, Lmax, 0);
  const time = async (step: () => Promise<unknown>) => {
    const ms: number[] = [];
    for (let i = 0; i < 6; i++) {
      const t0 = performance.now();
      await step();
      if (i > 0) ms.push(performance.now() - t0);
    }
    return median(ms);
  };
  const full = await time(() => rows.step(prompt, responses, 'current', adv, 0));
  const once = await time(() => shared.gspoStep({ prompt, responses }, 'current', adv, 0));
  shared.dispose();
  model.dispose();
  const c = `${preset} gspo update G=${G} prompt=${P} response=${Lmax}`;
  record(c, 'lwm-webgpu-dawn', 'ms_per_update', once, 'ms');
  record(c, 'full-rows-webgpu-dawn', 'ms_per_update', full, 'ms');
  record(c, 'lwm-webgpu-dawn', 'shared_prefix_speedup', full / once, 'x');
  console.log(
    `${c}: shared prefix ${once.toFixed(1)} ms, ${G} full rows ${full.toFixed(1)} ms (${(full / once).toFixed(2)}× faster with the prompt processed once)`,
  );
}

// 3. Each stage end to end through the pipeline (tokenizer, batches, eval and all).
for (const stage of ['cpt', 'sft', 'rl'] as Stage[]) {
  const metrics: Record<string, number>[] = [];
  const t0 = performance.now();
  await runTraining(
    {
      kind: 'train',
      stage,
      preset,
      vocabSize: 384,
      steps,
      batch: 4,
      T: 64,
      evalEvery: steps,
      evalJudgeSamples: 0,
      rl: { groupSize: 4, promptsPerStep: 2, maxNewTokens: 16 },
    },
    data,
    { rt, step: async () => {}, log: () => {}, metric: (_s, v) => metrics.push(v), checkpoint: () => {} },
  );
  const wall = performance.now() - t0;
  const tps = median(metrics.filter((m) => 'tokens_per_s' in m).map((m) => m.tokens_per_s));
  record(stage, 'lwm-webgpu-dawn', 'tokens_per_s', tps, 'tokens/s');
  record(stage, 'lwm-webgpu-dawn', 'wall_s', wall / 1000, 's');
  console.log(`${stage}: ${tps.toFixed(0)} tokens/s (median step), ${steps} steps in ${(wall / 1000).toFixed(1)} s`);
  if (stage === 'rl') {
    for (const part of ['rollout', 'prefill', 'judge', 'update']) {
      const share = metrics.filter((m) => `share_${part}` in m).reduce((n, m) => n + m[`share_${part}`], 0) / steps;
      record('rl time', 'lwm-webgpu-dawn', `share_${part}`, share, 'fraction');
      console.log(`  RL time in ${part}: ${(share * 100).toFixed(1)}%`);
    }
  }
}
rt.dispose();
process.exit(0);
