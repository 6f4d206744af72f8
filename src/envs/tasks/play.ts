// Task-play trajectories (docs/method.md §13): episodes of a domain's task families in the real
// environment, each ended by its family's probe, in the one trajectory schema. A world model
// that rewards simulated episodes by the probe must have seen what the probe shows after a right
// attempt and after a wrong one; the domain's scripted agents rarely write a goal's file and read
// it back, so this data adds exactly that: the reference solver's episode or one of the family's
// near misses (or no action at all), then the probe. Only train-split seeds are drawn, so the
// held-out tasks an agent is measured on stay unseen by the world model too.
import { hash128, Rng } from '../../core/random.ts';
import type { KnownDomain, Trajectory, Turn } from '../../core/schema/types.ts';
import { PlanAgent, type Agent } from '../agent.ts';
import type { StepResult } from '../types.ts';
import { makeTask, makeTaskEnv, MAX_EPISODE_STEPS, SEED_RANGES, splitSeed, taskFamilies, taskFamily } from './registry.ts';

/** Share of task-play episodes played by the reference solver; the rest are near misses or nothing. */
export const SOLVER_SHARE = 0.5;

/** The generator a task-play trajectory's metadata names. */
export const TASK_PLAY_GENERATOR = 'lwm-tasks';

/** A task-play trajectory (its metadata's generator), e.g. among a recipe run's data. */
export function isTaskPlay(t: Trajectory): boolean {
  return t.metadata?.generator === TASK_PLAY_GENERATOR;
}

/** The task families of `domain` that have a probe (none for a domain without any). */
export function probedTaskFamilies(domain: KnownDomain): string[] {
  return taskFamilies(domain).filter((f) => taskFamily(domain, f).probe);
}

/** The families of `domain` that have a probe, for task play; an error names a family without one. */
export function playableFamilies(domain: KnownDomain, families?: readonly string[]): string[] {
  const withProbe = probedTaskFamilies(domain);
  const chosen = families ?? withProbe;
  if (!chosen.length) throw new Error(`no task family of ${domain} has a probe`);
  for (const f of chosen) {
    if (!taskFamily(domain, f).probe)
      throw new Error(
        `task family '${domain}/${f}' has no probe, so it cannot be played for a world model; families with one: ${withProbe.join(', ') || 'none'}`,
      );
  }
  return [...chosen];
}

/** The families a `--tasks` value names: `probed` (every family with a probe) or F[,F…]. */
export function taskPlayFamilies(domain: KnownDomain, spec: string): string[] {
  return playableFamilies(domain, spec === 'probed' ? undefined : spec.split(',').map((f) => f.trim()));
}

/**
 * Task-play trajectory `index` of a run with seed `seed` over `families` of `domain`: a train-split
 * task, an attempt at it in the real environment, then the family's probe. The same arguments
 * give the same trajectory.
 */
export function taskPlayTrajectory(
  domain: KnownDomain,
  families: readonly string[],
  seed: number,
  index: number,
  /** Share of episodes the solver plays (default SOLVER_SHARE); the rest split evenly among the near misses and doing nothing. */
  solverShare = SOLVER_SHARE,
): Trajectory {
  if (!(solverShare >= 0 && solverShare <= 1)) throw new Error(`the solver's share of task play must be between 0 and 1; got ${solverShare}`);
  const names = playableFamilies(domain, families);
  const rng = new Rng(`task-play:${domain}:${seed}:${index}`);
  const family = rng.pick(names);
  const trainSeeds = SEED_RANGES.train.end - SEED_RANGES.train.start;
  const task = makeTask(domain, family, splitSeed('train', hash128(`task-play:${domain}:${family}:${seed}:${index}`)[0] % trainSeeds));
  const env = makeTaskEnv(task);
  const { system_prompt } = env.reset();
  const misses = env.nearMisses();
  // 0: the solver; 1..misses: a near miss; misses + 1: no action before the probe.
  const k = rng.chance(solverShare) ? 0 : rng.int(1, misses.length + 1);
  const agent: Agent = k === 0 ? env.solver() : k <= misses.length ? misses[k - 1](env) : new PlanAgent([]);
  const turns: Turn[] = [];
  const play = (action: string, probe = false): StepResult => {
    const r = env.step(action);
    // The probe's observation trains at full weight: it is what a simulated episode's reward
    // asks for. The mask's boilerplate rule would give it 0.1 (the same word follows `cat` of
    // several files across tasks), but here it depends on what the earlier action wrote.
    turns.push({ action, observation: r.observation, metadata: { timestamp: r.timestamp, spans: r.spans, ...(probe && { loss_weight_override: 1 }) } });
    return r;
  };
  let last: StepResult | null = null;
  for (let action = agent.next(last); action !== null && turns.length < MAX_EPISODE_STEPS; action = agent.next(last)) last = play(action);
  const probe = taskFamily(domain, family).probe!(task.params);
  play(probe, true);
  return {
    id: `task-${domain}-${seed}-${String(index).padStart(5, '0')}`,
    domain,
    system_prompt,
    turns,
    source: { format: 'env' },
    metadata: {
      generator: TASK_PLAY_GENERATOR,
      seed,
      index,
      task: task.id,
      attempt: k === 0 ? 'solver' : k <= misses.length ? `near miss ${k}` : 'nothing',
      success: env.check().success,
    },
  };
}

/** `n` task-play trajectories from index 0. */
export function taskPlayTrajectories(domain: KnownDomain, families: readonly string[], n: number, seed: number, solverShare = SOLVER_SHARE): Trajectory[] {
  return Array.from({ length: n }, (_, i) => taskPlayTrajectory(domain, families, seed, i, solverShare));
}
