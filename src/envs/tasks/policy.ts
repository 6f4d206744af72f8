// The agent policy's side of the data (docs/method.md §12): a task's episode turned into samples
// whose prompt is the task, the action space, the start and the history of (action, observation)
// pairs, and whose target is the next action. The layout's markers are the tokenizer's special
// tokens and come only from this file's own text; every text from an environment or an agent
// is data, encoded as the characters it is, so an observation that prints <|end_turn|> cannot
// end a turn.
import type { Trajectory } from '../../core/schema/types.ts';
import { SPECIAL_TOKENS, type TextPart } from '../../core/tokenizer/index.ts';
import { ENV_DOMAINS } from '../registry.ts';
import type { Episode } from './registry.ts';

export interface PolicyTurn {
  action: string;
  observation: string;
}

/** One imitation sample: what the policy sees before its next action, and that action. */
export interface PolicySample {
  /** The task id, or the trajectory id for samples from generated trajectories. */
  source: string;
  domain: string;
  /** 0-based index of the target action in its episode. */
  step: number;
  /** The environment's task description, which carries the goal. */
  task: string;
  /** The goal alone, in words (samples of a task; the compact layout needs it). */
  goal?: string;
  actionSpace: string;
  /** What the environment showed before the first action. */
  initialState: string;
  history: PolicyTurn[];
  /** The action to take next. */
  target: string;
}

/** The policy's prompt parts: template text (data false) and data (data true). */
const T = (text: string): TextPart => ({ text });
const D = (text: string): TextPart => ({ text, data: true });
const S = SPECIAL_TOKENS;

/** What of a sample a fitted prompt kept. */
export interface PolicyFit {
  prompt: TextPart[];
  /** The target action and the token that ends it. */
  target: TextPart[];
  /** How many of the newest turns are shown (the rest, the oldest, are left out). */
  turns: number;
  /** The newest shown turn's observation was cut to fit. */
  cutObservation: boolean;
  /** The initial state is shown (whole or cut). */
  initialState: 'whole' | 'cut' | 'left out';
}

/**
 * How a prompt is laid out. `full`: the task description, the action space, the start and the
 * history. `compact`: the goal and the history only. A policy trained on one domain sees the
 * same description frame and action space in every prompt: constant text that tells it nothing
 * and costs its context and attention. A tiny model reading 250 tokens of it to find a goal word
 * learns to copy that word many times slower than one reading the goal alone (docs/method.md §13).
 */
export type PolicyLayout = 'full' | 'compact';
export const POLICY_LAYOUTS: readonly PolicyLayout[] = ['full', 'compact'];

/**
 * The tokens the layout is written in. `tokens`: our tokenizer's markers (the system, action,
 * observation and end-of-turn tokens). `chat`: a pretrained model's chat format, the text around
 * a chat template's system, user and assistant messages (core/templates/chatWrap.ts's ChatWrap):
 * the task section is the system message, the history the user message, the next action the
 * assistant's reply, ended by `close` (the template's end of turn, trailing whitespace dropped).
 */
export type PolicyFormat = { kind: 'tokens' } | { kind: 'chat'; sysOpen: string; sysToUser: string; userToAssistant: string; close: string };
export const TOKENS_FORMAT: PolicyFormat = { kind: 'tokens' };

interface Layout {
  style: PolicyLayout;
  turns: PolicyTurn[];
  omitted: number;
  initialState: string | null;
}

function render(s: PolicySample, l: Layout, f: PolicyFormat): TextPart[] {
  const head = f.kind === 'chat' ? f.sysOpen : S.system;
  const parts: TextPart[] =
    l.style === 'compact' ? [T(`${head}# Goal\n`), D(s.goal ?? '')] : [T(`${head}# Task\n`), D(s.task), T('\n# Actions\n'), D(s.actionSpace)];
  if (l.initialState !== null) parts.push(T('\n# Start\n'), D(l.initialState));
  const earlier = `(${l.omitted} earlier turn${l.omitted === 1 ? '' : 's'} left out)`;
  if (f.kind === 'chat') {
    // Separators before each line, none after the last: chat templates trim a message's edges.
    parts.push(T(`${f.sysToUser}# History`));
    if (l.omitted) parts.push(T(`\n${earlier}`));
    if (!l.turns.length && !l.omitted) parts.push(T('\n(none yet)'));
    for (const t of l.turns) parts.push(T('\nAction: '), D(t.action), T('\nObservation: '), D(t.observation));
    parts.push(T(f.userToAssistant));
    return parts;
  }
  parts.push(T('\n# History\n'));
  if (l.omitted) parts.push(T(`${earlier}\n`));
  if (!l.turns.length && !l.omitted) parts.push(T('(none yet)\n'));
  for (const t of l.turns) parts.push(T(S.action), D(t.action), T(S.observation), D(t.observation), T(S.endTurn));
  parts.push(T(S.action));
  return parts;
}

