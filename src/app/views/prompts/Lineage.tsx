// One optimization's lineage: the chart of the best dev score per round, the winner with its
// test-split score, the rounds as columns of candidate cards (score as mean ± 95% interval, the
// paired test against the parent with p and effect, the optimizer's note, why it was accepted or
// not), and for the chosen candidate its diff against its parent (Monaco) and "promote".
import { useState } from 'react';
import type { LoopState, Version } from '../../../core/optimize/loop.ts';
import { formatComparison } from '../../../core/optimize/paired.ts';
import type { OptimizationRecord } from '../../../core/records.ts';
import { DiffEditor } from '../../components/monaco/CodeEditor.tsx';
import { useOptimizeStore } from '../../stores/optimize.ts';
import { bestPerRound, fmtP, fmtScore, fmtSigned, meanInterval, pairedEffect, pairedP, roundsOf, ancestry } from './lineage.ts';

const STATUS_PILL: Record<Version['status'], string> = { start: 'off', accepted: 'ok', rejected: 'off', invalid: 'bad' };

function Score({ v, level }: { v: Version; level: number }) {
  const ci = meanInterval(v.analysis?.objectives, level);
  if (!ci) return <span className="muted">{v.status === 'invalid' ? 'not scored' : 'scoring…'}</span>;
  return (
    <span className="num" title={`mean of ${ci.n} dev samples, ${Math.round(level * 100)}% interval`}>
      <strong>{fmtScore(ci.mean)}</strong>
      {ci.half !== null ? <span className="muted"> ± {ci.half.toFixed(1)}</span> : null}
    </span>
  );
}

function Paired({ v }: { v: Version }) {
  const c = v.comparison;
  if (!c || c.meanDiff === null) return null;
  const d = pairedEffect(c);
  return (
    <div className="small num" title={formatComparison(c)}>
      Δ {fmtSigned(c.meanDiff)}
      {c.ci ? ` [${fmtSigned(c.ci[0])}, ${fmtSigned(c.ci[1])}]` : ''} · {fmtP(pairedP(c))}
      {d !== null ? ` · d = ${d.toFixed(2)}` : ''}
    </div>
  );
}

function CandidateCard({
  v,
  level,
  best,
  winnerLine,
  chosen,
  promoted,
  onChoose,
}: {
  v: Version;
  level: number;
  best: boolean;
  winnerLine: boolean;
  chosen: boolean;
  promoted?: string;
  onChoose(): void;
}) {
  return (
    <button
      type="button"
      className={`lineage-card${chosen ? ' chosen' : ''}${winnerLine ? ' winner-line' : ''}`}
      onClick={onChoose}
      aria-pressed={chosen}
      data-testid={`candidate-${v.id}`}
    >
      <div className="lineage-card-head">
        <span className="mono">{v.id}</span>
        <span className={`pill ${STATUS_PILL[v.status]}`}>{v.status}</span>
        {best ? <span className="pill ok">best</span> : null}
        {promoted ? <span className="pill run">{promoted}</span> : null}
      </div>
      <Score v={v} level={level} />
      <Paired v={v} />
      <div className="small lineage-note">{v.note}</div>
      {v.reason && v.status !== 'start' ? <div className="small muted lineage-note">{v.reason.replace(/^(accepted|rejected): /, '')}</div> : null}
    </button>
  );
}

/** Best dev score per round (line), every scored candidate (dots), and the test score of the winner. */
export function BestChart({ state }: { state: LoopState }) {
  const points = bestPerRound(state);
  const scored = state.versions.filter((v) => typeof v.mean === 'number');
  const values = [...scored.map((v) => v.mean as number), ...(typeof state.test?.mean === 'number' ? [state.test.mean] : [])];
  if (!points.length || !values.length) return null;
  const W = 420;
  const H = 180;
  const pad = { l: 36, r: 12, t: 12, b: 28 };
  const lo = Math.max(0, Math.floor((Math.min(...values) - 5) / 10) * 10);
  const hi = Math.min(100, Math.ceil((Math.max(...values) + 5) / 10) * 10);
  const rounds = Math.max(1, state.config.rounds);
  const x = (r: number) => pad.l + (r / rounds) * (W - pad.l - pad.r);
  const y = (m: number) => pad.t + (1 - (m - lo) / Math.max(1, hi - lo)) * (H - pad.t - pad.b);
  const line = points
    .filter((p) => p.mean !== null)
    .map((p) => `${x(p.round)},${y(p.mean!)}`)
    .join(' ');
  const ticks = [lo, (lo + hi) / 2, hi];
  return (
    <svg
      className="lineage-chart"
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-label={`Best dev score per round: ${points.map((p) => `round ${p.round} ${fmtScore(p.mean)}`).join(', ')}`}
      data-testid="best-chart"
    >
      {ticks.map((t) => (
        <g key={t}>
          <line className="lineage-grid" x1={pad.l} x2={W - pad.r} y1={y(t)} y2={y(t)} />
          <text className="lineage-axis" x={pad.l - 6} y={y(t) + 4} textAnchor="end">
            {t.toFixed(0)}
          </text>
        </g>
      ))}
      {Array.from({ length: rounds + 1 }, (_, r) => (
        <text key={r} className="lineage-axis" x={x(r)} y={H - 8} textAnchor="middle">
          {r === 0 ? 'start' : `round ${r}`}
        </text>
      ))}
      {scored.map((v) => (
        <circle key={v.id} className={`lineage-dot ${v.status}`} cx={x(v.round)} cy={y(v.mean as number)} r={3}>
          <title>{`${v.id}: ${fmtScore(v.mean)}`}</title>
        </circle>
      ))}
      <polyline className="lineage-line" points={line} />
      {points.map((p) => (p.mean === null ? null : <circle key={p.round} className="lineage-best" cx={x(p.round)} cy={y(p.mean)} r={4.5} />))}
      {typeof state.test?.mean === 'number' ? (
        <g>
          <line className="lineage-test" x1={pad.l} x2={W - pad.r} y1={y(state.test.mean)} y2={y(state.test.mean)} />
          <text className="lineage-axis" x={W - pad.r} y={y(state.test.mean) - 4} textAnchor="end">
            test {fmtScore(state.test.mean)}
          </text>
        </g>
      ) : null}
    </svg>
  );
}

