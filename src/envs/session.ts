// The Playground's session logic, pure: a world (a built-in environment at a seed, or a free
// world with only a system prompt), the turns played in it, and what each turn is judged by.
// The view and its store (src/app/stores/playground.ts) drive a backend; everything that decides
// what the model is fed, what the real environment answers, how a turn is scored and what a
// branch keeps lives here, so it is tested in Node.
//
// - Real observations come from replaying the environment from its reset with the session's
//   actions in order (environments are deterministic per seed and action sequence), so editing
//   an earlier action gives the real observations of the new branch, not of the old one.
// - History mode: teacher forcing feeds the model the real earlier observations (what
//   AgentWorldBench measures); free running feeds it its own earlier predictions, so errors
//   compound as they would in a simulator. A free world has no real observations: it always
//   runs free.
// - Each predicted turn of a built-in environment is graded as RL grades it (docs/method.md §7): the local
//   rubric judge's five scores against the real observation, the rule verifier on the
//   deterministic region, and reward = 0.9 × judge + 0.1 × verifier on [0, 25].
import type { TurnRequest } from '../core/backend.ts';
import { ENV_DOMAINS } from './registry.ts';
import { Rng } from '../core/random.ts';
import { extractPrediction } from '../core/judge/extract.ts';
import { reward, type RewardParts } from '../core/judge/reward.ts';
import { rubricJudge } from '../core/judge/rubric.ts';
import type { ScoredVerdict } from '../core/judge/types.ts';
import { verify, type VerifierResult } from '../core/judge/verifier.ts';
import { DOMAINS, emptySystemPrompt, type KnownDomain, type SpanLabel, type SystemPrompt, type Trajectory, type Turn } from '../core/schema/types.ts';
import { renderSystem, BUILTIN_TEMPLATES, type PromptTemplate } from '../core/templates/index.ts';

export type World = { kind: 'env'; domain: KnownDomain; seed: number } | { kind: 'free'; domain: string };

/** What the model is given as the earlier turns' observations. */
export type HistoryMode = 'teacher' | 'free';

export interface RealObservation {
  observation: string;
  spans: SpanLabel[];
  timestamp: string;
  /** False when the environment rejected the action (its error text is the observation). */
  ok: boolean;
}

export interface Prediction {
  /** The backend's whole output as streamed. */
  raw: string;
  /** What counts: the text inside the last <predicted_observation> block (extractPrediction). */
  observation: string;
  backend: string;
  /** The history the model was fed. */
  mode: HistoryMode;
  tokens: number;
  ms: number;
  /** The user stopped it before the end. */
  stopped?: boolean;
  /** Generation failed (the text so far is kept). */
  error?: string;
}

/** A piece of text the verifier checked: where it is, and whether the prediction reproduced it. */
export interface Highlight {
  start: number;
  end: number;
  status: 'match' | 'mismatch' | 'unchecked';
  label: string;
}

export interface Grade {
  verdict: ScoredVerdict;
  verifier: VerifierResult;
  reward: RewardParts;
  highlights: { reference: Highlight[]; prediction: Highlight[] };
}

export interface PlayTurn {
  action: string;
  /** The real environment's observation (null in a free world). */
  real: RealObservation | null;
  prediction: Prediction | null;
  grade: Grade | null;
}

export interface Branch {
  /** Shown in the branch list, e.g. "before editing turn 2". */
  label: string;
  turns: PlayTurn[];
}

export interface Session {
  world: World;
  systemPrompt: SystemPrompt;
  turns: PlayTurn[];
  mode: HistoryMode;
  /** Earlier branches, kept when an earlier action is edited (newest last). */
  branches: Branch[];
}

export const MAX_BRANCHES = 20;

export function isKnownDomain(d: string): d is KnownDomain {
  return (DOMAINS as readonly string[]).includes(d);
}

/** The environment's system prompt for a world (a free world starts empty but for its domain's nothing). */
export function worldSystemPrompt(world: World): SystemPrompt {
  if (world.kind === 'free') return emptySystemPrompt();
  const env = ENV_DOMAINS[world.domain].create();
  return { ...env.reset(world.seed).system_prompt };
}

/** A fresh session in a world, with the world's own system prompt. */
export function newSession(world: World, mode: HistoryMode = 'teacher'): Session {
  return { world, systemPrompt: worldSystemPrompt(world), turns: [], mode: world.kind === 'free' ? 'free' : mode, branches: [] };
}

/** The real observations of `actions` played in order from the world's reset; [] in a free world. */
export function realObservations(world: World, actions: readonly string[]): RealObservation[] {
  if (world.kind === 'free') return [];
  const env = ENV_DOMAINS[world.domain].create();
  env.reset(world.seed);
  return actions.map((a) => {
    const r = env.step(a);
    return { observation: r.observation, spans: r.spans, timestamp: r.timestamp, ok: r.ok };
  });
}

/**
 * A valid next action from the environment's scripted agent. The goal-directed agent is replayed
 * over the session (its plan advances by one step per action played, whatever the user typed, and
 * its later steps read the environment's state); when its plan is done a random agent pokes around.
 * `variant` draws another agent (the suggest button pressed again).
 */
