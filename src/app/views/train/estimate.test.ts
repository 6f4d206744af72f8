import { describe, expect, it } from 'vitest';
import { presetConfig, trainStepFlops } from '../../../core/model/config.ts';
import { LAPTOP_GPU_FLOPS, RECIPES, recipeCost, type Recipe } from '../../../train/recipe.ts';
import type { StepTimeResult } from '../../../jobs/steptime.ts';
import {
  cpuFallbackName,
  customRunFlops,
  customTimeText,
  formatDuration,
  measuredText,
  recipeSecondsHere,
  recipeStepTimeSpec,
  recipeTimeText,
} from './estimate.ts';

const quick = RECIPES.quick;
const quickStep = trainStepFlops(presetConfig('quick', { vocabSize: 1024 }), 16, 256);
const SWIFTSHADER = { description: 'google / swiftshader / SwiftShader Device (Subzero)', isFallbackAdapter: false };
const GPU = { description: 'nvidia / ampere / NVIDIA GeForce RTX 3060 Laptop GPU', isFallbackAdapter: false };

function measured(seconds: number, adapter = GPU): StepTimeResult {
  return { preset: 'quick', vocabSize: 1024, batch: 16, T: 256, seconds, warmupSeconds: seconds * 3, stepFlops: quickStep, adapter };
}

