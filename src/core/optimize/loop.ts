// The prompt-optimization loop (docs/method.md §9, issue 16 item 1), one implementation for the app's
// worker and the CLI. Start from a template; each round analyses the current best template's
// errors on the dev split, asks the optimizer for K candidates, validates each (an invalid one is
// kept, marked invalid, with the reason), scores each valid one on the same dev samples, and lets
// a candidate replace its parent only when the paired comparison supports it (paired.ts). The
// final best is scored once on the test split the loop never looked at.
//
// The state is plain JSON and is handed to `onState` after every evaluation, so a run can stop
// (cancel, budget, reload) and resume from it to the same end: candidates are stored before they
// are scored, and everything else is a function of the state, the seed and the backends.
import type { AwbJudgedRecord } from '../bench/records.ts';
import type { ScoreTable } from '../bench/score.ts';
import { analyseErrors, type ErrorAnalysis } from './analysis.ts';
import { decide, pairedComparison, type PairedComparison } from './paired.ts';

export type VersionStatus = 'start' | 'accepted' | 'rejected' | 'invalid';

export interface Version {
  id: string;
  parent: string | null;
  round: number;
  text: string;
  /** The optimizer's one-line note (what it changed and why). */
  note: string;
  optimizer: string;
  status: VersionStatus;
  /** Why it was accepted, rejected or invalid (the comparison, or the validation error). */
  reason?: string;
  /** Mean objective on the dev split, 0–100. */
  mean?: number | null;
  analysis?: ErrorAnalysis;
  comparison?: PairedComparison;
}

export interface Candidate {
  note: string;
  /** The template text (absent when the optimizer's reply could not be used at all). */
  text?: string;
  /** Set by the optimizer when it refused its own reply (the reason is kept). */
  rejected?: string;
}

export interface ProposeContext {
  round: number;
  k: number;
  seed: number;
  parent: Version & { analysis: ErrorAnalysis };
  /** Every version so far, oldest first. */
  lineage: readonly Version[];
}

export interface Optimizer {
  name: string;
  propose(ctx: ProposeContext, signal?: AbortSignal): Promise<Candidate[]>;
}

export interface LoopConfig {
  rounds: number;
  candidates: number;
  /** A candidate must beat its parent by more than this (0–100 units) at the interval's lower end. */
  margin: number;
  /** Confidence level of the paired interval. */
  level: number;
  seed: number;
  /** Samples per split (for the budget and the progress). */
  devSize: number;
  testSize: number;
  /** At most this many model calls (one per sample scored) and judge calls in the whole run, test split included. */
  budget?: { modelCalls?: number; judgeCalls?: number };
}

export interface RoundSummary {
  round: number;
  best: string;
  mean: number | null;
  candidates: number;
  accepted: number;
}

export type StopReason = 'done' | 'budget' | 'no-candidates';

export interface LoopState {
  config: LoopConfig;
  versions: Version[];
  best: string;
  /** Rounds finished. */
  round: number;
  /** Candidates of the round in progress, stored before scoring (ids are final). */
  pending: string[];
  calls: { model: number; judge: number };
  rounds: RoundSummary[];
  test?: { version: string; mean: number | null; table: ScoreTable };
  stopped?: StopReason;
  stopNote?: string;
}

export interface LoopEnv {
  optimizer: Optimizer;
  /** Scores a template text on a split: judged records in sample order (the simulator + judge + verifier). */
  evaluate(text: string, split: 'dev' | 'test', signal?: AbortSignal): Promise<AwbJudgedRecord[]>;
  /** Why a template text cannot be used (placeholders lost, does not render on a dev sample); empty when valid. */
  validate(text: string): string[];
  onState?(state: LoopState): void;
  signal?: AbortSignal;
}

export function checkLoopConfig(c: LoopConfig): string[] {
  const errors: string[] = [];
  const int = (name: string, v: number, min: number, max: number) => {
    if (!Number.isInteger(v) || v < min || v > max) errors.push(`${name} must be a whole number from ${min} to ${max} (got ${v})`);
  };
  int('rounds', c.rounds, 1, 100);
  int('candidates', c.candidates, 1, 20);
  int('dev samples', c.devSize, 2, 100000);
  int('test samples', c.testSize, 0, 100000);
  if (!Number.isFinite(c.margin) || c.margin < 0 || c.margin > 100) errors.push(`margin must be from 0 to 100 (got ${c.margin})`);
  if (!(c.level > 0.5 && c.level < 1)) errors.push(`confidence level must be between 0.5 and 1 (got ${c.level})`);
  for (const [k, v] of Object.entries(c.budget ?? {}))
    if (v !== undefined && !(Number.isInteger(v) && v > 0)) errors.push(`budget ${k} must be a positive whole number (got ${v})`);
  return errors;
}

