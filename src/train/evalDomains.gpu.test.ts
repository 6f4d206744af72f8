// Evaluation across domains on tiny runs: the eval loss, the judged samples and RL's held-out
// turns cover every domain of the data, each with its own figures (`<metric>/<domain>`).
import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../envs/generate.ts';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { runTraining, type TrainHost, type TrainSpec } from './pipeline.ts';

// Three domains, one after the other as in a file sorted by domain.
const DOMAINS = ['mcp', 'os', 'web'] as const;
const data = DOMAINS.flatMap((d) => generateTrajectories(d, 10, 4));

function recorder(rt: TrainHost['rt']) {
  const metrics: Record<string, number>[] = [];
  const logs: string[] = [];
  const host: TrainHost = { rt, step: async () => {}, log: (m) => logs.push(m), metric: (_, v) => metrics.push(v), checkpoint: () => {} };
  return { host, metrics, logs };
}

describe('evaluation across domains (micro)', () => {
  it('SFT: eval_loss and eval_judge_mean per domain, every domain in the eval batches and judged samples', async () => {
    const rt = await gpuRuntime();
    const r = recorder(rt);
    const spec: TrainSpec = {
      kind: 'train',
      stage: 'sft',
      preset: 'micro',
      vocabSize: 300,
      steps: 1,
      batch: 4,
      T: 48,
      evalEvery: 1,
      evalBatches: 1,
      evalJudgeSamples: 3,
      seed: 1,
      rl: { maxNewTokens: 4 },
    };
    const result = await runTraining(spec, data, r.host);
    const ev = r.metrics.find((m) => 'eval_loss' in m)!;
    const losses = DOMAINS.map((d) => ev[`eval_loss/${d}`]);
    for (const l of losses) expect(l).toBeGreaterThan(0);
    // One batch: the loss over all is a token-weighted mean of the domains' losses.
    expect(ev.eval_loss).toBeGreaterThanOrEqual(Math.min(...losses) - 1e-4);
    expect(ev.eval_loss).toBeLessThanOrEqual(Math.max(...losses) + 1e-4);
    for (const d of DOMAINS) expect(ev[`eval_judge_mean/${d}`]).toBeGreaterThanOrEqual(1);
    expect(Object.keys(result.evalByDomain!)).toEqual([...DOMAINS]);
    expect(result.evalByDomain!.os).toEqual({ eval_judge_mean: ev['eval_judge_mean/os'], eval_loss: ev['eval_loss/os'] });
    expect(r.logs.find((l) => l.startsWith('eval by domain at step 1: mcp eval_loss ') && l.includes('eval_judge_mean'))).toBeDefined();
  });

  it('data of one domain: its eval_loss is eval_loss, over several eval batches', async () => {
    const rt = await gpuRuntime();
    const r = recorder(rt);
    const spec: TrainSpec = {
      kind: 'train',
      stage: 'sft',
      preset: 'micro',
      vocabSize: 300,
      steps: 1,
      batch: 2,
      T: 32,
      evalEvery: 1,
      evalBatches: 3,
      evalJudgeSamples: 0,
      seed: 1,
    };
    await runTraining(spec, generateTrajectories('terminal', 30, 4), r.host);
    const ev = r.metrics.find((m) => 'eval_loss' in m)!;
    expect(ev['eval_loss/terminal']).toBeCloseTo(ev.eval_loss, 4);
  });

  it('RL: the held-out turns take one domain after another, eval_reward per domain', async () => {
    const rt = await gpuRuntime();
    const r = recorder(rt);
    const spec: TrainSpec = {
      kind: 'train',
      stage: 'rl',
      preset: 'micro',
      vocabSize: 300,
      steps: 1,
      T: 40,
      seed: 2,
      evalEvery: 1,
      rl: { groupSize: 2, promptsPerStep: 1, maxNewTokens: 4, evalSamples: 3 },
    };
    const held: string[] = [];
    const host: TrainHost = {
      ...r.host,
      reward: (_p, sample, phase) => (phase === 'eval' && held.push(sample.domain), { reward: sample.domain === 'os' ? 1 : 0 }),
    };
    const result = await runTraining(spec, data, host);
    expect(held.sort()).toEqual([...DOMAINS]);
    const ev = r.metrics.find((m) => 'eval_reward' in m)!;
    expect([ev['eval_reward/mcp'], ev['eval_reward/os'], ev['eval_reward/web']]).toEqual([0, 1, 0]);
    expect(ev.eval_reward).toBeCloseTo(1 / 3, 6);
    expect(result.evalByDomain).toEqual({ mcp: { eval_reward: 0 }, os: { eval_reward: 1 }, web: { eval_reward: 0 } });
  });
});
