// Tasks with goals (docs/method.md §12): a goal in words, the environment state it starts from,
// and a success check on the real environment's state after the episode. A task is plain data
// (it travels as JSON); its family holds the code that draws, solves and checks it.
import type { KnownDomain } from '../../core/schema/types.ts';
import type { Rng } from '../../core/random.ts';
import type { Agent } from '../agent.ts';
import type { Environment } from '../types.ts';

/** Train or held-out: which seed range a task comes from. */
export type TaskSplit = 'train' | 'heldout';

/** The parameters a family drew for one task (file names, words, values): plain JSON. */
export type TaskParams = Record<string, string | number | boolean>;

export interface Task {
  /** `domain/family/seed`: unique, and enough to rebuild the task (`taskById`). */
  id: string;
  domain: KnownDomain;
  family: string;
  seed: number;
  split: TaskSplit;
  /** 1: one correct action solves it; 2: a few steps; 3: several steps that depend on what the agent reads. */
  level: 1 | 2 | 3;
  /** What the agent is told, in words. */
  goal: string;
  /** The seed the domain's environment is reset with. */
  envSeed: number;
  params: TaskParams;
}

/** The outcome of a success check: never thrown, always a reason a person can read. */
export interface Verdict {
  success: boolean;
  reason: string;
}

/** One family of tasks of a domain's environment E. */
export interface TaskFamily<E extends Environment = Environment> {
  name: string;
  level: 1 | 2 | 3;
  /**
   * The goal and parameters for a freshly reset environment, drawn with `rng`; null when this
   * world does not suit the family (no open todo to complete), and the next env seed is tried.
   */
  draw(rng: Rng, env: E): { goal: string; params: TaskParams } | null;
  /**
   * Success on the environment's state after the episode. Never throws, whatever the state.
   * `start` gives a fresh environment in the task's starting state, to compare against.
   */
  check(env: E, params: TaskParams, start: () => E): Verdict;
  /** A scripted agent that solves the task in the real environment (it reads the live state). */
  solver(env: E, params: TaskParams): Agent;
  /**
   * Plausible wrong attempts (the right action on the wrong file, a wrong value), each an agent
   * for a freshly reset environment whose episode must fail the check.
   */
  nearMisses(params: TaskParams): ((env: E) => Agent)[];
  /**
   * A read-only check action whose observation shows whether the goal was reached (`cat` of the
   * file the goal names): what a world model is asked after a simulated episode (docs/method.md
   * §13), and the last turn of the family's task-play trajectories. Families without one cannot
   * be rewarded in a simulation.
   */
  probe?(params: TaskParams): string;
}

/** A domain's families and how its system prompt carries a task's goal. */
export interface DomainTasks<E extends Environment = Environment> {
  create(): E;
  families: TaskFamily<E>[];
  /** The environment's task description with its own goal replaced by the task's. */
  describe(taskDescription: string, goal: string): string;
}