function Winner({ o, state }: { o: OptimizationRecord; state: LoopState }) {
  const best = state.versions.find((v) => v.id === state.best);
  if (!best) return null;
  const start = state.versions[0];
  const gain = typeof best.mean === 'number' && typeof start?.mean === 'number' ? best.mean - start.mean : null;
  return (
    <dl className="kv lineage-winner" data-testid="winner">
      <dt>Winner</dt>
      <dd>
        <span className="mono">{best.id}</span>
        {best.id === start?.id ? (
          <span className="muted"> (no candidate beat the start)</span>
        ) : (
          <span className="muted"> via {ancestry(state, best.id).join(' → ')}</span>
        )}
      </dd>
      <dt>Dev score</dt>
      <dd>
        {fmtScore(best.mean)}
        {gain !== null && best.id !== start?.id ? (
          <span className="muted">
            {' '}
            ({fmtSigned(gain)} over {o.start.version})
          </span>
        ) : null}
      </dd>
      <dt>Test score</dt>
      <dd data-testid="test-score">
        {state.test
          ? `${fmtScore(state.test.mean)} on ${state.config.testSize} held-out samples (${state.test.version})`
          : state.config.testSize
            ? 'after the last round'
            : 'no test split'}
      </dd>
      <dt>Calls</dt>
      <dd>
        {state.calls.model} model, {state.calls.judge} judge
      </dd>
    </dl>
  );
}

function Details({ o, v, state }: { o: OptimizationRecord; v: Version; state: LoopState }) {
  const promote = useOptimizeStore((s) => s.promote);
  const [addToSft, setAddToSft] = useState(false);
  const [busy, setBusy] = useState(false);
  const parent = v.parent ? state.versions.find((x) => x.id === v.parent) : undefined;
  const promoted = o.promoted && Object.hasOwn(o.promoted, v.id) ? o.promoted[v.id] : undefined;
  const usable = v.status !== 'invalid' && !!v.text;
  return (
    <section className="lineage-details" aria-labelledby="cand-title" data-testid="candidate-details">
      <h3 id="cand-title">
        <span className="mono">{v.id}</span>{' '}
        {parent ? <span className="muted">against its parent {parent.id}</span> : <span className="muted">the starting template ({o.start.version})</span>}
      </h3>
      <p className="small">{v.note}</p>
      {v.reason ? <p className="small muted">{v.reason}</p> : null}
      {parent && v.text ? (
        <DiffEditor original={parent.text} modified={v.text} ariaLabel={`Differences between ${parent.id} and ${v.id}`} testId="candidate-diff" revealChange />
      ) : null}
      <div className="toolbar">
        {promoted ? (
          <span className="small" data-testid="promoted-as">
            Saved as template version <span className="mono">{promoted}</span>.
          </span>
        ) : (
          <>
            <label className="check">
              <input type="checkbox" checked={addToSft} onChange={(e) => setAddToSft(e.target.checked)} /> add to the SFT template mix
            </label>
            <button
              type="button"
              disabled={!usable || busy}
              onClick={() => (setBusy(true), void promote(o.id, v.id, { addToSft }).finally(() => setBusy(false)))}
            >
              Promote {v.id} to a template version
            </button>
          </>
        )}
      </div>
    </section>
  );
}

export function Lineage({ o }: { o: OptimizationRecord }) {
  const state = o.loop;
  const [chosen, setChosen] = useState<string | null>(null);
  if (!state?.versions.length) return <p className="muted">The starting template is being scored on the dev samples…</p>;
  const level = state.config.level;
  const line = new Set(ancestry(state, state.best));
  const current = state.versions.find((v) => v.id === (chosen ?? state.best)) ?? state.versions[0];
  return (
    <div className="lineage" data-testid="lineage">
      <div className="lineage-top">
        <BestChart state={state} />
        <Winner o={o} state={state} />
      </div>
      <div className="lineage-rounds" role="list" aria-label="Candidates by round">
        {roundsOf(state).map((col) => (
          <div className="lineage-round" role="listitem" key={col.round} data-testid={`round-${col.round}`}>
            <h4>{col.round === 0 ? 'Start' : `Round ${col.round}`}</h4>
            {col.versions.map((v) => (
              <CandidateCard
                key={v.id}
                v={v}
                level={level}
                best={v.id === state.best}
                winnerLine={line.has(v.id)}
                chosen={v.id === current.id}
                promoted={o.promoted?.[v.id]}
                onChoose={() => setChosen(v.id)}
              />
            ))}
          </div>
        ))}
      </div>
      <Details o={o} v={current} state={state} />
    </div>
  );
}
