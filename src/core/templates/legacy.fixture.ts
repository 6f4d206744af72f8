// The renderer of the JSON templates, as it was before templates became text: the oracle that
// legacy.test.ts and fit.test.ts compare converted templates with. Test-only.
import { SPECIAL_TOKENS } from '../tokenizer/index.ts';
import type { TurnSample } from '../turns/index.ts';
import type { LegacyPromptTemplate } from './legacy.ts';

function fill(text: string, values: Record<string, string>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (m, name: string) => (Object.hasOwn(values, name) ? values[name] : m));
}

export function legacySystem(t: LegacyPromptTemplate, sample: Pick<TurnSample, 'systemPrompt' | 'domain'>): string {
  const vars = { domain: sample.domain };
  const parts: string[] = [];
  const pre = fill(t.preamble, vars);
  if (pre) parts.push(pre);
  if (sample.systemPrompt.text !== undefined) {
    if (sample.systemPrompt.text) parts.push(sample.systemPrompt.text);
  } else {
    for (const s of t.sections) {
      const v = sample.systemPrompt[s.field];
      if (v) parts.push(`${s.heading}\n${v}`);
    }
  }
  const close = fill(t.closing, vars);
  if (close) parts.push(close);
  return parts.join('\n\n');
}

/** The context (everything before the target's opening tag) the JSON renderer produced. */
export function legacyContext(t: LegacyPromptTemplate, sample: Pick<TurnSample, 'systemPrompt' | 'domain' | 'history' | 'action'>): string {
  return (
    `${SPECIAL_TOKENS.system}\n${legacySystem(t, sample)}\n` +
    sample.history.map((turn, i) => fill(t.historyTurn, { index: String(i + 1), action: turn.action, observation: turn.observation })).join('') +
    fill(t.currentAction, { index: String(sample.history.length + 1), action: sample.action })
  );
}
