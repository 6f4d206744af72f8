// The Sim RL experiment (docs/method.md §13): four agents on the same held-out tasks, measured in
// the real environment. All start from one imitation policy (SFT on the reference solvers):
//   imitation   no RL: the imitation policy itself, a flat line;
//   real        GSPO in the real environment;
//   model       GSPO in the world model (its reward from the simulated check);
//   model-real  the model arm's final policy, then as many GSPO steps in the real environment;
//   shuffled    (a control, asked for by name) GSPO in the real environment with each step's
//               rewards permuted across its episodes: the real arm's run with no link between an
//               episode and its reward, so what the real arm gains over it the reward taught.
// The state is plain data (checkpoints as bytes) saved after every evaluation, so a run goes on
// after a reload from its last saved evaluation, with the same batches and seeds.
import { UserFacingError } from '../context.ts';
import { evalP } from './episodes.ts';
import { type AgentEval, type AgentHost, AgentSession, type AgentStart, type AgentTrainSpec } from './run.ts';

export type AgentArm = 'imitation' | 'real' | 'shuffled' | 'model' | 'model-real';
/** Every arm, in the order they run. */
export const AGENT_ARMS: readonly AgentArm[] = ['imitation', 'real', 'shuffled', 'model', 'model-real'];
/** The four agents the experiment compares when no arms are named (the control is asked for by name). */
export const DEFAULT_ARMS: readonly AgentArm[] = ['imitation', 'real', 'model', 'model-real'];

/** What each arm is, in words (UI legends, logs). */
export const ARM_LABELS: Record<AgentArm, string> = {
  imitation: 'untrained by RL (imitation only)',
  real: 'RL in the real environment',
  shuffled: 'RL in the real environment, rewards shuffled (control)',
  model: 'RL in the world model',
  'model-real': 'RL in the world model, then in the real environment',
};

export interface AgentExperimentSpec {
  /** The settings all arms share; rlSteps is each RL stage's length. */
  train: AgentTrainSpec;
  /** The arms to run, in this order ('model' and 'model-real' need a world model). */
  arms: AgentArm[];
  /** The world model's name, as the user gave it (shown beside the curves). */
  world?: string;
  /** An endpoint world's model id, where the user named one (lwm agent experiment --world-model). */
  worldModel?: string;
  /**
   * A Hugging Face policy instead of a fresh model of the preset: its folder (a model folder, or an
   * adapter folder on one) and, for a fresh adapter, its LoRA settings. The run is given the
   * folder's weights again when it goes on (runAgentExperiment's `start`).
   */
  policy?: { folder: string; lora?: { rank: number; alpha?: number; targets?: string[]; baseWeights?: 'f32' | 'f16' } };
}

export interface AgentArmRecord {
  arm: AgentArm;
  /** Held-out evaluations along the arm's RL steps (step 0: the imitation policy; model-real goes on from rlSteps). */
  evals: AgentEval[];
  /** One metrics line per RL step (reward, success, sim_real_gap, ...). */
  steps: { step: number; values: Record<string, number> }[];
  /** Simulated episodes whose simulated success the real check disagreed with, and how many were simulated. */
  gap: { disagree: number; n: number };
  done: boolean;
}

export interface AgentExperimentState {
  version: 1;
  spec: AgentExperimentSpec;
  /** The fresh policy's held-out evaluation (the untrained agent). */
  untrained: AgentEval | null;
  /** The imitation policy every arm starts from (with Adam's state), once SFT is done. */
  imitation: Uint8Array | null;
  imitationEval: AgentEval | null;
  arms: AgentArmRecord[];
  /** Where the arm in progress stands: its policy (with Adam's state) after `step` RL steps. */
  cursor: { arm: number; step: number; checkpoint: Uint8Array } | null;
  /** The model arm's final policy, which model-real goes on from. */
  modelFinal: Uint8Array | null;
  done: boolean;
}

