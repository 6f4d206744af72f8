// The layout of a rendered template: what text belongs to which part of a sample (each system-
// prompt field with the text its {% if %} block puts around it, each history turn, the current
// action, the template's own prose, the fixed frame), so rendering and the truncation policy
// (fit.ts) work from one description. Found by rendering the template once with markers: every
// value of the sample is a private-use character, every top-level statement and every pass of
// the history loop is fenced by others; the output, cut at the markers, is the layout.
import { Template } from '@huggingface/jinja';
import { SYSTEM_PROMPT_FIELDS, type SystemPromptField } from '../schema/types.ts';
import { SPECIAL_TOKENS } from '../tokenizer/index.ts';
import type { TurnSample } from '../turns/index.ts';
import { compileTemplate } from './jinja.ts';

/** Where a value of the sample goes. */
export type ValueRef =
  | { kind: 'field'; field: SystemPromptField }
  | { kind: 'system_text' }
  | { kind: 'turn'; turn: number; key: 'action' | 'observation' }
  | { kind: 'action' };

/** Literal template text, or a value of the sample. */
export type LayoutPiece = string | ValueRef;

export type LayoutPartName = 'preamble' | 'closing' | SystemPromptField | 'system_text' | 'turn' | 'action' | 'frame';

export interface LayoutItem {
  /** 'frame': kept always (special tokens, blank lines); 'part': kept, cut or left out as a whole by the fitter. */
  kind: 'frame' | 'part';
  name: LayoutPartName;
  area: 'system' | 'turns' | 'action';
  turn?: number;
  /** Leading whitespace of a system part (dropped when the part opens the system text). */
  lead: string;
  pieces: LayoutPiece[];
  /** Trailing whitespace of a system prose part (kept when nothing of the system text is). */
  trail: string;
}

export type LayoutSample = Pick<TurnSample, 'systemPrompt' | 'domain' | 'history' | 'action'>;

export const CHANGED_VALUE =
  'the template changes or moves a value of the sample (filters and slices on the fields, the history and the action are not supported)';

const BOUNDARY = 0xe000;
const TURN_OPEN = '\uf8f0';
const TURN_CLOSE = '\uf8f1';
const VALUE = 0xf0000;
const MARKERS = /[\u{e000}-\u{f8ff}\u{f0000}-\u{ffffd}]/u;

type Program = Template['parsed'];
type Statement = Program['body'][number];

type StatementKind = { kind: 'field'; field: SystemPromptField | 'system_text' } | { kind: 'history' } | { kind: 'other' };

interface Analysed {
  kinds: StatementKind[];
  /** The template with fences around each top-level statement and each pass of the history loop. */
  fenced: Template;
  historyAt: number;
}

const FIELD_NAMES: readonly string[] = [...SYSTEM_PROMPT_FIELDS, 'system_text'];

/** Identifier names an expression reads (shallow walk of the AST). */
function identifiers(node: unknown, out: Set<string> = new Set()): Set<string> {
  if (!node || typeof node !== 'object') return out;
  const n = node as Record<string, unknown>;
  if (n.type === 'Identifier' && typeof n.value === 'string') out.add(n.value);
  for (const [k, v] of Object.entries(n)) {
    if (k === 'type' || k === 'body' || k === 'alternate') continue;
    if (Array.isArray(v)) v.forEach((x) => identifiers(x, out));
    else if (v && typeof v === 'object') identifiers(v, out);
  }
  return out;
}

function kindOf(s: Statement): StatementKind {
  const n = s as unknown as Record<string, unknown>;
  if (s.type === 'For' && (n.iterable as { type: string; value?: string }).type === 'Identifier' && (n.iterable as { value: string }).value === 'history')
    return { kind: 'history' };
  if (s.type === 'If') {
    const fields = [...identifiers(n.test)].filter((x) => FIELD_NAMES.includes(x));
    if (fields.length === 1) return { kind: 'field', field: fields[0] as SystemPromptField | 'system_text' };
  }
  return { kind: 'other' };
}

const analysed = new Map<string, Analysed>();

