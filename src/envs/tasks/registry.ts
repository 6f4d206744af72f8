// Tasks by seed: which families each domain has, the train and held-out seed ranges, building a
// task from (domain, family, seed), and the environment an episode of a task runs in.
import type { KnownDomain, SystemPrompt } from '../../core/schema/types.ts';
import { hash128, Rng } from '../../core/random.ts';
import type { Agent } from '../agent.ts';
import type { Environment, EnvReset, StepResult } from '../types.ts';
import { androidTasks } from './android.ts';
import { mcpTasks } from './mcp.ts';
import { osTasks } from './os.ts';
import { searchTasks } from './search.ts';
import { sweTasks } from './swe.ts';
import { terminalTasks } from './terminal.ts';
import { webTasks } from './web.ts';
import type { DomainTasks, Task, TaskFamily, TaskSplit, Verdict } from './types.ts';

/** The domains that have tasks so far, each with its families. */
export const TASK_DOMAINS: Partial<Record<KnownDomain, DomainTasks>> = {
  terminal: terminalTasks as unknown as DomainTasks,
  mcp: mcpTasks as unknown as DomainTasks,
  search: searchTasks as unknown as DomainTasks,
  os: osTasks as unknown as DomainTasks,
  swe: sweTasks as unknown as DomainTasks,
  android: androidTasks as unknown as DomainTasks,
  web: webTasks as unknown as DomainTasks,
};

/**
 * Task seeds of each split: [start, end). Disjoint by construction; a held-out task's seed never
 * occurs in training, so neither do its drawn names, words and values as a whole.
 */
export const SEED_RANGES: Readonly<Record<TaskSplit, { start: number; end: number }>> = {
  train: { start: 0, end: 2 ** 30 },
  heldout: { start: 2 ** 30, end: 2 ** 31 - 1 },
};

/** The split a task seed belongs to; an error for a seed outside both ranges. */
export function seedSplit(seed: number): TaskSplit {
  for (const split of ['train', 'heldout'] as const) {
    const r = SEED_RANGES[split];
    if (Number.isInteger(seed) && seed >= r.start && seed < r.end) return split;
  }
  throw new Error(`task seed ${seed} is not a whole number in [0, ${SEED_RANGES.heldout.end})`);
}

/** The `index`-th seed of a split. */
export function splitSeed(split: TaskSplit, index: number): number {
  const r = SEED_RANGES[split];
  if (!Number.isInteger(index) || index < 0 || index >= r.end - r.start) throw new Error(`task index ${index} is outside the ${split} range`);
  return r.start + index;
}

function domainTasks(domain: string): DomainTasks {
  const d = TASK_DOMAINS[domain as KnownDomain];
  if (!d) throw new Error(`no tasks for domain '${domain}'; domains with tasks: ${Object.keys(TASK_DOMAINS).join(', ')}`);
  return d;
}

export function taskFamily(domain: string, family: string): TaskFamily {
  const f = domainTasks(domain).families.find((x) => x.name === family);
  if (!f) throw new Error(`no task family '${family}' in domain '${domain}'; families: ${taskFamilies(domain).join(', ')}`);
  return f;
}

/** The family names of a domain, easiest first in the order they were defined. */
export function taskFamilies(domain: string): string[] {
  return domainTasks(domain).families.map((f) => f.name);
}

/** How many env seeds a task tries before its family gives up on finding a suitable world. */
const MAX_WORLDS = 64;

/** The task of `family` in `domain` for `seed`: the same task on every call and machine. */
export function makeTask(domain: KnownDomain, family: string, seed: number): Task {
  const split = seedSplit(seed);
  const d = domainTasks(domain);
  const f = taskFamily(domain, family);
  for (let k = 0; k < MAX_WORLDS; k++) {
    const key = `task:${domain}:${family}:${seed}:${k}`;
    const envSeed = hash128(key)[0] & 0x7fffffff;
    const env = d.create();
    env.reset(envSeed);
    const drawn = f.draw(new Rng(key), env);
    if (drawn) return { id: `${domain}/${family}/${seed}`, domain, family, seed, split, level: f.level, goal: drawn.goal, envSeed, params: drawn.params };
  }
  throw new Error(`task family '${domain}/${family}' found no suitable world for seed ${seed} in ${MAX_WORLDS} tries`);
}

/** The task with this id (`domain/family/seed`). */
export function taskById(id: string): Task {
  const m = /^([a-z]+)\/([a-z_]+)\/(\d+)$/.exec(id);
  if (!m) throw new Error(`task id '${id}' is not domain/family/seed`);
  return makeTask(m[1] as KnownDomain, m[2], Number(m[3]));
}

