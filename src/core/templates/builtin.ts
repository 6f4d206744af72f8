// The prompt template shape and the built-in templates v0, v1, v2 and compact (SPEC §5), plus the
// check that a template (built in or proposed by the prompt-optimisation loop) is usable.
import { SYSTEM_PROMPT_FIELDS, type SystemPromptField } from '../schema/types.ts';
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
