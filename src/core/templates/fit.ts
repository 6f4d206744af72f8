// What the model sees (docs/method.md §11): one truncation policy, in tokens, for every path that turns a
// turn sample into model input — SFT rows and eval rows (src/train/data.ts), eval and RL
// prompts, the local backend (src/backends/local.ts) and the Playground. Train and inference cut
// the same way, so the model is never shown a layout it did not train on.
//
// Given a token budget, the parts of a sample are kept in priority order:
//   1. the current action and the opening of the target observation (the completion);
//   2. the initial state;
//   3. the history turns, newest first (a contiguous run ending at the current action);
//   4. the simulation instruction, then the template's own preamble and closing;
//   5. the task description, the action space, the demonstrations (an unsplit system text ranks
//      with the task description).
// A part that does not fit whole is elided — its values keep their head and tail around ELISION
// (the target keeps its opening) — when enough room is left for that to say something;
// otherwise it is left out. Whatever is kept is laid out as the template lays it out: fields in
// the template's order under their headings, turns in order with their own numbers, so a cut
// prompt reads like the full one with parts missing.
//
// The completion takes at most `targetShare` of the budget first; the context fills what is left;
// the completion then takes whatever room the context did not use. A generator's prompt is the
// context fitted to (room − opening tag) plus the opening tag, so for the same sample and the same
// context budget the training row's prompt and the generator's prompt are the same tokens.
import { SYSTEM_PROMPT_FIELDS, type SystemPromptField } from '../schema/types.ts';
import { SPECIAL_TOKENS, type TextPart, type Tokenizer } from '../tokenizer/index.ts';
import type { TurnSample } from '../turns/index.ts';
import type { PromptTemplate } from './builtin.ts';
import { valueOf, type LayoutItem, type LayoutSample, type ValueRef } from './layout.ts';
import { sampleLayout } from './render.ts';

/** Put where a value was cut. One character, so it costs few tokens. */
export const ELISION = '…';

/** Share of the budget the completion may take before the context is fitted. Default 0.5. */
export const DEFAULT_TARGET_SHARE = 0.5;

export type FitPartName = 'preamble' | 'closing' | SystemPromptField | 'system_text' | 'turn' | 'action' | 'frame' | 'reasoning' | 'open' | 'target' | 'close';

/** One piece of the fitted input, in layout order. */
export interface FitSegment {
  part: FitPartName;
  /** 0-based index of the history turn, for part 'turn'. */
  turn?: number;
  role: 'context' | 'reasoning' | 'target' | 'close';
  ids: number[];
  /** Part of this piece's value was cut (ELISION marks where). */
  elided: boolean;
  /**
   * A history turn shown whole: where its observation lies in `ids` ([start, end)) and where the
   * template text that closes it ends (closeEnd: the literal right after the observation, such as
   * <|end_turn|>), for trajectory rows that train history observations too (src/train/data.ts).
   */
  observation?: { start: number; end: number; closeEnd: number };
}

/** How much of the sample the model saw. Shares are of tokens (turns: of each turn's tokens). */
export interface FitCoverage {
  /** Kept share of the system-prompt tokens (preamble, fields with headings, closing); 1 when there are none. */
  system: number;
  /** Mean kept share over the history turns (a whole turn 1, an elided one its token share); null without history. */
  turns: number | null;
  /** Kept share of the initial state's tokens; null when the sample has none. */
  initialState: number | null;
  /** Kept share of the target observation's tokens; null for a prompt, which has none. */
  target: number | null;
  historyTurns: number;
  /** Turns seen whole. */
  keptTurns: number;
}

export interface FittedPrompt {
  ids: number[];
  segments: FitSegment[];
  /** Tokens of the context: ids.slice(0, contextLength) is what comes before the completion. */
  contextLength: number;
  /** The budget the context was fitted to: fitContext with it gives exactly this context (a generator's room less the opening tag). */
  contextBudget: number;
  coverage: FitCoverage;
  /** Something was cut or left out. */
  truncated: boolean;
  /** Oldest history turns not seen whole. */
  droppedTurns: number;
}

