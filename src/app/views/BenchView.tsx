// Bench: in-browser judge scoring. Choose a dataset's held-out turns, backends (checkpoints,
// endpoints, the two baselines) and a judge; the worker runs infer → judge → score, with
// progress, an ETA, cancel, and resume after a reload (every prediction and judgement is stored
// as it finishes). Results as the AgentWorldBench table beside the baselines, a chart, every
// sample with its diff and verdict, judge agreement, import of a judged file and export.
import { useEffect, useRef, useState } from 'react';
import { DatasetError, LoadProgress, useDatasets } from '../components/DatasetGate.tsx';
import { missingKeys, useBenchStore } from '../stores/bench.ts';
import { useEndpointStore, type TypedKey } from '../stores/endpoints.ts';
import { formatDuration } from '../stores/benchModel.ts';
import type { BenchRecord } from '../../core/records.ts';
import { BackendProblems } from './bench/BackendProblems.tsx';
import { Agreement, BenchResults } from './bench/BenchResults.tsx';
import { NewBenchForm } from './bench/NewBenchForm.tsx';
import { SampleBrowser } from './bench/SampleBrowser.tsx';
import { BENCH_WRITE, guardJob } from '../stores/storage.ts';
import { ErrorCallout } from '../components/ErrorCallout.tsx';

/**
 * Keys for a bench's endpoints that are not at hand (kept in memory by a page since closed, or
 * never given here), asked on resume; they go to the endpoint store, remembered when ticked.
 */
function KeyFields({ bench, keys, setKeys }: { bench: BenchRecord; keys: Record<string, TypedKey>; setKeys: (k: Record<string, TypedKey>) => void }) {
  const endpoints = useEndpointStore((s) => s.endpoints);
  const refs = missingKeys(bench, endpoints);
  if (!refs.length) return null;
  return (
    <>
      {refs.map((r) => {
        const k = keys[r.id] ?? { key: '', remember: false };
        return (
          <div key={r.id} className="field">
            <label htmlFor={`key-${bench.id}-${r.id}`}>API key for {r.label}</label>
            <input
              id={`key-${bench.id}-${r.id}`}
              type="password"
              autoComplete="off"
              placeholder="blank if it needs none"
              value={k.key}
              onChange={(e) => setKeys({ ...keys, [r.id]: { ...k, key: e.target.value } })}
            />
            <label className="check small">
              <input type="checkbox" checked={k.remember} onChange={(e) => setKeys({ ...keys, [r.id]: { ...k, remember: e.target.checked } })} />
              <span>Remember the key on this device</span>
            </label>
          </div>
        );
      })}
    </>
  );
}

function ResumeButton({ bench, label }: { bench: BenchRecord; label: string }) {
  const { resume, live } = useBenchStore();
  const [keys, setKeys] = useState<Record<string, TypedKey>>({});
  return (
    <>
      <KeyFields bench={bench} keys={keys} setKeys={setKeys} />
      <button
        type="button"
        disabled={!!live}
        onClick={() => {
          guardJob(BENCH_WRITE, () => void resume(bench.id, keys));
          setKeys({});
        }}
      >
        {label}
      </button>
    </>
  );
}

function Interrupted() {
  const { interrupted, dismissInterrupted } = useBenchStore();
  if (!interrupted.length) return null;
  return (
    <>
      {interrupted.map((b) => (
        <div key={b.id} className="callout warn" role="region" aria-label="Interrupted benchmark" data-testid="bench-resume-offer">
          <p>
            <strong>{b.name}</strong> was running when the page closed ({b.progress.done} of {b.progress.total || '?'} predictions and judgements stored).
            Resuming does only what is missing.
          </p>
          <div className="toolbar">
            <ResumeButton bench={b} label="Resume the benchmark" />
            <button type="button" className="secondary" onClick={() => void dismissInterrupted(b.id)}>
              Leave it stopped
            </button>
          </div>
        </div>
      ))}
    </>
  );
}

function Progress() {
  const { live, stop, logs } = useBenchStore();
  const [, tick] = useState(0);
  useEffect(() => {
    if (!live) return;
    const t = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(t);
  }, [live]);
  if (!live) return null;
  const p = live.progress;
  const phase = !p
    ? live.state === 'queued'
      ? 'waiting for the GPU worker (one job at a time)'
      : 'starting'
    : p.phase === 'samples'
      ? 'choosing the held-out turns'
      : p.phase === 'generate'
        ? `generating: ${p.backend}`
        : `judging: ${p.backend} (${p.judge})`;
  return (
    <div className="card" data-testid="bench-progress" role="status" aria-live="polite">
      <div className="run-progress">
        <progress max={p?.total || 1} value={p?.done ?? 0} aria-label="Benchmark progress" />
        <span className="small" data-testid="bench-progress-text">
          {p ? `${p.done} / ${p.total}` : '…'}
          {p?.failed ? ` · ${p.failed} failed` : ''}
          {p && p.done < p.total ? (p.etaMs === null ? ' · estimating time left' : ` · about ${formatDuration(p.etaMs)} left`) : ''}
        </span>
      </div>
      <p className="small muted">
        {live.state}: {phase} · running for {formatDuration(Date.now() - live.startedAt)}
      </p>
      {logs.length ? (
        <p className="small muted" data-testid="bench-log">
          {logs.at(-1)}
        </p>
      ) : null}
      <button type="button" className="danger" onClick={stop} disabled={live.state === 'stopping'}>
        Cancel
      </button>
    </div>
  );
}