/** The statements of a text, classified, and its fenced twin. Throws on a syntax error or a missing history loop. */
function analyse(text: string): Analysed {
  const hit = analysed.get(text);
  if (hit) return hit;
  const program = compileTemplate(text).parsed;
  const Literal = (new Template('x').parsed.body[0] as Statement).constructor as new (value: string) => Statement;
  const ProgramOf = program.constructor as new (body: Statement[]) => Program;
  const kinds = program.body.map(kindOf);
  const historyAt = kinds.findIndex((k) => k.kind === 'history');
  if (historyAt < 0) throw new Error('the template has no top-level loop over the history: {% for turn in history %}…{% endfor %}');
  const body: Statement[] = [];
  program.body.forEach((s, i) => {
    body.push(new Literal(String.fromCharCode(BOUNDARY + i)));
    if (i !== historyAt) return void body.push(s);
    const loop = Object.assign(Object.create(Object.getPrototypeOf(s)), s) as Statement & { body: Statement[] };
    loop.body = [new Literal(TURN_OPEN), ...(s as unknown as { body: Statement[] }).body, new Literal(TURN_CLOSE)];
    body.push(loop);
  });
  body.push(new Literal(String.fromCharCode(BOUNDARY + program.body.length)));
  const fenced = Object.create(Template.prototype) as Template;
  fenced.parsed = new ProgramOf(body);
  const a = { kinds, fenced, historyAt };
  if (analysed.size >= 200) analysed.delete(analysed.keys().next().value!);
  analysed.set(text, a);
  return a;
}

/** The template's variables for a sample, with each non-empty value replaced by its marker; `refs` maps markers back. */
function markedVariables(sample: LayoutSample): { vars: Record<string, unknown>; refs: Map<string, ValueRef> } {
  const refs = new Map<string, ValueRef>();
  const mark = (value: string, ref: ValueRef): string => {
    if (!value) return '';
    const m = String.fromCodePoint(VALUE + refs.size);
    refs.set(m, ref);
    return m;
  };
  const sp = sample.systemPrompt;
  const unsplit = sp.text !== undefined;
  const vars: Record<string, unknown> = { domain: sample.domain, step: sample.history.length + 1 };
  for (const f of SYSTEM_PROMPT_FIELDS) vars[f] = unsplit ? '' : mark(sp[f], { kind: 'field', field: f });
  vars.system_text = unsplit ? mark(sp.text!, { kind: 'system_text' }) : '';
  vars.history = sample.history.map((t, i) => ({
    index: i + 1,
    action: mark(t.action, { kind: 'turn', turn: i, key: 'action' }),
    observation: mark(t.observation, { kind: 'turn', turn: i, key: 'observation' }),
  }));
  vars.action = mark(sample.action, { kind: 'action' });
  return { vars, refs };
}

/** Literal text and values of a rendered stretch. */
function piecesOf(s: string, refs: Map<string, ValueRef>): LayoutPiece[] {
  const out: LayoutPiece[] = [];
  let literal = '';
  for (const ch of s) {
    const ref = refs.get(ch);
    if (!ref) {
      if (MARKERS.test(ch)) throw new Error(CHANGED_VALUE);
      literal += ch;
      continue;
    }
    if (literal) out.push(literal);
    literal = '';
    out.push(ref);
  }
  if (literal) out.push(literal);
  return out;
}

const specialAlternation = Object.values(SPECIAL_TOKENS)
  .map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
  .join('|');
const HEAD = new RegExp(`^(?:[ \\t\\n]*(?:${specialAlternation})\\n?)*`);

/** A stretch of the system text: its special-token head as frame, then the rest as a part (whitespace around it kept apart). */
function systemItems(s: string, name: LayoutPartName, refs: Map<string, ValueRef>): LayoutItem[] {
  const head = HEAD.exec(s)![0];
  const rest = s.slice(head.length);
  const items: LayoutItem[] = head ? [{ kind: 'frame', name: 'frame', area: 'system', lead: '', pieces: [head], trail: '' }] : [];
  const lead = /^\s*/.exec(rest)![0];
  const core = rest.trimEnd().slice(lead.length);
  const trail = rest.slice(lead.length + core.length);
  if (!core) {
    if (rest) items.push({ kind: 'frame', name: 'frame', area: 'system', lead: '', pieces: [rest], trail: '' });
    return items;
  }
  items.push({ kind: 'part', name, area: 'system', lead, pieces: piecesOf(core, refs), trail });
  return items;
}

