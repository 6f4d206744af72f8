// Trajectories: a searchable, filterable, virtualised list of the active dataset; one trajectory
// as a timeline with each observation's mask category, metrics and token loss weights; and the
// mask settings beside it, with categories and statistics following every change.
import { useDeferredValue, useEffect, useMemo, useRef } from 'react';
import { Link, useRoute } from 'wouter';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { Trajectory } from '../../core/schema/types.ts';
import { SYSTEM_PROMPT_FIELDS } from '../../core/schema/types.ts';
import type { MaskCategory, TrajectoryMask } from '../../core/masking/index.ts';
import type { Tokenizer } from '../../core/tokenizer/index.ts';
import { CategoryBadge, CategoryBar } from '../components/CategoryBar.tsx';
import { DatasetError, LoadProgress, useDatasets } from '../components/DatasetGate.tsx';
import { CATEGORY_LABEL, CATEGORY_MEANING, MASK_CATEGORIES, pct } from '../components/categories.ts';
import { useMaskResult, type MaskResult } from '../stores/mask.ts';
import { useTokenizerStore } from '../stores/tokenizer.ts';
import { parseBound, useTrajectoryFilters } from '../stores/trajectoryFilters.ts';
import { MaskPanel } from './trajectories/MaskPanel.tsx';
import { TokenLegend, TokenView } from './trajectories/TokenView.tsx';

const ROW_HEIGHT = 58;

function shareOf(mask: TrajectoryMask): Record<MaskCategory, number> {
  const s = Object.fromEntries(MASK_CATEGORIES.map((c) => [c, 0])) as Record<MaskCategory, number>;
  for (const t of mask.turns) s[t.category] += 1 / mask.turns.length;
  return s;
}

/** Route ids are URL-encoded by the list; accept a raw id too (hand-typed URLs). */
function resolveId(param: string | undefined, byId: Map<string, number> | undefined): number | undefined {
  if (!param || !byId) return undefined;
  if (byId.has(param)) return byId.get(param);
  try {
    return byId.get(decodeURIComponent(param));
  } catch {
    return undefined;
  }
}

