// System-prompt templates (SPEC §5, §9): a template turns the five system-prompt fields and the
// history/action layout into text. Templates are plain data (strings with {{placeholders}}) so
// the prompt-optimisation loop can propose new versions and store them as JSON.
import { SYSTEM_PROMPT_FIELDS, type SystemPromptField } from '../schema/types.ts';
import type { TurnSample } from '../turns/index.ts';
import type { ChatMessage } from '../chat.ts';
import { keyedUniform } from '../random.ts';
import { SPECIAL_TOKENS } from '../tokenizer/index.ts';

export interface PromptTemplate {
  /** 'v0', 'v1', ...: the lineage name the viewer and the stage distributions use. */
  version: string;
  description: string;
  /** Opening of the system text; may use {{domain}}. */
  preamble: string;
  /** Heading of each field, in render order. Empty fields are left out entirely. */
  sections: { field: SystemPromptField; heading: string }[];
  /** Closing of the system text (after the sections); may use {{domain}}. */
  closing: string;
  /** One earlier turn: {{index}} (1-based), {{action}}, {{observation}}. */
  historyTurn: string;
  /** The current action: {{index}}, {{action}}. Followed directly by the target. */
  currentAction: string;
  /** Wraps the target observation (SPEC §7: the prediction lives inside its tag). */
  targetOpen: string;
  targetClose: string;
}

const S = SPECIAL_TOKENS;

/** The fields in their default order with the given headings. */
function sections(headings: Record<SystemPromptField, string>): PromptTemplate['sections'] {
  return SYSTEM_PROMPT_FIELDS.map((field) => ({ field, heading: headings[field] }));
}

export const BUILTIN_TEMPLATES: Readonly<Record<string, PromptTemplate>> = Object.freeze({
  v0: {
    version: 'v0',
    description: 'Plain and short: markdown headings, bare turn markers.',
    preamble: 'You are the environment. Predict the next observation exactly as the real {{domain}} environment would return it.',
    sections: sections({
      task_description: '## Task',
      action_space: '## Actions',
      initial_state: '## Initial state',
      demonstrations: '## Examples',
      simulation_instruction: '## Instructions',
    }),
    closing: '',
    historyTurn: `${S.action}\n{{action}}\n${S.observation}\n{{observation}}\n${S.endTurn}\n`,
    currentAction: `${S.action}\n{{action}}\n${S.observation}\n`,
    targetOpen: `${S.predictedOpen}\n`,
    targetClose: `\n${S.predictedClose}`,
  },
  v1: {
    version: 'v1',
    description: 'Explanatory: states the simulator role, names the steps, asks for fidelity over helpfulness.',
    preamble:
      'You simulate a {{domain}} environment for an AI agent. The agent sends one action at a time; you reply with what the environment would output, and nothing else.',
    sections: sections({
      task_description: 'What the agent is trying to do:',
      action_space: 'Actions the agent can take:',
      initial_state: 'State of the environment when the session started:',
      demonstrations: 'Example interactions:',
      simulation_instruction: 'Rules for the simulation:',
    }),
    closing: 'Keep the output format of the real system: same fields, same ordering, same error messages. Do not explain or comment.',
    historyTurn: `${S.action}\nStep {{index}}, agent action:\n{{action}}\n${S.observation}\nEnvironment output:\n{{observation}}\n${S.endTurn}\n`,
    currentAction: `${S.action}\nStep {{index}}, agent action:\n{{action}}\n${S.observation}\nEnvironment output:\n`,
    targetOpen: `${S.predictedOpen}\n`,
    targetClose: `\n${S.predictedClose}`,
  },
  v2: {
    version: 'v2',
    description: 'Terse and tagged: XML-like sections, state-tracking reminder, numbered turns.',
    preamble: 'Role: {{domain}} world model. Track the session state across turns and emit the next observation.',
    sections: sections({
      task_description: '<task>',
      action_space: '<tools>',
      initial_state: '<state>',
      demonstrations: '<examples>',
      simulation_instruction: '<rules>',
    }),
    closing: 'Output only the observation inside the prediction tags. Facts already shown in this session must stay consistent.',
    historyTurn: `${S.action} #{{index}}\n{{action}}\n${S.observation} #{{index}}\n{{observation}}\n${S.endTurn}\n`,
    currentAction: `${S.action} #{{index}}\n{{action}}\n${S.observation} #{{index}}\n`,
    targetOpen: `${S.predictedOpen}\n`,
    targetClose: `\n${S.predictedClose}`,
  },
  compact: {
    version: 'compact',
    description: 'For small contexts: a one-line role, short headings, the initial state right after the task line, bare turn markers.',
    preamble: '{{domain}} simulator: print the next observation exactly.',
    sections: [
      { field: 'task_description', heading: 'Task:' },
      { field: 'initial_state', heading: 'State:' },
      { field: 'simulation_instruction', heading: 'Rules:' },
      { field: 'action_space', heading: 'Actions:' },
      { field: 'demonstrations', heading: 'Examples:' },
    ],
    closing: '',
    // The special tokens delimit history turns on their own (no newlines around them); the
    // prediction tags keep every template's layout, which exporters and parsers rely on.
    historyTurn: `${S.action}{{action}}${S.observation}{{observation}}${S.endTurn}`,
    currentAction: `${S.action}{{action}}${S.observation}\n`,
    targetOpen: `${S.predictedOpen}\n`,
    targetClose: `\n${S.predictedClose}`,
  },
});