export interface AgentExperimentHost extends AgentHost {
  /** Stores the state (after each evaluation); the run resumes from the last one saved. */
  save(state: AgentExperimentState): Promise<void>;
  signal?: AbortSignal;
}

/** A new experiment's state; checks the arms against the world model's presence. */
export function newAgentExperiment(spec: AgentExperimentSpec): AgentExperimentState {
  if (!spec.arms.length) throw new UserFacingError('an experiment needs at least one arm');
  const seen = new Set<string>();
  for (const a of spec.arms) {
    if (!AGENT_ARMS.includes(a)) throw new UserFacingError(`unknown arm '${a}'; arms: ${AGENT_ARMS.join(', ')}`);
    if (seen.has(a)) throw new UserFacingError(`arm '${a}' is named twice`);
    seen.add(a);
  }
  if (seen.has('model-real') && !seen.has('model')) throw new UserFacingError("arm 'model-real' goes on from the 'model' arm: add it");
  if (spec.train.rlSteps < 1 && spec.arms.some((a) => a !== 'imitation')) throw new UserFacingError('the RL arms need rlSteps ≥ 1');
  // model-real goes on from the model arm's final policy, so the model arm runs before it.
  const arms = [...spec.arms].sort((a, b) => AGENT_ARMS.indexOf(a) - AGENT_ARMS.indexOf(b));
  return {
    version: 1,
    spec: { ...spec, arms },
    untrained: null,
    imitation: null,
    imitationEval: null,
    arms: arms.map((arm) => ({ arm, evals: [], steps: [], gap: { disagree: 0, n: 0 }, done: false })),
    cursor: null,
    modelFinal: null,
    done: false,
  };
}

/** True when an arm needs the world model (model-real's first stage is the model arm's). */
export const needsWorld = (arms: readonly AgentArm[]) => arms.some((a) => a === 'model' || a === 'model-real');

function aborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException('the experiment was stopped', 'AbortError');
}

/**
 * Runs (or goes on with) an experiment: the untrained and imitation evaluations, then each arm's
 * RL steps with an evaluation every evalEvery steps. Returns the final state (also saved).
 * `start`: the Hugging Face policy the spec names (its folder read), whose saved states the run restores.
 */