export interface FitOptions {
  /** Most tokens of the whole result. */
  budget: number;
  /** A reasoning trace before the prediction (docs/method.md §5), inside <think> … </think>. */
  reasoning?: string;
  /** Share of the budget the completion may take first (its opening). Default DEFAULT_TARGET_SHARE. */
  targetShare?: number;
  /**
   * A training row laid out as a generator will see it: the room a generator leaves for its answer
   * (its maxTokens). The context is then fitted to budget − 1 − answerRoom − the completion's fixed
   * tokens, the generator's context with a budget − 1 − answerRoom token prompt, so the target
   * follows exactly the prompt the model will be given, and keeps as much of itself as the row has
   * room for after it (a target longer than that is cut, as the generator would stop). Without it the context takes
   * all the room a short target leaves: a longer prompt than a generator's, which a small model
   * can learn to need.
   */
  answerRoom?: number;
}

// ---- parts -----------------------------------------------------------------------------------

/**
 * Text parts to ids: our tokenizer's or a Hugging Face tokenizer's encodeParts. Special tokens come
 * only from the template: its literal text is encoded with special-token strings as their tokens,
 * the sample's values (fields, actions, observations, the target, a reasoning trace) as data, so a
 * value holding `<|system|>` or `<think>` is those characters.
 */
export type PromptEncoder = (parts: readonly TextPart[]) => number[];

/** A template's literal text, data, or both joined. */
interface Encoders {
  literal: (s: string) => number[];
  text: (s: string) => number[];
  parts: PromptEncoder;
}

interface Piece {
  ids: number[];
  /** A value (elidable); literals are template text, kept whole or not at all. */
  value: boolean;
  /** Which value (values only). */
  ref?: ValueRef;
  /** A system part's leading whitespace (left out when the part opens the system text) or trailing whitespace. */
  edge?: 'lead' | 'trail';
}

interface Part {
  name: FitPartName;
  turn?: number;
  pieces: Piece[];
  full: number;
  /** Tokens of the sample's own content (values), for coverage. */
  content: number;
  elidable: boolean;
  area: LayoutItem['area'];
}

function part(name: FitPartName, pieces: Piece[], options: { turn?: number; elidable?: boolean; area: LayoutItem['area'] }): Part {
  const full = pieces.reduce((n, p) => n + p.ids.length, 0);
  const content = pieces.reduce((n, p) => n + (p.value ? p.ids.length : 0), 0);
  return { name, pieces, full, content, elidable: options.elidable ?? true, area: options.area, ...(options.turn !== undefined ? { turn: options.turn } : {}) };
}

/** The pieces of a layout item: literals encoded as they are, values from the sample; a system part's lead and trail apart. */
function itemPieces(enc: Encoders, item: LayoutItem, sample: LayoutSample): Piece[] {
  const pieces: Piece[] = [];
  if (item.lead) pieces.push({ ids: enc.literal(item.lead), value: false, edge: 'lead' });
  for (const p of item.pieces)
    pieces.push(typeof p === 'string' ? { ids: enc.literal(p), value: false } : { ids: enc.text(valueOf(p, sample)), value: true, ref: p });
  if (item.trail) pieces.push({ ids: enc.literal(item.trail), value: false, edge: 'trail' });
  return pieces;
}

type Slot = { frame: number[] } | { part: Part };

interface SampleParts {
  /** Frame text and parts in the template's layout order. */
  slots: Slot[];
  /** System parts in the template's order (prose, fields, or the unsplit text). */
  system: Part[];
  turns: Part[];
  action: Part;
  /** Tokens of the frame (always kept). */
  frame: number;
}

