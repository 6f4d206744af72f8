// The prompt template shape and the built-in templates v0, v1, v2 and compact (docs/method.md §5), plus the
// check that a template (built in, imported or proposed by the prompt-optimization loop) is
// usable. A template is a text in a Jinja dialect (jinja.ts; docs/templates.md) that lays out
// the whole context: the system text with the five fields, the history, the current action.
import { SPECIAL_TOKENS } from '../tokenizer/index.ts';
import { syntaxProblems, unknownNameProblems, placeholderNames, type TemplateProblem } from './jinja.ts';

export interface PromptTemplate {
  /** 'v0', 'v1', ...: the lineage name the viewer and the stage distributions use. */
  version: string;
  description: string;
  /** The template: a Jinja text that renders the context (system text, history, current action). */
  text: string;
  /** Texts for particular domains (an imported folder of per-domain prompts); other domains use `text`. */
  domains?: Record<string, string>;
  /** Wraps the target observation (docs/method.md §7: the prediction lives inside its tag). */
  targetOpen: string;
  targetClose: string;
}

const S = SPECIAL_TOKENS;
/** Every template wraps the prediction in the same tags: exporters and parsers rely on them. */
export const TARGET_OPEN = `${S.predictedOpen}\n`;
export const TARGET_CLOSE = `\n${S.predictedClose}`;

/** A system text of a preamble, then each non-empty field under its heading, then a closing (blank lines between). */
function systemText(preamble: string, sections: [string, string][], closing: string): string {
  const blocks = [['system_text', ''] as [string, string], ...sections].map(
    ([field, heading]) => `{% if ${field} %}\n\n${heading ? `${heading}\n` : ''}{{ ${field} }}\n{% endif %}\n`,
  );
  return `${S.system}\n${preamble}\n${blocks.join('')}${closing ? `\n${closing}\n` : ''}`;
}

/** The history loop and the current action; `turn` and `current` are their texts, the loop's newline handling included. */
function turns(turn: string, current: string): string {
  return `{% for turn in history %}\n${turn}{% endfor %}\n${current}\n`;
}

const v0 = (): string =>
  systemText(
    'You are the environment. Predict the next observation exactly as the real {{ domain }} environment would return it.',
    [
      ['task_description', '## Task'],
      ['action_space', '## Actions'],
      ['initial_state', '## Initial state'],
      ['demonstrations', '## Examples'],
      ['simulation_instruction', '## Instructions'],
    ],
    '',
  ) + turns(`${S.action}\n{{ turn.action }}\n${S.observation}\n{{ turn.observation }}\n${S.endTurn}\n`, `${S.action}\n{{ action }}\n${S.observation}\n`);

const v1 = (): string =>
  systemText(
    'You simulate a {{ domain }} environment for an AI agent. The agent sends one action at a time; you reply with what the environment would output, and nothing else.',
    [
      ['task_description', 'What the agent is trying to do:'],
      ['action_space', 'Actions the agent can take:'],
      ['initial_state', 'State of the environment when the session started:'],
      ['demonstrations', 'Example interactions:'],
      ['simulation_instruction', 'Rules for the simulation:'],
    ],
    'Keep the output format of the real system: same fields, same ordering, same error messages. Do not explain or comment.',
  ) +
  turns(
    `${S.action}\nStep {{ turn.index }}, agent action:\n{{ turn.action }}\n${S.observation}\nEnvironment output:\n{{ turn.observation }}\n${S.endTurn}\n`,
    `${S.action}\nStep {{ step }}, agent action:\n{{ action }}\n${S.observation}\nEnvironment output:\n`,
  );

const v2 = (): string =>
  systemText(
    'Role: {{ domain }} world model. Track the session state across turns and emit the next observation.',
    [
      ['task_description', '<task>'],
      ['action_space', '<tools>'],
      ['initial_state', '<state>'],
      ['demonstrations', '<examples>'],
      ['simulation_instruction', '<rules>'],
    ],
    'Output only the observation inside the prediction tags. Facts already shown in this session must stay consistent.',
  ) +
  turns(
    `${S.action} #{{ turn.index }}\n{{ turn.action }}\n${S.observation} #{{ turn.index }}\n{{ turn.observation }}\n${S.endTurn}\n`,
    `${S.action} #{{ step }}\n{{ action }}\n${S.observation} #{{ step }}\n`,
  );

// The special tokens delimit history turns on their own (no newlines around them).
const compact = (): string =>
  systemText(
    '{{ domain }} simulator: print the next observation exactly.',
    [
      ['task_description', 'Task:'],
      ['initial_state', 'State:'],
      ['simulation_instruction', 'Rules:'],
      ['action_space', 'Actions:'],
      ['demonstrations', 'Examples:'],
    ],
    '',
  ) + turns(`${S.action}{{ turn.action }}${S.observation}{{ turn.observation }}${S.endTurn}`, `${S.action}{{ action }}${S.observation}\n`);

function builtin(version: string, description: string, text: string): PromptTemplate {
  return { version, description, text, targetOpen: TARGET_OPEN, targetClose: TARGET_CLOSE };
}

export const BUILTIN_TEMPLATES: Readonly<Record<string, PromptTemplate>> = Object.freeze({
  v0: builtin('v0', 'Plain and short: markdown headings, bare turn markers.', v0()),
  v1: builtin('v1', 'Explanatory: states the simulator role, names the steps, asks for fidelity over helpfulness.', v1()),
  v2: builtin('v2', 'Terse and tagged: XML-like sections, state-tracking reminder, numbered turns.', v2()),
  compact: builtin(
    'compact',
    'For small contexts: a one-line role, short headings, the initial state right after the task line, bare turn markers.',
    compact(),
  ),
});

/** Problems with one template text, each naming its line: syntax, unknown names, no history loop or no action. */
export function checkTemplateText(text: string): TemplateProblem[] {
  const syntax = syntaxProblems(text);
  if (syntax.length) return syntax;
  const problems = unknownNameProblems(text);
  const names = placeholderNames(text);
  if (!names.includes('history')) problems.push({ line: 1, message: 'the template never shows the history: add {% for turn in history %}…{% endfor %}' });
  if (!names.includes('action')) problems.push({ line: 1, message: 'the template never shows the current action: add {{ action }}' });
  return problems;
}

/** Problems with a template (its text and each per-domain text), naming the text and line; empty when usable. */
export function checkTemplate(t: PromptTemplate): string[] {
  const errors: string[] = [];
  if (!t.version) errors.push('version: must be a non-empty string');
  const texts: [string, string][] = [['text', t.text], ...Object.entries(t.domains ?? {}).map(([d, x]): [string, string] => [`domains/${d}`, x])];
  for (const [where, text] of texts) {
    if (typeof text !== 'string') errors.push(`${where}: must be a string`);
    else for (const p of checkTemplateText(text)) errors.push(`${where}: line ${p.line}: ${p.message}`);
  }
  return errors;
}

/** The text a template uses for a domain. */
export function templateTextFor(t: PromptTemplate, domain: string): string {
  return t.domains && Object.hasOwn(t.domains, domain) ? t.domains[domain] : t.text;
}
