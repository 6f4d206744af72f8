// The Prompts view's optimization page: optimizations cut off by a reload (offered for resuming),
// the live one's progress and cancel, the stored optimizations, the form that starts one from a
// template version, and the chosen one's lineage (Lineage.tsx); a stopped or failed one is
// continued from its stored state (a folder backend's folder picked again first, when the job says so).
import { useEffect } from 'react';
import { formatDuration } from '../../stores/benchModel.ts';
import { optimizationFolder, useOptimizeStore } from '../../stores/optimize.ts';
import { useHfFolderStore } from '../../stores/hfFolders.ts';
import { useOnnxFolderStore } from '../../stores/onnxFolders.ts';
import type { OptimizationRecord } from '../../../core/records.ts';
import type { HfFolderFile } from '../../../train/hfFolder.ts';
import { useTemplateStore } from '../../stores/templates.ts';
import { Lineage } from './Lineage.tsx';
import { OptimizeForm } from './OptimizeForm.tsx';
import { guardJob, OPTIMIZE_WRITE } from '../../stores/storage.ts';
import { ErrorCallout } from '../../components/ErrorCallout.tsx';

/** For a folder simulator whose folder is not open in this page (a reload since): what to pick before resuming. */
function FolderNeeded({ o }: { o: OptimizationRecord }) {
  const hf = useHfFolderStore((s) => s.folders);
  const onnx = useOnnxFolderStore((s) => s.folders);
  const f = o.backend.kind === 'hf' ? o.backend.hf : o.backend.kind === 'onnx' ? o.backend.onnx : undefined;
  const find = (list: { id: string; files: HfFolderFile[] }[]) => (id: string) => list.find((x) => x.id === id)?.files;
  if (!f || optimizationFolder(o, find(hf), find(onnx))) return null;
  return (
    <p className="small" data-testid="optimize-folder-needed">
      Its simulated model is the folder {f.name}, not open in this page (folders are not kept after a reload): pick the same folder again in the Optimize form
      (Simulated model: {o.backend.kind === 'hf' ? 'a Hugging Face folder' : 'an ONNX folder'}) before resuming.
    </p>
  );
}

function Interrupted() {
  const { interrupted, resume, dismissInterrupted, live } = useOptimizeStore();
  return (
    <>
      {interrupted.map((o) => (
        <div key={o.id} className="callout" role="status" data-testid="optimize-interrupted">
          <p>
            <strong>{o.name}</strong> was running when the page closed
            {o.loop
              ? ` (after ${o.loop.round} finished round(s), ${o.loop.versions.filter((v) => v.mean !== undefined).length} scored template(s), which are kept)`
              : ''}
            .
          </p>
          <FolderNeeded o={o} />
          <div className="toolbar">
            <button type="button" onClick={() => guardJob(OPTIMIZE_WRITE, () => void resume(o.id))} disabled={!!live}>
              Resume
            </button>
            <button type="button" className="secondary" onClick={() => void dismissInterrupted(o.id)}>
              Leave it stopped
            </button>
          </div>
        </div>
      ))}
    </>
  );
}

function Progress() {
  const { live, stop } = useOptimizeStore();
  if (!live) return null;
  const p = live.progress;
  const ev = p?.evaluations;
  const what = !p
    ? live.state === 'queued'
      ? 'waiting for the worker (one job at a time)'
      : 'starting'
    : p.phase === 'samples'
      ? 'choosing the dev and test samples'
      : p.split
        ? `scoring on the ${p.split} split: ${p.samples?.done ?? 0} / ${p.samples?.total ?? 0} samples`
        : 'proposing candidates';
  return (
    <div className="card" data-testid="optimize-progress" role="status" aria-live="polite">
      <div className="run-progress">
        <progress max={ev?.planned || 1} value={ev?.done ?? 0} aria-label="Optimization progress" />
        <span className="small" data-testid="optimize-progress-text">
          {ev?.planned ? `${ev.done} / ${ev.planned} evaluations` : '…'}
          {p && ev && ev.done < ev.planned ? (p.etaMs === null ? ' · estimating time left' : ` · about ${formatDuration(p.etaMs)} left`) : ''}
        </span>
      </div>
      <p className="small muted">
        {live.state}: {what}
      </p>
      <button type="button" className="danger" onClick={stop} disabled={live.state === 'stopping'}>
        Cancel
      </button>
    </div>
  );
}

function OptimizationList() {
  const { list, selectedId, select, remove, live } = useOptimizeStore();
  if (!list.length) return null;
  return (
    <section className="card" aria-labelledby="opt-list-title" data-testid="optimize-list">
      <h2 id="opt-list-title">Optimizations</h2>
      <ul className="plain opt-list">
        {list.map((o) => (
          <li key={o.id} className="opt-row">
            <button type="button" className={selectedId === o.id ? '' : 'secondary'} aria-pressed={selectedId === o.id} onClick={() => select(o.id)}>
              {o.name}
            </button>
            <span className="small muted">
              {o.state} · {o.backend.name} · {o.optimizer.kind} optimizer{o.loop ? ` · best ${o.loop.best}` : ''}
            </span>
            <button type="button" className="secondary small" onClick={() => void remove(o.id)} disabled={live?.optId === o.id} aria-label={`Delete ${o.name}`}>
              Delete
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Chosen() {
  const { list, selectedId, live, resume } = useOptimizeStore();
  const o = list.find((x) => x.id === selectedId);
  if (!o) return null;
  return (
    <article className="card wide" aria-labelledby="lineage-title">
      <h2 id="lineage-title">
        Lineage of {o.name} <span className="pill off">{o.state}</span>
      </h2>
      <p className="small muted">
        From {o.start.version} on {o.data.name} ({o.data.domains.join(', ')}) · {o.backend.name} · {o.judge.kind === 'local' ? 'local judge' : o.judge.id} ·{' '}
        {o.optimizer.kind === 'offline' ? 'offline optimizer' : `optimizer ${o.optimizer.endpoint.model}`}
        {o.loop?.stopNote ? ` · ${o.loop.stopNote}` : ''}
      </p>
      {o.error ? (
        <p className="error-text small" role="alert">
          {o.error}
        </p>
      ) : null}
      {(o.state === 'failed' || o.state === 'stopped') && live?.optId !== o.id ? <FolderNeeded o={o} /> : null}
      {(o.state === 'failed' || o.state === 'stopped') && live?.optId !== o.id ? (
        <div className="toolbar">
          <button type="button" onClick={() => guardJob(OPTIMIZE_WRITE, () => void resume(o.id))} disabled={!!live}>
            {o.state === 'failed' ? 'Try again (keeps what was scored)' : 'Continue'}
          </button>
        </div>
      ) : null}
      <Lineage o={o} />
    </article>
  );
}

export function OptimizeView({ from }: { from?: string }) {
  const { init, error, dismissError } = useOptimizeStore();
  const templatesStatus = useTemplateStore((s) => s.status);
  const loadTemplates = useTemplateStore((s) => s.load);
  useEffect(() => {
    void init();
    if (templatesStatus === 'idle') void loadTemplates();
  }, [init, templatesStatus, loadTemplates]);
  return (
    <div className="optimize">
      <ErrorCallout error={error} onDismiss={dismissError} />
      <Interrupted />
      <Progress />
      <div className="optimize-layout">
        <div>
          <OptimizeForm key={from ?? ''} from={from} />
          <OptimizationList />
        </div>
        <Chosen />
      </div>
    </div>
  );
}
