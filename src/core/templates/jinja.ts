// The template language: a Jinja dialect through @huggingface/jinja (the engine that renders
// Hugging Face chat templates), with its settings: trim_blocks and lstrip_blocks on, and one
// final newline of the text dropped. This file compiles template texts (cached), names the
// variables a template may use, finds the names it uses (with their lines), and checks a text:
// syntax, unknown names, the history loop the layout needs (docs/templates.md).
import { Template, tokenize } from '@huggingface/jinja';
import { SYSTEM_PROMPT_FIELDS } from '../schema/types.ts';

/** The variables a template may use, with what they hold. */
export const TEMPLATE_VARIABLES: Readonly<Record<string, string>> = Object.freeze({
  domain: 'the trajectory domain (mcp, search, terminal, …)',
  task_description: 'system-prompt field: what the agent is trying to do ("" when empty)',
  action_space: 'system-prompt field: the actions the agent can take',
  initial_state: 'system-prompt field: the state of the environment at the start',
  demonstrations: 'system-prompt field: example interactions',
  simulation_instruction: 'system-prompt field: rules for the simulator',
  system_text: 'an imported system prompt that was not split into the five fields ("" otherwise; then the five fields are "")',
  history: 'the earlier turns, oldest first: each has .index (1-based turn number), .action and .observation',
  action: 'the current action (the one whose observation is predicted)',
  step: 'the 1-based number of the current action (history | length + 1 before truncation)',
});

export const TEMPLATE_VARIABLE_NAMES: readonly string[] = Object.keys(TEMPLATE_VARIABLES);

/** Variables whose values are the sample's own text (the fitter may cut them); the rest are metadata. */
export const VALUE_VARIABLES: readonly string[] = [...SYSTEM_PROMPT_FIELDS, 'system_text', 'action'];

/** Names Jinja itself provides, never unknown. */
const BUILTIN_NAMES = new Set([
  'loop',
  'true',
  'false',
  'none',
  'True',
  'False',
  'None',
  'range',
  'namespace',
  'raise_exception',
  'strftime_now',
  'super',
  'caller',
  'varargs',
  'kwargs',
]);
/** Words that are syntax inside a tag, not variables. */
const KEYWORDS = new Set([
  'if',
  'elif',
  'else',
  'endif',
  'for',
  'endfor',
  'in',
  'not',
  'and',
  'or',
  'is',
  'set',
  'endset',
  'macro',
  'endmacro',
  'call',
  'endcall',
  'filter',
  'endfilter',
  'break',
  'continue',
  'recursive',
  'generation',
  'endgeneration',
]);

export interface TemplateProblem {
  /** 1-based line of the template text. */
  line: number;
  column?: number;
  endColumn?: number;
  message: string;
}

const compiled = new Map<string, Template>();
const MAX_COMPILED = 200;

/** The compiled template of a text (cached); throws the engine's error on a syntax problem. */
export function compileTemplate(text: string): Template {
  let t = compiled.get(text);
  if (!t) {
    t = new Template(text);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(text, t);
  }
  return t;
}

/** One `{{ … }}` or `{% … %}` tag of the source, with where it starts. */
interface Tag {
  kind: 'expression' | 'statement';
  body: string;
  offset: number;
}

/** Where a tag's closing delimiter is, skipping quoted strings; -1 when never. */
function closeOf(text: string, from: number, close: string): number {
  let quote = '';
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (text.startsWith(close, i)) return i;
  }
  return -1;
}

