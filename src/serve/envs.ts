// The environment API of `lwm serve --envs`: episodes an agent steps over HTTP, in any language.
// An episode is a built-in environment at a seed; its observations come from the environment
// itself ("real") or from the served world model ("model"), chosen by one field, so an agent
// trains or is evaluated inside its world model with the code it uses against the real one.
//
//   POST   /v1/envs              {domain, seed, simulator}  → {id, system_prompt, …}
//   POST   /v1/envs/{id}/step    {action}                   → {observation, turn, …}
//   GET    /v1/envs/{id}                                    → the episode so far
//   GET    /v1/envs                                         → the live episodes
//   DELETE /v1/envs/{id}                                    → ends the episode
//
// A "model" episode keeps its history on the server: each step sends the model the system
// prompt, the earlier actions with the observations the model itself gave (the simulator runs
// free, as an agent would see it) and the new action; the model's backend lays that turn out
// with its trained template and fits it to its context the way training did (older turns give
// way first). Live episodes are limited in number, in turns, and in idle time.
import { randomUUID } from 'node:crypto';
import type { GenerateOptions, LwmBackend, TurnRequest } from '../core/backend.ts';
import { systemPromptToText } from '../core/formats/systemPromptText.ts';
import { extractPrediction } from '../core/judge/extract.ts';
import { DOMAINS, type KnownDomain, type SpanLabel, type SystemPrompt } from '../core/schema/types.ts';
import { ENV_DOMAINS } from '../envs/registry.ts';
import type { Environment } from '../envs/types.ts';

export type Simulator = 'real' | 'model';

export interface EnvLimits {
  /** Episodes alive at once; one more is refused (429) until one ends or expires. */
  maxEpisodes: number;
  /** An episode not stepped for this long is ended. */
  idleMs: number;
  /** Steps an episode may take. */
  maxTurns: number;
  /** Characters an action may have. */
  maxActionChars: number;
}

export const DEFAULT_ENV_LIMITS: EnvLimits = { maxEpisodes: 64, idleMs: 10 * 60_000, maxTurns: 256, maxActionChars: 64 * 1024 };

/** A refusal of the environment API, with its HTTP status (answered as OpenAI's error JSON). */
export class EnvApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'EnvApiError';
  }
}

/** How a "model" episode asks the served model for an observation. */
export interface EnvModel {
  backend: LwmBackend;
  /** Generation options for a turn (the server's defaults for its model). */
  options(request: TurnRequest): Omit<GenerateOptions, 'signal'>;
  /** Waits for the model's turn in the server's queue; returns the release. */
  acquire(signal?: AbortSignal): Promise<() => void>;
}

interface Turn {
  action: string;
  observation: string;
  /** A real step: whether the environment accepted the action, and its span labels. */
  ok?: boolean;
  spans?: SpanLabel[];
  /** A model step: the model's whole output (the observation is the text in its last tag block). */
  raw?: string;
}

interface Episode {
  id: string;
  domain: KnownDomain;
  seed: number;
  simulator: Simulator;
  systemPrompt: SystemPrompt;
  env: Environment | null;
  turns: Turn[];
  createdAt: number;
  lastUsed: number;
  /** A step in progress (steps of one episode run one at a time). */
  busy: boolean;
}

/** A JSON object (not an array, not null): what a request body must be. */
export function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

export class EnvService {
  private readonly episodes = new Map<string, Episode>();
  readonly limits: EnvLimits;

  constructor(
    private readonly model: EnvModel | null,
    limits: Partial<EnvLimits> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.limits = { ...DEFAULT_ENV_LIMITS, ...limits };
  }

  get live(): number {
    this.expire();
    return this.episodes.size;
  }

  /** Ends the episodes idle for longer than the limit. */
  expire(): void {
    const t = this.now();
    for (const [id, e] of this.episodes) if (!e.busy && t - e.lastUsed > this.limits.idleMs) this.episodes.delete(id);
  }

