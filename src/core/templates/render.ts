// Rendering with a template: a turn sample as text with its exact target range and loss segments,
// as chat messages, or a whole trajectory as one text. Pure: same template and input, same text.
// All of it goes through the template's layout (layout.ts), which the truncation policy uses too.
import type { TurnSample } from '../turns/index.ts';
import type { ChatMessage } from '../chat.ts';
import { SPECIAL_TOKENS, type TextPart } from '../tokenizer/index.ts';
import { templateTextFor, type PromptTemplate } from './builtin.ts';
import { CHANGED_VALUE, itemText, layoutOf, renderDirect, valueOf, type LayoutSample } from './layout.ts';

/** The layout items of a sample under a template (its text for the sample's domain). */
export function sampleLayout(t: PromptTemplate, sample: LayoutSample) {
  return layoutOf(templateTextFor(t, sample.domain), sample);
}

/** The model's context for a sample: system text, history, current action, as the template lays them out. */
export function renderContext(t: PromptTemplate, sample: LayoutSample): string {
  return sampleLayout(t, sample)
    .map((item) => itemText(item, sample))
    .join('');
}

/**
 * The system text of a sample (for a chat's system message): the template's text before the
 * history, without the opening system token and the newline that ends it.
 */
export function renderSystem(t: PromptTemplate, sample: Pick<TurnSample, 'systemPrompt' | 'domain'>): string {
  const s = { ...sample, history: [], action: '' };
  let text = sampleLayout(t, s)
    .filter((item) => item.area === 'system')
    .map((item) => itemText(item, s))
    .join('');
  if (text.startsWith(SPECIAL_TOKENS.system)) text = text.slice(SPECIAL_TOKENS.system.length).replace(/^\n/, '');
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

export interface RenderOptions {
  /** A reasoning trace to put before the prediction (docs/method.md §5), inside <think> … </think>. */
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
 * target range is exact, so training can put loss on the observation only (docs/method.md §1).
 */
export function renderSample(t: PromptTemplate, sample: TurnSample, options: RenderOptions = {}): RenderedSample {
  const context = renderContext(t, sample);
  const segments: RenderedSample['segments'] = [{ text: context, role: 'context' }];
  if (options.reasoning !== undefined)
    segments.push({ text: `${SPECIAL_TOKENS.thinkOpen}\n${options.reasoning}\n${SPECIAL_TOKENS.thinkClose}\n`, role: 'reasoning' });
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

type TrajectoryText = { domain: string; system_prompt: TurnSample['systemPrompt']; turns: { action: string; observation: string }[] };

/** A whole trajectory as one text, for continued pre-training (docs/method.md §5 stage 1): the system text and every turn, no current action. */
export function renderTrajectory(t: PromptTemplate, traj: TrajectoryText): string {
  return trajectoryParts(t, traj)
    .map((p) => p.text)
    .join('');
}

/** renderTrajectory's text as the template's text and the trajectory's (data), for a tokenizer's encodeParts. */
export function trajectoryParts(t: PromptTemplate, traj: TrajectoryText): TextPart[] {
  const s = { domain: traj.domain, systemPrompt: traj.system_prompt, history: traj.turns, action: '' };
  return sampleLayout(t, s)
    .filter((item) => item.area !== 'action')
    .flatMap((item) => [
      { text: item.lead },
      ...item.pieces.map((p) => (typeof p === 'string' ? { text: p } : { text: valueOf(p, s), data: true })),
      { text: item.trail },
    ])
    .filter((p) => p.text);
}

/** Whether a template renders each sample (and renders what Jinja renders); problems name the sample. */
export function renderProblems(t: PromptTemplate, samples: readonly TurnSample[]): string[] {
  const problems: string[] = [];
  for (const s of samples) {
    try {
      // The layout (which the fitter cuts) must give exactly what the engine renders.
      if (renderContext(t, s) !== renderDirect(templateTextFor(t, s.domain), s)) throw new Error(CHANGED_VALUE);
    } catch (e) {
      problems.push(`sample ${s.trajectoryId} turn ${s.turnIndex + 1} (${s.domain}): ${(e as Error).message}`);
    }
  }
  return problems;
}
