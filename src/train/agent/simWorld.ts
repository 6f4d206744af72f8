// A world model as the agent's world (docs/method.md §13): every action is answered by the
// model's observation, given the environment's system prompt and the history, as it was
// trained. The reward comes from the simulation only: after the episode the world model is
// asked for the observation of the family's probe (a read-only check action, such as `cat` of
// the file the goal names), which is compared with what the real environment shows for that
// probe after the reference solver's episode: the task's answer key, computed once from the
// task's definition, never from the policy's episode.
import { generateText, type GenerateOptions, type LwmBackend } from '../../core/backend.ts';
import type { KnownDomain, SystemPrompt, Turn } from '../../core/schema/types.ts';
import { PlanAgent, type Agent } from '../../envs/agent.ts';
import { makeTaskEnv, probedTaskFamilies, runEpisode, solveTask, TASK_DOMAINS, taskFamily, type Task, type TaskEnv } from '../../envs/tasks/index.ts';
import type { AgentWorld } from './episodes.ts';

/** Turns an endpoint world answers at once (lwm agent --world URL, the Sim RL panel's endpoint): eight episodes in flight. */
export const ENDPOINT_WORLD_CONCURRENCY = 8;

/** The families a simulated episode can be rewarded on (`domain/family`): those with a probe. */
export function probedFamilies(): string[] {
  return (Object.keys(TASK_DOMAINS) as KnownDomain[]).flatMap((d) => probedTaskFamilies(d).map((f) => `${d}/${f}`));
}

/** A task's probe and the observation the real environment gives for it once the goal is reached. */
export function answerKey(task: Task): { probe: string; expected: string } {
  const probe = taskFamily(task.domain, task.family).probe?.(task.params);
  if (!probe) throw new Error(`no simulated check for ${task.domain}/${task.family}; families with one: ${probedFamilies().join(', ')}`);
  const env = makeTaskEnv(task);
  env.reset();
  for (const t of solveTask(task).turns) env.step(t.action);
  return { probe, expected: env.step(probe).observation };
}

/** Observations compared as a check reads them: surrounding blanks of each line, and blank lines at the end, ignored. */
export function sameObservation(a: string, b: string): boolean {
  const lines = (s: string) => {
    const l = s.split(/\r?\n/).map((x) => x.trim());
    while (l.length && l[l.length - 1] === '') l.pop();
    return l.join('\n');
  };
  return lines(a) === lines(b);
}

/** The world model's world for a task; `simCheck()` asks it for the probe after the episode. */
export function simWorld(
  task: Task,
  backend: LwmBackend,
  options: Omit<GenerateOptions, 'signal'>,
  key = answerKey(task),
): AgentWorld & { simCheck(): Promise<{ success: boolean; observation: string }> } {
  let sp: SystemPrompt | null = null;
  const history: Turn[] = [];
  const answer = async (action: string) => {
    if (!sp) throw new Error(`task ${task.id}: reset() the simulated world before the first step`);
    return generateText(backend, { sample: { domain: task.domain, systemPrompt: sp, history: [...history], action } }, options);
  };
  return {
    reset: () => {
      // The system prompt is the task's (its goal in the environment's task description), as the real episode starts.
      sp = makeTaskEnv(task).reset().system_prompt;
      history.length = 0;
      return sp;
    },
    step: async (action) => {
      const observation = await answer(action);
      history.push({ action, observation });
      return { observation, ok: true };
    },
    simCheck: async () => {
      const observation = await answer(key.probe);
      return { success: sameObservation(observation, key.expected), observation };
    },
  };
}

/** How often a world model's simulated probe agrees with the real check, for one kind of attempt. */
export interface ProbeAgreement {
  /** `solver`, `near miss K` or `nothing`. */
  attempt: string;
  episodes: number;
  /** The simulated reward equals the real check's verdict. */
  agree: number;
  /** The real check passed (the solver's attempts; none of the others). */
  realSuccesses: number;
  /** The simulation rewarded the attempt. */
  simSuccesses: number;
  /** One disagreement, to read: the actions and what the world model answered the probe. */
  example?: { task: string; actions: string[]; observation: string };
}

/**
 * A world model's fitness as a Sim RL world, before any RL: every task's reference solver, each
 * of its near misses and no action at all are played in the real environment, their actions
 * replayed in the world model (`simWorld`), and its simulated probe compared with the real
 * check. A world model whose reward is right on these attempts can teach; one that rewards no
 * solver episode, or every near miss, cannot. Grouped by attempt, in that order.
 */
export async function probeAgreement(tasks: readonly Task[], backend: LwmBackend, options: Omit<GenerateOptions, 'signal'>): Promise<ProbeAgreement[]> {
  const rows = new Map<string, ProbeAgreement>();
  for (const task of tasks) {
    const key = answerKey(task);
    const misses = makeTaskEnv(task).nearMisses();
    const attempts: [string, (env: TaskEnv) => Agent][] = [
      ['solver', (env) => env.solver()],
      ...misses.map((m, k): [string, (env: TaskEnv) => Agent] => [`near miss ${k + 1}`, m]),
      ['nothing', () => new PlanAgent([])],
    ];
    for (const [attempt, make] of attempts) {
      const episode = runEpisode(task, make);
      const world = simWorld(task, backend, options, key);
      world.reset();
      for (const t of episode.turns) await world.step(t.action);
      const sim = await world.simCheck();
      const row = rows.get(attempt) ?? rows.set(attempt, { attempt, episodes: 0, agree: 0, realSuccesses: 0, simSuccesses: 0 }).get(attempt)!;
      row.episodes++;
      if (episode.verdict.success) row.realSuccesses++;
      if (sim.success) row.simSuccesses++;
      if (sim.success === episode.verdict.success) row.agree++;
      else row.example ??= { task: task.id, actions: episode.turns.map((t) => t.action), observation: sim.observation };
    }
  }
  const order = (a: string) => (a === 'solver' ? 0 : a === 'nothing' ? 2 : 1);
  return [...rows.values()].sort((a, b) => order(a.attempt) - order(b.attempt) || a.attempt.localeCompare(b.attempt));
}
