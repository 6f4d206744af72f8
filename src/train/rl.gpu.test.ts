// GSPO's evaluation on held-out turns and the choice of the best checkpoint, on tiny runs.
import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../envs/generate.ts';
import { DIMENSIONS } from '../core/judge/types.ts';
import type { Trajectory } from '../core/schema/types.ts';
import { splitByTrajectory } from '../core/turns/index.ts';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { runTraining, type TrainHost, type TrainSpec } from './pipeline.ts';

const data: Trajectory[] = generateTrajectories('terminal', 40, 7);
const RL: TrainSpec = {
  kind: 'train',
  stage: 'rl',
  preset: 'micro',
  vocabSize: 300,
  steps: 4,
  T: 40,
  seed: 2,
  evalEvery: 1,
  rl: { groupSize: 2, promptsPerStep: 2, maxNewTokens: 6, evalSamples: 3 },
};

describe('RL evaluation (micro)', () => {
  it('evaluates on eval-split turns every N steps and keeps the best checkpoint by the held-out reward', async () => {
    const rt = await gpuRuntime();
    const split = splitByTrajectory(data, { evalFraction: 0.1, seed: RL.seed });
    const evalIds = new Set(split.eval.map((t) => t.id));
    const seen: { phase: string; id: string }[] = [];
    const metrics: { step: number; values: Record<string, number> }[] = [];
    const best: number[] = [];
    let lastAt2: Uint8Array | undefined;
    // A toy reward that varies with the prediction, so evaluations differ between steps.
    const toy: TrainHost['reward'] = (prediction, sample, phase) => {
      seen.push({ phase, id: sample.trajectoryId });
      return { reward: [...prediction].filter((c) => /[a-z]/.test(c)).length / Math.max(1, prediction.length) };
    };
    const host: TrainHost = {
      rt,
      step: async () => {},
      log: () => {},
      metric: (step, values) => metrics.push({ step, values }),
      checkpoint: (b, info) => {
        if (info.tag === 'best') best.push(info.step);
        if (info.tag === 'last' && info.step === 2) lastAt2 = b;
      },
      reward: toy,
    };
    const r = await runTraining(RL, data, host);
    const evals = metrics.filter((m) => 'eval_reward' in m.values);
    expect(evals.map((m) => m.step)).toEqual([1, 2, 3, 4]);
    // Evaluation judged only held-out turns, 3 per evaluation; rollouts only training turns.
    const evalSeen = seen.filter((s) => s.phase === 'eval');
    expect(evalSeen.length).toBe(12);
    expect(evalSeen.every((s) => evalIds.has(s.id))).toBe(true);
    expect(seen.filter((s) => s.phase === 'train').every((s) => !evalIds.has(s.id))).toBe(true);
    // The best checkpoint follows the running maximum of the held-out reward, not the rollouts'.
    let max = -Infinity;
    const expected: number[] = [];
    for (const m of evals) if (m.values.eval_reward > max) (max = m.values.eval_reward), expected.push(m.step);
    expect(best).toEqual(expected);
    expect(r.best).toMatchObject({ step: expected.at(-1), evalReward: max });
    // Resumed from step 2 with a best so far that no evaluation reaches: no new 'best', and the
    // old best is what the run reports. Without it, the first evaluation after resuming wins.
    const resumedBest: number[] = [];
    const resumedHost = {
      ...host,
      checkpoint: (_b: Uint8Array, info: { step: number; tag: string }) => void (info.tag === 'best' && resumedBest.push(info.step)),
    };
    const resumed = await runTraining({ ...RL, steps: 3 }, data, resumedHost, lastAt2, { bestSoFar: { step: 2, evalLoss: -1e9 } });
    expect(resumedBest).toEqual([]);
    expect(resumed.best).toMatchObject({ step: 2, evalReward: 1e9 });
    await runTraining({ ...RL, steps: 3 }, data, resumedHost, lastAt2);
    expect(resumedBest).toEqual([3]);
    // The ratio spread of each rollout batch: the first group's ratios are exactly 1.
    const steps = metrics.filter((m) => 'reward' in m.values);
    for (const m of steps) {
      expect(m.values.ratio_min).toBeLessThanOrEqual(1);
      expect(m.values.ratio_max).toBeGreaterThanOrEqual(1);
      expect(Number.isFinite(m.values.ratio_std)).toBe(true);
    }
  });

  it('with the local judge and the Turing reward: binary rollout rewards, rubric dimensions on held-out turns', async () => {
    const rt = await gpuRuntime();
    const metrics: { step: number; values: Record<string, number> }[] = [];
    await runTraining({ ...RL, steps: 2, evalEvery: 2, rl: { ...RL.rl, reward: 'turing' } }, data, {
      rt,
      step: async () => {},
      log: () => {},
      metric: (step, values) => metrics.push({ step, values }),
      checkpoint: () => {},
    });
    const rollouts = metrics.filter((m) => 'reward' in m.values);
    for (const m of rollouts) {
      // 4 binary rewards a step: the mean is a multiple of 1/4.
      expect(Number.isInteger(m.values.reward * 4)).toBe(true);
      expect(m.values.reward_judge).toBeUndefined();
      expect(m.values.verifier_pass).toBeGreaterThanOrEqual(0);
    }
    const ev = metrics.find((m) => 'eval_reward' in m.values)!.values;
    for (const d of DIMENSIONS) expect(ev[`eval_judge_${d}`]).toBeGreaterThanOrEqual(1);
    expect(ev.eval_verifier_pass).toBeGreaterThanOrEqual(0);
    expect(ev.eval_failed).toBe(0);
    expect(ev.eval_reward).toBeGreaterThanOrEqual(0.9 * 5);
  });
});