/** The target of a sample: the action, then the token that ends it. */
export function policyTarget(s: PolicySample, f: PolicyFormat = TOKENS_FORMAT): TextPart[] {
  return [D(s.target), T(f.kind === 'chat' ? f.close : S.endTurn)];
}

/** Text cut to about `keep` characters: two thirds from its head, the rest from its tail, around '…'. */
function cut(text: string, keep: number): string {
  if (keep >= text.length) return text;
  const head = Math.ceil((keep * 2) / 3);
  return `${text.slice(0, head)}…${text.slice(text.length - (keep - head))}`;
}

/** The fewest characters a cut text keeps: less says too little to be worth its room. */
const MIN_CUT = 64;

/** The longest cut of `text` (at least MIN_CUT characters) for which `fits` holds, or null. */
function longestCut(text: string, fits: (t: string) => boolean): string | null {
  let lo = MIN_CUT;
  let hi = text.length - 1;
  if (hi < lo || !fits(cut(text, lo))) return null;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(cut(text, mid))) lo = mid;
    else hi = mid - 1;
  }
  return cut(text, lo);
}

/** What counts tokens: our tokenizer, or anything that encodes parts the same way. */
export interface PartsEncoder {
  encodeParts(parts: readonly TextPart[]): number[];
}

/** The least a prompt shows: the goal (compact) or the task and action space (full), every turn left out. */
const bareLayout = (s: PolicySample, style: PolicyLayout): Layout => ({ style, turns: [], omitted: s.history.length, initialState: null });

/**
 * The fewest tokens fitPolicyPrompt needs for a sample's prompt and target together: its bare
 * prompt beside `target` (the sample's own action; '' for the end-of-action token alone, as a
 * prompt the policy acts on is fitted). Less, and fitPolicyPrompt throws.
 */
export function barePromptTokens(s: PolicySample, tok: PartsEncoder, style: PolicyLayout = 'full', format: PolicyFormat = TOKENS_FORMAT): number {
  if (style === 'compact' && !s.goal)
    throw new Error(`policy prompt of ${s.source} step ${s.step}: the compact layout needs the task's goal, and this sample has none`);
  return tok.encodeParts(render(s, bareLayout(s, style), format)).length + tok.encodeParts(policyTarget(s, format)).length;
}

/**
 * The prompt of a sample within `maxTokens` for prompt and target together. The task and the
 * action space (compact: the goal) are always kept whole (an error when they and the target
 * alone do not fit); then the newest turns, newest first, a contiguous run that ends at the
 * target (the newest turn's observation is cut, head and tail, when it does not fit whole);
 * then, in the full layout, the initial state in the room left, cut when it does not fit whole.
 */
