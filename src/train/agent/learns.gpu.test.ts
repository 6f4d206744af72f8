// A micro agent learns from the real environment's reward in minutes, beyond chance (docs/method.md
// §13): from one policy, GSPO with the real reward and the same run with its rewards shuffled
// across each step's episodes, every agent played on the same 256 held-out write_word tasks with
// sampled actions (the distribution RL trains), and McNemar's exact test, paired on those tasks,
// between the trained agent and the agent before RL, and between it and the control.
//
// The policy (fixtures/write-word-half-solver.safetensors, from scripts/fixtures/agent-policy.sh)
// imitated a demonstrator that errs: the reference solver on half of the train tasks, one of the
// family's near misses on the rest. Greedily it solves nearly every task; its sampled actions
// repeat the near misses on about 60% of them, which is what the reward has to take out.
// Measured with these settings in Chromium and through `lwm agent train` on Dawn: 101 → 134 of
// 256 (43 tasks gained, 10 lost), while the control fell to 49.
import { describe, expect, it } from 'vitest';
import { fixtureBytes } from '../../gpu/testing/fixture.ts';
import { gpuRuntime } from '../../gpu/testing/runtime.ts';
import { pairedOneSided } from './episodes.ts';
import { AGENT_DEFAULTS, AgentSession, type AgentTrainSpec } from './run.ts';

const POLICY = new URL('./fixtures/write-word-half-solver.safetensors', import.meta.url);

const RL_STEPS = 8;
const SPEC: AgentTrainSpec = {
  ...AGENT_DEFAULTS,
  domain: 'terminal',
  families: ['write_word'],
  T: 64,
  maxNewTokens: 12,
  maxTurns: 1,
  evalTasks: 256,
  sftSteps: 0,
  rlSteps: RL_STEPS,
  evalEvery: RL_STEPS,
  // 8 tasks x 8 episodes a step, all in one update (on-policy: no ratio is clipped).
  batch: 64,
  rlLr: 3e-3,
  rlWarmup: 2,
  temperature: 1,
};

/** Significance each comparison must reach: one in a thousand (measured: 3·10⁻⁶ and 9·10⁻²⁰). */
const ALPHA = 1e-3;

describe('GSPO in the real environment (micro write_word agent)', () => {
  it('raises sampled held-out success beyond chance, against the policy before RL and against the shuffled-reward control', async () => {
    const rt = await gpuRuntime();
    const session = await AgentSession.open(SPEC, { rt, log: () => {}, metric: () => {} }, await fixtureBytes(POLICY));
    try {
      const before = await session.evaluate('start', 0);
      const start = await session.checkpoint();
      const arm = async (shuffle: boolean) => {
        session.restore(start, 'the policy before RL', false);
        const rewards: number[] = [];
        for (let step = 0; step < RL_STEPS; step++)
          rewards.push((await session.rlStep(step, RL_STEPS, false, shuffle ? 'shuffled' : 'rl', shuffle)).values.success);
        return { ev: await session.evaluate(shuffle ? 'shuffled' : 'rl', RL_STEPS), rewards };
      };
      const real = await arm(false);
      const control = await arm(true);
      // The shuffled control plays the same tasks with the same sampling seeds as the real arm.
      expect(control.rewards[0]).toBe(real.rewards[0]);

      const sampled = (e: typeof before) => {
        expect(e.n).toBe(256);
        expect(e.sampledSolved).toMatch(/^[01]{256}$/);
        return e.sampledSolved!;
      };
      const vsBefore = pairedOneSided(sampled(real.ev), sampled(before));
      const vsControl = pairedOneSided(sampled(real.ev), sampled(control.ev));
      const report = `before RL ${before.sampledSuccesses}/256, real reward ${real.ev.sampledSuccesses}, shuffled ${control.ev.sampledSuccesses}; vs before ${JSON.stringify(vsBefore)}, vs control ${JSON.stringify(vsControl)}`;
      console.log(`[learns] ${report}`);
      // The policy before RL makes mistakes to take out, and greedily it already copies the goal.
      expect(before.sampledSuccesses!, report).toBeGreaterThan(256 * 0.2);
      expect(before.sampledSuccesses!, report).toBeLessThan(256 * 0.7);
      expect(before.successes, report).toBeGreaterThan(256 * 0.9);
      expect(vsBefore.p, report).toBeLessThan(ALPHA);
      expect(vsControl.p, report).toBeLessThan(ALPHA);
      expect(real.ev.sampledSuccesses!, report).toBeGreaterThan(before.sampledSuccesses!);
      expect(real.ev.sampledSuccesses!, report).toBeGreaterThan(control.ev.sampledSuccesses!);
    } finally {
      session.dispose();
    }
  });
});