export async function runAgentExperiment(state: AgentExperimentState, host: AgentExperimentHost, start?: AgentStart): Promise<AgentExperimentState> {
  if (state.version !== 1) throw new UserFacingError(`this experiment was stored by another version (${state.version}); start it again`);
  const { train } = state.spec;
  if (needsWorld(state.spec.arms) && !host.world) throw new UserFacingError(`arms ${state.spec.arms.join(', ')} need a world model`);
  if (state.done) return state;
  if (!!state.spec.policy !== !!start)
    throw new UserFacingError(
      state.spec.policy
        ? `this experiment's policy is the Hugging Face folder ${state.spec.policy.folder}, which was not given`
        : 'this experiment trains a fresh policy of its preset',
    );
  const s: AgentExperimentState = structuredClone(state);
  const session = await AgentSession.open(train, host, start);
  const save = async () => {
    aborted(host.signal);
    await host.save(structuredClone(s));
  };
  try {
    // The untrained agent and the imitation policy every arm starts from.
    if (!s.untrained) {
      s.untrained = await session.evaluate('untrained', 0);
      await save();
    }
    if (!s.imitation) {
      await session.sft(0, train.sftSteps);
      aborted(host.signal);
      s.imitationEval = await session.evaluate('sft', train.sftSteps);
      s.imitation = await session.checkpoint(true);
      await save();
    }
    for (let a = 0; a < s.arms.length; a++) {
      const rec = s.arms[a];
      if (rec.done) continue;
      const arm = rec.arm;
      const offset = arm === 'model-real' ? train.rlSteps : 0;
      let start = 0;
      if (s.cursor?.arm === a) {
        session.restore(s.cursor.checkpoint, `the stored ${arm} policy`);
        start = s.cursor.step;
      } else if (arm === 'model-real') {
        if (!s.modelFinal) throw new UserFacingError('model-real goes on from the model arm, which has not finished');
        session.restore(s.modelFinal, 'the model arm’s final policy', false);
        const last = s.arms.find((r) => r.arm === 'model')?.evals.at(-1);
        if (last && !rec.evals.length) rec.evals.push({ ...last, phase: arm });
      } else {
        session.restore(s.imitation!, 'the imitation policy', false);
        if (!rec.evals.length && s.imitationEval) rec.evals.push({ ...s.imitationEval, phase: arm, step: 0 });
      }
      if (arm === 'imitation') {
        rec.done = true;
        s.cursor = null;
        await save();
        continue;
      }
      const simulated = arm === 'model';
      for (let step = start; step < train.rlSteps; step++) {
        aborted(host.signal);
        const r = await session.rlStep(step, train.rlSteps, simulated, arm, arm === 'shuffled');
        rec.steps.push({ step: offset + step + 1, values: r.values });
        if (r.gap) {
          rec.gap.disagree += r.gap.disagree;
          rec.gap.n += r.gap.n;
        }
        if ((step + 1) % train.evalEvery === 0 || step + 1 === train.rlSteps) {
          const ev = await session.evaluate(arm, offset + step + 1);
          rec.evals.push(ev);
          s.cursor = { arm: a, step: step + 1, checkpoint: await session.checkpoint(true) };
          await save();
        }
      }
      rec.done = true;
      if (arm === 'model') s.modelFinal = s.cursor?.arm === a ? s.cursor.checkpoint : await session.checkpoint(true);
      s.cursor = null;
      await save();
    }
    s.done = true;
    await host.save(structuredClone(s));
    return s;
  } finally {
    session.dispose();
  }
}

/** The sim-to-real gap of an arm: the share of its simulated episodes the real check disagreed with. */
export function armGap(rec: AgentArmRecord): number | null {
  return rec.gap.n ? rec.gap.disagree / rec.gap.n : null;
}

/**
 * Each arm's final held-out success and the one-sided p that it beats the untrained and the
 * imitation policy (McNemar's exact test on the shared held-out tasks; Fisher's on the counts for
 * evaluations stored before per-task outcomes, `evalP`), and, with the control arm in the experiment, the control's final success
 * (greedy, and sampled where both have it).
 */
export interface AgentArmResult {
  arm: AgentArm;
  final: AgentEval | null;
  pVsUntrained: number | null;
  pVsImitation: number | null;
  /** p that the arm's final greedy success beats the shuffled-reward control's; null without the control (or for it). */
  pVsShuffled: number | null;
  /** The same on the sampled episodes (the distribution RL trains). */
  pSampledVsShuffled: number | null;
  simToRealGap: number | null;
  simulatedEpisodes: number;
}

export function experimentResults(s: AgentExperimentState): AgentArmResult[] {
  const control = s.arms.find((r) => r.arm === 'shuffled')?.evals.at(-1) ?? null;
  const sampled = (e: AgentEval) => (e.sampledSuccesses === undefined ? null : { successes: e.sampledSuccesses, n: e.n, solved: e.sampledSolved });
  return s.arms.map((rec) => {
    const final = rec.evals.at(-1) ?? null;
    const p = (base: AgentEval | null) => (final && base ? evalP(final, base) : null);
    const rl = rec.arm !== 'imitation' && rec.arm !== 'shuffled';
    const fs = final && sampled(final);
    const cs = control && sampled(control);
    return {
      arm: rec.arm,
      final,
      pVsUntrained: p(s.untrained),
      pVsImitation: p(s.imitationEval),
      pVsShuffled: rl ? p(control) : null,
      pSampledVsShuffled: rl && fs && cs ? evalP(fs, cs) : null,
      simToRealGap: armGap(rec),
      simulatedEpisodes: rec.gap.n,
    };
  });
}
