// What a run costs, in time on this adapter: a training step of the quick recipe's shape is
// measured on the worker's device (the 'steptime' job, src/jobs/steptime.ts), the recipe's time
// is that step time × its steps, and a custom run's is its FLOPs at the measured throughput. Pure,
// so the arithmetic and every sentence are tested without a browser (estimate.test.ts).
import { presetConfig, PRESETS, trainStepFlops, type PresetName } from '../../../core/model/config.ts';
import { LAPTOP_GPU_FLOPS, recipeCost, type Recipe, type RecipeStage } from '../../../train/recipe.ts';
import type { StepTimeResult, StepTimeSpec } from '../../../jobs/steptime.ts';
import type { Stage } from '../../../core/trainSpec.ts';

/** The adapter as the worker reports it (protocol.ts AdapterSummary; its description names vendor, architecture and device). */
export interface AdapterInfo {
  description: string;
  isFallbackAdapter: boolean;
}

const SOFTWARE_ADAPTERS: [RegExp, string][] = [
  [/swiftshader/i, 'SwiftShader'],
  [/llvmpipe/i, 'llvmpipe'],
  [/lavapipe/i, 'lavapipe'],
  [/warp|microsoft basic render/i, 'WARP'],
];

/**
 * The name of the software (CPU) implementation behind an adapter, or null for a GPU: one the
 * adapter info names, else 'a software adapter' when only `isFallbackAdapter` says so.
 */
export function cpuFallbackName(adapter: AdapterInfo | null | undefined): string | null {
  if (!adapter) return null;
  for (const [re, name] of SOFTWARE_ADAPTERS) if (re.test(adapter.description)) return name;
  return adapter.isFallbackAdapter ? 'a software adapter' : null;
}

/** A duration in words a person reads at a glance: "about 40 seconds", "about 5 minutes", "about 11 hours", "about 3 days". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return 'an unknown time';
  const about = (n: number, unit: string) => `about ${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds < 90) return about(Math.max(1, Math.round(seconds)), 'second');
  if (seconds < 90 * 60) return about(Math.round(seconds / 60), 'minute');
  if (seconds < 48 * 3600) return about(Math.round(seconds / 3600), 'hour');
  return about(Math.round(seconds / 86400), 'day');
}

/** FLOPs in words: "5.8e13 FLOPs". */
export function formatFlops(flops: number): string {
  return `${flops.toExponential(1).replace('e+', 'e')} FLOPs`;
}

/** The stage of a recipe whose step is measured: the one that takes the most FLOPs in all. */
export function measuredStage(recipe: Recipe): RecipeStage {
  const cost = recipeCost(recipe);
  let best = 0;
  cost.stepFlops.forEach((f, i) => {
    if (f * cost.steps[i] > cost.stepFlops[best] * cost.steps[best]) best = i;
  });
  return recipe.stages[best];
}

/**
 * The 'steptime' job that measures a recipe's step: its model, batch and sequence length, one
 * timed step after the warm-up. On a CPU fallback a step of the recipe's batch takes about a
 * minute (SwiftShader), so there one sequence of the same model and length is timed and scaled by
 * FLOPs (the time of such an adapter grows with the work: within ~10% at 1 and 16 sequences).
 */
export function recipeStepTimeSpec(recipe: Recipe, adapter?: AdapterInfo | null): StepTimeSpec {
  const s = measuredStage(recipe);
  return { kind: 'steptime', preset: s.preset, vocabSize: s.vocabSize, batch: cpuFallbackName(adapter) ? 1 : s.batch, T: s.T, steps: 1 };
}

/** Sustained training FLOP/s on this adapter, from a measured step. */
export function measuredThroughput(m: Pick<StepTimeResult, 'seconds' | 'stepFlops'>): number {
  return m.stepFlops / m.seconds;
}

/**
 * Seconds a recipe's training steps take here: each stage's steps × the measured step time,
 * scaled by FLOPs for a stage of another shape than the one measured. Evaluations add to it.
 */
export function recipeSecondsHere(recipe: Recipe, m: Pick<StepTimeResult, 'seconds' | 'stepFlops'>): number {
  const cost = recipeCost(recipe);
  return cost.stepFlops.reduce((t, f, i) => t + cost.steps[i] * m.seconds * (f / m.stepFlops), 0);
}