/** The history loop's output: each pass a turn part, anything outside the passes frame. */
function turnItems(s: string, refs: Map<string, ValueRef>): LayoutItem[] {
  const items: LayoutItem[] = [];
  let turn = 0;
  for (const [i, chunk] of s.split(TURN_OPEN).entries()) {
    const [inside, outside] = i === 0 ? ['', chunk] : [chunk.slice(0, chunk.indexOf(TURN_CLOSE)), chunk.slice(chunk.indexOf(TURN_CLOSE) + 1)];
    if (i > 0) items.push({ kind: 'part', name: 'turn', area: 'turns', turn: turn++, lead: '', pieces: piecesOf(inside, refs), trail: '' });
    if (outside) items.push({ kind: 'frame', name: 'frame', area: 'turns', lead: '', pieces: piecesOf(outside, refs), trail: '' });
  }
  return items;
}

/** The layout of a sample under a template text, in order. */
export function layoutOf(text: string, sample: LayoutSample): LayoutItem[] {
  const a = analyse(text);
  const { vars, refs } = markedVariables(sample);
  const out = a.fenced.render(vars);
  const segments: string[] = [];
  const cuts = [...out.matchAll(/[\u{e000}-\u{f7ff}]/gu)];
  for (let i = 0; i + 1 < cuts.length; i++) segments[cuts[i][0].charCodeAt(0) - BOUNDARY] = out.slice(cuts[i].index! + 1, cuts[i + 1].index);
  const items: LayoutItem[] = [];
  let pending = '';
  let sawField = false;
  const flush = () => {
    if (pending) items.push(...systemItems(pending, sawField ? 'closing' : 'preamble', refs));
    pending = '';
  };
  a.kinds.forEach((k, i) => {
    const s = segments[i] ?? '';
    if (i > a.historyAt) return void (s && items.push({ kind: 'part', name: 'action', area: 'action', lead: '', pieces: piecesOf(s, refs), trail: '' }));
    if (i === a.historyAt) return void (flush(), items.push(...turnItems(s, refs)));
    const field = k.kind === 'field' ? k.field : null;
    const own = field
      ? [...refs.entries()].find(([, r]) => (field === 'system_text' ? r.kind === 'system_text' : r.kind === 'field' && r.field === field))
      : undefined;
    if (!field || !own || !s.includes(own[0])) return void (pending += s);
    flush();
    sawField = true;
    items.push(...systemItems(s, field, refs));
  });
  return mergeAction(items);
}

/** Everything after the history loop is one action part. */
function mergeAction(items: LayoutItem[]): LayoutItem[] {
  const action = items.filter((x) => x.area === 'action');
  const rest = items.filter((x) => x.area !== 'action');
  return [...rest, { kind: 'part', name: 'action', area: 'action', lead: '', pieces: action.flatMap((x) => x.pieces), trail: '' }];
}

/** The value a reference names in a sample. */
export function valueOf(ref: ValueRef, sample: LayoutSample): string {
  switch (ref.kind) {
    case 'field':
      return sample.systemPrompt[ref.field];
    case 'system_text':
      return sample.systemPrompt.text ?? '';
    case 'turn':
      return sample.history[ref.turn][ref.key];
    case 'action':
      return sample.action;
  }
}

/** The text of an item (all of it) in a sample. */
export function itemText(item: LayoutItem, sample: LayoutSample): string {
  return item.lead + item.pieces.map((p) => (typeof p === 'string' ? p : valueOf(p, sample))).join('') + item.trail;
}

/** The text the engine renders for a sample with its real values (no markers): what the layout must reproduce. */
export function renderDirect(text: string, sample: LayoutSample): string {
  const sp = sample.systemPrompt;
  const unsplit = sp.text !== undefined;
  const vars: Record<string, unknown> = { domain: sample.domain, step: sample.history.length + 1, system_text: unsplit ? sp.text : '', action: sample.action };
  for (const f of SYSTEM_PROMPT_FIELDS) vars[f] = unsplit ? '' : sp[f];
  vars.history = sample.history.map((t, i) => ({ index: i + 1, action: t.action, observation: t.observation }));
  return compileTemplate(text).render(vars);
}