export interface ListTasksOptions {
  split: TaskSplit;
  /** How many seeds of the split, from its first (or from `offset`). */
  count: number;
  offset?: number;
  /** All domains with tasks when left out. */
  domains?: KnownDomain[];
  /** All families of each domain when left out. */
  families?: string[];
}

/**
 * Tasks of a split: for each seed index in [offset, offset + count), one task per domain and
 * family, interleaved so that the first tasks cover every family.
 */
export function listTasks(opts: ListTasksOptions): Task[] {
  const domains = opts.domains ?? (Object.keys(TASK_DOMAINS) as KnownDomain[]);
  const pairs = domains.flatMap((domain) =>
    taskFamilies(domain)
      .filter((f) => !opts.families || opts.families.includes(f))
      .map((family) => [domain, family] as const),
  );
  if (opts.families) for (const f of opts.families) if (!pairs.some(([, x]) => x === f)) throw new Error(`no task family '${f}' in ${domains.join(', ')}`);
  const out: Task[] = [];
  for (let i = 0; i < opts.count; i++) {
    const seed = splitSeed(opts.split, (opts.offset ?? 0) + i);
    for (const [domain, family] of pairs) out.push(makeTask(domain, family, seed));
  }
  return out;
}

/**
 * The environment of one task: its domain's environment reset to the task's world, with the
 * task's goal in the system prompt. `reset()` always starts the task's state again.
 */
export class TaskEnv implements Environment {
  readonly domain: KnownDomain;
  readonly inner: Environment;
  private readonly def: DomainTasks;
  private readonly family: TaskFamily;
  private started: EnvReset | null = null;

  constructor(readonly task: Task) {
    this.domain = task.domain;
    this.def = domainTasks(task.domain);
    this.family = taskFamily(task.domain, task.family);
    this.inner = this.def.create();
  }

  reset(): EnvReset {
    const r = this.inner.reset(this.task.envSeed);
    const system_prompt: SystemPrompt = { ...r.system_prompt, task_description: this.def.describe(r.system_prompt.task_description, this.task.goal) };
    this.started = { system_prompt, state: r.state };
    return this.started;
  }

  step(action: string): StepResult {
    if (!this.started) throw new Error(`task ${this.task.id}: reset() the environment before the first step`);
    return this.inner.step(action);
  }

  /** Did the episode so far reach the goal? Reads the environment's state; never throws. */
  check(): Verdict {
    if (!this.started) return { success: false, reason: 'the episode has not started' };
    return this.family.check(this.inner, this.task.params, () => {
      const fresh = this.def.create();
      fresh.reset(this.task.envSeed);
      return fresh;
    });
  }

  /** The family's reference solver for this environment, which must have just been reset. */
  solver(): Agent {
    return this.family.solver(this.inner, this.task.params);
  }

  /** The family's plausible wrong attempts, each for a freshly reset environment. */
  nearMisses(): ((env: TaskEnv) => Agent)[] {
    return this.family.nearMisses(this.task.params).map((make) => (env: TaskEnv) => make(env.inner));
  }
}

/** A fresh environment for a task (call `reset()` before stepping). */
export function makeTaskEnv(task: Task): TaskEnv {
  return new TaskEnv(task);
}

/** One (action, observation) step of an episode. */
export interface EpisodeTurn {
  action: string;
  observation: string;
  ok: boolean;
}

export interface Episode {
  task: Task;
  system_prompt: SystemPrompt;
  turns: EpisodeTurn[];
  verdict: Verdict;
}

/** Most actions an episode of `runEpisode` takes. */
export const MAX_EPISODE_STEPS = 40;

/** Plays an agent on a task from its start, then checks success on the environment's state. */
export function runEpisode(task: Task, makeAgent: (env: TaskEnv) => Agent, maxSteps = MAX_EPISODE_STEPS): Episode {
  const env = makeTaskEnv(task);
  const { system_prompt } = env.reset();
  const agent = makeAgent(env);
  const turns: EpisodeTurn[] = [];
  let last: StepResult | null = null;
  while (turns.length < maxSteps) {
    const action = agent.next(last);
    if (action === null) break;
    last = env.step(action);
    turns.push({ action, observation: last.observation, ok: last.ok });
  }
  return { task, system_prompt, turns, verdict: env.check() };
}

/** The reference solver's episode of a task. */
export function solveTask(task: Task): Episode {
  return runEpisode(task, (env) => env.solver());
}
