// Turns the editors' text into a template or a trajectory, or into problems that name a line,
// using the data core's checks (checkTemplate, validateTrajectory) and its pointer locator.
import type { Trajectory } from '../../../core/schema/types.ts';
import { lineOfPointer } from '../../../core/schema/locate.ts';
import { validateTrajectory } from '../../../core/schema/validate.ts';
import { checkTemplate, type PromptTemplate } from '../../../core/templates/index.ts';
import { jsonSyntaxError, positionAt } from '../../components/monaco/jsonLocate.ts';
import type { EditorMarker } from '../../components/monaco/CodeEditor.tsx';
import { PLACEHOLDER_NAMES } from '../../components/monaco/placeholders.ts';

export type TemplateBody = Omit<PromptTemplate, 'version'>;

const STRING_FIELDS = ['description', 'preamble', 'closing', 'historyTurn', 'currentAction', 'targetOpen', 'targetClose'] as const;

/** The editor shows a template without its version: the version is its name in the lineage, given on save. */
export function templateText(t: PromptTemplate): string {
  const { version: _version, ...body } = t;
  return JSON.stringify(body, null, 2);
}

function syntaxProblem(text: string): EditorMarker | null {
  const e = jsonSyntaxError(text);
  if (!e) return null;
  const p = positionAt(text, e.offset);
  return { message: `JSON syntax: ${e.message}`, line: p.line, column: p.column, endColumn: p.column + 1 };
}

const at = (text: string, pointer: string, message: string): EditorMarker => ({ message, line: lineOfPointer(text, pointer) ?? 1 });

export function parseTemplate(text: string): { template: TemplateBody | null; problems: EditorMarker[] } {
  const syntax = syntaxProblem(text);
  if (syntax) return { template: null, problems: [syntax] };
  const v = JSON.parse(text) as unknown;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { template: null, problems: [{ message: 'a template is a JSON object', line: 1 }] };
  const o = v as Record<string, unknown>;
  const problems: EditorMarker[] = [];
  for (const k of STRING_FIELDS) {
    if (typeof o[k] !== 'string') problems.push(at(text, k in o ? `/${k}` : '', k in o ? `${k}: expected a string` : `${k}: missing (every template has ${STRING_FIELDS.join(', ')} and sections)`));
  }
  if (!Array.isArray(o.sections)) problems.push(at(text, 'sections' in o ? '/sections' : '', 'sections: expected an array of { "field", "heading" }'));
  else
    o.sections.forEach((s, i) => {
      const ok = typeof s === 'object' && s !== null && typeof (s as Record<string, unknown>).field === 'string' && typeof (s as Record<string, unknown>).heading === 'string';
      if (!ok) problems.push(at(text, `/sections/${i}`, `sections/${i}: expected { "field": string, "heading": string }`));
    });
  for (const k of Object.keys(o)) {
    if (k === 'version') problems.push(at(text, '/version', 'version: leave it out; a version name is given when you save'));
    else if (k !== 'sections' && !(STRING_FIELDS as readonly string[]).includes(k)) problems.push(at(text, `/${k}`, `${k}: not a template field`));
  }
  if (problems.length) return { template: null, problems };
  const body = o as unknown as TemplateBody;
  for (const msg of checkTemplate({ ...body, version: 'draft' })) {
    const field = msg.split(':')[0];
    problems.push(at(text, '/' + field, msg));
  }
  // Unknown placeholders are left in the text verbatim by the renderer: almost always a typo.
  const check = (pointer: string, s: string) => {
    for (const m of s.matchAll(/\{\{(\w*)\}\}/g)) {
      if (!PLACEHOLDER_NAMES.includes(m[1])) problems.push(at(text, pointer, `${pointer.slice(1)}: unknown placeholder {{${m[1]}}} (known: ${PLACEHOLDER_NAMES.map((p) => `{{${p}}}`).join(', ')})`));
    }
  };
  for (const k of STRING_FIELDS) check(`/${k}`, body[k]);
  body.sections.forEach((s, i) => check(`/sections/${i}/heading`, s.heading));
  return problems.length ? { template: null, problems } : { template: body, problems };
}

export function parseTrajectory(text: string, otherIds: Set<string>): { trajectory: Trajectory | null; problems: EditorMarker[] } {
  const syntax = syntaxProblem(text);
  if (syntax) return { trajectory: null, problems: [syntax] };
  const v = JSON.parse(text) as unknown;
  const problems = validateTrajectory(v).map((e) => at(text, e.pointer, `${e.pointer || '(trajectory)'}: ${e.message}`));
  if (!problems.length && otherIds.has((v as Trajectory).id)) problems.push(at(text, '/id', `/id: another trajectory of this dataset already has the id "${(v as Trajectory).id}"`));
  return problems.length ? { trajectory: null, problems } : { trajectory: v as Trajectory, problems };
}
