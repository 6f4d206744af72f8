// The optimizer's settings and the learning-rate schedule: one definition, used by the GPU model
// (GpuTrainer fills its AdamW kernel from ADAMW_DEFAULTS), the training pipeline (lrAt per step) and
// the CPU oracle (src/reference/gpt.ts's ReferenceTrainer), so the parity test compares two
// engines under the same settings rather than two copies of them. It is plain data, so it lives in
// core/model/, where every layer may read it.
//
// Step convention everywhere: `step` is the 0-based index of the optimizer step about to be
// taken (Adam's bias-correction t is step + 1, inside the kernel and its twin).

/** AdamW's settings (the kernel's and its twin's; defaults: ADAMW_DEFAULTS below). */
export interface AdamWConfig {
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** Clip the global gradient norm to this; ≤ 0 disables clipping. */
  maxGradNorm: number;
}

/**
 * AdamW as nanoGPT / GPT-3 train small models: β2 = 0.95 recovers faster from loss spikes than
 * 0.999 at small batch; decoupled decay 0.1 on the matrices only (params.ts's decay segments);
 * the global gradient norm clipped to 1.
 */
export const ADAMW_DEFAULTS: Readonly<AdamWConfig> = {
  beta1: 0.9,
  beta2: 0.95,
  eps: 1e-8,
  weightDecay: 0.1,
  maxGradNorm: 1.0,
};

export interface LrSchedule {
  maxLr: number;
  /** Where the cosine ends (nanoGPT: maxLr / 10). */
  minLr: number;
  warmupSteps: number;
  /** Steps of the whole run; from here on the rate stays at minLr. */
  totalSteps: number;
}

/**
 * Learning rate of 0-based step `step`: linear warmup maxLr·(step+1)/warmup (so step 0 is
 * already non-zero), then a half cosine from maxLr down to minLr at totalSteps, then minLr.
 */
export function lrAt(step: number, s: LrSchedule): number {
  if (step < s.warmupSteps) return (s.maxLr * (step + 1)) / s.warmupSteps;
  if (step >= s.totalSteps) return s.minLr;
  const progress = (step - s.warmupSteps) / Math.max(1, s.totalSteps - s.warmupSteps);
  return s.minLr + 0.5 * (1 + Math.cos(Math.PI * progress)) * (s.maxLr - s.minLr);
}
