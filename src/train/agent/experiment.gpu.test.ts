// The four-agent Sim RL experiment (and its shuffled-reward control) on the GPU, at CI shapes: every arm's curve on the same
// held-out tasks, the sim-to-real gap of a world model that flatters every probe, and a run cut
// off after any saved state goes on to exactly the state of a run never cut off.
import { describe, expect, it } from 'vitest';
import { isTurnRequest, type LwmBackend } from '../../core/backend.ts';
import { listTasks } from '../../envs/tasks/index.ts';
import { gpuRuntime } from '../../gpu/testing/runtime.ts';
import { type AgentExperimentState, experimentResults, newAgentExperiment, runAgentExperiment } from './experiment.ts';
import { AGENT_DEFAULTS, type AgentTrainSpec } from './run.ts';
import { answerKey } from './simWorld.ts';

const TRAIN: AgentTrainSpec = {
  ...AGENT_DEFAULTS,
  domain: 'terminal',
  families: ['write_word'],
  preset: 'micro',
  T: 64,
  trainTasks: 8,
  evalTasks: 3,
  sftSteps: 2,
  rlSteps: 2,
  batch: 4,
  group: 2,
  tasksPerStep: 1,
  evalEvery: 2,
  maxTurns: 1,
  maxNewTokens: 8,
  seed: 5,
};

/** A world model that answers every probe with the answer key: each simulated episode looks solved. */
function flatterer(): LwmBackend {
  const tasks = listTasks({ split: 'train', count: TRAIN.trainTasks, domains: ['terminal'], families: ['write_word'] });
  return {
    name: 'flatterer',
    async *generate(r) {
      if (!isTurnRequest(r)) throw new Error('turn requests only');
      // Probes name files from home (`cat note.txt`), so several tasks share one: the goal in the prompt tells which.
      const desc = typeof r.sample.systemPrompt === 'string' ? r.sample.systemPrompt : r.sample.systemPrompt.task_description;
      const task = tasks.find((t) => answerKey(t).probe === r.sample.action && desc.includes(t.goal));
      yield task ? answerKey(task).expected : '';
    },
  };
}

class Cut extends Error {}

async function run(state: AgentExperimentState, cutAfter = Infinity) {
  const rt = await gpuRuntime();
  const saved: AgentExperimentState[] = [];
  const metrics: string[] = [];
  const logs: string[] = [];
  try {
    const final = await runAgentExperiment(state, {
      rt,
      world: { backend: flatterer(), options: { maxTokens: 16, temperature: 0 } },
      log: (m) => logs.push(m),
      metric: (phase, step) => metrics.push(`${phase}:${step}`),
      async save(s) {
        saved.push(s);
        if (saved.length >= cutAfter) throw new Cut();
      },
    });
    return { final, saved, metrics, logs };
  } catch (e) {
    if (e instanceof Cut) return { final: null, saved, metrics, logs };
    throw e;
  }
}

/** The state without its checkpoints' bytes, for comparing runs. */
const shape = (s: AgentExperimentState) => ({
  ...s,
  imitation: !!s.imitation,
  modelFinal: !!s.modelFinal,
  cursor: s.cursor && { ...s.cursor, checkpoint: true },
});

