// One turn of a Playground session: the action (editable: a branch), the model's observation
// beside the real environment's, the verifier's regions highlighted in both, the judge's five
// scores and the reward.
import { useState } from 'react';
import { DIMENSIONS } from '../../../core/judge/types.ts';
import type { Highlight, PlayTurn } from '../../../envs/session.ts';
import type { LiveGeneration } from '../../stores/playground.ts';

/** `text` with the verifier's regions marked: matched, mismatched, not checked. */
export function Highlighted({ text, marks, label }: { text: string; marks: Highlight[]; label: string }) {
  const sorted = [...marks].sort((a, b) => a.start - b.start);
  const parts: React.ReactNode[] = [];
  let pos = 0;
  sorted.forEach((m, i) => {
    if (m.start < pos) return;
    if (m.start > pos) parts.push(text.slice(pos, m.start));
    parts.push(
      <mark
        key={i}
        className={`pg-mark ${m.status}`}
        title={`${m.label}: ${m.status === 'match' ? 'reproduced exactly' : m.status === 'mismatch' ? 'not reproduced (the verifier fails here)' : 'not checked (after the first failure)'}`}
      >
        {text.slice(m.start, m.end)}
      </mark>,
    );
    pos = m.end;
  });
  if (pos < text.length) parts.push(text.slice(pos));
  return (
    <pre className="pg-obs" role="figure" aria-label={label}>
      {parts.length ? parts : <span className="muted">(empty)</span>}
    </pre>
  );
}

const BASELINES = new Set(['copy-last', 'reference']);

function rate(tokens: number, ms: number): string {
  return ms > 0 ? `${((tokens * 1000) / ms).toFixed(1)}` : '–';
}

type TurnCardProps = {
  turn: PlayTurn;
  index: number;
  live: LiveGeneration | null;
  busy: boolean;
  onEdit: (action: string, keepLater: boolean) => void;
  onRetry: () => void;
  onStop: () => void;
};

/** Which backend made the prediction, in which mode, and how fast. */
function TurnMeta({ p }: { p: NonNullable<PlayTurn['prediction']> }) {
  return (
    <span className="small muted" data-testid="turn-meta">
      {p.backend} · {p.mode === 'teacher' ? 'teacher forcing' : 'free running'}
      {p.error
        ? ' · failed'
        : BASELINES.has(p.backend)
          ? ' · a baseline (no generation)'
          : p.backend.startsWith('endpoint:')
            ? ` · ${p.tokens} streamed ${p.tokens === 1 ? 'piece' : 'pieces'} · ${rate(p.tokens, p.ms)} pieces/s (about one token each)`
            : ` · ${p.tokens} ${p.tokens === 1 ? 'token' : 'tokens'} · ${rate(p.tokens, p.ms)} tokens/s`}
      {p.stopped ? ' · stopped' : ''}
    </span>
  );
}

/** The turn's action, and the form that edits it (a branch). */
function ActionRow({ turn, index, busy, onEdit }: Pick<TurnCardProps, 'turn' | 'index' | 'busy' | 'onEdit'>) {
  const [editing, setEditing] = useState<string | null>(null);
  const [keepLater, setKeepLater] = useState(true);
  return editing === null ? (
    <div className="pg-action">
      <code data-testid="turn-action">{turn.action}</code>
      <button
        type="button"
        className="secondary small"
        disabled={busy}
        onClick={() => setEditing(turn.action)}
        aria-label={`Edit the action of turn ${index + 1}`}
      >
        Edit
      </button>
    </div>
  ) : (
    <form
      className="pg-edit"
      onSubmit={(e) => {
        e.preventDefault();
        if (editing.trim()) onEdit(editing, keepLater);
        setEditing(null);
      }}
    >
      <label className="sr-only" htmlFor={`pg-edit-${index}`}>
        New action for turn {index + 1}
      </label>
      {/* biome-ignore lint/a11y/noAutofocus: the field appears because the user asked to edit this action */}
      <input id={`pg-edit-${index}`} type="text" value={editing} onChange={(e) => setEditing(e.target.value)} autoFocus />
      <label className="check">
        <input type="checkbox" checked={keepLater} onChange={(e) => setKeepLater(e.target.checked)} />
        <span>replay the later actions too</span>
      </label>
      <button type="submit">Re-run from here</button>
      <button type="button" className="secondary" onClick={() => setEditing(null)}>
        Cancel
      </button>
    </form>
  );
}

