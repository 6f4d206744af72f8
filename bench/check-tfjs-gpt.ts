// Diagnostic, not a suite: is bench/tfjs-gpt.ts the same network and optimizer as ours? Runs it
// on tfjs's CPU backend beside the plain-TypeScript reference (src/reference/gpt.ts, the oracle
// the GPU model is tested against): first-step gradients tensor by tensor, then a few AdamW
// steps' losses. Run: npx tsx bench/check-tfjs-gpt.ts [--backend cpu|wasm|webgpu]
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-wasm';
import { parseArgs } from 'node:util';
import { presetConfig } from '../src/core/model/config.ts';
import { initParams } from '../src/model/init.ts';
import { ADAMW_DEFAULTS } from '../src/core/model/optim.ts';
import { ReferenceTrainer, gptLossAndGrad } from '../src/reference/gpt.ts';
import { toyBatch, toyCorpus } from '../src/reference/tinyData.ts';
import { TfjsGpt } from './tfjs-gpt.ts';

const B = 8;
const T = 64;
const LR = 1e-3;
const { values } = parseArgs({ options: { backend: { type: 'string', default: 'cpu' } } });
if (values.backend === 'webgpu') {
  // Dawn's navigator.gpu (run with scripts/chromium.mjs gpuEnv() and bin/raw-hook.mjs as for the GPU tests).
  await (await import('../src/gpu/node.ts')).installNodeGpu();
  await import('@tensorflow/tfjs-backend-webgpu');
}
if (!(await tf.setBackend(values.backend!))) throw new Error(`no tfjs backend ${values.backend}`);
console.log(`tfjs backend: ${tf.getBackend()}`);
const config = presetConfig('bench');
const init = initParams(config, 0);
const corpus = toyCorpus();
const batches = Array.from({ length: 6 }, (_, i) => toyBatch(corpus, B, T, i));

const model = new TfjsGpt(tf, config, init, T, LR);
const ref = gptLossAndGrad(init, config, batches[0]);
const mine = await model.lossAndGrads(batches[0].inputs, batches[0].targets, B);
console.log(`loss: reference ${ref.loss.toFixed(6)}, tfjs ${mine.loss.toFixed(6)}`);
let worst = 0;
for (const t of [...(await import('../src/core/model/params.ts')).paramLayout(config).tensors]) {
  const g = mine.grads.get(t.name)!;
  let maxDiff = 0;
  let maxRef = 0;
  for (let i = 0; i < t.size; i++) {
    maxDiff = Math.max(maxDiff, Math.abs(g[i] - ref.grad[t.offset + i]));
    maxRef = Math.max(maxRef, Math.abs(ref.grad[t.offset + i]));
  }
  worst = Math.max(worst, maxDiff / (maxRef || 1));
  console.log(`  ${t.name.padEnd(24)} max |Δg| ${maxDiff.toExponential(2)} (max |g| ${maxRef.toExponential(2)})`);
}
console.log(`worst relative gradient difference: ${worst.toExponential(2)}`);

const trainer = new ReferenceTrainer(config, init, ADAMW_DEFAULTS, { maxLr: LR, minLr: LR, warmupSteps: 0, totalSteps: 1 });
const refLosses: number[] = [];
const tfLosses: number[] = [];
for (const b of batches) {
  refLosses.push(trainer.step(b).loss);
  const l = model.step(b.inputs, b.targets, B);
  tfLosses.push((await l.data())[0]);
  l.dispose();
}
console.log(`reference losses: ${refLosses.map((x) => x.toFixed(5)).join(' ')}`);
console.log(`tfjs losses:      ${tfLosses.map((x) => x.toFixed(5)).join(' ')}`);
model.dispose();
