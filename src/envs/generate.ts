// Trajectories from the built-in environments: seeded agent runs turned into the unified
// schema, with span labels kept in turn metadata. Same arguments, byte-identical output.
import type { KnownDomain, Trajectory, Turn } from '../core/schema/types.ts';
import type { AgentKind } from './agent.ts';
import { ENV_DOMAINS } from './registry.ts';
import { hash128, Rng } from '../core/random.ts';

export const MIN_TURNS = 3;
export const MAX_TURNS = 40;
/** Share of episodes driven by the goal-directed agent; the rest wander. */
const GOAL_SHARE = 0.7;

export function envDomain(domain: string) {
  const def = ENV_DOMAINS[domain as KnownDomain];
  if (!def) throw new Error(`no built-in environment for domain '${domain}'`);
  return def;
}

/** The environment seed of episode `index` of a run with seed `seed`. */
export function episodeSeed(domain: string, seed: number, index: number): number {
  return hash128(`${domain}:${seed}:${index}`)[0] & 0x7fffffff;
}

export function generateTrajectory(domain: KnownDomain, seed: number, index: number): Trajectory {
  const def = envDomain(domain);
  const envSeed = episodeSeed(domain, seed, index);
  const rng = new Rng(`agent:${envSeed}`);
  const kind: AgentKind = rng.chance(GOAL_SHARE) ? 'goal' : 'random';
  const env = def.create();
  const { system_prompt } = env.reset(envSeed);
  const agent = def.agent(env, rng.fork('agent'), kind);
  // Agents that stop early hand over to a random one so every episode has MIN_TURNS.
  let filler: ReturnType<DomainDef['agent']> | null = null;
  const turns: Turn[] = [];
  let last = null;
  while (turns.length < MAX_TURNS) {
    let action = agent.next(last);
    if (action === null) {
      if (turns.length >= MIN_TURNS) break;
      filler ??= def.agent(env, rng.fork('filler'), 'random');
      action = filler.next(last);
      if (action === null) break;
    }
    last = env.step(action);
    turns.push({ action, observation: last.observation, metadata: { timestamp: last.timestamp, spans: last.spans } });
  }
  return {
    id: `env-${domain}-${seed}-${String(index).padStart(5, '0')}`,
    domain,
    system_prompt,
    turns,
    source: { format: 'env' },
    metadata: { generator: 'lwm-envs', seed, index, env_seed: envSeed, agent: kind, task: def.task(env) },
  };
}

type DomainDef = ReturnType<typeof envDomain>;

export function generateTrajectories(domain: KnownDomain, n: number, seed: number): Trajectory[] {
  return Array.from({ length: n }, (_, i) => generateTrajectory(domain, seed, i));
}

export function toJsonl(trajectories: readonly Trajectory[]): string {
  return trajectories.map((t) => JSON.stringify(t) + '\n').join('');
}