function sampleParts(enc: Encoders, t: PromptTemplate, sample: LayoutSample): SampleParts {
  const slots: Slot[] = [];
  const system: Part[] = [];
  const turns: Part[] = [];
  let action: Part | null = null;
  let frame = 0;
  for (const item of sampleLayout(t, sample)) {
    if (item.kind === 'frame') {
      const ids = item.pieces.flatMap((p) => (typeof p === 'string' ? enc.literal(p) : enc.text(valueOf(p, sample))));
      frame += ids.length;
      slots.push({ frame: ids });
      continue;
    }
    const pieces = itemPieces(enc, item, sample);
    const prose = item.name === 'preamble' || item.name === 'closing';
    const p = part(item.name, pieces, { turn: item.turn, elidable: !prose || pieces.some((x) => x.value), area: item.area });
    if (item.area === 'system') system.push(p);
    else if (item.area === 'turns') turns.push(p);
    else action = p;
    slots.push({ part: p });
  }
  return { slots, system, turns, action: action ?? part('action', [], { area: 'action' }), frame };
}

/** The system parts in the order they are given room (docs/method.md §11). */
const SYSTEM_PRIORITY: readonly FitPartName[] = [
  'initial_state',
  'simulation_instruction',
  'preamble',
  'closing',
  'task_description',
  'system_text',
  'action_space',
  'demonstrations',
];

// ---- eliding ---------------------------------------------------------------------------------

/** `ids` within `n` tokens: whole, or head and tail around the marker, or a bare head when the marker does not fit. */
function elideIds(ids: number[], n: number, marker: number[]): number[] {
  if (n >= ids.length) return ids;
  if (n <= marker.length) return ids.slice(0, Math.max(0, n));
  const keep = n - marker.length;
  const head = Math.ceil((keep * 2) / 3);
  return [...ids.slice(0, head), ...marker, ...ids.slice(ids.length - (keep - head))];
}

interface Cut {
  pieces: number[][];
  /** Tokens of the sample's content kept (markers not counted). */
  content: number;
  elided: boolean;
  length: number;
}

/** A part within `n` tokens: literals whole, the room left shared among its values (short values stay whole). */
function cutPart(p: Part, n: number, marker: number[]): Cut {
  if (n >= p.full) return { pieces: p.pieces.map((x) => x.ids), content: p.content, elided: false, length: p.full };
  const fixed = p.pieces.reduce((k, x) => k + (x.value ? 0 : x.ids.length), 0);
  let room = Math.max(0, n - fixed);
  const values = p.pieces
    .map((x, i) => ({ i, len: x.value ? x.ids.length : -1 }))
    .filter((v) => v.len >= 0)
    .sort((a, b) => a.len - b.len || a.i - b.i);
  const allowance = new Map<number, number>();
  values.forEach((v, k) => {
    const a = Math.min(v.len, Math.floor(room / (values.length - k)));
    allowance.set(v.i, a);
    room -= a;
  });
  let content = 0;
  const pieces = p.pieces.map((x, i) => {
    if (!x.value) return x.ids;
    const a = allowance.get(i)!;
    // Whole, a bare head of `a` tokens, or `a` tokens of which the marker takes its share.
    content += a >= x.ids.length ? x.ids.length : a <= marker.length ? a : a - marker.length;
    return elideIds(x.ids, a, marker);
  });
  return { pieces, content, elided: true, length: pieces.reduce((k, x) => k + x.length, 0) };
}

/** Least room worth giving an elided part: its literals plus, per value, the marker and two tokens. */
function minUseful(p: Part, marker: number[]): number {
  const values = p.pieces.filter((x) => x.value).length;
  return p.full - p.content + values * (marker.length + 2);
}

// ---- the policy ------------------------------------------------------------------------------

interface ContextFit {
  ids: number[];
  segments: FitSegment[];
  systemTokens: number;
  systemKept: number;
  turnShares: number[];
  initialState: { total: number; kept: number } | null;
  keptTurns: number;
  droppedTurns: number;
  truncated: boolean;
  /** The parts kept (whole or cut). */
  kept: Set<Part>;
}