function Filters({ domains, shown, total }: { domains: string[]; shown: number; total: number }) {
  const f = useTrajectoryFilters();
  const min = parseBound(f.minTurns, 'Min. turns');
  const max = parseBound(f.maxTurns, 'Max. turns');
  const rangeError = min.value !== null && max.value !== null && min.value > max.value ? 'Min. turns is larger than Max. turns' : null;
  const errors = [min.error, max.error, rangeError].filter(Boolean);
  return (
    <form className="filters" role="search" aria-label="Search and filter trajectories" onSubmit={(e) => e.preventDefault()}>
      <div className="field">
        <label htmlFor="traj-search">Search</label>
        <input
          id="traj-search"
          type="search"
          placeholder="text in actions, observations or id"
          value={f.query}
          onChange={(e) => f.set({ query: e.target.value })}
        />
      </div>
      <div className="filter-row">
        <div className="field">
          <label htmlFor="traj-domain">Domain</label>
          <select id="traj-domain" value={f.domain} onChange={(e) => f.set({ domain: e.target.value })}>
            <option value="">All domains</option>
            {domains.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="traj-category">Mask category</label>
          <select id="traj-category" value={f.category} onChange={(e) => f.set({ category: e.target.value as MaskCategory | '' })}>
            <option value="">Any</option>
            {MASK_CATEGORIES.map((c) => (
              <option key={c} value={c} title={`trajectories with at least one ${CATEGORY_LABEL[c]} turn`}>
                {CATEGORY_LABEL[c]}
              </option>
            ))}
          </select>
        </div>
      </div>
      <div className="filter-row">
        <div className="field">
          <label htmlFor="traj-min">Min. turns</label>
          <input
            id="traj-min"
            type="number"
            min={0}
            step={1}
            value={f.minTurns}
            onChange={(e) => f.set({ minTurns: e.target.value })}
            aria-invalid={min.error || rangeError ? true : undefined}
          />
        </div>
        <div className="field">
          <label htmlFor="traj-max">Max. turns</label>
          <input
            id="traj-max"
            type="number"
            min={0}
            step={1}
            value={f.maxTurns}
            onChange={(e) => f.set({ maxTurns: e.target.value })}
            aria-invalid={max.error || rangeError ? true : undefined}
          />
        </div>
        <button type="button" className="secondary small" onClick={f.clear}>
          Clear
        </button>
      </div>
      {errors.length ? (
        <p className="error-text small" role="alert">
          {errors.join('; ')}
        </p>
      ) : null}
      <p className="muted small" aria-live="polite" data-testid="list-count">
        {shown.toLocaleString()} of {total.toLocaleString()} trajectories
      </p>
    </form>
  );
}

function useFiltered(trajectories: Trajectory[], result: MaskResult | null): number[] {
  const f = useTrajectoryFilters();
  const query = useDeferredValue(f.query.trim().toLowerCase());
  const min = parseBound(f.minTurns, '').value;
  const max = parseBound(f.maxTurns, '').value;
  const masks = result?.masks;
  return useMemo(() => {
    const out: number[] = [];
    for (let i = 0; i < trajectories.length; i++) {
      const t = trajectories[i];
      if (f.domain && t.domain !== f.domain) continue;
      if (min !== null && t.turns.length < min) continue;
      if (max !== null && t.turns.length > max) continue;
      if (f.category && masks && !masks[i].turns.some((m) => m.category === f.category)) continue;
      if (
        query &&
        !t.id.toLowerCase().includes(query) &&
        !t.turns.some((x) => x.action.toLowerCase().includes(query) || x.observation.toLowerCase().includes(query))
      )
        continue;
      out.push(i);
    }
    return out;
  }, [trajectories, masks, f.domain, f.category, min, max, query]);
}

function TrajectoryList({
  trajectories,
  indices,
  result,
  openIndex,
}: {
  trajectories: Trajectory[];
  indices: number[];
  result: MaskResult | null;
  openIndex?: number;
}) {
  const parent = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count: indices.length, getScrollElement: () => parent.current, estimateSize: () => ROW_HEIGHT, overscan: 8 });
  return (
    <div ref={parent} className="vlist" data-testid="trajectory-list" tabIndex={-1}>
      <ul style={{ height: virtualizer.getTotalSize() }} aria-label="Trajectories">
        {virtualizer.getVirtualItems().map((row) => {
          const i = indices[row.index];
          const t = trajectories[i];
          const m = result?.masks[i];
          return (
            <li key={t.id} style={{ transform: `translateY(${row.start}px)`, height: ROW_HEIGHT }} aria-setsize={indices.length} aria-posinset={row.index + 1}>
              <Link
                href={`/${encodeURIComponent(t.id)}`}
                className={i === openIndex ? 'vrow active' : 'vrow'}
                aria-current={i === openIndex ? 'page' : undefined}
                data-testid="trajectory-row"
              >
                <span className="vrow-id mono">{t.id}</span>
                <span className="vrow-meta">
                  <span className="pill off">{t.domain}</span> {t.turns.length} turns
                </span>
                {m ? <CategoryBar shares={shareOf(m)} width="100%" height={6} label="categories" /> : null}
              </Link>
            </li>
          );
        })}
      </ul>
      {!indices.length ? <p className="muted empty">No trajectory matches.</p> : null}
    </div>
  );
}

function SystemPromptView({ t }: { t: Trajectory }) {
  return (
    <section aria-labelledby="sp-title" className="system-prompt">
      <h3 id="sp-title">System prompt</h3>
      {t.system_prompt.text !== undefined ? (
        <details open>
          <summary>text (not split into fields)</summary>
          <pre className="field-text">{t.system_prompt.text}</pre>
        </details>
      ) : null}
      {SYSTEM_PROMPT_FIELDS.map((k, i) => (
        <details key={k} open={i === 0} data-testid={`sp-${k}`}>
          <summary>
            <code>{k}</code>{' '}
            {t.system_prompt[k] ? (
              <span className="muted small">{t.system_prompt[k].length.toLocaleString()} chars</span>
            ) : (
              <span className="muted small">empty</span>
            )}
          </summary>
          <pre className="field-text">{t.system_prompt[k]}</pre>
        </details>
      ))}
    </section>
  );
}