function BenchList() {
  const { benches, selectedId, select, remove, live, importFile } = useBenchStore();
  const input = useRef<HTMLInputElement>(null);
  return (
    <section className="card" aria-labelledby="bench-list-title" data-testid="bench-list">
      <h2 id="bench-list-title">Benchmarks</h2>
      <div className="toolbar">
        <label className="button-like" htmlFor="bench-import">
          Import a judged file
        </label>
        <input
          ref={input}
          id="bench-import"
          className="sr-only"
          type="file"
          accept=".jsonl,.json,application/jsonl"
          onChange={(e) => {
            const f = e.target.files?.[0];
            if (f) void importFile(f);
            if (input.current) input.current.value = '';
          }}
        />
        <span className="muted small">ours (lwm judge), or the public AgentWorldBench judge’s output</span>
      </div>
      {benches.length ? (
        <ul className="ckpts">
          {benches.map((b) => (
            <li key={b.id} className="ckpt">
              <button type="button" className="linklike" aria-current={b.id === selectedId ? 'true' : undefined} onClick={() => void select(b.id)}>
                {b.name}
              </button>
              <span className="small muted">
                {b.origin === 'import' ? 'imported' : `${b.backends.length} backend${b.backends.length === 1 ? '' : 's'} · ${b.samples.length || '?'} samples`}{' '}
                ·{' '}
                <span className={`pill ${b.state === 'done' ? 'ok' : b.state === 'failed' ? 'bad' : live?.benchId === b.id ? 'run' : 'off'}`}>
                  {live?.benchId === b.id ? live.state : b.state}
                </span>
              </span>
              <span className="ckpt-actions">
                <button
                  type="button"
                  className="secondary small"
                  disabled={live?.benchId === b.id}
                  onClick={() => void remove(b.id)}
                  aria-label={`Delete ${b.name}`}
                >
                  Delete
                </button>
              </span>
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">No benchmark yet.</p>
      )}
    </section>
  );
}

function Selected() {
  const { benches, selectedId, results, live } = useBenchStore();
  const bench = benches.find((b) => b.id === selectedId);
  const [judgeId, setJudgeId] = useState('');
  if (!bench) return <p className="muted">Run a benchmark or import a judged file to see its table here.</p>;
  const judge = bench.judges.some((j) => j.id === judgeId) ? judgeId : (bench.judges[0]?.id ?? '');
  const running = live?.benchId === bench.id;
  const resumable = !running && bench.origin === 'run' && bench.state !== 'done';
  return (
    <section aria-labelledby="bench-selected-title" data-testid="bench-selected">
      <h2 id="bench-selected-title">{bench.name}</h2>
      <p className="small muted">
        {bench.origin === 'import'
          ? `Imported from ${bench.data.name}: ${results.length} samples, ${bench.backends.length} model${bench.backends.length === 1 ? '' : 's'}, judged by ${bench.judges.map((j) => j.id).join(', ')}.`
          : `${bench.samples.length || '?'} held-out turns of ${bench.data.name} (${bench.data.perDomain} per domain of ${bench.data.domains.join(', ')}; eval share ${bench.data.evalFraction}, split seed ${bench.data.seed}); judged by ${bench.judges.map((j) => j.id).join(', ')}.`}
      </p>
      {bench.error && !running ? (
        <div className="callout error" role="alert">
          <p>{bench.error}</p>
        </div>
      ) : null}
      {resumable ? (
        <div className="toolbar">
          <ResumeButton bench={bench} label={bench.state === 'failed' ? 'Try again (keeps what was done)' : 'Continue'} />
        </div>
      ) : null}
      {running ? null : <BackendProblems bench={bench} />}
      <BenchResults bench={bench} results={results} judgeId={judge} onJudge={setJudgeId} />
      <Agreement bench={bench} results={results} />
      <SampleBrowser bench={bench} results={results} judgeId={judge} />
    </section>
  );
}

export default function BenchView() {
  useDatasets();
  const { init, refresh, error, dismissError } = useBenchStore();
  useEffect(() => {
    // Checkpoints trained since the view was last open are offered too.
    void init().then(refresh);
  }, [init, refresh]);
  return (
    <section className="view" aria-labelledby="bench-title">
      <h1 id="bench-title">Bench</h1>
      <p className="muted">
        AgentWorldBench in the browser: predictions for held-out turns from checkpoints, endpoints and the baselines, judged against the real observations and
        scored as the public scorer does.
      </p>
      <LoadProgress />
      <DatasetError />
      <Interrupted />
      <ErrorCallout error={error} onDismiss={dismissError} testId="bench-error" />
      <div className="bench-layout">
        <NewBenchForm />
        <div>
          <Progress />
          <BenchList />
        </div>
      </div>
      <Selected />
    </section>
  );
}
