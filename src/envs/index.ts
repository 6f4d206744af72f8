// The seven built-in environments (issue 5): one interface, scripted agents, a generator of
// unified-schema trajectories, and knowledge text for the CPT corpus.
import type { KnownDomain } from '../core/schema/types.ts';
import { ENV_DOMAINS } from './registry.ts';

export type { Environment, EnvReset, StepResult } from './types.ts';
export type { Agent, AgentKind } from './agent.ts';
export { SpanText, checkSpanTiling } from './spans.ts';
export { Rng } from '../core/random.ts';
export { parseCall, formatCall } from './action.ts';
export { generateTrajectory, generateTrajectories, toJsonl, episodeSeed, MIN_TURNS, MAX_TURNS } from './generate.ts';
export { ENV_DOMAINS } from './registry.ts';

/** A fresh, un-reset environment for a domain. */
export function createEnv(domain: KnownDomain) {
  const def = ENV_DOMAINS[domain];
  if (!def) throw new Error(`no built-in environment for domain '${domain}'`);
  return def.create();
}

/**
 * Reference text about a domain for the CPT corpus: manual pages (terminal), tool descriptions
 * and schemas (mcp), corpus documents (search), app descriptions (android, os, web), the
 * language reference of the repository (swe).
 */
export function knowledgeText(domain: KnownDomain): string {
  const def = ENV_DOMAINS[domain];
  if (!def) throw new Error(`no built-in environment for domain '${domain}'`);
  return def.knowledge();
}

// Tasks with goals (docs/method.md §12): what an agent policy is trained on and measured by.
export {
  listTasks,
  makeTask,
  taskById,
  taskFamilies,
  makeTaskEnv,
  TaskEnv,
  runEpisode,
  solveTask,
  seedSplit,
  SEED_RANGES,
  TASK_DOMAINS,
  episodeSamples,
  trajectorySamples,
  fitPolicyPrompt,
  encodePolicyRow,
  type Task,
  type TaskSplit,
  type Verdict,
  type Episode,
  type PolicySample,
} from './tasks/index.ts';
