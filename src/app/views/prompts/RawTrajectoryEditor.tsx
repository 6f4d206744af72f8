// Raw-trajectory mode: one trajectory of the active dataset as JSON, checked against the data
// core's schema on every edit (problems as editor markers and as a list), saved only when valid.
import { useEffect, useMemo, useState } from 'react';
import { Link, useLocation } from 'wouter';
import type { Trajectory } from '../../../core/schema/types.ts';
import { CodeEditor, type EditorMarker } from '../../components/monaco/CodeEditor.tsx';
import { Options } from '../../components/Options.tsx';
import { useDatasetStore } from '../../stores/datasets.ts';
import { ProblemList } from './ProblemList.tsx';
import { parseTrajectory } from './validation.ts';

/** Where the trajectory the path names stands in the dataset (the first without an id); -1 when none. */
function positionOf(trajectories: Trajectory[], id: string | undefined): number {
  if (!trajectories.length) return -1;
  if (!id) return 0;
  // The router decodes most escapes of the path but not all (%2F stays): try both forms.
  const exact = trajectories.findIndex((t) => t.id === id);
  if (exact >= 0) return exact;
  try {
    const decoded = decodeURIComponent(id);
    return trajectories.findIndex((t) => t.id === decoded);
  } catch {
    return -1;
  }
}

/** The schema's verdict on the text: its problems (nothing is saved while there are any), or that it is valid. */
function Verdict({ problems }: { problems: EditorMarker[] }) {
  if (!problems.length) {
    return (
      <p className="muted small" data-testid="raw-valid">
        Valid against the trajectory schema.
      </p>
    );
  }
  return (
    <div role="alert">
      <p className="error-text">
        {problems.length} problem{problems.length === 1 ? '' : 's'}; the trajectory is saved only when it is valid:
      </p>
      <ProblemList problems={problems} testId="raw-problems" />
    </div>
  );
}

export function RawTrajectoryEditor({ id }: { id?: string }) {
  const trajectories = useDatasetStore((s) => s.trajectories);
  const replace = useDatasetStore((s) => s.replaceTrajectory);
  const [, navigate] = useLocation();
  const position = useMemo(() => positionOf(trajectories, id), [trajectories, id]);
  const t = position >= 0 ? trajectories[position] : undefined;
  const original = useMemo(() => (t ? JSON.stringify(t, null, 2) : ''), [t]);
  const [text, setText] = useState(original);
  const [status, setStatus] = useState<string | null>(null);
  useEffect(() => {
    setText(original);
  }, [original]);
  const otherIds = useMemo(() => new Set(trajectories.filter((_, i) => i !== position).map((x) => x.id)), [trajectories, position]);
  const parsed = useMemo(() => parseTrajectory(text, otherIds), [text, otherIds]);

  if (!trajectories.length) return <p className="muted">Load a dataset on the Data view to edit its trajectories.</p>;
  if (!t)
    return (
      <div className="callout error" role="alert">
        The active dataset has no trajectory with id <code>{id}</code>. <Link href="/raw">Edit the first one</Link>
      </div>
    );

  const save = async () => {
    if (!parsed.trajectory) return;
    try {
      await replace(position, parsed.trajectory);
      setStatus(`Saved ${parsed.trajectory.id}.`);
      if (parsed.trajectory.id !== t.id) navigate(`/raw/${encodeURIComponent(parsed.trajectory.id)}`, { replace: true });
    } catch (e) {
      setStatus(`Saving failed: ${(e as Error).message}`);
    }
  };

  return (
    <article className="card" aria-labelledby="raw-title">
      <h2 id="raw-title">Raw trajectory</h2>
      <div className="toolbar">
        <div className="field" style={{ flex: '1 1 16rem' }}>
          <label htmlFor="raw-select">Trajectory</label>
          <select id="raw-select" value={t.id} onChange={(e) => navigate(`/raw/${encodeURIComponent(e.target.value)}`)}>
            <Options items={trajectories} value={(x) => x.id} label={(x) => `${x.id} (${x.domain}, ${x.turns.length} turns)`} />
          </select>
        </div>
        <button type="button" onClick={() => void save()} disabled={!parsed.trajectory || text === original}>
          Save trajectory
        </button>
        <button type="button" className="secondary" disabled={text === original} onClick={() => setText(original)}>
          Revert
        </button>
        <Link href={`~/trajectories/${encodeURIComponent(t.id)}`}>View in Trajectories →</Link>
      </div>
      <CodeEditor value={text} onChange={setText} language="json" markers={parsed.problems} ariaLabel={`Trajectory ${t.id} as JSON`} testId="raw-editor" />
      <Verdict problems={parsed.problems} />
      {status ? (
        <p role="status" className="small">
          {status}
        </p>
      ) : null}
    </article>
  );
}
