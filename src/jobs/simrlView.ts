// What the page is sent of a Sim RL experiment (src/jobs/simrl.ts): its state without the
// policies' bytes. Types only from the experiment's module, so the page imports no training code
// through it.
import type { AgentExperimentState } from '../train/agent/experiment.ts';

/** An experiment's state as the page is sent it: everything but the policies' bytes. */
export type ExperimentView = Omit<AgentExperimentState, 'imitation' | 'modelFinal' | 'cursor'> & {
  cursor: { arm: number; step: number } | null;
};

/** What the page is sent as the experiment goes (a JobContext 'progress' record). */
export interface SimRlProgress {
  expId: string;
  /** The state as last stored (after an evaluation). */
  state?: ExperimentView;
  /** The RL step just taken: its arm and step (the arm's x), its metrics. */
  step?: { arm: string; step: number; values: Record<string, number> };
}

/** The state without its checkpoints (what the page draws from). */
export function experimentView(s: AgentExperimentState): ExperimentView {
  const { imitation: _i, modelFinal: _m, cursor, ...rest } = s;
  void _i;
  void _m;
  return { ...structuredClone(rest), cursor: cursor ? { arm: cursor.arm, step: cursor.step } : null };
}