export function suggestAction(world: World, actions: readonly string[], variant = 0): string | null {
  if (world.kind === 'free') return null;
  const def = ENV_DOMAINS[world.domain];
  const env = def.create();
  env.reset(world.seed);
  const rng = new Rng(`playground:${world.domain}:${world.seed}:${variant}`);
  const goal = def.agent(env, rng.fork('goal'), 'goal');
  let last = null;
  let goalLeft = true;
  for (const a of actions) {
    if (goalLeft && goal.next(last) === null) goalLeft = false;
    last = env.step(a);
  }
  const next = goalLeft ? goal.next(last) : null;
  if (next !== null) return next;
  const random = def.agent(env, rng.fork(`random:${actions.length}`), 'random');
  return random.next(last);
}

/** The observation of an earlier turn the model is fed in `mode`. */
export function fedObservation(turn: PlayTurn, mode: HistoryMode): string {
  if (mode === 'teacher' && turn.real) return turn.real.observation;
  return turn.prediction?.observation ?? '';
}

/** Turns 1 … index−1 as the model sees them in the session's mode. */
export function fedHistory(session: Session, index: number): Turn[] {
  const mode = effectiveMode(session);
  return session.turns.slice(0, index).map((t) => ({ action: t.action, observation: fedObservation(t, mode) }));
}

/** Teacher forcing needs real observations: a free world always runs free. */
export function effectiveMode(session: Session): HistoryMode {
  return session.world.kind === 'free' ? 'free' : session.mode;
}

/** The request for turn `index`: the session's system prompt, the fed history, the action, and the real observation (read only by the reference baseline). */
export function turnRequest(session: Session, index: number, template?: PromptTemplate): TurnRequest {
  const turn = session.turns[index];
  if (!turn) throw new RangeError(`the session has no turn ${index + 1}`);
  const req: TurnRequest = {
    sample: { domain: session.world.domain, systemPrompt: session.systemPrompt, history: fedHistory(session, index), action: turn.action },
  };
  if (turn.real) req.reference = turn.real.observation;
  if (template) req.template = template;
  return req;
}

/** Where the verifier's regions sit in the reference and the prediction. */
export function verifierHighlights(v: VerifierResult, reference: string, prediction: string): Grade['highlights'] {
  const failed = v.failure ? v.regions.indexOf(v.failure.region) : -1;
  const ref: Highlight[] = [];
  const pred: Highlight[] = [];
  let refPos = 0;
  let predPos = 0;
  v.regions.forEach((r, i) => {
    const status: Highlight['status'] = failed < 0 || i < failed ? 'match' : i === failed ? 'mismatch' : 'unchecked';
    const needle = r.expected;
    if (!needle) return;
    const at = reference.indexOf(needle, refPos);
    if (at >= 0) {
      ref.push({ start: at, end: at + needle.length, status, label: r.label });
      refPos = at + needle.length;
    }
    if (status === 'match') {
      const p = prediction.indexOf(needle, predPos);
      if (p >= 0) {
        pred.push({ start: p, end: p + needle.length, status, label: r.label });
        predPos = p + needle.length;
      }
    }
  });
  return { reference: ref, prediction: pred };
}

/** The task context the judge sees: the system prompt as the eval template renders it. */
export function judgeContext(session: Session): string {
  return renderSystem(BUILTIN_TEMPLATES.v0, { domain: session.world.domain, systemPrompt: session.systemPrompt });
}

/**
 * Grades turn `index` as RL does: rubric judge, rule verifier, reward. The judge sees the real
 * history (what happened), whatever the model was fed. Null without a real observation or a
 * prediction.
 */
export function gradeTurn(session: Session, index: number): Grade | null {
  const turn = session.turns[index];
  if (!turn?.real || !turn.prediction) return null;
  const history = session.turns.slice(0, index).map((t) => ({ action: t.action, observation: t.real?.observation ?? '' }));
  const input = {
    domain: session.world.domain,
    context: judgeContext(session),
    history,
    action: turn.action,
    prediction: turn.prediction.observation,
    reference: turn.real.observation,
    spans: turn.real.spans,
  };
  const verdict = rubricJudge(input);
  const verifier = verify(input);
  return {
    verdict,
    verifier,
    reward: reward(verdict.scores, verifier.pass),
    highlights: verifierHighlights(verifier, turn.real.observation, turn.prediction.observation),
  };
}

/** Recomputes the real observations of every turn (after an action or the world changed). */
function withReal(session: Session, turns: PlayTurn[]): PlayTurn[] {
  const real = realObservations(
    session.world,
    turns.map((t) => t.action),
  );
  return turns.map((t, i) => ({ ...t, real: real[i] ?? null }));
}

/** Adds a turn with its real observation, not yet predicted. */
export function addTurn(session: Session, action: string): Session {
  const turns = withReal(session, [...session.turns, { action, real: null, prediction: null, grade: null }]);
  return { ...session, turns };
}

