// An observation as the model's tokens, each coloured by its loss weight, with the docs/method.md §8 span
// labels as underline styles. Text is always rendered as React text nodes, never as HTML.
import { memo, useMemo, useState } from 'react';
import type { SpanKind, SpanLabel } from '../../../core/schema/types.ts';
import { tokenLossWeights } from '../../../core/masking/index.ts';
import type { Tokenizer } from '../../../core/tokenizer/index.ts';
import { SPAN_LABEL, SPAN_MEANING } from '../../components/categories.ts';

/** Longer observations tokenise on request, so a trajectory with huge outputs opens at once. */
const FIRST_CHARS = 4000;

interface Piece {
  start: number;
  end: number;
  weight: number;
  /** First piece of a token (token boundaries are drawn there). */
  tokenStart: boolean;
  span?: SpanKind;
}

/** Token pieces in string offsets; a token that ends mid-character joins the next one. */
function tokenPieces(text: string, weight: number, tokenizer: Tokenizer): Piece[] | null {
  const { ids, weights } = tokenLossWeights(tokenizer, [{ text, weight, data: true }]);
  const decoder = new TextDecoder();
  const out: Piece[] = [];
  let pos = 0;
  for (let i = 0; i < ids.length; i++) {
    const s = decoder.decode(tokenizer.tokenBytes(ids[i]), { stream: true });
    if (!s) continue;
    out.push({ start: pos, end: pos + s.length, weight: weights[i], tokenStart: true });
    pos += s.length;
  }
  // Only if decoding does not reproduce the text exactly (invalid surrogates) fall back to plain text.
  return pos === text.length ? out : null;
}

function splitBySpans(pieces: Piece[], spans: SpanLabel[] | undefined): Piece[] {
  if (!spans?.length) return pieces;
  const out: Piece[] = [];
  let si = 0;
  for (const p of pieces) {
    let start = p.start;
    let first = true;
    while (start < p.end) {
      while (si < spans.length && spans[si].end <= start) si++;
      const s = spans[si];
      let end = p.end;
      let kind: SpanKind | undefined;
      if (s && s.start <= start) {
        kind = s.kind;
        end = Math.min(end, s.end);
      } else if (s) end = Math.min(end, s.start);
      out.push({ start, end, weight: p.weight, tokenStart: first && p.tokenStart, span: kind });
      first = false;
      start = end;
    }
  }
  return out;
}

export function weightBackground(w: number): string {
  return `color-mix(in srgb, var(--weight-color) ${Math.round(w * 70)}%, transparent)`;
}

export const TokenView = memo(function TokenView({
  text,
  weight,
  spans,
  tokenizer,
  label,
}: {
  text: string;
  weight: number;
  spans?: SpanLabel[];
  tokenizer: Tokenizer;
  label: string;
}) {
  // Which text the user asked to see whole: this view is reused when another trajectory opens,
  // and a long observation there must start cut again.
  const [wholeText, setWholeText] = useState<string | null>(null);
  const all = text.length <= FIRST_CHARS || wholeText === text;
  const shown = all ? text : text.slice(0, FIRST_CHARS);
  const pieces = useMemo(() => {
    const p = tokenPieces(shown, weight, tokenizer);
    return p ? splitBySpans(p, spans) : null;
  }, [shown, weight, spans, tokenizer]);
  const tokens = pieces ? pieces.filter((p) => p.tokenStart).length : 0;
  return (
    <div className="tokens-wrap">
      <pre className="tokens" role="figure" aria-label={label} data-testid="token-view" data-tokens={tokens}>
        {pieces
          ? pieces.map((p, i) => (
              <span
                key={i}
                className={`tok${p.tokenStart ? ' ts' : ''}${p.span ? ' sp-' + p.span : ''}`}
                style={{ background: weightBackground(p.weight) }}
                data-weight={p.weight}
              >
                {shown.slice(p.start, p.end)}
              </span>
            ))
          : shown}
      </pre>
      <p className="muted small">
        {tokens.toLocaleString()} tokens{all ? '' : ` in the first ${FIRST_CHARS.toLocaleString()} characters`}{' '}
        {!all ? (
          <button type="button" className="linklike" onClick={() => setWholeText(text)}>
            Show all {text.length.toLocaleString()} characters
          </button>
        ) : null}
      </p>
    </div>
  );
});

export function TokenLegend({ tokenizerKind }: { tokenizerKind: string }) {
  return (
    <div className="token-legend" data-testid="token-legend">
      <div>
        <span className="muted small">Loss weight per token ({tokenizerKind}):</span>
        <ul className="legend" aria-label="Loss weight colours">
          {[0, 0.05, 0.1, 0.4, 0.6, 0.8, 1].map((w) => (
            <li key={w}>
              <span className="swatch weight" style={{ background: weightBackground(w) }} aria-hidden="true" />
              {w}
            </li>
          ))}
        </ul>
      </div>
      <div>
        <span className="muted small">Span labels:</span>
        <ul className="legend" aria-label="Span label styles">
          {(['deterministic', 'pre_existing', 'runtime_metadata'] as const).map((k) => (
            <li key={k} title={SPAN_MEANING[k]}>
              <span className={`tok sp-${k}`}>{SPAN_LABEL[k]}</span>
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
