// A folder of per-domain system prompts (DOMAIN/system_prompt.txt, the layout public world-model
// prompts ship in, with {placeholder} slots) as one template version: each domain's text becomes
// that domain's system text, its placeholders template variables; the fields it does not place
// follow it under headings, so no part of a sample is lost; the history and the current action
// are laid out as the base template lays them out. Other domains keep the base template's text.
import { SYSTEM_PROMPT_FIELDS } from '../schema/types.ts';
import { SPECIAL_TOKENS } from '../tokenizer/index.ts';
import { checkTemplateText, type PromptTemplate } from './builtin.ts';
import { lineAt } from './jinja.ts';

export const PROMPT_FILE = 'system_prompt.txt';

/** Placeholder names of public prompts → template variables. */
export const PLACEHOLDER_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  tool_definitions: 'action_space',
  tools: 'action_space',
  action_space: 'action_space',
  demonstrations: 'demonstrations',
  examples: 'demonstrations',
  task_description: 'task_description',
  task: 'task_description',
  initial_state: 'initial_state',
  simulation_instruction: 'simulation_instruction',
  domain: 'domain',
});

const HEADINGS: Record<string, string> = {
  task_description: '## Task',
  action_space: '## Actions',
  initial_state: '## Initial state',
  demonstrations: '## Examples',
  simulation_instruction: '## Instructions',
};

export interface FolderFile {
  /** Path inside the chosen folder, with / separators (a leading folder name is allowed). */
  path: string;
  text: string;
}

/** Prompt text as literal template text: Jinja's delimiters and what its whitespace rules would eat, escaped. */
function escapeLiteral(s: string): string {
  return s.replace(/\{[{%#-]/g, (m) => `{{ ${JSON.stringify(m)} }}`).replace(/([#%-])\}(?=\n)/g, (_, c: string) => `${c}{{ "}" }}`);
}

/** One domain's prompt as the system part of a template, or the problems naming the file and line. */
function systemPart(file: string, text: string): { text: string; used: Set<string>; problems: string[] } {
  const problems: string[] = [];
  const used = new Set<string>();
  let out = '';
  let last = 0;
  for (const m of text.matchAll(/(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})/g)) {
    const name = Object.hasOwn(PLACEHOLDER_ALIASES, m[1]) ? PLACEHOLDER_ALIASES[m[1]] : null;
    if (!name) {
      problems.push(
        `${file}: line ${lineAt(text, m.index!).line}: unknown placeholder {${m[1]}} (known: ${Object.keys(PLACEHOLDER_ALIASES)
          .map((k) => `{${k}}`)
          .join(', ')})`,
      );
      continue;
    }
    out += escapeLiteral(text.slice(last, m.index)) + `{{ ${name} }}`;
    used.add(name);
    last = m.index! + m[0].length;
  }
  out += escapeLiteral(text.slice(last).replace(/\n+$/, ''));
  return { text: out, used, problems };
}

/** The history loop and current action of a template text (from its top-level loop to the end). */
function turnLayout(base: PromptTemplate): string | null {
  const at = base.text.search(/\{%-?\s*for\s+turn\s+in\s+history\s*-?%\}/);
  return at < 0 ? null : base.text.slice(at);
}

/** A domain's template text: the system token, the prompt, the fields it leaves out, then the base's turn layout. */
function domainText(system: { text: string; used: Set<string> }, turns: string): string {
  const rest = SYSTEM_PROMPT_FIELDS.filter((f) => !system.used.has(f))
    .map((f) => `{% if ${f} %}\n\n${HEADINGS[f]}\n{{ ${f} }}\n{% endif %}\n`)
    .join('');
  return `${SPECIAL_TOKENS.system}\n${system.text}\n{% if system_text %}\n\n{{ system_text }}\n{% endif %}\n${rest}${turns}`;
}

/** The DOMAIN of a DOMAIN/system_prompt.txt path (a leading folder may come before it); null for other files. */
function domainOf(path: string): string | null | undefined {
  const parts = path.split('/').filter(Boolean);
  if (parts[parts.length - 1] !== PROMPT_FILE) return null;
  return parts.length >= 2 ? parts[parts.length - 2] : undefined;
}

/** A folder of DOMAIN/system_prompt.txt files as a template based on `base`, or the problems (naming files and lines). */
export function importPromptFolder(
  files: readonly FolderFile[],
  base: PromptTemplate,
): { template: Omit<PromptTemplate, 'version'> | null; domains: string[]; problems: string[] } {
  const problems: string[] = [];
  const turns = turnLayout(base);
  if (!turns) problems.push(`template ${base.version}: no {% for turn in history %} loop to take the turn layout from`);
  const domains: Record<string, string> = {};
  for (const f of files) {
    const domain = domainOf(f.path.replace(/\\/g, '/'));
    if (domain === null) continue;
    if (domain === undefined) {
      problems.push(`${f.path}: a ${PROMPT_FILE} must sit in a folder named after its domain (DOMAIN/${PROMPT_FILE})`);
      continue;
    }
    if (Object.hasOwn(domains, domain)) problems.push(`${f.path}: a second ${PROMPT_FILE} for domain ${domain}`);
    else if (!f.text.trim()) problems.push(`${f.path}: the file is empty`);
    else {
      const sys = systemPart(f.path, f.text);
      problems.push(...sys.problems);
      if (!sys.problems.length && turns) {
        domains[domain] = domainText(sys, turns);
        for (const p of checkTemplateText(domains[domain])) problems.push(`${f.path}: line ${p.line}: ${p.message}`);
      }
    }
  }
  const names = Object.keys(domains).sort();
  if (!names.length && !problems.length) problems.push(`no DOMAIN/${PROMPT_FILE} files in the folder (${files.length} files read)`);
  if (problems.length) return { template: null, domains: names, problems };
  const sorted = Object.fromEntries(names.map((d) => [d, domains[d]]));
  return {
    template: {
      description: `per-domain prompts for ${names.join(', ')} (imported folder); other domains as ${base.version}`,
      text: base.text,
      domains: sorted,
      targetOpen: base.targetOpen,
      targetClose: base.targetClose,
    },
    domains: names,
    problems,
  };
}
