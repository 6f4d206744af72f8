// Templates as they were stored before they became text: a JSON object of a preamble, headed
// sections, a closing and the turn layouts. Browsers and checkpoints still hold them; they are
// converted on read into a text template that renders exactly the same (legacy.test.ts checks
// this against the JSON renderer on random templates and samples).
import { SYSTEM_PROMPT_FIELDS, type SystemPromptField } from '../schema/types.ts';
import { TARGET_CLOSE, TARGET_OPEN, type PromptTemplate } from './builtin.ts';

export interface LegacyPromptTemplate {
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
  targetOpen: string;
  targetClose: string;
}

/** A stored value that has the JSON template's shape. */
export function isLegacyTemplate(v: unknown): v is LegacyPromptTemplate {
  if (!v || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.preamble === 'string' &&
    Array.isArray(o.sections) &&
    typeof o.historyTurn === 'string' &&
    typeof o.currentAction === 'string' &&
    typeof o.text !== 'string'
  );
}

/** Literal text in the template language: as it is when the engine would read it back unchanged, else as a string expression. */
function literal(s: string, afterBlockTag = false): string {
  if (!s) return '';
  const risky = /[{}]/.test(s) || (afterBlockTag && s.startsWith('\n')) || /^[ \t]|[ \t]$/.test(s);
  return risky ? `{{ ${JSON.stringify(s)} }}` : s;
}

/** A JSON template string with its {{name}} placeholders as template expressions (others stay literal). */
function withPlaceholders(s: string, names: Record<string, string>, afterBlockTag = false): string {
  let out = '';
  let last = 0;
  let first = true;
  for (const m of s.matchAll(/\{\{(\w+)\}\}/g)) {
    if (!Object.hasOwn(names, m[1])) continue;
    out += literal(s.slice(last, m.index), first && afterBlockTag);
    out += `{{ ${names[m[1]]} }}`;
    last = m.index! + m[0].length;
    first = false;
  }
  return out + literal(s.slice(last), first && afterBlockTag);
}

/** A condition that holds when a JSON-template string with {{domain}} renders non-empty. */
function nonEmpty(s: string): string {
  if (s.replace(/\{\{domain\}\}/g, '') !== '') return 'true';
  return s ? 'domain' : 'false';
}

/**
 * The system text: parts joined by blank lines, as the JSON renderer joined them, then the
 * newline that closes it. Each part ends with that newline and opens with another when a part
 * came before it, the layout the built-ins use, so the fitter can leave any part out.
 */
function systemBlock(t: LegacyPromptTemplate): string {
  const domain = { domain: 'domain' };
  const pre = nonEmpty(t.preamble);
  const sections = t.sections.filter((s) => (SYSTEM_PROMPT_FIELDS as readonly string[]).includes(s.field));
  let out = `{% if ${pre} %}${withPlaceholders(t.preamble, domain, true)}{{ "\\n" }}{% endif %}`;
  const before = [pre];
  const part = (cond: string, body: string) => {
    out += `{% if ${cond} %}{% if ${before.join(' or ')} %}{{ "\\n" }}{% endif %}${body}{{ "\\n" }}{% endif %}`;
    before.push(cond);
  };
  part('system_text', '{{ system_text }}');
  for (const s of sections) part(s.field, `${literal(s.heading, true)}{{ "\\n" }}{{ ${s.field} }}`);
  part(nonEmpty(t.closing), withPlaceholders(t.closing, domain, true));
  return out + `{% if not (${before.join(' or ')}) %}{{ "\\n" }}{% endif %}`;
}

/** The text template that renders what a JSON template rendered. */
export function fromLegacy(t: LegacyPromptTemplate): PromptTemplate {
  const turn = withPlaceholders(t.historyTurn, { index: 'turn.index', action: 'turn.action', observation: 'turn.observation' }, true);
  const current = withPlaceholders(t.currentAction, { index: 'step', action: 'action' }, true);
  let text = `<|system|>{{ "\\n" }}${systemBlock(t)}{% for turn in history %}${turn}{% endfor %}${current}`;
  if (text.endsWith('\n')) text += '\n';
  return { version: t.version, description: t.description, text, targetOpen: t.targetOpen ?? TARGET_OPEN, targetClose: t.targetClose ?? TARGET_CLOSE };
}

/** A stored template in the current shape: text templates as they are, JSON ones converted. */
export function normalizeTemplate(v: PromptTemplate | LegacyPromptTemplate): PromptTemplate {
  return isLegacyTemplate(v) ? fromLegacy(v) : v;
}

/** A set of stored templates (a run's spec, a checkpoint's metadata) in the current shape. */
export function normalizeTemplates(set: Record<string, PromptTemplate | LegacyPromptTemplate> | undefined): Record<string, PromptTemplate> {
  const out: Record<string, PromptTemplate> = Object.create(null);
  for (const [k, v] of Object.entries(set ?? {})) out[k] = normalizeTemplate(v);
  return out;
}
