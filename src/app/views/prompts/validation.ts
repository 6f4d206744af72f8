// Turns the editors' text into a template or a trajectory, or into problems that name a line,
// using the data core's checks (checkTemplateText, renderProblems, validateTrajectory) and its pointer locator.
import type { Trajectory } from '../../../core/schema/types.ts';
import { lineOfPointer } from '../../../core/schema/locate.ts';
import { validateTrajectory } from '../../../core/schema/validate.ts';
import { checkTemplateText, renderProblems, templateTextFor, type PromptTemplate } from '../../../core/templates/index.ts';
import type { TurnSample } from '../../../core/turns/index.ts';
import { jsonSyntaxError, positionAt } from '../../components/monaco/jsonLocate.ts';
import type { EditorMarker } from '../../components/monaco/CodeEditor.tsx';

export type TemplateBody = Omit<PromptTemplate, 'version'>;

/** The text the editor shows for a version: its text for one domain, or its default text. */
export function templateText(t: PromptTemplate, domain: string | null = null): string {
  return domain ? templateTextFor(t, domain) : t.text;
}

/** A template with the draft's text in place of its text (or of one domain's text). */
export function withText(base: TemplateBody, text: string, domain: string | null): TemplateBody {
  return domain ? { ...base, domains: { ...base.domains, [domain]: text } } : { ...base, text };
}

/**
 * The editor's text as a template, or its problems, each on a line: syntax, unknown variable
 * names, a missing history loop or action; then whether it renders the preview's samples.
 */
export function parseTemplate(
  text: string,
  base: TemplateBody,
  domain: string | null,
  samples: readonly TurnSample[] = [],
): { template: TemplateBody | null; problems: EditorMarker[] } {
  const problems: EditorMarker[] = checkTemplateText(text).map((p) => ({
    message: `line ${p.line}: ${p.message}`,
    line: p.line,
    column: p.column,
    endColumn: p.endColumn,
  }));
  if (problems.length) return { template: null, problems };
  const template = withText(base, text, domain);
  for (const msg of renderProblems({ ...template, version: 'draft' }, samples)) problems.push({ message: msg, line: 1 });
  return problems.length ? { template: null, problems } : { template, problems };
}

function syntaxProblem(text: string): EditorMarker | null {
  const e = jsonSyntaxError(text);
  if (!e) return null;
  const p = positionAt(text, e.offset);
  return { message: `JSON syntax: ${e.message}`, line: p.line, column: p.column, endColumn: p.column + 1 };
}

const at = (text: string, pointer: string, message: string): EditorMarker => ({ message, line: lineOfPointer(text, pointer) ?? 1 });

export function parseTrajectory(text: string, otherIds: Set<string>): { trajectory: Trajectory | null; problems: EditorMarker[] } {
  const syntax = syntaxProblem(text);
  if (syntax) return { trajectory: null, problems: [syntax] };
  const v = JSON.parse(text) as unknown;
  const problems = validateTrajectory(v).map((e) => at(text, e.pointer, `${e.pointer || '(trajectory)'}: ${e.message}`));
  if (!problems.length && otherIds.has((v as Trajectory).id))
    problems.push(at(text, '/id', `/id: another trajectory of this dataset already has the id "${(v as Trajectory).id}"`));
  return problems.length ? { trajectory: null, problems } : { trajectory: v as Trajectory, problems };
}