function TrajectoryDetail({
  t,
  mask,
  tokenizer,
  tokenizerKind,
}: {
  t: Trajectory;
  mask: TrajectoryMask | undefined;
  tokenizer: Tokenizer;
  tokenizerKind: string;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  // Move focus to the opened trajectory so keyboard and screen-reader users land on it.
  useEffect(() => heading.current?.focus(), [t.id]);
  return (
    <article className="detail card" aria-labelledby="detail-title" data-testid="trajectory-detail">
      <Link href="/" className="back-link">
        ← All trajectories
      </Link>
      <h2 id="detail-title" ref={heading} tabIndex={-1} className="mono">
        {t.id}
      </h2>
      <p className="muted">
        <span className="pill off">{t.domain}</span> {t.turns.length} turns
        {t.source ? ` · from ${t.source.format}${t.source.file ? ` (${t.source.file}${t.source.line ? ':' + t.source.line : ''})` : ''}` : ''} ·{' '}
        <Link href={`~/prompts/raw/${encodeURIComponent(t.id)}`}>Edit as JSON</Link>
      </p>
      <SystemPromptView t={t} />
      <TokenLegend tokenizerKind={tokenizerKind} />
      <ol className="timeline">
        {t.turns.map((turn, i) => {
          const m = mask?.turns[i];
          return (
            <li key={i} className="turn" data-testid="turn" data-category={m?.category}>
              <div className="turn-head">
                <h3>Turn {i + 1}</h3>
                {m ? (
                  <>
                    <CategoryBadge category={m.category} />
                    <span className="metrics mono" data-testid="turn-metrics" title={CATEGORY_MEANING[m.category]}>
                      OL {m.metrics.ol.toFixed(2)} · Nov {m.metrics.nov.toFixed(2)} · Jac {m.metrics.jac.toFixed(2)} · R {m.metrics.r.toFixed(1)}
                    </span>
                    <span className="loss" data-testid="turn-loss">
                      loss {pct(m.weight, 0)}
                      {m.overridden ? ' (fixed by source)' : ''}
                    </span>
                  </>
                ) : null}
              </div>
              <div className="turn-label">Action</div>
              <pre className="action">{turn.action}</pre>
              <div className="turn-label">Observation{turn.metadata?.timestamp ? <span className="muted small"> · {turn.metadata.timestamp}</span> : null}</div>
              <TokenView
                text={turn.observation}
                weight={m?.weight ?? 1}
                spans={turn.metadata?.spans}
                tokenizer={tokenizer}
                label={`Turn ${i + 1} observation tokens`}
              />
            </li>
          );
        })}
      </ol>
    </article>
  );
}

export default function TrajectoriesView() {
  const { trajectories, loadedId, status } = useDatasets();
  const result = useMaskResult(trajectories);
  const indices = useFiltered(trajectories, result);
  const [, params] = useRoute<{ id: string }>('/:id');
  const byId = result?.byId;
  const openIndex = resolveId(params?.id, byId);
  const open = openIndex !== undefined ? trajectories[openIndex] : undefined;
  const { tokenizer, kind, ensure, error: tokenizerError } = useTokenizerStore();
  useEffect(() => {
    if (loadedId && trajectories.length) ensure(loadedId, trajectories);
  }, [loadedId, trajectories, ensure]);
  const domains = useMemo(() => [...new Set(trajectories.map((t) => t.domain))].sort(), [trajectories]);
  const tokenizerKind =
    kind === 'bpe'
      ? `BPE, ${tokenizer.vocabSize.toLocaleString()} tokens, trained on this dataset${tokenizerError ? ` (${tokenizerError})` : ''}`
      : kind === 'training'
        ? 'bytes while the BPE trains'
        : tokenizerError
          ? `bytes (${tokenizerError})`
          : 'bytes';

  return (
    <section className={open ? 'view trajectories has-open' : 'view trajectories'} aria-labelledby="traj-title">
      <h1 id="traj-title">Trajectories</h1>
      <DatasetError />
      {status === 'loading' ? <LoadProgress /> : null}
      <div className="traj-layout">
        <div className="traj-list">
          <Filters domains={domains} shown={indices.length} total={trajectories.length} />
          <TrajectoryList trajectories={trajectories} indices={indices} result={result} openIndex={openIndex} />
        </div>
        <div className="traj-main">
          {open ? (
            <TrajectoryDetail t={open} mask={result?.masks[openIndex!]} tokenizer={tokenizer} tokenizerKind={tokenizerKind} />
          ) : params?.id && result ? (
            <div className="callout error" role="alert">
              <h2>No such trajectory</h2>
              <p>
                The active dataset has no trajectory with id <code>{params.id}</code>. <Link href="/">Back to the list</Link>
              </p>
            </div>
          ) : (
            <div className="card placeholder">
              <p className="muted">Choose a trajectory from the list to see its turns, mask categories and token weights.</p>
            </div>
          )}
        </div>
        <MaskPanel stats={result?.stats ?? null} />
      </div>
    </section>
  );
}