/** Records a finished (or stopped, or failed) prediction of turn `index` and grades it. */
export function setPrediction(session: Session, index: number, raw: string, meta: Omit<Prediction, 'raw' | 'observation' | 'mode'>): Session {
  const turns = session.turns.slice();
  turns[index] = { ...turns[index], prediction: { ...meta, raw, observation: extractPrediction(raw), mode: effectiveMode(session) }, grade: null };
  const next = { ...session, turns };
  turns[index] = { ...turns[index], grade: meta.error ? null : gradeTurn(next, index) };
  return next;
}

/**
 * Edits the action of turn `index` and starts a branch there: the session so far is kept in
 * `branches`, turns before `index` stay as they were (predictions included), turn `index` gets
 * the new action, and the later turns keep their actions (`keepLater`) or are dropped. From
 * `index` on nothing is predicted yet; real observations are those of the new branch.
 */
export function branchAt(session: Session, index: number, action: string, keepLater = true): Session {
  if (index < 0 || index >= session.turns.length) throw new RangeError(`the session has no turn ${index + 1}`);
  const saved: Branch = { label: `before editing turn ${index + 1} (${session.turns.length} turns)`, turns: session.turns };
  const later = keepLater ? session.turns.slice(index + 1) : [];
  const fresh = (a: string): PlayTurn => ({ action: a, real: null, prediction: null, grade: null });
  const turns = withReal(session, [...session.turns.slice(0, index), fresh(action), ...later.map((t) => fresh(t.action))]);
  return { ...session, turns, branches: [...session.branches, saved].slice(-MAX_BRANCHES) };
}

/** Goes back to a kept branch; the current turns become a branch in its place. */
export function switchBranch(session: Session, k: number): Session {
  const b = session.branches[k];
  if (!b) throw new RangeError(`no branch ${k}`);
  const current: Branch = { label: `branch left at ${session.turns.length} turns`, turns: session.turns };
  const branches = session.branches.slice();
  branches.splice(k, 1, current);
  return { ...session, turns: b.turns, branches };
}

/** The turns from `from` on that have no prediction yet, in order: what "run" plays next. */
export function pendingTurns(session: Session, from = 0): number[] {
  const out: number[] = [];
  for (let i = from; i < session.turns.length; i++) if (!session.turns[i].prediction || session.turns[i].prediction!.error) out.push(i);
  return out;
}

/** Drops the predictions from turn `index` on, so they are made again (the mode or the backend changed). */
export function clearFrom(session: Session, index: number): Session {
  return { ...session, turns: session.turns.map((t, i) => (i >= index ? { ...t, prediction: null, grade: null } : t)) };
}

/** Sets one system-prompt field (the model sees it from the next prediction on). */
export function setField(session: Session, field: keyof SystemPrompt, value: string): Session {
  return { ...session, systemPrompt: { ...session.systemPrompt, [field]: value } };
}

/** Means over the graded turns (the session's summary line). */
export function sessionSummary(session: Session): { graded: number; judge: number; verifierPass: number; reward: number } | null {
  const g = session.turns.map((t) => t.grade).filter((x): x is Grade => !!x);
  if (!g.length) return null;
  const mean = (f: (x: Grade) => number) => g.reduce((s, x) => s + f(x), 0) / g.length;
  return { graded: g.length, judge: mean((x) => x.verdict.total), verifierPass: mean((x) => (x.verifier.pass ? 1 : 0)), reward: mean((x) => x.reward.reward) };
}

/**
 * The session as a trajectory of the unified schema. In a built-in environment the observations
 * are the real ones (ground truth: data to train on) with their span labels, the model's
 * prediction and grade kept in each turn's metadata; in a free world the model's predictions are
 * the observations. Turns without an observation are left out.
 */
export function sessionTrajectory(session: Session, id: string, createdAt: number): Trajectory {
  const turns: Turn[] = [];
  for (const t of session.turns) {
    const observation = t.real ? t.real.observation : t.prediction?.observation;
    if (observation === undefined) continue;
    const metadata: Turn['metadata'] = { source: 'playground' };
    if (t.real) {
      metadata.spans = t.real.spans;
      metadata.timestamp = t.real.timestamp;
    }
    if (t.prediction && t.real) {
      metadata.prediction = t.prediction.observation;
      metadata.prediction_backend = t.prediction.backend;
      metadata.prediction_history = t.prediction.mode;
    }
    if (t.grade) {
      metadata.judge_scores = { ...t.grade.verdict.scores };
      metadata.verifier_pass = t.grade.verifier.pass;
      metadata.reward = t.grade.reward.reward;
    }
    turns.push({ action: t.action, observation, metadata });
  }
  const w = session.world;
  return {
    id,
    domain: w.domain,
    system_prompt: { ...session.systemPrompt },
    turns,
    source: { format: 'playground' },
    metadata: {
      generator: 'lwm-playground',
      created_at: new Date(createdAt).toISOString(),
      world: w.kind === 'env' ? { kind: 'env', domain: w.domain, seed: w.seed } : { kind: 'free' },
      history_mode: effectiveMode(session),
    },
  };
}
