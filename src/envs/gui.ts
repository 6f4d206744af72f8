// Shared machinery of the GUI domains (os, web, android): screens are trees of nodes rendered
// as indented text with numeric element ids, the way accessibility trees and view hierarchies
// are given to text-only agents. Span labels come from what the agent has already seen: a line
// shown before (same text) is deterministic, a line never shown is pre-existing content, and
// nodes may force a class (clocks and order numbers are runtime metadata, an echo of what the
// agent typed is deterministic).
import type { KnownDomain, SpanKind, SystemPrompt } from '../core/schema/types.ts';
import { parseCall, type ActionArg } from './action.ts';
import { FakeClock } from './clock.ts';
import { Rng } from '../core/random.ts';
import { SpanText } from './spans.ts';
import type { Environment, EnvReset, StepResult } from './types.ts';

export interface UiNode {
  role: string;
  name?: string;
  value?: string;
  states?: string[];
  /** Forces the span class of this node's line. */
  kind?: SpanKind;
  children?: UiNode[];
  onClick?: () => void;
  onType?: (text: string) => void;
  /** For selects/pickers: the accepted options. */
  options?: string[];
  onSelect?: (option: string) => void;
}

export function ui(role: string, name?: string, extra: Partial<UiNode> = {}): UiNode {
  return { role, name, ...extra };
}

/** Result of handling an action: null when fine, or the error text the harness prints. */
export type ActionError = string | null;

export abstract class GuiEnv implements Environment {
  abstract readonly domain: KnownDomain;
  protected rng!: Rng;
  protected clock!: FakeClock;
  private seen = new Set<string>();
  protected ids = new Map<number, UiNode>();
  /** A one-off line shown above the tree after an action (toasts, dialogs' results). */
  protected toast: string | null = null;
  /** Texts the agent typed: an editable showing one of them echoes the action. */
  private typed = new Set<string>();

  reset(seed: number): EnvReset {
    this.rng = new Rng(`${this.domain}:${seed}`);
    this.clock = new FakeClock(this.rng);
    this.seen.clear();
    this.typed.clear();
    this.toast = null;
    const r = this.init(this.rng.fork('world'));
    // The initial screen is part of the system prompt, so its lines count as seen.
    const first = this.render();
    for (const l of first.lines) this.seen.add(l.text);
    return { system_prompt: r.system_prompt(first.text), state: r.state };
  }

  protected abstract init(rng: Rng): { system_prompt: (initialScreen: string) => SystemPrompt; state: unknown };
  protected abstract screen(): UiNode;
  /** Actions that do not name an element (key, scroll, back, home, goto, ...). */
  protected abstract globalAction(name: string, args: ActionArg[]): ActionError | undefined;

  step(action: string): StepResult {
    this.clock.tick(this.rng, 2, 30);
    this.toast = null;
    const err = this.dispatch(action);
    if (err !== null) {
      const st = new SpanText().det(err);
      return { observation: st.text, spans: st.spans, timestamp: this.clock.iso(), ok: false };
    }
    const r = this.render();
    const st = new SpanText();
    if (this.toast) st.det(this.toast + '\n');
    r.lines.forEach((l, i) => {
      const kind = l.kind ?? (this.seen.has(l.text) || (l.typed && this.typed.has(l.typed)) ? 'deterministic' : 'pre_existing');
      // The line break travels with its line so runs of same-class lines form one span.
      st.add(i < r.lines.length - 1 ? l.text + '\n' : l.text, kind);
      this.seen.add(l.text);
    });
    return { observation: st.text, spans: st.spans, timestamp: this.clock.iso(), ok: true };
  }

  protected element(id: ActionArg | undefined): UiNode | string {
    if (typeof id !== 'number' || !Number.isInteger(id)) return `Error: expected an element id (a number), got ${JSON.stringify(id ?? null)}`;
    const n = this.ids.get(id);
    return n ?? `Error: no element with id ${id} on the current screen`;
  }

  private dispatch(action: string): ActionError {
    const p = parseCall(action);
    if ('error' in p) return `Error: ${p.error}`;
    const { name, args } = p;
    const elementActions: Record<string, boolean> = { click: true, tap: true, type: true, select: true, clear: true };
    if (elementActions[name]) {
      const el = this.element(args[0]);
      if (typeof el === 'string') return el;
      if (name === 'click' || name === 'tap') {
        if (el.states?.includes('disabled')) return `Error: element ${args[0]} is disabled`;
        if (!el.onClick) return null; // clicking inert text does nothing, like on a real screen
        el.onClick();
        return null;
      }
      if (name === 'type' || name === 'clear') {
        if (!el.onType) return `Error: element ${args[0]} (${el.role}) is not editable`;
        if (name === 'type' && typeof args[1] !== 'string' && typeof args[1] !== 'number') return `Error: type(id, text) needs the text to type`;
        el.onType(name === 'clear' ? '' : String(args[1]));
        this.typed.add(name === 'clear' ? '' : String(args[1]));
        return null;
      }
      if (!el.onSelect || !el.options) return `Error: element ${args[0]} (${el.role}) is not a select`;
      const opt = String(args[1] ?? '');
      if (!el.options.includes(opt)) return `Error: "${opt}" is not an option of element ${args[0]}; options: ${el.options.join(', ')}`;
      el.onSelect(opt);
      return null;
    }
    const g = this.globalAction(name, args);
    if (g === undefined) return `Error: unknown action '${name}'`;
    return g;
  }

  /** Renders the current screen, numbering elements depth-first from 1. */
  protected render(): { text: string; lines: { text: string; kind?: SpanKind; typed?: string }[] } {
    this.ids.clear();
    const lines: { text: string; kind?: SpanKind; typed?: string }[] = [];
    let next = 1;
    const walk = (n: UiNode, depth: number) => {
      const id = next++;
      this.ids.set(id, n);
      const parts = [`${'  '.repeat(depth)}[${id}] ${n.role}`];
      if (n.name !== undefined) parts.push(JSON.stringify(n.name));
      if (n.value !== undefined) parts.push(`value=${JSON.stringify(n.value)}`);
      if (n.states?.length) parts.push(`(${n.states.join(', ')})`);
      lines.push({ text: parts.join(' '), kind: n.kind, typed: n.onType && n.value !== undefined ? n.value : undefined });
      for (const c of n.children ?? []) walk(c, depth + 1);
    };
    walk(this.screen(), 0);
    return { text: lines.map((l) => l.text).join('\n'), lines };
  }

  /** Id of the first node satisfying `pred` on the current screen (agents use it). */
  findId(pred: (n: UiNode) => boolean): number | null {
    this.render();
    for (const [id, n] of this.ids) if (pred(n)) return id;
    return null;
  }

  /** Id of the first node whose name is `name` (optionally with the given role). */
  idOf(name: string, role?: string): number | null {
    return this.findId((n) => n.name === name && (role === undefined || n.role === role));
  }

  /** Number of elements on the current screen (for random agents). */
  elementCount(): number {
    this.render();
    return this.ids.size;
  }
}
