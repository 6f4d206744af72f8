// `lwm agent train` on the GPU, end to end through the CLI at CI shapes: a fresh policy trained by
// imitation then GSPO in the real environment, and that policy going on by GSPO in a world model
// (copy-last), with the files each run writes and the summary it prints.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSafetensors } from '../../core/model/safetensors.ts';
import { captureIO } from '../testing.ts';
import agent from './agentTrain.ts';
import type { AgentEval as Eval } from '../../train/agent/run.ts';

const TINY = [
  '--domain',
  'terminal',
  '--families',
  'write_word',
  '--tokens',
  '64',
  '--train-tasks',
  '4',
  '--eval-tasks',
  '2',
  '--tasks-per-step',
  '1',
  '--group',
  '2',
  '--batch',
  '4',
  '--max-turns',
  '1',
  '--max-new-tokens',
  '8',
  '--eval-every',
  '1',
  '--seed',
  '3',
];

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function train(...argv: string[]) {
  const io = captureIO();
  const code = await agent(['train', ...argv], io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

describe('lwm agent train (micro, CI shapes)', () => {
  it('trains a fresh policy in the real environment, then goes on from its checkpoint in a world model', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-agent-train-'));
    dirs.push(dir);
    const first = join(dir, 'real');
    const r = await train('--env', 'real', '--policy', 'micro', ...TINY, '--sft-steps', '2', '--rl-steps', '1', '-o', first);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(await readFile(join(first, 'summary.json'), 'utf8'));
    // The printed summary is the stored one.
    expect(JSON.parse(r.stdout)).toEqual(summary);
    expect(summary).toMatchObject({ env: 'real', domain: 'terminal', families: ['write_word'], sftSteps: 2, rlSteps: 1, T: 64 });
    expect(summary.evals.map((e: Eval) => `${e.phase}:${e.step}`)).toEqual(['untrained:0', 'sft:2', 'rl:1']);
    expect(summary.start).toEqual(summary.evals[0]);
    expect(summary.final).toEqual(summary.evals[2]);
    for (const e of summary.evals as Eval[]) {
      expect(e.n).toBe(2);
      expect(e.successes).toBeGreaterThanOrEqual(0);
      expect(e.successes).toBeLessThanOrEqual(2);
      expect(e.sampledSuccesses).toBeGreaterThanOrEqual(0);
      // Which held-out tasks each solved, in order, for the paired test.
      expect(e.solved).toMatch(/^[01]{2}$/);
      expect([...e.solved!].filter((c) => c === '1').length).toBe(e.successes);
      expect([...e.sampledSolved!].filter((c) => c === '1').length).toBe(e.sampledSuccesses);
    }
    const { gained, lost } = summary.tasksVsStart;
    const solvedAt = (e: Eval, i: number) => e.solved![i] === '1';
    expect(gained).toBe([0, 1].filter((i) => solvedAt(summary.final, i) && !solvedAt(summary.start, i)).length);
    expect(lost).toBe([0, 1].filter((i) => !solvedAt(summary.final, i) && solvedAt(summary.start, i)).length);
    // McNemar's exact one-sided p: P(X ≥ gained), X binomial(gained + lost, ½).
    const disagree = gained + lost;
    const C = (n: number, k: number): number => (k === 0 || k === n ? 1 : C(n - 1, k - 1) + C(n - 1, k));
    let p = 0;
    for (let x = gained; x <= disagree; x++) p += C(disagree, x) / 2 ** disagree;
    expect(summary.pFinalVsStart).toBeCloseTo(p, 12);
    // No world model: no sim-to-real gap.
    expect(summary).not.toHaveProperty('simToRealGap');
    const metrics = (await readFile(join(first, 'metrics.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(metrics.filter((m) => m.phase === 'sft').map((m) => m.step)).toEqual([1, 2, 2]);
    const rl = metrics.find((m) => m.phase === 'rl' && 'reward' in m);
    expect(rl).toMatchObject({ step: 1 });
    for (const k of ['reward', 'success', 'format', 'loss', 'clip_fraction', 'mean_ratio', 'time_s']) expect(Number.isFinite(rl[k]), k).toBe(true);
    const policy = join(first, 'policy.safetensors');
    const st = readSafetensors(new Uint8Array(await readFile(policy)));
    expect(st.tensors.length).toBeGreaterThan(0);

    // Going on from that policy: the first evaluation is of it (phase start), greedy and on the
    // same held-out tasks, so it matches the first run's final one.
    const second = join(dir, 'model');
    const m = await train('--env', 'model', '--world', 'copy-last', '--policy', policy, ...TINY, '--sft-steps', '0', '--rl-steps', '1', '-o', second);
    expect(m.code, m.stderr).toBe(0);
    const s2 = JSON.parse(m.stdout);
    expect(s2).toMatchObject({ env: 'model', world: 'copy-last', sftSteps: 0, rlSteps: 1 });
    expect(s2.evals.map((e: Eval) => `${e.phase}:${e.step}`)).toEqual(['start:0', 'rl:1']);
    const { phase: _a, ...startRest } = s2.start as Eval;
    const { phase: _b, step: _c, ...firstFinal } = summary.final as Eval;
    expect({ ...startRest, step: 0 }).toEqual({ ...firstFinal, step: 0 });
    // Every simulated episode of the one RL step (1 task x group 2) is compared with the real check.
    expect(s2.simulatedEpisodes).toBe(2);
    expect(s2.simToRealGap).toBeGreaterThanOrEqual(0);
    expect(s2.simToRealGap).toBeLessThanOrEqual(1);
  });
});
