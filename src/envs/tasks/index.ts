// Tasks with goals for the built-in environments (docs/method.md §12): what an agent policy is
// trained and measured on. One file per domain holds its families; registry.ts builds tasks by
// seed and runs their episodes; policy.ts turns episodes into the policy's training samples.
export type { Task, TaskSplit, TaskParams, TaskFamily, Verdict, DomainTasks } from './types.ts';
export {
  TASK_DOMAINS,
  SEED_RANGES,
  seedSplit,
  splitSeed,
  taskFamilies,
  taskFamily,
  makeTask,
  taskById,
  listTasks,
  TaskEnv,
  makeTaskEnv,
  runEpisode,
  solveTask,
  MAX_EPISODE_STEPS,
  type ListTasksOptions,
  type Episode,
  type EpisodeTurn,
} from './registry.ts';
export { normalizeAnswer } from './common.ts';
export {
  barePromptTokens,
  fitPolicyPrompt,
  encodePolicyRow,
  policyTarget,
  policyText,
  episodeSamples,
  trajectorySamples,
  type PolicySample,
  type PolicyTurn,
  type PolicyFit,
  type PartsEncoder,
  type PolicyLayout,
  type PolicyFormat,
  TOKENS_FORMAT,
  POLICY_LAYOUTS,
} from './policy.ts';
export {
  taskPlayTrajectory,
  taskPlayTrajectories,
  playableFamilies,
  probedTaskFamilies,
  taskPlayFamilies,
  isTaskPlay,
  TASK_PLAY_GENERATOR,
  SOLVER_SHARE,
} from './play.ts';