function fitParts(sp: SampleParts, budget: number, marker: number[]): ContextFit {
  // Every kept system part is charged its leading whitespace, but the one that opens the system
  // text lays out without it: credit that back, when the choice made with the credit still fits.
  let plain = layout(sp, chooseParts(sp, budget, marker));
  // With no system part kept, the text still ends as the template ends it (a left-out part's
  // trailing newline): choose again with room for it.
  if (plain.ids.length > budget) plain = layout(sp, chooseParts(sp, 2 * budget - plain.ids.length, marker));
  const first = sp.system.find((p) => plain.kept.has(p));
  const lead = first ? first.pieces.filter((x) => x.edge === 'lead').reduce((n, x) => n + x.ids.length, 0) : 0;
  if (!lead) return plain;
  const credited = layout(sp, chooseParts(sp, budget + lead, marker));
  return credited.ids.length <= budget ? credited : plain;
}

/** Which parts get how much room, by priority (docs/method.md §11). */
function chooseParts(sp: SampleParts, budget: number, marker: number[]): Map<Part, Cut> {
  const cuts = new Map<Part, Cut>();
  // The frame (special tokens, blank lines) and the current action's literals; then the action's value.
  let room = budget - sp.frame;
  const actionCut = cutPart(sp.action, Math.max(0, room), marker);
  // The action is never left out: below its literals the row is cut from its start by the caller.
  cuts.set(sp.action, actionCut);
  room -= actionCut.length;
  /** Gives a part room: whole (true), elided into what is left, or not at all (false both). */
  const take = (p: Part): boolean => {
    if (p.full <= room) {
      cuts.set(p, cutPart(p, p.full, marker));
      room -= p.full;
      return true;
    }
    if (!p.elidable || room < minUseful(p, marker)) return false;
    const c = cutPart(p, room, marker);
    cuts.set(p, c);
    room -= c.length;
    return false;
  };
  const bySystemName = (name: FitPartName) => sp.system.filter((p) => p.name === name);
  // 2. the initial state.
  bySystemName('initial_state').forEach(take);
  // 3. the history, newest first; the first turn that does not fit whole is elided and ends it.
  for (let i = sp.turns.length - 1; i >= 0; i--) if (!take(sp.turns[i])) break;
  // 4–5. the rest of the system text, by priority.
  for (const name of SYSTEM_PRIORITY) if (name !== 'initial_state') bySystemName(name).forEach(take);
  return cuts;
}

/** The ids a kept system part lays out: without its leading whitespace when it opens the system text. */
function systemIds(p: Part, c: Cut, opens: boolean): number[] {
  return c.pieces.flatMap((ids, i) => (opens && p.pieces[i].edge === 'lead' ? [] : ids));
}

/** Where a whole turn's observation and the literal text right after it lie in the turn's ids. */
function observationSpan(p: Part): { observation: NonNullable<FitSegment['observation']> } | null {
  let at = 0;
  for (let k = 0; k < p.pieces.length; k++) {
    const x = p.pieces[k];
    if (x.ref?.kind === 'turn' && x.ref.key === 'observation') {
      let closeEnd = at + x.ids.length;
      for (let j = k + 1; j < p.pieces.length && !p.pieces[j].value; j++) closeEnd += p.pieces[j].ids.length;
      return { observation: { start: at, end: at + x.ids.length, closeEnd } };
    }
    at += x.ids.length;
  }
  return null;
}