/** Replaces {{name}} with values[name] in one pass, so placeholder-like text inside values stays as it is. */
export function fillPlaceholders(text: string, values: Record<string, string>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (m, name: string) => (Object.hasOwn(values, name) ? values[name] : m));
}

/** Problems with a template (missing placeholders, unknown fields), naming the field; empty when usable. */
export function checkTemplate(t: PromptTemplate): string[] {
  const errors: string[] = [];
  if (!t.version) errors.push('version: must be a non-empty string');
  if (!t.historyTurn.includes('{{action}}') || !t.historyTurn.includes('{{observation}}')) errors.push('historyTurn: must contain {{action}} and {{observation}}');
  if (!t.currentAction.includes('{{action}}')) errors.push('currentAction: must contain {{action}}');
  const seen = new Set<string>();
  t.sections.forEach((s, i) => {
    if (!(SYSTEM_PROMPT_FIELDS as readonly string[]).includes(s.field)) errors.push(`sections/${i}/field: "${s.field}" is not one of ${SYSTEM_PROMPT_FIELDS.join(', ')}`);
    if (seen.has(s.field)) errors.push(`sections/${i}/field: "${s.field}" appears twice`);
    seen.add(s.field);
  });
  return errors;
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

export type TrainingStage = 'cpt' | 'sft' | 'rl' | 'eval';
/** Template version → relative weight (need not sum to 1). */
export type TemplateDistribution = Record<string, number>;

/**
 * Default template mix per stage: CPT and eval on one fixed wording; SFT spreads over all four
 * so the model does not overfit one phrasing (SPEC §5), the compact one among them so small
 * contexts see more of the state; RL on the two more explicit ones.
 */
export const DEFAULT_STAGE_TEMPLATES: Readonly<Record<TrainingStage, TemplateDistribution>> = Object.freeze({
  cpt: { v0: 1 },
  sft: { v0: 0.3, v1: 0.2, v2: 0.2, compact: 0.3 },
  rl: { v1: 0.5, v2: 0.5 },
  eval: { v0: 1 },
});

/** Problems with a distribution (unknown versions, negative or all-zero weights). */
export function checkDistribution(dist: TemplateDistribution, templates: Readonly<Record<string, PromptTemplate>> = BUILTIN_TEMPLATES): string[] {
  const errors: string[] = [];
  let total = 0;
  for (const [v, w] of Object.entries(dist)) {
    if (!Object.hasOwn(templates, v)) errors.push(`${v}: no template with this version (known: ${Object.keys(templates).join(', ')})`);
    if (!(w >= 0) || !Number.isFinite(w)) errors.push(`${v}: weight must be a finite number ≥ 0, got ${w}`);
    else total += w;
  }
  if (total <= 0) errors.push('the weights sum to 0; give at least one template a positive weight');
  return errors;
}

/** The version a uniform draw u ∈ [0, 1) selects (versions in sorted order, so the result does not depend on key order). */
export function pickVersion(dist: TemplateDistribution, u: number): string {
  const entries = Object.entries(dist).filter(([, w]) => w > 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (!entries.length) throw new Error('template distribution has no positive weight');
  const total = entries.reduce((n, [, w]) => n + w, 0);
  let x = u * total;
  for (const [v, w] of entries) {
    if (x < w) return v;
    x -= w;
  }
  return entries[entries.length - 1][0];
}

/** The template of one sample: a draw fixed by (trajectory, turn, seed), so re-rendering is reproducible. */
export function templateForSample(
  dist: TemplateDistribution,
  sample: Pick<TurnSample, 'trajectoryId' | 'turnIndex'>,
  seed = 0,
  templates: Readonly<Record<string, PromptTemplate>> = BUILTIN_TEMPLATES,
): PromptTemplate {
  const v = pickVersion(dist, keyedUniform(`${sample.trajectoryId}#${sample.turnIndex}`, seed));
  const t = Object.hasOwn(templates, v) ? templates[v] : undefined;
  if (!t) throw new Error(`template distribution names "${v}", which is not a known template`);
  return t;
}
