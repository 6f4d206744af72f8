// The agent policy's episodes for `lwm agent train` (docs/method.md §13): a policy that writes
// one action per turn against a world that answers it (the real environment of a task, or a
// world model standing in for it), the episode's reward, GSPO's advantages over a group of
// episodes of one task, and the share of simulated episodes whose reward the real check
// disagrees with. Nothing here touches the GPU: the policy is any async function.
import type { SystemPrompt } from '../../core/schema/types.ts';
import { makeTaskEnv, type EpisodeTurn, type PolicySample, type Task, type Verdict } from '../../envs/tasks/index.ts';
import { advantagesWithFailures } from '../rlMetrics.ts';

/** What answers the policy's actions: the environment of a task, or a model simulating it. */
export interface AgentWorld {
  /** The system prompt the episode starts from (the task's goal in its task description). */
  reset(): SystemPrompt | Promise<SystemPrompt>;
  /** The world's answer to an action; `ok` false when it refused the action (unknown to a simulation: true). */
  step(action: string): { observation: string; ok: boolean } | Promise<{ observation: string; ok: boolean }>;
}

/** One policy move: the action's text ('' means "done": the episode ends) and whether it was well formed. */
export interface PolicyMove {
  action: string;
  /** The action ended with the end-of-turn token within the token budget (not cut off). */
  formed: boolean;
  /** The policy's token ids of this move (for the GSPO update); empty for a scripted policy. */
  tokens: number[];
  /** The prompt ids the move was generated from. */
  prompt: number[];
}

/**
 * The policy: the next move for each of several samples (task, action space, start, history so
 * far), one per live episode; episodes of one group that share a prompt can share its prefill.
 */
export type AgentPolicy = (samples: PolicySample[]) => Promise<PolicyMove[]>;

export interface AgentEpisode {
  task: Task;
  system_prompt: SystemPrompt;
  /** The actions the world answered (a final "done" move is not among them). */
  turns: EpisodeTurn[];
  /** Every policy move, the final "done" included. */
  moves: PolicyMove[];
}

/** The sample the policy sees before its next move: the episode so far (its target is unknown: ''). */
export function nextSample(task: Task, sp: SystemPrompt, turns: readonly EpisodeTurn[]): PolicySample {
  return {
    source: task.id,
    domain: task.domain,
    step: turns.length,
    task: sp.task_description,
    goal: task.goal,
    actionSpace: sp.action_space,
    initialState: sp.initial_state,
    history: turns.map(({ action, observation }) => ({ action, observation })),
    target: '',
  };
}

/**
 * Plays episodes in lockstep, one per world: at each turn every live episode's policy moves at
 * once, then the worlds answer. An episode ends when its policy says done (an empty action),
 * writes a malformed action (cut off at its token budget: the turn still counts, then the episode
 * ends), or `maxTurns` actions were answered.
 */
export async function playEpisodes(items: readonly { task: Task; world: AgentWorld }[], policy: AgentPolicy, maxTurns: number): Promise<AgentEpisode[]> {
  const eps: (AgentEpisode & { live: boolean })[] = [];
  for (const { task, world } of items) eps.push({ task, system_prompt: await world.reset(), turns: [], moves: [], live: maxTurns > 0 });
  for (;;) {
    const live = eps.map((e, i) => [e, i] as const).filter(([e]) => e.live);
    if (!live.length) break;
    const moves = await policy(live.map(([e]) => nextSample(e.task, e.system_prompt, e.turns)));
    for (let k = 0; k < live.length; k++) {
      const [e, i] = live[k];
      const move = moves[k];
      e.moves.push(move);
      if (move.action.trim() === '') {
        e.live = false;
        continue;
      }
      const r = await items[i].world.step(move.action);
      e.turns.push({ action: move.action, observation: r.observation, ok: r.ok });
      if (!move.formed || e.turns.length >= maxTurns) e.live = false;
    }
  }
  return eps.map(({ live: _, ...e }) => e);
}

/** The real environment of a task as a world (reset to the task's start on every episode). */
export function realWorld(task: Task): AgentWorld & { check(): Verdict } {
  const env = makeTaskEnv(task);
  return {
    reset: () => env.reset().system_prompt,
    step: (action) => {
      const r = env.step(action);
      return { observation: r.observation, ok: r.ok };
    },
    check: () => env.check(),
  };
}

/** Replays an episode's actions in the real environment of its task and checks success there. */
export function realCheck(task: Task, actions: readonly string[]): Verdict {
  const env = makeTaskEnv(task);
  env.reset();
  for (const a of actions) env.step(a);
  return env.check();
}