/** The chosen parts in the template's layout, with what the coverage report needs. */
function layout(sp: SampleParts, cuts: Map<Part, Cut>): ContextFit {
  const segments: FitSegment[] = [];
  let systemTokens = 0;
  let systemKept = 0;
  let opened = false;
  /** Trailing whitespace of a left-out system part, kept when no system part is (the text then ends as the template ends it). */
  let pendingTrail: number[] = [];
  let initialState: ContextFit['initialState'] = null;
  const turnShares: number[] = [];
  let keptTurns = 0;
  let droppedTurns = 0;
  const closeSystem = () => {
    if (!opened && pendingTrail.length) segments.push({ part: 'frame', role: 'context', ids: pendingTrail, elided: false });
    pendingTrail = [];
    opened = true;
  };
  for (const slot of sp.slots) {
    if ('frame' in slot) {
      segments.push({ part: 'frame', role: 'context', ids: slot.frame, elided: false });
      continue;
    }
    const p = slot.part;
    const c = cuts.get(p);
    if (p.area === 'system') {
      // Coverage counts the part's own text, not the blank lines around it.
      const edges = p.pieces.reduce((n, x) => n + (x.edge ? x.ids.length : 0), 0);
      systemTokens += p.full - edges;
      if (p.name === 'initial_state') initialState = { total: p.content, kept: c?.content ?? 0 };
      if (!c) {
        if (!opened) pendingTrail = p.pieces.filter((x) => x.edge === 'trail').flatMap((x) => x.ids);
        continue;
      }
      systemKept += c.content + (p.full - p.content - edges);
      segments.push({ part: p.name, role: 'context', ids: systemIds(p, c, !opened), elided: c.elided });
      opened = true;
      pendingTrail = [];
      continue;
    }
    closeSystem();
    if (p.area === 'action') {
      segments.push({ part: 'action', role: 'context', ids: c!.pieces.flat(), elided: c!.elided });
      continue;
    }
    const i = p.turn!;
    turnShares.push(c ? (p.content ? c.content / p.content : 1) : 0);
    if (c && !c.elided) keptTurns++;
    if (!c || c.elided) droppedTurns = i + 1;
    if (c) segments.push({ part: 'turn', turn: i, role: 'context', ids: c.pieces.flat(), elided: c.elided, ...(!c.elided && observationSpan(p)) });
  }
  const ids = segments.flatMap((s) => s.ids);
  const truncated = cuts.get(sp.action)!.elided || [...sp.system, ...sp.turns].some((p) => !cuts.has(p) || cuts.get(p)!.elided);
  return {
    ids,
    segments,
    systemTokens,
    systemKept: Math.min(systemKept, systemTokens),
    turnShares,
    initialState,
    keptTurns,
    droppedTurns,
    truncated,
    kept: new Set(cuts.keys()),
  };
}

function coverageOf(c: ContextFit, target: number | null): FitCoverage {
  return {
    system: c.systemTokens ? c.systemKept / c.systemTokens : 1,
    turns: c.turnShares.length ? c.turnShares.reduce((a, b) => a + b, 0) / c.turnShares.length : null,
    initialState: c.initialState?.total ? c.initialState.kept / c.initialState.total : null,
    target,
    historyTurns: c.turnShares.length,
    keptTurns: c.keptTurns,
  };
}

function encoders(tok: Tokenizer | PromptEncoder): Encoders {
  const parts: PromptEncoder = typeof tok === 'function' ? tok : (p) => tok.encodeParts(p);
  return { parts, literal: (s) => parts([{ text: s }]), text: (s) => parts([{ text: s, data: true }]) };
}

/** The context of a sample (system text, history, current action) within `budget` tokens, by the policy above. */
export function fitContext(tok: Tokenizer | PromptEncoder, template: PromptTemplate, sample: LayoutSample, budget: number): FittedPrompt {
  const enc = encoders(tok);
  const c = fitParts(sampleParts(enc, template, sample), budget, enc.text(ELISION));
  return {
    ids: c.ids,
    segments: c.segments,
    contextLength: c.ids.length,
    contextBudget: budget,
    coverage: coverageOf(c, null),
    truncated: c.truncated,
    droppedTurns: c.droppedTurns,
  };
}

/**
 * A generator's prompt: the context fitted to `budget` minus the opening tag, then the tag.
 * Never longer than `budget`: below the minimal context it keeps the prompt's end.
 */
export function fitPrompt(tok: Tokenizer | PromptEncoder, template: PromptTemplate, sample: LayoutSample, budget: number): FittedPrompt {
  const open = encoders(tok).literal(template.targetOpen);
  const ctx = fitContext(tok, template, sample, budget - open.length);
  const segments: FitSegment[] = [...ctx.segments, { part: 'open', role: 'context', ids: open, elided: false }];
  return keepEnd({ ...ctx, ids: [...ctx.ids, ...open], segments }, budget);
}