/** Evaluations the run plans: the start, K per round, the test split. */
export function plannedEvaluations(c: LoopConfig): number {
  return 1 + c.rounds * c.candidates + (c.testSize > 0 ? 1 : 0);
}

/**
 * The key a version's optimizer was stored under before the project settled on one spelling: in
 * IndexedDB's records (a version 4 database) and in `lwm optimize`'s state.json files written then.
 * Read only; nothing writes it.
 */
export const OLD_OPTIMIZER_KEY = 'optimiser'; // old spelling, read for stored data

/** Moves `o`'s value under OLD_OPTIMIZER_KEY to `optimizer` (in place) when it has no `optimizer` yet; returns `o`. */
export function withOptimizerKey<T>(o: T): T {
  if (o && typeof o === 'object' && Object.hasOwn(o, OLD_OPTIMIZER_KEY) && !Object.hasOwn(o, 'optimizer')) {
    const r = o as Record<string, unknown>;
    r.optimizer = r[OLD_OPTIMIZER_KEY];
    delete r[OLD_OPTIMIZER_KEY];
  }
  return o;
}

/** A loop state as stored (state.json, an IndexedDB record), its versions in the current field names whichever spelling wrote them (in place). */
export function storedLoopState<T>(s: T): T {
  const versions = (s as { versions?: unknown } | null)?.versions;
  if (Array.isArray(versions)) for (const v of versions) withOptimizerKey(v);
  return s;
}

export function newLoopState(config: LoopConfig): LoopState {
  const errors = checkLoopConfig(config);
  if (errors.length) throw new RangeError(errors.join('; '));
  return { config, versions: [], best: '', round: 0, pending: [], calls: { model: 0, judge: 0 }, rounds: [] };
}

const byId = (s: LoopState, id: string): Version => {
  const v = s.versions.find((x) => x.id === id);
  if (!v) throw new Error(`optimization state: no version ${id}`);
  return v;
};

/** Whether `n` more samples fit the budget, keeping room for the test split. */
function fits(s: LoopState, n: number, keepTest: boolean): boolean {
  const b = s.config.budget;
  if (!b) return true;
  const need = n + (keepTest ? s.config.testSize : 0);
  return (b.modelCalls === undefined || s.calls.model + need <= b.modelCalls) && (b.judgeCalls === undefined || s.calls.judge + need <= b.judgeCalls);
}

async function scoreOn(env: LoopEnv, s: LoopState, text: string, split: 'dev' | 'test'): Promise<AwbJudgedRecord[]> {
  const records = await env.evaluate(text, split, env.signal);
  s.calls.model += records.length;
  s.calls.judge += records.length;
  return records;
}

function stop(s: LoopState, env: LoopEnv, reason: StopReason, note: string): void {
  s.stopped = reason;
  s.stopNote = note;
  env.onState?.(s);
}

async function startVersion(env: LoopEnv, s: LoopState, text: string, note: string): Promise<void> {
  const errors = env.validate(text);
  if (errors.length) throw new Error(`the starting template cannot be used: ${errors.join('; ')}`);
  const analysis = analyseErrors(await scoreOn(env, s, text, 'dev'));
  s.versions.push({ id: 'v0', parent: null, round: 0, text, note, optimizer: 'start', status: 'start', mean: analysis.mean, analysis });
  s.best = 'v0';
  env.onState?.(s);
}

