// The Playground's context bar: how many tokens the system prompt, the history and the action take
// against the model's context, and what the truncation policy (src/core/templates/fit.ts, the
// one training used) cut to make the prompt fit. For a checkpoint of ours the count is exact (its
// own tokenizer, the same fitPrompt the local backend calls); for an endpoint, whose tokenizer the
// page does not have, it is an estimate from the text's length and the server does the cutting
// (or refuses).
import type { TurnRequest } from '../backend.ts';
import { fitPrompt, fittedText, type FitPartName, type FitSegment } from '../templates/fit.ts';
import type { PromptTemplate } from '../templates/index.ts';
import type { Tokenizer } from '../tokenizer/index.ts';

export interface ContextPart {
  /** e.g. 'initial state', 'turn 3', 'action'. */
  label: string;
  group: 'system' | 'history' | 'action';
  full: number;
  kept: number;
  status: 'kept' | 'shortened' | 'left out';
}

export interface ContextReport {
  /** Exact (the model's tokenizer) or estimated (text length / 4). */
  exact: boolean;
  /** The model's context in tokens (null: unknown). */
  context: number | null;
  maxTokens: number;
  /** Tokens the prompt may take: context − max tokens. */
  room: number | null;
  /** Tokens of the prompt as sent. */
  prompt: number;
  /** Tokens of the prompt uncut. */
  full: number;
  /** Of `prompt`: system prompt (with the template's frame), history, current action. */
  system: number;
  history: number;
  action: number;
  truncated: boolean;
  parts: ContextPart[];
  /** The prompt as the model sees it (exact reports only). */
  text?: string;
}

const FIELD_LABEL: Partial<Record<FitPartName, string>> = {
  preamble: "the template's preamble",
  closing: "the template's closing",
  task_description: 'task description',
  action_space: 'action space',
  initial_state: 'initial state',
  demonstrations: 'demonstrations',
  simulation_instruction: 'simulation instruction',
  system_text: 'system prompt',
  action: 'action',
};

function keyOf(s: FitSegment): string | null {
  if (s.part === 'frame' || s.part === 'open' || s.part === 'target' || s.part === 'close' || s.part === 'reasoning') return null;
  return s.part === 'turn' ? `turn:${s.turn}` : s.part;
}

function groupOf(s: FitSegment): ContextPart['group'] {
  return s.part === 'turn' ? 'history' : s.part === 'action' || s.part === 'open' ? 'action' : 'system';
}

/** The exact report for a checkpoint of ours: `room` = context − max tokens, as the local backend fits. */
export function contextReport(tok: Tokenizer, template: PromptTemplate, request: TurnRequest, context: number, maxTokens: number): ContextReport {
  const room = context - maxTokens;
  const full = fitPrompt(tok, template, request.sample, Number.MAX_SAFE_INTEGER);
  const fitted = fitPrompt(tok, template, request.sample, Math.max(1, room));
  const kept = new Map<string, { n: number; elided: boolean }>();
  const totals = { system: 0, history: 0, action: 0 };
  for (const s of fitted.segments) {
    totals[groupOf(s)] += s.ids.length;
    const k = keyOf(s);
    if (k) kept.set(k, { n: s.ids.length, elided: s.elided });
  }
  const parts: ContextPart[] = [];
  for (const s of full.segments) {
    const k = keyOf(s);
    if (!k) continue;
    const got = kept.get(k);
    const label = s.part === 'turn' ? `turn ${s.turn! + 1}` : (FIELD_LABEL[s.part] ?? s.part);
    parts.push({
      label,
      group: groupOf(s),
      full: s.ids.length,
      kept: got?.n ?? 0,
      status: !got ? 'left out' : got.elided || got.n < s.ids.length ? 'shortened' : 'kept',
    });
  }
  return {
    exact: true,
    context,
    maxTokens,
    room,
    prompt: fitted.ids.length,
    full: full.ids.length,
    ...totals,
    truncated: fitted.truncated || fitted.ids.length < full.ids.length,
    parts,
    text: fittedText(tok, fitted),
  };
}

/** Rough tokens of a text for a model whose tokenizer is unknown (about 4 characters a token). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The estimated report for an endpoint: its messages are sent whole; the server cuts or refuses. */
export function estimatedReport(messages: { role: string; content: string }[], context: number | null, maxTokens: number): ContextReport {
  let system = 0;
  let history = 0;
  let action = 0;
  messages.forEach((m, i) => {
    const n = estimateTokens(m.content) + 4; // a few tokens of chat framing per message
    if (m.role === 'system') system += n;
    else if (i === messages.length - 1) action += n;
    else history += n;
  });
  const prompt = system + history + action;
  const room = context === null ? null : context - maxTokens;
  return { exact: false, context, maxTokens, room, prompt, full: prompt, system, history, action, truncated: false, parts: [] };
}

/** The report's overflow for an estimate: the prompt does not fit the room the server has. */
export function overflows(r: ContextReport): boolean {
  return r.room !== null && r.prompt > r.room;
}

function listTurns(labels: string[]): string {
  // turn 1, turn 2, turn 3 → turns 1–3
  const nums = labels.map((l) => Number(l.slice(5))).sort((a, b) => a - b);
  const runs: string[] = [];
  for (let i = 0; i < nums.length; ) {
    let j = i;
    while (j + 1 < nums.length && nums[j + 1] === nums[j] + 1) j++;
    runs.push(i === j ? `${nums[i]}` : `${nums[i]}–${nums[j]}`);
    i = j + 1;
  }
  return `${nums.length === 1 ? 'turn' : 'turns'} ${runs.join(', ')}`;
}

function listParts(parts: ContextPart[]): string {
  const turns = parts.filter((p) => p.group === 'history').map((p) => p.label);
  const rest = parts.filter((p) => p.group !== 'history').map((p) => p.label);
  return [...rest, ...(turns.length ? [listTurns(turns)] : [])].join(', ');
}

/** What was cut, in a sentence; null when the whole prompt fit. */
export function cutSummary(r: ContextReport): string | null {
  if (!r.exact) {
    if (!overflows(r)) return null;
    return `The prompt is about ${r.prompt} tokens, more than the ${r.room} the endpoint's context of ${r.context} leaves after ${r.maxTokens} max tokens: the server will cut it or refuse the request. Lower max tokens, or shorten the system prompt or the session.`;
  }
  if (!r.truncated) return null;
  const out = r.parts.filter((p) => p.status === 'left out');
  const short = r.parts.filter((p) => p.status === 'shortened');
  const pieces: string[] = [];
  if (out.length) pieces.push(`left out ${listParts(out)}`);
  if (short.length) pieces.push(`shortened ${listParts(short)} (… marks the cut)`);
  const why = `The prompt needs ${r.full} tokens; ${r.room} fit (context ${r.context} − ${r.maxTokens} max tokens)`;
  return `${why}: ${pieces.length ? pieces.join('; ') : 'kept only its end'}.`;
}