/**
 * The weight of the format term: what a well-formed episode earns besides success. Small enough
 * that any success outranks any failure (1 > FORMAT_WEIGHT), and it only breaks ties within a
 * group that all failed or all succeeded.
 */
export const FORMAT_WEIGHT = 0.1;

/**
 * An episode's reward: 1 for success (the task's check), plus FORMAT_WEIGHT × the share of the
 * policy's moves that ended with the end-of-turn token within their budget. The format term
 * gives a group of failures a direction (stop rambling, end the turn), where success alone
 * would give every episode the same reward and GSPO no gradient.
 */
export function episodeReward(success: boolean, moves: readonly Pick<PolicyMove, 'formed'>[]): { reward: number; success: number; format: number } {
  const format = moves.length ? moves.filter((m) => m.formed).length / moves.length : 0;
  const s = success ? 1 : 0;
  return { reward: s + FORMAT_WEIGHT * format, success: s, format };
}

/** GSPO's advantages of one group of episodes: rewards normalised within the group (docs/method.md §6). */
export function episodeAdvantages(rewards: readonly number[]): Float64Array {
  return advantagesWithFailures(rewards);
}

/**
 * The sim-to-real gap: of the simulated episodes, the share whose simulated success the real
 * check (the same actions replayed in the real environment) disagrees with, and which way.
 */
export function simToRealGap(pairs: readonly { sim: boolean; real: boolean }[]): { gap: number; simOnly: number; realOnly: number; n: number } {
  const n = pairs.length;
  const simOnly = pairs.filter((p) => p.sim && !p.real).length;
  const realOnly = pairs.filter((p) => !p.sim && p.real).length;
  return { gap: n ? (simOnly + realOnly) / n : 0, simOnly, realOnly, n };
}

/**
 * The one-sided p-value of Fisher's exact test that successes `a` of `n1` exceed successes `b`
 * of `n2` by more than chance: P(X ≥ a) for X hypergeometric with the table's margins.
 */
export function fisherOneSided(a: number, n1: number, b: number, n2: number): number {
  const k = a + b;
  const N = n1 + n2;
  const logC = (n: number, r: number) => lnFact(n) - lnFact(r) - lnFact(n - r);
  let p = 0;
  for (let x = a; x <= Math.min(k, n1); x++) p += Math.exp(logC(n1, x) + logC(n2, k - x) - logC(N, k));
  return Math.min(1, p);
}

/**
 * The one-sided p-value of McNemar's exact test that `after` solves more of the same tasks than
 * `before` by more than chance. Each is one character per task in one order, '1' solved, '0'
 * not. Only the tasks on which they differ count: with b gained and c lost, P(X ≥ b) for X
 * binomial(b + c, ½). Two evaluations of the same held-out tasks are paired, and the pairing
 * removes the tasks both solve or both fail, which Fisher's test of the two counts cannot.
 */
export function pairedOneSided(after: string, before: string): { p: number; gained: number; lost: number } {
  if (after.length !== before.length || !/^[01]*$/.test(after + before))
    throw new Error(`paired outcomes: two strings of 0 and 1 of one length, got ${after.length} and ${before.length} characters`);
  let gained = 0;
  let lost = 0;
  for (let i = 0; i < after.length; i++) {
    if (after[i] === '1' && before[i] === '0') gained++;
    if (after[i] === '0' && before[i] === '1') lost++;
  }
  const m = gained + lost;
  let p = 0;
  for (let x = gained; x <= m; x++) p += Math.exp(lnFact(m) - lnFact(x) - lnFact(m - x) - m * Math.LN2);
  return { p: Math.min(1, p), gained, lost };
}

/** Outcomes of one evaluation: its success count of n tasks, and per task where it was stored. */
export interface EvalOutcomes {
  successes: number;
  n: number;
  /** One character per held-out task, '1' solved; absent in evaluations stored before it existed. */
  solved?: string;
}

/**
 * p that `final` beats `base`: McNemar's exact test when both have per-task outcomes on the same
 * number of tasks (the evaluations of one run or experiment play the same held-out tasks),
 * Fisher's exact test of the counts otherwise.
 */
export function evalP(final: EvalOutcomes, base: EvalOutcomes): number {
  if (final.solved !== undefined && base.solved !== undefined && final.solved.length === base.solved.length) return pairedOneSided(final.solved, base.solved).p;
  return fisherOneSided(final.successes, final.n, base.successes, base.n);
}

function lnFact(n: number): number {
  let s = 0;
  for (let i = 2; i <= n; i++) s += Math.log(i);
  return s;
}
