// The seven domains behind one table: how to build each environment, its scripted agent and
// its knowledge text.
import type { KnownDomain } from '../core/schema/types.ts';
import type { Agent, AgentKind } from './agent.ts';
import type { Rng } from '../core/random.ts';
import { terminalAgent } from './terminal/agent.ts';
import { TerminalEnv } from './terminal/index.ts';
import { terminalKnowledge } from './terminal/knowledge.ts';
import type { Environment } from './types.ts';
import { OsEnv } from './os/index.ts';
import { osAgent, osKnowledge } from './os/agent.ts';
import { WebEnv, webAgent, webKnowledge } from './web/index.ts';
import { AndroidEnv, androidAgent, androidKnowledge } from './android/index.ts';
import { SearchEnv, searchAgent, searchKnowledge } from './search/index.ts';
import { McpEnv, mcpAgent, mcpKnowledge } from './mcp/index.ts';
import { SweEnv, sweAgent, sweKnowledge } from './swe/index.ts';

export interface DomainDef {
  create(): Environment;
  /** A scripted agent for an environment that has just been reset. */
  agent(env: Environment, rng: Rng, kind: AgentKind): Agent;
  /** Reference text about the domain for the CPT corpus. */
  knowledge(): string;
  /** The episode's task in a word, for metadata. */
  task(env: Environment): string;
}

export const ENV_DOMAINS: Record<KnownDomain, DomainDef> = {
  mcp: {
    create: () => new McpEnv(),
    agent: (env, rng, kind) => mcpAgent(env as McpEnv, rng, kind),
    knowledge: mcpKnowledge,
    task: (env) => (env as McpEnv).task.kind,
  },
  search: {
    create: () => new SearchEnv(),
    agent: (env, rng, kind) => searchAgent(env as SearchEnv, rng, kind),
    knowledge: searchKnowledge,
    task: (env) => `${(env as SearchEnv).task.doc.kind}:${(env as SearchEnv).task.key}`,
  },
  swe: {
    create: () => new SweEnv(),
    agent: (env, rng, kind) => sweAgent(env as SweEnv, rng, kind),
    knowledge: sweKnowledge,
    task: (env) => (env as SweEnv).bug.hint,
  },
  terminal: {
    create: () => new TerminalEnv(),
    agent: (env, rng, kind) => terminalAgent(env as TerminalEnv, rng, kind),
    knowledge: terminalKnowledge,
    task: (env) => (env as TerminalEnv).state.task,
  },
  os: {
    create: () => new OsEnv(),
    agent: (env, rng, kind) => osAgent(env as OsEnv, rng, kind),
    knowledge: osKnowledge,
    task: (env) => (env as OsEnv).s.task,
  },
  web: {
    create: () => new WebEnv(),
    agent: (env, rng, kind) => webAgent(env as WebEnv, rng, kind),
    knowledge: webKnowledge,
    task: (env) => (env as WebEnv).task.kind,
  },
  android: {
    create: () => new AndroidEnv(),
    agent: (env, rng, kind) => androidAgent(env as AndroidEnv, rng, kind),
    knowledge: androidKnowledge,
    task: (env) => (env as AndroidEnv).task.kind,
  },
};