describe('the Sim RL experiment (micro, CI shapes)', () => {
  it('evaluates every arm on the same held-out tasks, measures the gap in the world model, and resumes a cut run to the same end', async () => {
    const spec = { train: TRAIN, arms: ['model-real', 'imitation', 'model', 'shuffled', 'real'] as const, world: 'flatterer' };
    const whole = await run(newAgentExperiment({ ...spec, arms: [...spec.arms] }));
    const s = whole.final!;
    expect(s.done).toBe(true);
    // Arms in their fixed order; model-real after model, whose policy it goes on from.
    expect(s.arms.map((a) => a.arm)).toEqual(['imitation', 'real', 'shuffled', 'model', 'model-real']);
    expect(s.untrained).toMatchObject({ phase: 'untrained', n: 3 });
    expect(s.imitationEval).toMatchObject({ phase: 'sft', step: 2, n: 3 });
    const steps = Object.fromEntries(s.arms.map((a) => [a.arm, a.evals.map((e) => e.step)]));
    expect(steps).toEqual({ imitation: [0], real: [0, 2], shuffled: [0, 2], model: [0, 2], 'model-real': [2, 4] });
    for (const a of s.arms) for (const e of a.evals) expect(e.n).toBe(3);
    // Each arm starts where the imitation policy (or, for model-real, the model arm) ended.
    const byArm = Object.fromEntries(s.arms.map((a) => [a.arm, a]));
    expect(byArm.real.evals[0].success).toBe(s.imitationEval!.success);
    expect(byArm['model-real'].evals[0].success).toBe(byArm.model.evals[1].success);
    // The control's first step plays the real arm's episodes (same policy, tasks and seeds); only the rewards' order differs.
    expect(byArm.shuffled.evals[0].success).toBe(s.imitationEval!.success);
    for (const k of ['reward', 'success', 'format', 'turns', 'moves']) expect(byArm.shuffled.steps[0].values[k]).toBe(byArm.real.steps[0].values[k]);
    expect(byArm.shuffled.gap.n).toBe(0);
    // The flatterer's simulated episodes all look solved; the real check disagrees wherever they failed.
    const model = byArm.model;
    expect(model.gap.n).toBe(TRAIN.rlSteps * TRAIN.group * TRAIN.tasksPerStep);
    for (const st of model.steps) expect(st.values.success).toBe(1);
    const realWins = model.steps.reduce((n, st) => n + st.values.real_success * TRAIN.group, 0);
    expect(model.gap.disagree).toBe(model.gap.n - realWins);
    // Each step the simulation misled the agent says where: one episode, its actions, the world
    // model's answer to the probe and the real check's reason.
    const misled = whole.logs.filter((l) => l.includes('rewarded by the simulation alone'));
    const stepsMisled = model.steps.filter((st) => st.values.sim_only > 0);
    expect(stepsMisled.length).toBeGreaterThan(0);
    expect(misled.map((l) => Number(/alone \((\d+) of 2\)/.exec(l)?.[1]))).toEqual(stepsMisled.map((st) => st.values.sim_only));
    for (const l of misled)
      expect(l).toMatch(
        /e\.g\. terminal\/write_word\/\d+, "write the word \w+ into the file ~\/\S+": \[.*\], then cat \S+ → the world model "\w+\\n\S+"; the real check: ~\/\S+ /,
      );
    expect(byArm.real.gap.n).toBe(0);
    expect(byArm['model-real'].gap.n).toBe(0);
    const results = experimentResults(s);
    expect(results.map((r) => r.arm)).toEqual(['imitation', 'real', 'shuffled', 'model', 'model-real']);
    for (const r of results) {
      expect(r.pVsUntrained).toBeGreaterThan(0);
      expect(r.pVsUntrained).toBeLessThanOrEqual(1);
    }
    expect(results[3].simToRealGap).toBe(model.gap.disagree / model.gap.n);
    expect(results[0].simToRealGap).toBeNull();
    // Each RL arm has its p against the control; the control and the imitation arm none.
    for (const r of results) expect(r.pVsShuffled === null).toBe(r.arm === 'imitation' || r.arm === 'shuffled');
    // Saved after the untrained evaluation, imitation, and each RL evaluation and arm's end.
    expect(whole.saved.length).toBe(12);
    expect(whole.saved.at(-1)!.done).toBe(true);

    // Cut off after the 4th save (the real arm's policy after its RL steps), then resumed from that saved state.
    const cut = await run(newAgentExperiment({ ...spec, arms: [...spec.arms] }), 4);
    expect(cut.final).toBeNull();
    const last = cut.saved.at(-1)!;
    expect(last.done).toBe(false);
    expect(last.cursor).not.toBeNull();
    const resumed = await run(last);
    expect(shape(resumed.final!)).toEqual(shape(s));
    // Nothing done before the cut is done again: no second untrained evaluation or imitation.
    expect(resumed.metrics).not.toContain('untrained:0');
    expect(resumed.metrics.filter((m) => m.startsWith('sft:'))).toEqual([]);
  }, 600_000);

  it('refuses arms it cannot run, and a world-model arm without a world model', async () => {
    expect(() => newAgentExperiment({ train: TRAIN, arms: [] })).toThrow(/at least one arm/);
    expect(() => newAgentExperiment({ train: TRAIN, arms: ['model-real'] })).toThrow(/goes on from the 'model' arm/);
    expect(() => newAgentExperiment({ train: TRAIN, arms: ['real', 'real'] })).toThrow(/named twice/);
    expect(() => newAgentExperiment({ train: TRAIN, arms: ['sky' as never] })).toThrow(/unknown arm 'sky'/);
    expect(() => newAgentExperiment({ train: { ...TRAIN, rlSteps: 0 }, arms: ['real'] })).toThrow(/rlSteps ≥ 1/);
    const rt = await gpuRuntime();
    await expect(
      runAgentExperiment(newAgentExperiment({ train: TRAIN, arms: ['model'] }), { rt, log: () => {}, metric: () => {}, save: async () => {} }),
    ).rejects.toThrow(/need a world model/);
  });
});