/** The model's side: the stream in flight, the prediction with its marks, or a button to run the turn. */
function ModelSide({ turn, index, live, busy, onRetry, onStop }: Omit<TurnCardProps, 'onEdit'>) {
  const p = turn.prediction;
  const g = turn.grade;
  const streaming = live?.turn === index;
  return (
    <section aria-label="Model">
      <h4>
        Model{' '}
        {streaming ? (
          <span className="small" data-testid="live-rate">
            streaming · {live.tokens} tokens · {rate(live.tokens, live.ms)} {live.exact ? 'tokens/s' : 'pieces/s'}
          </span>
        ) : null}
      </h4>
      {streaming ? (
        <>
          <pre className="pg-obs streaming" role="log" aria-label="Streaming observation" data-testid="live-text">
            {live.text || '…'}
          </pre>
          <button type="button" className="danger small" onClick={onStop}>
            Stop
          </button>
        </>
      ) : p ? (
        <>
          <Highlighted text={p.observation} marks={g?.highlights.prediction ?? []} label="Predicted observation" />
          {p.error ? (
            <p className="error-text" role="alert">
              {p.error}{' '}
              <button type="button" className="secondary small" disabled={busy} onClick={onRetry}>
                Run turn {index + 1} again
              </button>
            </p>
          ) : null}
        </>
      ) : (
        <p className="muted small">
          {busy ? (
            'waiting…'
          ) : (
            <>
              not predicted yet{' '}
              <button type="button" className="secondary small" onClick={onRetry}>
                Run turn {index + 1}
              </button>
            </>
          )}
        </p>
      )}
    </section>
  );
}

/** The judge's five scores, the verifier's verdict and the reward. */
function TurnGrade({ g }: { g: NonNullable<PlayTurn['grade']> }) {
  return (
    <div className="pg-grade" data-testid="turn-grade">
      <table className="table compact pg-scores" aria-label="Judge scores">
        <thead>
          <tr>
            {DIMENSIONS.map((d) => (
              <th key={d} scope="col">
                {d}
              </th>
            ))}
            <th scope="col">mean</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            {DIMENSIONS.map((d) => (
              <td key={d} className={`num pg-score s${g.verdict.scores[d]}`}>
                {g.verdict.scores[d]}
              </td>
            ))}
            <td className="num">{g.verdict.total.toFixed(2)}</td>
          </tr>
        </tbody>
      </table>
      <p data-testid="turn-verifier">
        Verifier:{' '}
        {!g.verifier.applicable ? (
          <span className="pill off">nothing deterministic to check</span>
        ) : g.verifier.pass ? (
          <span className="pill ok">pass</span>
        ) : (
          <span className="pill bad">fail</span>
        )}{' '}
        <span className="small muted">
          rule {g.verifier.rule}, {g.verifier.regions.length} {g.verifier.regions.length === 1 ? 'region' : 'regions'}
          {g.verifier.failure ? ` — ${g.verifier.failure.region.label}: ${g.verifier.failure.reason}` : ''}
        </span>
      </p>
      <p data-testid="turn-reward">
        Reward <strong>{g.reward.reward.toFixed(2)}</strong> / 25{' '}
        <span className="small muted">
          = 0.9 × judge {g.reward.judge.toFixed(1)} + 0.1 × verifier {g.reward.verifier}
        </span>
      </p>
      {g.verdict.strengths.length || g.verdict.weaknesses.length ? (
        <details className="small">
          <summary>Why these scores</summary>
          {g.verdict.strengths.length ? <p>Strengths: {g.verdict.strengths.join('; ')}</p> : null}
          {g.verdict.weaknesses.length ? <p>Weaknesses: {g.verdict.weaknesses.join('; ')}</p> : null}
        </details>
      ) : null}
    </div>
  );
}

export function TurnCard({ turn, index, live, busy, onEdit, onRetry, onStop }: TurnCardProps) {
  const p = turn.prediction;
  const g = turn.grade;
  const streaming = live?.turn === index;
  return (
    <article className="card pg-turn" aria-label={`Turn ${index + 1}`} data-testid={`turn-${index + 1}`}>
      <div className="card-head">
        <h3>Turn {index + 1}</h3>
        {p ? <TurnMeta p={p} /> : null}
      </div>
      <ActionRow turn={turn} index={index} busy={busy} onEdit={onEdit} />
      <div className="pg-pair">
        <ModelSide turn={turn} index={index} live={live} busy={busy} onRetry={onRetry} onStop={onStop} />
        <section aria-label="Real environment">
          <h4>Real environment{turn.real && !turn.real.ok ? <span className="pill off">error</span> : null}</h4>
          {turn.real ? (
            <Highlighted text={turn.real.observation} marks={g?.highlights.reference ?? []} label="Real observation" />
          ) : (
            <p className="muted small">A free world has no real environment.</p>
          )}
        </section>
      </div>
      {g ? <TurnGrade g={g} /> : null}
      {p && p.raw !== p.observation && !streaming ? (
        <details className="small">
          <summary>Raw output</summary>
          <pre className="pg-obs">{p.raw}</pre>
        </details>
      ) : null}
    </article>
  );
}