/** The tags of a text (comments skipped), in order. An unclosed tag ends the list with body null. */
function scanTags(text: string): { tags: Tag[]; unclosed: { offset: number; open: string } | null } {
  const tags: Tag[] = [];
  const re = /\{\{|\{%|\{#/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    const close = m[0] === '{{' ? '}}' : m[0] === '{%' ? '%}' : '#}';
    const end = m[0] === '{#' ? text.indexOf(close, m.index + 2) : closeOf(text, m.index + 2, close);
    if (end < 0) return { tags, unclosed: { offset: m.index, open: m[0] } };
    if (m[0] !== '{#')
      tags.push({ kind: m[0] === '{{' ? 'expression' : 'statement', body: text.slice(m.index + 2, end).replace(/^-|-$/g, ''), offset: m.index });
    re.lastIndex = end + 2;
  }
  return { tags, unclosed: null };
}

export function lineAt(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) if (text[i] === '\n') line++, (start = i + 1);
  return { line, column: offset - start + 1 };
}

/** A variable name used by the template, where. */
export interface NameUse {
  name: string;
  line: number;
  column: number;
}

/** Identifiers of one tag's body that are variable reads (not attributes, filters, tests or keywords), and names it binds. */
function tagNames(tag: Tag): { reads: { name: string; at: number }[]; binds: string[] } {
  let tokens;
  try {
    tokens = tokenize(tag.kind === 'expression' ? `{{${tag.body}}}` : `{%${tag.body}%}`);
  } catch {
    return { reads: [], binds: [] };
  }
  const reads: { name: string; at: number }[] = [];
  const binds: string[] = [];
  let cursor = 0;
  const head = tokens[1]?.value;
  tokens.forEach((tk, i) => {
    if (tk.type !== 'Identifier') return;
    const at = tag.body.indexOf(tk.value, cursor);
    if (at >= 0) cursor = at + tk.value.length;
    const prev = tokens[i - 1];
    if (prev && (prev.type === 'Dot' || prev.type === 'Pipe')) return;
    if (prev?.type === 'Identifier' && prev.value === 'is') return;
    if (tokens[i + 1]?.type === 'Equals' && head !== 'set') return; // keyword argument name
    if (KEYWORDS.has(tk.value) || BUILTIN_NAMES.has(tk.value)) return;
    if (tag.kind === 'statement' && i === 2 && (head === 'set' || head === 'macro')) return void binds.push(tk.value);
    if (
      tag.kind === 'statement' &&
      head === 'for' &&
      tokens.slice(2, i).every((x) => x.type === 'Identifier' || x.type === 'Comma') &&
      !tokens.slice(2, i).some((x) => x.value === 'in')
    )
      return void binds.push(tk.value);
    if (tag.kind === 'statement' && head === 'macro' && i > 2) return void binds.push(tk.value);
    reads.push({ name: tk.value, at: Math.max(0, at) });
  });
  return { reads, binds };
}

/** Every variable the text reads, with its line and column (names it binds itself left out). */
export function placeholderUses(text: string): NameUse[] {
  const { tags } = scanTags(text);
  const bound = new Set<string>();
  const reads: NameUse[] = [];
  for (const tag of tags) {
    const n = tagNames(tag);
    n.binds.forEach((b) => bound.add(b));
    const bodyStart = tag.offset + 2 + (text[tag.offset + 2] === '-' ? 1 : 0);
    for (const r of n.reads) reads.push({ name: r.name, ...lineAt(text, bodyStart + r.at) });
  }
  return reads.filter((r) => !bound.has(r.name));
}

/** The distinct variable names the text uses, in first-use order. */
export function placeholderNames(text: string): string[] {
  return [...new Set(placeholderUses(text).map((u) => u.name))];
}

const BLOCK_OPEN: Record<string, string> = { if: 'endif', for: 'endfor', macro: 'endmacro', call: 'endcall', filter: 'endfilter', generation: 'endgeneration' };
const BLOCK_MIDDLE = new Set(['elif', 'else']);

/** Where the blocks of a text do not nest (an end without its start, a start never ended), naming the line. */
function blockProblems(text: string, tags: Tag[]): TemplateProblem[] {
  const stack: { word: string; tag: Tag }[] = [];
  for (const tag of tags) {
    if (tag.kind !== 'statement') continue;
    const word = /^\s*(\w+)/.exec(tag.body)?.[1] ?? '';
    if (word === 'set' && !/=/.test(tag.body)) stack.push({ word: 'set', tag });
    else if (Object.hasOwn(BLOCK_OPEN, word)) stack.push({ word, tag });
    else if (word.startsWith('end')) {
      const top = stack.pop();
      const want = top ? (top.word === 'set' ? 'endset' : BLOCK_OPEN[top.word]) : null;
      if (want !== word)
        return [
          {
            ...lineAt(text, tag.offset),
            message: top
              ? `{% ${word} %} where {% ${want} %} was expected (the {% ${top.word} %} of line ${lineAt(text, top.tag.offset).line} is still open)`
              : `{% ${word} %} without a matching opening tag`,
          },
        ];
    } else if (BLOCK_MIDDLE.has(word) && !stack.some((s) => s.word === 'if' || s.word === 'for'))
      return [{ ...lineAt(text, tag.offset), message: `{% ${word} %} outside an {% if %} or {% for %} block` }];
  }
  const open = stack.pop();
  return open
    ? [{ ...lineAt(text, open.tag.offset), message: `{% ${open.word} %} is never closed with {% ${open.word === 'set' ? 'endset' : BLOCK_OPEN[open.word]} %}` }]
    : [];
}

/** Syntax problems, each naming the line: an unclosed tag, blocks that do not nest, a tag the engine cannot read. */
export function syntaxProblems(text: string): TemplateProblem[] {
  const { tags, unclosed } = scanTags(text);
  if (unclosed) return [{ ...lineAt(text, unclosed.offset), message: `${unclosed.open} is never closed` }];
  for (const tag of tags) {
    const src = tag.kind === 'expression' ? `{{${tag.body}}}` : `{%${tag.body}%}`;
    try {
      tokenize(src);
    } catch (e) {
      return [{ ...lineAt(text, tag.offset), message: `cannot read ${src.length > 40 ? src.slice(0, 40) + '…' : src}: ${(e as Error).message}` }];
    }
  }
  const blocks = blockProblems(text, tags);
  if (blocks.length) return blocks;
  try {
    compileTemplate(text);
  } catch (e) {
    return [{ line: 1, message: `syntax: ${(e as Error).message}` }];
  }
  return [];
}

/** Unknown variable names, each with its line: almost always a typo, and Jinja would render them as "". */
export function unknownNameProblems(text: string): TemplateProblem[] {
  return placeholderUses(text)
    .filter((u) => !Object.hasOwn(TEMPLATE_VARIABLES, u.name))
    .map((u) => ({
      line: u.line,
      column: u.column,
      endColumn: u.column + u.name.length,
      message: `unknown variable "${u.name}" (known: ${TEMPLATE_VARIABLE_NAMES.join(', ')})`,
    }));
}

/** The literal text of a template between its tags (a tokenizer's corpus of template wording). */
export function templateLiterals(text: string): string[] {
  return text
    .split(/\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}|\{#[\s\S]*?#\}/)
    .map((s) => s.trim())
    .filter(Boolean);
}
