// The 'steptime' job: how long one training step of a model shape takes on the worker's device,
// measured. The Train view turns it into the expected time of a run (the quick recipe's steps, or
// a custom run scaled by FLOPs): a model of the preset with fresh weights takes a warm-up step
// (pipelines compiled, buffers first written), then `steps` timed steps on synthetic tokens.
import { presetConfig, trainStepFlops, type PresetName } from '../core/model/config.ts';
import type { ModelBatch } from '../model/gpt.ts';
import { GpuTrainer } from '../model/trainer.ts';
import { initParams } from '../model/init.ts';
import { UserFacingError, type JobContext } from '../train/context.ts';
import type { AdapterSummary } from './protocol.ts';

export interface StepTimeSpec {
  kind: 'steptime';
  preset: PresetName;
  vocabSize: number;
  batch: number;
  T: number;
  /** Timed steps after the warm-up (default 1). */
  steps?: number;
}

export interface StepTimeResult {
  preset: PresetName;
  vocabSize: number;
  batch: number;
  T: number;
  /** Median seconds of the timed steps (the warm-up step excluded). */
  seconds: number;
  warmupSeconds: number;
  /** FLOPs of one such step (trainStepFlops): seconds and FLOPs give the throughput. */
  stepFlops: number;
  /** The device measured (its description names vendor, architecture and device). */
  adapter: AdapterSummary;
}

const MAX_TIMED_STEPS = 8;

/** Synthetic tokens: the kernels' time does not depend on their values. */
function syntheticBatch(B: number, T: number, vocab: number, k: number): ModelBatch {
  const n = B * T;
  const inputs = new Uint32Array(n);
  const targets = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    inputs[i] = (i * 131 + k * 17 + 7) % vocab;
    targets[i] = (i * 131 + k * 17 + 138) % vocab;
  }
  return { B, T, inputs, targets };
}

function checkSpec(spec: StepTimeSpec): number {
  const steps = spec.steps ?? 1;
  const ints: [string, number, number][] = [
    ['batch', spec.batch, 1024],
    ['T', spec.T, 1 << 16],
    ['vocabSize', spec.vocabSize, 1 << 20],
    ['steps', steps, MAX_TIMED_STEPS],
  ];
  for (const [name, v, max] of ints) {
    if (!Number.isInteger(v) || v < 1 || v > max) throw new UserFacingError(`A step-time measurement needs ${name} from 1 to ${max}; got ${v}.`);
  }
  return steps;
}

export async function runStepTimeJob(spec: StepTimeSpec, ctx: JobContext): Promise<StepTimeResult> {
  const steps = checkSpec(spec);
  let config;
  try {
    config = presetConfig(spec.preset, { vocabSize: spec.vocabSize });
  } catch (e) {
    throw new UserFacingError((e as Error).message);
  }
  if (spec.T > config.contextLength)
    throw new UserFacingError(`A step-time measurement of ${spec.preset} needs T at most its context, ${config.contextLength}; got ${spec.T}.`);
  const rt = ctx.rt;
  const model = await GpuTrainer.create(rt, config, { batch: spec.batch, T: spec.T });
  try {
    model.setParams(initParams(config, 1));
    const times: number[] = [];
    for (let k = 0; k <= steps; k++) {
      await ctx.step();
      const t0 = performance.now();
      // Reading the loss back waits for the step's GPU work to finish.
      await model.trainStep(syntheticBatch(spec.batch, spec.T, config.vocabSize, k), 1e-4, { loss: true });
      times.push((performance.now() - t0) / 1000);
    }
    const timed = times.slice(1).sort((a, b) => a - b);
    return {
      preset: spec.preset,
      vocabSize: config.vocabSize,
      batch: spec.batch,
      T: spec.T,
      seconds: timed[Math.floor(timed.length / 2)],
      warmupSeconds: times[0],
      stepFlops: trainStepFlops(config, spec.batch, spec.T),
      adapter: { description: rt.describe(), isFallbackAdapter: rt.report.isFallbackAdapter },
    };
  } finally {
    model.dispose();
  }
}