/** Seconds a recipe takes on a laptop GPU (LAPTOP_GPU_FLOPS of sustained throughput). */
export function recipeLaptopSeconds(recipe: Recipe): number {
  return recipeCost(recipe).flops / LAPTOP_GPU_FLOPS;
}

const recipeTitle = (recipe: Recipe) => `the ${recipe.name} recipe`;

/**
 * The recipe's expected time in one or two sentences: on a CPU fallback said plainly first (it
 * would take hours), else the time here from the measured step; the laptop-GPU time in both.
 */
export function recipeTimeText(recipe: Recipe, adapter: AdapterInfo | null, m: StepTimeResult | null): string {
  const laptop = `on a laptop GPU ${formatDuration(recipeLaptopSeconds(recipe))}`;
  const fallback = cpuFallbackName(m?.adapter ?? adapter);
  if (fallback) {
    const lead = `This adapter is a CPU fallback (${fallback})`;
    if (!m) return `${lead}: training here is far slower than on a GPU. Measuring a step to say how long ${recipeTitle(recipe)} would take here; ${laptop}.`;
    return `${lead}: ${recipeTitle(recipe)} would take ${formatDuration(recipeSecondsHere(recipe, m))} here; ${laptop}.`;
  }
  if (!m) return `Expected time: ${laptop}; measure a step to see it on this adapter.`;
  return `Expected time on this adapter: ${formatDuration(recipeSecondsHere(recipe, m))}; ${laptop}.`;
}

/** How the measurement was taken, for the line under the estimate; said to be scaled when the recipe's step is another shape. */
export function measuredText(m: StepTimeResult, recipe?: Recipe): string {
  const ms = m.seconds * 1000;
  const step = ms >= 10_000 ? `${m.seconds.toFixed(0)} s` : ms >= 1000 ? `${m.seconds.toFixed(1)} s` : `${ms.toFixed(0)} ms`;
  const s = recipe && measuredStage(recipe);
  const scaled = s && (s.batch !== m.batch || s.T !== m.T || s.preset !== m.preset) ? `, scaled by FLOPs to the recipe’s ${s.batch} × ${s.T}` : '';
  return `measured: ${step} per step of ${m.batch} × ${m.T} tokens of ${m.preset} (warm-up step excluded${scaled}), ${(measuredThroughput(m) / 1e9).toPrecision(2)} GFLOP/s`;
}

/** The run the custom form describes, as far as its cost goes. */
export interface CustomRunShape {
  stage: Stage;
  preset: string;
  vocabSize?: number;
  steps: number;
  batch: number;
  T: number;
  /** A run of a Hugging Face folder (its model is not a preset). */
  hf?: boolean;
}

/** FLOPs of a custom CPT or SFT run's training steps; null where there is no estimate (RL, a folder's model, an unknown preset). */
export function customRunFlops(run: CustomRunShape): number | null {
  if (run.stage === 'rl' || run.hf || !Object.hasOwn(PRESETS, run.preset)) return null;
  if (!(run.steps > 0 && run.batch > 0 && run.T > 0)) return null;
  const config = presetConfig(run.preset as PresetName, run.vocabSize ? { vocabSize: run.vocabSize } : {});
  return trainStepFlops(config, run.batch, run.T) * run.steps;
}

/**
 * The custom run's expected time, from the measured throughput scaled by its FLOPs, beside the
 * quick recipe's cost (so a person sees what a run that learns something costs).
 */
export function customTimeText(run: CustomRunShape, recipe: Recipe, m: StepTimeResult | null): string {
  if (run.stage === 'rl') return 'No time estimate for RL: its steps generate rollouts as well as train.';
  if (run.hf) return 'No time estimate for a Hugging Face folder’s model.';
  const flops = customRunFlops(run);
  if (flops === null) return 'Fix the steps, batch and tokens to see this run’s cost.';
  const cost = `This run: ${run.steps.toLocaleString('en-US')} steps of ${run.batch} × ${run.T} tokens, ${formatFlops(flops)}`;
  const ratio = recipeCost(recipe).flops / flops;
  const versus = ratio >= 2 ? ` (${recipeTitle(recipe)} trains ${Math.round(ratio).toLocaleString('en-US')}× that)` : '';
  if (!m) return `${cost}${versus}. Measure a step to see how long it takes on this adapter.`;
  return `${cost}${versus}: ${formatDuration(flops / measuredThroughput(m))} of training steps on this adapter (the measured step scaled by FLOPs; evaluations add to it).`;
}
