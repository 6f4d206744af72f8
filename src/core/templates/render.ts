// Rendering with a template: a turn sample as text with its exact target range and loss segments,
// as chat messages, or a whole trajectory as one text. Pure: same template and input, same text.
import type { TurnSample } from '../turns/index.ts';
import type { ChatMessage } from '../chat.ts';
import { SPECIAL_TOKENS } from '../tokenizer/index.ts';
import type { PromptTemplate } from './builtin.ts';

/** Replaces {{name}} with values[name] in one pass, so placeholder-like text inside values stays as it is. */
export function fillPlaceholders(text: string, values: Record<string, string>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (m, name: string) => (Object.hasOwn(values, name) ? values[name] : m));
}

/** The system text of a sample: preamble, non-empty fields under their headings, closing; or the unsplit text. */
export function renderSystem(t: PromptTemplate, sample: Pick<TurnSample, 'systemPrompt' | 'domain'>): string {
  const vars = { domain: sample.domain };
  const parts: string[] = [];
  const pre = fillPlaceholders(t.preamble, vars);
  if (pre) parts.push(pre);
  if (sample.systemPrompt.text !== undefined) {
    if (sample.systemPrompt.text) parts.push(sample.systemPrompt.text);
  } else {
    for (const s of t.sections) {
      const v = sample.systemPrompt[s.field];
      if (v) parts.push(`${s.heading}\n${v}`);
    }
  }
  const close = fillPlaceholders(t.closing, vars);
  if (close) parts.push(close);
  return parts.join('\n\n');
}

export interface RenderOptions {
  /** A reasoning trace to put before the prediction (SPEC §5), inside <think> … </think>. */
  reasoning?: string;
}

export interface RenderedSample {
  /** Everything: prompt, then the completion (optional reasoning, tagged target). */
  text: string;
  /** Length of the conditioning prefix: text.slice(0, promptEnd) is what a generator is given. */
  promptEnd: number;
  /** [targetStart, targetEnd): the target observation inside `text`. */
  targetStart: number;
  targetEnd: number;
  /** The pieces of `text` in order, each with its role, for per-token loss weights. */
  segments: { text: string; role: 'context' | 'reasoning' | 'target' | 'close' }[];
}

/**
 * Renders a turn sample. Pure: the same template and sample always give the same text. The
 * target range is exact, so training can put loss on the observation only (SPEC §1).
 */
export function renderSample(t: PromptTemplate, sample: TurnSample, options: RenderOptions = {}): RenderedSample {
  const context =
    `${SPECIAL_TOKENS.system}\n${renderSystem(t, sample)}\n` +
    sample.history.map((turn, i) => fillPlaceholders(t.historyTurn, { index: String(i + 1), action: turn.action, observation: turn.observation })).join('') +
    fillPlaceholders(t.currentAction, { index: String(sample.history.length + 1), action: sample.action });
  const segments: RenderedSample['segments'] = [{ text: context, role: 'context' }];
  if (options.reasoning !== undefined) segments.push({ text: `${SPECIAL_TOKENS.thinkOpen}\n${options.reasoning}\n${SPECIAL_TOKENS.thinkClose}\n`, role: 'reasoning' });
  segments.push({ text: t.targetOpen, role: 'context' });
  const targetStart = segments.reduce((n, s) => n + s.text.length, 0);
  segments.push({ text: sample.targetObservation, role: 'target' });
  segments.push({ text: t.targetClose, role: 'close' });
  const text = segments.map((s) => s.text).join('');
  return { text, promptEnd: context.length, targetStart, targetEnd: targetStart + sample.targetObservation.length, segments };
}

/** Loss weight of each segment role: the observation and its closing tag carry the mask weight, the rest none. */
export function segmentWeights(rendered: RenderedSample, targetWeight: number, reasoningWeight = 0): { text: string; weight: number }[] {
  return rendered.segments.map((s) => ({
    text: s.text,
    weight: s.role === 'target' || s.role === 'close' ? targetWeight : s.role === 'reasoning' ? reasoningWeight : 0,
  }));
}

/**
 * The sample as chat messages for chat-template trainers (TRL, verl): the agent's actions are
 * the user turns and the environment's observations the assistant turns, so "loss on the
 * assistant's last message" is "loss on the target observation".
 */
export function renderChat(t: PromptTemplate, sample: TurnSample): { prompt: ChatMessage[]; completion: ChatMessage } {
  const prompt: ChatMessage[] = [{ role: 'system', content: renderSystem(t, sample) }];
  for (const turn of sample.history) {
    prompt.push({ role: 'user', content: turn.action });
    prompt.push({ role: 'assistant', content: turn.observation });
  }
  prompt.push({ role: 'user', content: sample.action });
  return { prompt, completion: { role: 'assistant', content: `${t.targetOpen}${sample.targetObservation}${t.targetClose}` } };
}

/** A whole trajectory as one text, for continued pre-training (SPEC §5 stage 1). */
export function renderTrajectory(t: PromptTemplate, traj: { domain: string; system_prompt: TurnSample['systemPrompt']; turns: { action: string; observation: string }[] }): string {
  const system = renderSystem(t, { domain: traj.domain, systemPrompt: traj.system_prompt });
  return `${SPECIAL_TOKENS.system}\n${system}\n` + traj.turns.map((turn, i) => fillPlaceholders(t.historyTurn, { index: String(i + 1), action: turn.action, observation: turn.observation })).join('');
}