describe('time estimates', () => {
  it('measure the step of the quick recipe’s stage: its preset, vocabulary, batch and sequence length', () => {
    expect(recipeStepTimeSpec(quick)).toEqual({ kind: 'steptime', preset: 'quick', vocabSize: 1024, batch: 16, T: 256, steps: 1 });
    expect(recipeStepTimeSpec(quick, GPU)).toEqual(recipeStepTimeSpec(quick));
    expect(recipeCost(quick).stepFlops[0]).toBe(quickStep);
  });

  it('on a CPU fallback times one sequence of the same model and length, and scales it by FLOPs to the recipe’s batch', () => {
    expect(recipeStepTimeSpec(quick, SWIFTSHADER)).toEqual({ kind: 'steptime', preset: 'quick', vocabSize: 1024, batch: 1, T: 256, steps: 1 });
    const one = trainStepFlops(presetConfig('quick', { vocabSize: 1024 }), 1, 256);
    const m: StepTimeResult = { ...measured(1.25, SWIFTSHADER), batch: 1, stepFlops: one };
    expect(recipeSecondsHere(quick, m)).toBeCloseTo(2000 * 1.25 * (quickStep / one), 6);
    expect(quickStep / one).toBeCloseTo(16, 9);
    expect(recipeTimeText(quick, SWIFTSHADER, m)).toBe(
      'This adapter is a CPU fallback (SwiftShader): the quick recipe would take about 11 hours here; on a laptop GPU about 4 minutes.',
    );
    expect(measuredText(m, quick)).toBe(
      `measured: 1.3 s per step of 1 × 256 tokens of quick (warm-up step excluded, scaled by FLOPs to the recipe’s 16 × 256), ${(one / 1.25 / 1e9).toPrecision(2)} GFLOP/s`,
    );
    expect(measuredText(measured(0.12), quick)).not.toContain('scaled');
  });

  it('a recipe takes its steps × the measured step time; a stage of another shape is scaled by FLOPs', () => {
    expect(recipeSecondsHere(quick, measured(0.5))).toBeCloseTo(2000 * 0.5, 9);
    // A second stage of half the sequence length (a bit under half the FLOPs per step: attention is quadratic).
    const two: Recipe = { ...quick, stages: [quick.stages[0], { ...quick.stages[0], stage: 'sft', steps: 1000, T: 128 }] };
    const half = trainStepFlops(presetConfig('quick', { vocabSize: 1024 }), 16, 128);
    expect(recipeSecondsHere(two, measured(0.5))).toBeCloseTo(1000 + 1000 * 0.5 * (half / quickStep), 6);
  });

  it('says durations the way a person reads them', () => {
    expect(formatDuration(1)).toBe('about 1 second');
    expect(formatDuration(42.4)).toBe('about 42 seconds');
    expect(formatDuration(290)).toBe('about 5 minutes');
    expect(formatDuration(11 * 3600 + 600)).toBe('about 11 hours');
    expect(formatDuration(5 * 86400)).toBe('about 5 days');
    expect(formatDuration(Number.NaN)).toBe('an unknown time');
  });

  it('names a CPU fallback from the adapter info or the fallback flag', () => {
    expect(cpuFallbackName(SWIFTSHADER)).toBe('SwiftShader');
    expect(cpuFallbackName({ description: 'mesa / llvmpipe (LLVM 15.0.6, 256 bits)', isFallbackAdapter: false })).toBe('llvmpipe');
    expect(cpuFallbackName({ description: 'unknown / unknown (fallback adapter)', isFallbackAdapter: true })).toBe('a software adapter');
    expect(cpuFallbackName(GPU)).toBeNull();
    expect(cpuFallbackName(null)).toBeNull();
  });

  it('on a CPU fallback says so plainly, with the hours it would take here and the laptop-GPU time', () => {
    const laptop = recipeCost(quick).flops / LAPTOP_GPU_FLOPS;
    expect(laptop).toBeGreaterThan(200);
    expect(laptop).toBeLessThan(400);
    // 20 s a step on SwiftShader: 2,000 steps are 11 hours.
    expect(recipeTimeText(quick, SWIFTSHADER, measured(20, SWIFTSHADER))).toBe(
      'This adapter is a CPU fallback (SwiftShader): the quick recipe would take about 11 hours here; on a laptop GPU about 4 minutes.',
    );
    // Before the measurement: the fallback is named, no number is made up.
    expect(recipeTimeText(quick, SWIFTSHADER, null)).toBe(
      'This adapter is a CPU fallback (SwiftShader): training here is far slower than on a GPU. Measuring a step to say how long the quick recipe would take here; on a laptop GPU about 4 minutes.',
    );
  });

  it('on a GPU gives the time here from the measured step', () => {
    expect(recipeTimeText(quick, GPU, measured(0.12))).toBe('Expected time on this adapter: about 4 minutes; on a laptop GPU about 4 minutes.');
    expect(recipeTimeText(quick, GPU, null)).toBe('Expected time: on a laptop GPU about 4 minutes; measure a step to see it on this adapter.');
    expect(measuredText(measured(0.12))).toBe(
      `measured: 120 ms per step of 16 × 256 tokens of quick (warm-up step excluded), ${(quickStep / 0.12 / 1e9).toPrecision(2)} GFLOP/s`,
    );
    expect(measuredText(measured(21.4, SWIFTSHADER))).toMatch(/^measured: 21 s per step/);
  });

  it('a custom run costs its FLOPs at the measured throughput, beside what the quick recipe trains', () => {
    const run = { stage: 'sft' as const, preset: 'mini', steps: 40, batch: 4, T: 512 };
    const flops = trainStepFlops(presetConfig('mini'), 4, 512) * 40;
    expect(customRunFlops(run)).toBe(flops);
    const m = measured(20, SWIFTSHADER);
    const seconds = flops / (quickStep / 20);
    const ratio = Math.round(recipeCost(quick).flops / flops);
    expect(customTimeText(run, quick, m)).toBe(
      `This run: 40 steps of 4 × 512 tokens, ${flops.toExponential(1).replace('e+', 'e')} FLOPs (the quick recipe trains ${ratio}× that): ${formatDuration(seconds)} of training steps on this adapter (the measured step scaled by FLOPs; evaluations add to it).`,
    );
    expect(customTimeText(run, quick, null)).toMatch(
      /^This run: 40 steps of 4 × 512 tokens, .* FLOPs \(the quick recipe trains \d+× that\)\. Measure a step to see how long it takes on this adapter\.$/,
    );
    expect(customTimeText({ ...run, stage: 'rl' }, quick, m)).toBe('No time estimate for RL: its steps generate rollouts as well as train.');
    expect(customTimeText({ ...run, hf: true }, quick, m)).toBe('No time estimate for a Hugging Face folder’s model.');
    expect(customTimeText({ ...run, steps: Number.NaN }, quick, m)).toBe('Fix the steps, batch and tokens to see this run’s cost.');
    expect(customRunFlops({ ...run, preset: 'huge' })).toBeNull();
  });
});