/** A training row: context and completion (optional reasoning, opening tag, target, closing tag) within `options.budget` tokens. */
export function fitTurn(tok: Tokenizer | PromptEncoder, template: PromptTemplate, sample: TurnSample, options: FitOptions): FittedPrompt {
  const enc = encoders(tok);
  const marker = enc.text(ELISION);
  const budget = options.budget;
  const share = options.targetShare ?? DEFAULT_TARGET_SHARE;
  const sp = sampleParts(enc, template, sample);
  // The tags are the template's; the trace between them is data.
  const reasoning =
    options.reasoning !== undefined
      ? enc.parts([{ text: `${SPECIAL_TOKENS.thinkOpen}\n` }, { text: options.reasoning, data: true }, { text: `\n${SPECIAL_TOKENS.thinkClose}\n` }])
      : [];
  const open = enc.literal(template.targetOpen);
  const target = enc.text(sample.targetObservation);
  const close = enc.literal(template.targetClose);
  const completionFull = reasoning.length + open.length + target.length + close.length;
  // 1. The completion's opening: at most `share` of what the frame leaves, at least one target token.
  const frame = sp.frame + (sp.action.full - sp.action.content);
  const fixed = reasoning.length + open.length;
  const shared = Math.min(completionFull, Math.max(fixed + Math.min(1, target.length), Math.ceil((budget - frame) * share)));
  // The generator's room: its answer, the fixed tokens before it, and the one token a row has beyond its inputs.
  const opening = options.answerRoom !== undefined ? fixed + options.answerRoom + 1 : shared;
  const ctx = fitParts(sp, budget - opening, marker);
  // The completion takes the room the context left: the target keeps its opening; the closing tag
  // comes only after the whole target and only when it fits.
  const room = Math.max(0, budget - ctx.ids.length);
  const keptTarget = target.slice(0, Math.max(Math.min(1, target.length), room - fixed));
  const keptClose = keptTarget.length === target.length && fixed + target.length + close.length <= room ? close : [];
  const segments: FitSegment[] = [...ctx.segments];
  if (reasoning.length) segments.push({ part: 'reasoning', role: 'reasoning', ids: reasoning, elided: false });
  segments.push({ part: 'open', role: 'context', ids: open, elided: false });
  segments.push({ part: 'target', role: 'target', ids: keptTarget, elided: keptTarget.length < target.length });
  if (keptClose.length) segments.push({ part: 'close', role: 'close', ids: keptClose, elided: false });
  const ids = segments.flatMap((s) => s.ids);
  const fitted: FittedPrompt = {
    ids,
    segments,
    contextLength: ctx.ids.length,
    contextBudget: budget - opening,
    coverage: coverageOf(ctx, target.length ? keptTarget.length / target.length : 1),
    truncated: ctx.truncated || keptTarget.length < target.length,
    droppedTurns: ctx.droppedTurns,
  };
  return keepEnd(fitted, budget);
}

/** Last resort, for a budget below the minimal input: keep the last `budget` tokens (the completion's side). */
function keepEnd(f: FittedPrompt, budget: number): FittedPrompt {
  let drop = f.ids.length - Math.max(0, budget);
  if (drop <= 0) return f;
  const segments: FitSegment[] = [];
  for (const s of f.segments) {
    if (drop >= s.ids.length) {
      drop -= s.ids.length;
      continue;
    }
    if (drop > 0) {
      const { observation: _cut, ...rest } = s; // a cut turn is no longer whole
      segments.push({ ...rest, ids: s.ids.slice(drop), elided: true });
    } else segments.push(s);
    drop = 0;
  }
  const ids = segments.flatMap((s) => s.ids);
  const dropped = f.ids.length - ids.length;
  return { ...f, ids, segments, contextLength: Math.max(0, f.contextLength - dropped), truncated: true };
}

/** The fitted input as text: what the Playground shows as "what the model sees". */
export function fittedText(tok: Tokenizer, f: FittedPrompt): string {
  return tok.decode(f.ids);
}

// Every field has a place in the priority order.
for (const f of SYSTEM_PROMPT_FIELDS) if (!SYSTEM_PRIORITY.includes(f)) throw new Error(`fit: no priority for system-prompt field ${f}`);
