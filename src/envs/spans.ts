// Builds an observation piece by piece, each piece labelled with its docs/method.md §8 content class,
// so spans tile the text by construction instead of being guessed afterwards.
import type { SpanKind, SpanLabel } from '../core/schema/types.ts';

export class SpanText {
  private parts: string[] = [];
  private len = 0;
  readonly spans: SpanLabel[] = [];

  /** Deterministic: fully determined by the action and the known session state. */
  det(text: string): this {
    return this.add(text, 'deterministic');
  }
  /** Pre-existing environment content the agent had not seen. */
  pre(text: string): this {
    return this.add(text, 'pre_existing');
  }
  /** Runtime metadata: PIDs, timestamps, sizes, ids. */
  meta(text: string): this {
    return this.add(text, 'runtime_metadata');
  }

  add(text: string, kind: SpanKind): this {
    if (text.length === 0) return this;
    const last = this.spans[this.spans.length - 1];
    if (last && last.kind === kind) last.end += text.length;
    else this.spans.push({ start: this.len, end: this.len + text.length, kind });
    this.parts.push(text);
    this.len += text.length;
    return this;
  }

  append(other: SpanText): this {
    const text = other.text;
    for (const s of other.spans) this.add(text.slice(s.start, s.end), s.kind);
    return this;
  }

  get length(): number {
    return this.len;
  }
  get text(): string {
    return this.parts.join('');
  }
}

/** Why the spans do not tile the text, or null when they do. */
export function checkSpanTiling(text: string, spans: readonly SpanLabel[]): string | null {
  let pos = 0;
  for (const [i, s] of spans.entries()) {
    if (s.start !== pos) return `span ${i} starts at ${s.start}, expected ${pos}`;
    if (s.end <= s.start) return `span ${i} is empty or reversed (${s.start}..${s.end})`;
    pos = s.end;
  }
  if (pos !== text.length) return `spans end at ${pos}, text has length ${text.length}`;
  return null;
}