  create(body: unknown): Record<string, unknown> {
    if (!isRecord(body)) throw new EnvApiError(400, 'the request body must be a JSON object');
    const { domain, seed, simulator } = body;
    if (typeof domain !== 'string' || !(DOMAINS as readonly string[]).includes(domain)) {
      throw new EnvApiError(400, `'domain' must be one of ${DOMAINS.join(', ')}; got ${JSON.stringify(domain)}`, 'domain');
    }
    const s = seed ?? 0;
    if (typeof s !== 'number' || !Number.isSafeInteger(s) || s < 0)
      throw new EnvApiError(400, `'seed' must be a whole number ≥ 0; got ${JSON.stringify(seed)}`, 'seed');
    const sim = simulator ?? 'real';
    if (sim !== 'real' && sim !== 'model') throw new EnvApiError(400, `'simulator' must be "real" or "model"; got ${JSON.stringify(simulator)}`, 'simulator');
    if (sim === 'model' && !this.model)
      throw new EnvApiError(400, 'this server serves no model: start it with --model to step a "model" episode', 'simulator', 'no_model');
    this.expire();
    if (this.episodes.size >= this.limits.maxEpisodes) {
      throw new EnvApiError(
        429,
        `${this.episodes.size} episodes are live, the most this server keeps: end one (DELETE /v1/envs/ID) or wait for an idle one to expire`,
        null,
        'too_many_episodes',
      );
    }
    const env = ENV_DOMAINS[domain as KnownDomain].create();
    const reset = env.reset(s);
    const t = this.now();
    const e: Episode = {
      id: `env-${randomUUID()}`,
      domain: domain as KnownDomain,
      seed: s,
      simulator: sim,
      systemPrompt: { ...reset.system_prompt },
      env: sim === 'real' ? env : null,
      turns: [],
      createdAt: t,
      lastUsed: t,
      busy: false,
    };
    this.episodes.set(e.id, e);
    return { ...this.summary(e), system_prompt: systemPromptToText(e.systemPrompt), system_prompt_fields: e.systemPrompt };
  }

  private get(id: string): Episode {
    this.expire();
    const e = this.episodes.get(id);
    if (!e)
      throw new EnvApiError(
        404,
        `no live episode ${JSON.stringify(id)} (it ended, expired after ${Math.round(this.limits.idleMs / 1000)} s idle, or never was)`,
        null,
        'episode_not_found',
      );
    return e;
  }

  async step(id: string, body: unknown, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const e = this.get(id);
    if (!isRecord(body) || typeof body.action !== 'string') throw new EnvApiError(400, "'action' must be a string", 'action');
    const action = body.action;
    if (action.length > this.limits.maxActionChars)
      throw new EnvApiError(400, `'action' has ${action.length} characters, more than ${this.limits.maxActionChars}`, 'action');
    if (e.turns.length >= this.limits.maxTurns)
      throw new EnvApiError(400, `the episode has taken ${e.turns.length} steps, the most an episode may: start a new one`, null, 'episode_over');
    if (e.busy) throw new EnvApiError(409, 'a step of this episode is still running: steps of one episode go one at a time', null, 'step_in_progress');
    e.busy = true;
    try {
      const turn = e.env ? this.realStep(e.env, action) : await this.modelStep(e, action, signal);
      e.turns.push(turn);
      return {
        id: e.id,
        turn: e.turns.length,
        action,
        observation: turn.observation,
        ...(turn.ok !== undefined && { ok: turn.ok }),
        ...(turn.spans && { spans: turn.spans }),
      };
    } finally {
      e.busy = false;
      e.lastUsed = this.now();
    }
  }

  private realStep(env: Environment, action: string): Turn {
    const r = env.step(action);
    return { action, observation: r.observation, ok: r.ok, spans: r.spans };
  }

  private async modelStep(e: Episode, action: string, signal?: AbortSignal): Promise<Turn> {
    const model = this.model!;
    const request: TurnRequest = {
      sample: { domain: e.domain, systemPrompt: e.systemPrompt, history: e.turns.map((t) => ({ action: t.action, observation: t.observation })), action },
    };
    const release = await model.acquire(signal);
    let raw = '';
    try {
      for await (const piece of model.backend.generate(request, { ...model.options(request), ...(signal && { signal }) })) raw += piece;
    } finally {
      release();
    }
    return { action, observation: extractPrediction(raw), raw };
  }

  read(id: string): Record<string, unknown> {
    const e = this.get(id);
    return {
      ...this.summary(e),
      system_prompt: systemPromptToText(e.systemPrompt),
      turns: e.turns.map((t) => ({ action: t.action, observation: t.observation })),
    };
  }

  list(): Record<string, unknown> {
    this.expire();
    return { object: 'list', data: [...this.episodes.values()].map((e) => this.summary(e)), limits: this.limits };
  }

  end(id: string): Record<string, unknown> {
    const e = this.get(id);
    this.episodes.delete(id);
    return { id: e.id, object: 'env.episode.deleted', deleted: true, turns: e.turns.length };
  }

  private summary(e: Episode) {
    return {
      id: e.id,
      object: 'env.episode',
      domain: e.domain,
      seed: e.seed,
      simulator: e.simulator,
      turns: e.turns.length,
      created: Math.floor(e.createdAt / 1000),
    };
  }
}
