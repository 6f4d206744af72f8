// A world model as the agent's world (docs/method.md §13): every action is answered by the
// model's observation, given the environment's system prompt and the history, as it was
// trained. The reward comes from the simulation only: after the episode the world model is
// asked for the observation of the family's probe (a read-only check action, such as `cat` of
// the file the goal names), which is compared with what the real environment shows for that
// probe after the reference solver's episode: the task's answer key, computed once from the
// task's definition, never from the policy's episode.
import { generateText, type GenerateOptions, type LwmBackend } from '../../core/backend.ts';
import type { KnownDomain, SystemPrompt, Turn } from '../../core/schema/types.ts';
import { makeTaskEnv, solveTask, TASK_DOMAINS, taskFamilies, taskFamily, type Task } from '../../envs/tasks/index.ts';
import type { AgentWorld } from './episodes.ts';

/** The families a simulated episode can be rewarded on (`domain/family`): those with a probe. */
export function probedFamilies(): string[] {
  return (Object.keys(TASK_DOMAINS) as KnownDomain[]).flatMap((d) =>
    taskFamilies(d)
      .filter((f) => taskFamily(d, f).probe)
      .map((f) => `${d}/${f}`),
  );
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
