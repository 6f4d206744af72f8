// Proof that the pipeline learns, on the micro preset at CI scale (SwiftShader): SFT beats the
// unigram baseline on held-out turns, CPT before SFT is compared with SFT alone, and GSPO on a
// toy reward raises the reward.
import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../core/envs/generate.ts';
import type { Trajectory } from '../core/schema/types.ts';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { runTraining, type TrainHost, type TrainSpec } from './pipeline.ts';

const data: Trajectory[] = generateTrajectories('terminal', 48, 7);

function host(rt: TrainHost['rt'], metrics: { step: number; values: Record<string, number> }[], extra: Partial<TrainHost> = {}): TrainHost {
  return { rt, step: async () => {}, log: () => {}, metric: (step, values) => metrics.push({ step, values }), checkpoint: () => {}, ...extra };
}

const last = (m: { values: Record<string, number> }[], key: string) => [...m].reverse().find((x) => key in x.values)!.values[key];

const SFT: TrainSpec = { kind: 'train', stage: 'sft', preset: 'micro', vocabSize: 384, steps: 120, batch: 4, T: 48, evalEvery: 120, evalBatches: 3, evalJudgeSamples: 0, seed: 1 };

describe('training learns (micro)', () => {
  it('SFT on one domain brings held-out loss below the unigram baseline', async () => {
    const rt = await gpuRuntime();
    const m: { step: number; values: Record<string, number> }[] = [];
    const r = await runTraining(SFT, data, host(rt, m));
    const evalLoss = last(m, 'eval_loss');
    const unigram = last(m, 'unigram_loss');
    console.log(`[learn] SFT ${SFT.steps} steps: held-out loss ${evalLoss.toFixed(3)} vs unigram ${unigram.toFixed(3)}; train loss ${m.find((x) => 'loss' in x.values)!.values.loss.toFixed(3)} → ${last(m, 'loss').toFixed(3)}`);
    expect(evalLoss).toBeLessThan(unigram);
    expect(r.best?.evalLoss).toBeCloseTo(evalLoss, 6);
  });

  it('CPT then SFT vs SFT alone, same SFT step budget', async () => {
    const rt = await gpuRuntime();
    const sftSteps = 60;
    const alone: { step: number; values: Record<string, number> }[] = [];
    await runTraining({ ...SFT, steps: sftSteps, evalEvery: sftSteps }, data, host(rt, alone));
    const cptMetrics: { step: number; values: Record<string, number> }[] = [];
    const cpt = await runTraining({ ...SFT, stage: 'cpt', steps: 60, evalEvery: 60 }, data, host(rt, cptMetrics));
    const after: { step: number; values: Record<string, number> }[] = [];
    await runTraining({ ...SFT, steps: sftSteps, evalEvery: sftSteps }, data, host(rt, after), cpt.checkpoint);
    const a = last(alone, 'eval_loss');
    const b = last(after, 'eval_loss');
    const verdict = b < a ? `beats SFT alone by ${(a - b).toFixed(3)} nats` : `does NOT beat SFT alone: worse by ${(b - a).toFixed(3)} nats`;
    console.log(`[learn] CPT (60 steps, loss ${last(cptMetrics, 'eval_loss').toFixed(3)}) then SFT ${sftSteps}: held-out ${b.toFixed(3)}; SFT alone ${sftSteps}: ${a.toFixed(3)} → CPT+SFT ${verdict}`);
    // The method's claim is that CPT helps; at this scale we require it not to hurt by more than 5%.
    expect(b, `CPT then SFT ${verdict}`).toBeLessThan(a * 1.05);
  });

  it('a few GSPO steps on a toy reward raise the mean reward', async () => {
    const rt = await gpuRuntime();
    const m: { step: number; values: Record<string, number> }[] = [];
    // Toy reward: the share of response characters that are digits. Checkable, graded, and
    // reachable from a fresh model whose samples are near-uniform over the vocabulary.
    const toy = (prediction: string) => {
      const chars = [...prediction];
      return { reward: chars.length ? chars.filter((c) => c >= '0' && c <= '9').length / chars.length : 0 };
    };
    await runTraining(
      { kind: 'train', stage: 'rl', preset: 'micro', vocabSize: 300, steps: 12, T: 48, seed: 2, lr: { peak: 3e-3, min: 3e-3, warmup: 0 }, evalEvery: 12, rl: { groupSize: 8, promptsPerStep: 2, maxNewTokens: 12, temperature: 1 } },
      data,
      host(rt, m, { reward: toy }),
    );
    const rewards = m.filter((x) => 'reward' in x.values).map((x) => x.values.reward);
    const first = (rewards[0] + rewards[1] + rewards[2]) / 3;
    const final = (rewards.at(-1)! + rewards.at(-2)! + rewards.at(-3)!) / 3;
    console.log(`[learn] GSPO toy reward: ${rewards.map((r) => r.toFixed(3)).join(' ')}; clip fraction ${last(m, 'clip_fraction').toFixed(2)}, mean ratio ${last(m, 'mean_ratio').toFixed(4)}`);
    expect(final).toBeGreaterThan(first);
    expect(m.every((x) => !('reward' in x.values) || Number.isFinite(x.values.share_update))).toBe(true);
  });
});
