// A plain-text layout of the five system-prompt fields, used where a format carries the
// system prompt as one string (AgentWorldBench `system_str`). Text in this layout splits back
// into the five fields; any other text is kept whole in `system_prompt.text`.
import { SYSTEM_PROMPT_FIELDS, emptySystemPrompt, type SystemPrompt, type SystemPromptField } from '../schema/types.ts';

export const SYSTEM_PROMPT_HEADERS: Record<SystemPromptField, string> = {
  task_description: '## Task Description',
  action_space: '## Action Space',
  initial_state: '## Initial State',
  demonstrations: '## Demonstrations',
  simulation_instruction: '## Simulation Instruction',
};

/** The five fields under their headers, or `text` verbatim when the prompt is unsplit. */
export function systemPromptToText(sp: SystemPrompt): string {
  if (sp.text !== undefined) return sp.text;
  return SYSTEM_PROMPT_FIELDS.map((f) => `${SYSTEM_PROMPT_HEADERS[f]}\n${sp[f]}`).join('\n\n');
}

/** Inverse of systemPromptToText: fields when `text` is in the five-header layout, else `{text}`. */
export function systemPromptFromText(text: string): SystemPrompt {
  const sp = emptySystemPrompt();
  let pos = 0;
  for (let i = 0; i < SYSTEM_PROMPT_FIELDS.length; i++) {
    const f = SYSTEM_PROMPT_FIELDS[i];
    const head = (i === 0 ? '' : '\n\n') + SYSTEM_PROMPT_HEADERS[f] + '\n';
    if (!text.startsWith(head, pos)) return { ...emptySystemPrompt(), text };
    pos += head.length;
    const next = SYSTEM_PROMPT_FIELDS[i + 1];
    const end = next ? text.indexOf('\n\n' + SYSTEM_PROMPT_HEADERS[next] + '\n', pos) : text.length;
    if (end < 0) return { ...emptySystemPrompt(), text };
    sp[f] = text.slice(pos, end);
    pos = end;
  }
  return sp;
}