async function proposeRound(env: LoopEnv, s: LoopState): Promise<boolean> {
  const round = s.round + 1;
  const parent = byId(s, s.best) as Version & { analysis: ErrorAnalysis };
  const proposals = await env.optimizer.propose({ round, k: s.config.candidates, seed: s.config.seed, parent, lineage: s.versions }, env.signal);
  proposals.slice(0, s.config.candidates).forEach((p, i) => {
    const v: Version = {
      id: `r${round}c${i + 1}`,
      parent: parent.id,
      round,
      text: p.text ?? '',
      note: p.note,
      optimizer: env.optimizer.name,
      status: 'rejected',
    };
    const invalid = p.rejected ?? (p.text === undefined ? 'no template in the reply' : env.validate(p.text).join('; '));
    if (invalid) {
      v.status = 'invalid';
      v.reason = invalid;
    } else s.pending.push(v.id);
    s.versions.push(v);
  });
  env.onState?.(s);
  return s.versions.some((v) => v.round === round);
}

async function scoreCandidate(env: LoopEnv, s: LoopState, v: Version): Promise<void> {
  const parent = byId(s, v.parent!);
  const analysis = analyseErrors(await scoreOn(env, s, v.text, 'dev'));
  v.analysis = analysis;
  v.mean = analysis.mean;
  v.comparison = pairedComparison(parent.analysis!.objectives, analysis.objectives, s.config.level);
  const d = decide(v.comparison, s.config.margin);
  v.status = d.accept ? 'accepted' : 'rejected';
  v.reason = d.reason;
}

/** Ends a round: the accepted candidate with the highest mean becomes the best; other accepted ones are kept but marked rejected. */
function closeRound(s: LoopState): void {
  const round = s.round + 1;
  const cands = s.versions.filter((v) => v.round === round);
  const accepted = cands.filter((v) => v.status === 'accepted').sort((a, b) => (b.mean ?? -1) - (a.mean ?? -1) || (a.id < b.id ? -1 : 1));
  for (const v of accepted.slice(1)) {
    v.status = 'rejected';
    v.reason = `${v.reason} — but ${accepted[0].id} scored higher in this round`;
  }
  if (accepted[0]) s.best = accepted[0].id;
  s.round = round;
  s.rounds.push({ round, best: s.best, mean: byId(s, s.best).mean ?? null, candidates: cands.length, accepted: accepted.length ? 1 : 0 });
}

async function runRound(env: LoopEnv, s: LoopState): Promise<StopReason | null> {
  if (s.pending.length === 0 && !s.versions.some((v) => v.round === s.round + 1)) {
    if (!(await proposeRound(env, s))) return 'no-candidates';
  }
  while (s.pending.length) {
    if (env.signal?.aborted) throw env.signal.reason ?? new Error('the optimization was cancelled');
    if (!fits(s, s.config.devSize, s.config.testSize > 0)) {
      for (const id of s.pending) byId(s, id).reason = 'not scored: the budget ran out';
      s.pending = [];
      closeRound(s);
      return 'budget';
    }
    const v = byId(s, s.pending[0]);
    await scoreCandidate(env, s, v);
    s.pending.shift();
    env.onState?.(s);
  }
  closeRound(s);
  env.onState?.(s);
  return null;
}

async function finalTest(env: LoopEnv, s: LoopState): Promise<void> {
  if (s.config.testSize === 0 || s.test) return;
  const best = byId(s, s.best);
  const analysis = analyseErrors(await scoreOn(env, s, best.text, 'test'));
  s.test = { version: best.id, mean: analysis.mean, table: analysis.table };
  env.onState?.(s);
}

/**
 * Runs (or resumes) the loop to its end. `state` from an earlier `onState` resumes; a new state
 * starts from `start`. Returns the final state; `stopped` says why it ended.
 */
export async function runOptimization(env: LoopEnv, state: LoopState, start: { text: string; note: string }): Promise<LoopState> {
  const s = state;
  if (s.stopped) return s;
  if (!s.best) await startVersion(env, s, start.text, start.note);
  while (s.round < s.config.rounds) {
    const r = await runRound(env, s);
    if (r === 'budget') {
      await finalTest(env, s);
      stop(s, env, 'budget', `the budget (${JSON.stringify(s.config.budget)}) leaves no room for another candidate after ${s.calls.model} model calls`);
      return s;
    }
    if (r === 'no-candidates') {
      await finalTest(env, s);
      stop(s, env, 'no-candidates', `the optimizer proposed nothing in round ${s.round + 1}`);
      return s;
    }
  }
  await finalTest(env, s);
  stop(s, env, 'done', `${s.round} round(s); best ${s.best}`);
  return s;
}