export function fitPolicyPrompt(
  s: PolicySample,
  tok: PartsEncoder,
  maxTokens: number,
  style: PolicyLayout = 'full',
  format: PolicyFormat = TOKENS_FORMAT,
): PolicyFit {
  if (style === 'compact' && !s.goal)
    throw new Error(`policy prompt of ${s.source} step ${s.step}: the compact layout needs the task's goal, and this sample has none`);
  const target = policyTarget(s, format);
  const targetLen = tok.encodeParts(target).length;
  const size = (l: Layout) => tok.encodeParts(render(s, l, format)).length + targetLen;
  const fits = (l: Layout) => size(l) <= maxTokens;
  const bare = bareLayout(s, style);
  if (!fits(bare))
    throw new Error(
      `policy prompt of ${s.source} step ${s.step}: the ${style === 'compact' ? 'goal' : 'task, action space'} and target take ${size(bare)} tokens, more than the budget of ${maxTokens}`,
    );
  let layout = bare;
  let cutObservation = false;
  for (let k = 1; k <= s.history.length; k++) {
    const next: Layout = { style, turns: s.history.slice(s.history.length - k), omitted: s.history.length - k, initialState: null };
    if (fits(next)) {
      layout = next;
      continue;
    }
    if (k === 1) {
      const newest = s.history[s.history.length - 1];
      const obs = longestCut(newest.observation, (o) => fits({ ...next, turns: [{ action: newest.action, observation: o }] }));
      if (obs !== null) {
        layout = { ...next, turns: [{ action: newest.action, observation: obs }] };
        cutObservation = true;
      }
    }
    break;
  }
  let initialState: PolicyFit['initialState'] = 'left out';
  if (style === 'compact') return { prompt: render(s, layout, format), target, turns: layout.turns.length, cutObservation, initialState };
  if (fits({ ...layout, initialState: s.initialState })) {
    layout = { ...layout, initialState: s.initialState };
    initialState = 'whole';
  } else {
    const st = longestCut(s.initialState, (x) => fits({ ...layout, initialState: x }));
    if (st !== null) {
      layout = { ...layout, initialState: st };
      initialState = 'cut';
    }
  }
  return { prompt: render(s, layout, format), target, turns: layout.turns.length, cutObservation, initialState };
}

/** A training row: the fitted prompt's ids, then the target's; the loss falls on ids from `promptLength` on. */
export function encodePolicyRow(
  s: PolicySample,
  tok: PartsEncoder,
  maxTokens: number,
  style: PolicyLayout = 'full',
  format: PolicyFormat = TOKENS_FORMAT,
): { ids: number[]; promptLength: number; fit: PolicyFit } {
  const fit = fitPolicyPrompt(s, tok, maxTokens, style, format);
  const prompt = tok.encodeParts(fit.prompt);
  return { ids: [...prompt, ...tok.encodeParts(fit.target)], promptLength: prompt.length, fit };
}

/** The prompt and target as plain text, the way the layout reads (markers included). */
export function policyText(parts: readonly TextPart[]): string {
  return parts.map((p) => p.text).join('');
}

/** One sample per action of an episode (by default only of actions the environment accepted). */
export function episodeSamples(e: Episode, opts: { onlyAccepted?: boolean } = {}): PolicySample[] {
  const onlyAccepted = opts.onlyAccepted ?? true;
  const out: PolicySample[] = [];
  e.turns.forEach((t, i) => {
    if (onlyAccepted && !t.ok) return;
    out.push({
      source: e.task.id,
      domain: e.task.domain,
      step: i,
      task: e.system_prompt.task_description,
      goal: e.task.goal,
      actionSpace: e.system_prompt.action_space,
      initialState: e.system_prompt.initial_state,
      history: e.turns.slice(0, i).map(({ action, observation }) => ({ action, observation })),
      target: t.action,
    });
  });
  return out;
}

/**
 * Samples from a generated trajectory of a goal-directed scripted agent (metadata.agent 'goal',
 * whose task is its system prompt's goal): the episode is replayed in the environment to learn
 * which actions it accepted; an action it refused (the agent's scripted slips: a typo, a wrong
 * path) stays in the history but is never a target. Other trajectories give no samples.
 */
export function trajectorySamples(t: Trajectory): PolicySample[] {
  const meta = t.metadata ?? {};
  if (meta.agent !== 'goal' || typeof meta.env_seed !== 'number') return [];
  const def = ENV_DOMAINS[t.domain as keyof typeof ENV_DOMAINS];
  if (!def) return [];
  const env = def.create();
  env.reset(meta.env_seed);
  const out: PolicySample[] = [];
  t.turns.forEach((turn, i) => {
    const r = env.step(turn.action);
    if (r.observation !== turn.observation)
      throw new Error(`trajectory ${t.id} turn ${i}: replaying '${turn.action.slice(0, 40)}' gives another observation than the one stored`);
    if (!r.ok) return;
    out.push({
      source: t.id,
      domain: t.domain,
      step: i,
      task: t.system_prompt.task_description,
      actionSpace: t.system_prompt.action_space,
      initialState: t.system_prompt.initial_state,
      history: t.turns.slice(0, i).map(({ action, observation }) => ({ action, observation })),
      target: turn.action,
    });
  });
  return out;
}
