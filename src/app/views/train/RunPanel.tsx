// The run on screen: its state, pause / resume / stop, progress, the loss (and reward) chart,
// and the latest value of every metric.
import { useMemo } from 'react';
import { maskConfigChanges } from '../../../core/masking/index.ts';
import type { RunRecord } from '../../../storage/db.ts';
import { runMaskConfig } from '../../../storage/runs.ts';
import { LineChart, type ChartSeries } from '../../components/LineChart.tsx';
import { useTrainStore, type MetricPoint } from '../../stores/train.ts';
import { DIMENSIONS } from '../../../core/judge/types.ts';
import { coverageSummary, formatMetric, METRIC_HELP, metricOrder, retentionLines } from './metrics.ts';

/** The loss-mask settings of an SFT run, in a few words. */
function maskNote(run: RunRecord): string {
  let mask;
  try {
    mask = runMaskConfig(run);
  } catch {
    return ' · loss mask: unreadable settings';
  }
  if (!mask) return '';
  const changes = maskConfigChanges(mask);
  return ` · loss mask: ${changes.length ? changes.join(', ') : 'defaults'}`;
}

const series = (history: MetricPoint[], key: string): [number, number][] => history.filter((m) => key in m.values).map((m) => [m.step, m.values[key]]);

export function latestValues(history: MetricPoint[]): { name: string; value: number; step: number }[] {
  const latest = new Map<string, { value: number; step: number }>();
  for (const m of history) for (const [k, v] of Object.entries(m.values)) latest.set(k, { value: v, step: m.step });
  return [...latest.entries()].map(([name, x]) => ({ name, ...x })).sort((a, b) => metricOrder(a.name, b.name));
}

export function StatePill({ state }: { state: RunRecord['state'] | string }) {
  const cls = state === 'done' ? 'ok' : state === 'failed' ? 'bad' : state === 'running' || state === 'queued' ? 'run' : 'off';
  return <span className={`pill ${cls}`}>{state}</span>;
}

export function RunPanel() {
  const { runs, selectedRunId, metrics, live, logs, pause, resume, stop, resumeRun } = useTrainStore();
  const run = runs.find((r) => r.id === selectedRunId);
  const history = useMemo(() => (selectedRunId ? (metrics[selectedRunId] ?? []) : []), [metrics, selectedRunId]);
  const isLive = !!live && live.runId === selectedRunId;
  if (!selectedRunId) {
    return (
      <section className="card run-panel" aria-labelledby="run-title">
        <h2 id="run-title">Run</h2>
        <p className="muted">Start a run, or pick one from the list below to see its curve.</p>
      </section>
    );
  }
  const state = isLive ? live.state : (run?.state ?? 'queued');
  const total = run?.spec.steps ?? 0;
  const step = history.reduce((n, m) => Math.max(n, m.step), run?.step ?? 0);
  const rl = run?.stage === 'rl';
  const lossSeries: ChartSeries[] = [
    { name: rl ? 'loss (−objective)' : 'train loss', points: series(history, 'loss'), className: 'chart-s0' },
    { name: 'eval loss', points: series(history, 'eval_loss'), className: 'chart-s1', dots: true },
  ];
  const unigram = series(history, 'unigram_loss').at(-1)?.[1];
  const markers = (run?.resumes ?? []).map((x) => ({ x, label: `resumed at step ${x}` }));
  const latest = latestValues(history);
  const tps = latest.find((m) => m.name === 'tokens_per_s')?.value;
  const retention = retentionLines(Object.fromEntries(latest.map((m) => [m.name, m.value])));
  const rlSpec = run?.spec.rl;
  const coverage = coverageSummary(Object.fromEntries(latest.map((m) => [m.name, m.value])));
  return (
    <section className="card run-panel" aria-labelledby="run-title" data-testid="run-panel">
      <div className="card-head">
        <h2 id="run-title">{run?.name ?? 'Starting…'}</h2>
        <span data-testid="run-state">
          <StatePill state={state} />
        </span>
      </div>
      {run ? (
        <p className="muted small">
          {run.stage.toUpperCase()} · {run.spec.preset} · {run.data.name}
          {run.spec.domains?.length ? ` (${run.spec.domains.join(', ')})` : ''}
          {run.from ? ` · from ${run.from.runName} (${run.from.stage.toUpperCase()} ${run.from.tag}, step ${run.from.step})` : ''}
          {maskNote(run)}
          {rl ? ` · reward ${rlSpec?.reward ?? 'rubric'} (${rlSpec?.rewardJudge === 'endpoint' ? `judge ${rlSpec.judgeEndpoint?.model ?? 'endpoint'}` : 'local judge'})` : ''}
          {run.spec.labels ? ` · labels by rejection sampling (${run.spec.labels.teacher} teacher, keep ≥ ${run.spec.labels.threshold ?? 4})` : ''}
        </p>
      ) : null}
      {retention.length ? (
        <div className="small" data-testid="label-retention">
          <strong>Label retention</strong>
          <ul className="plain">
            {retention.map((l) => (
              <li key={l}>{l}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <div className="toolbar run-controls">
        {isLive && state !== 'paused' ? (
          <button type="button" className="secondary" onClick={pause} disabled={state === 'stopping'}>
            Pause
          </button>
        ) : null}
        {isLive && state === 'paused' ? (
          <button type="button" onClick={resume}>
            Resume
          </button>
        ) : null}
        {isLive ? (
          <button type="button" className="secondary" onClick={stop} disabled={state === 'stopping'}>
            Stop
          </button>
        ) : null}
        {!isLive && run && !live && (run.state === 'stopped' || run.state === 'failed') && step < total ? (
          <button type="button" onClick={() => void resumeRun(run.id)}>
            Resume from {run.checkpoints.last ? `step ${run.checkpoints.last.step}` : 'the start'}
          </button>
        ) : null}
      </div>
      <div className="run-progress">
        <progress max={total || 1} value={step} aria-label="Training progress" />
        <span className="small" data-testid="run-step">
          step {step} / {total}
          {tps !== undefined ? ` · ${formatMetric('tokens_per_s', tps)} tokens/s` : ''}
        </span>
      </div>
      {coverage ? (
        <p className="small" data-testid="run-coverage" title="What the context holds of each training sample, after the truncation policy">
          {coverage}
        </p>
      ) : null}
      {run?.state === 'failed' && run.error ? (
        <p className="error-text" role="alert">
          {run.error}
        </p>
      ) : null}
      <LineChart
        title={rl ? 'Loss by step' : 'Loss by step, with eval loss and the unigram baseline'}
        testId="loss-chart"
        series={lossSeries}
        references={unigram !== undefined ? [{ name: 'unigram baseline', y: unigram, className: 'chart-s2' }] : []}
        markers={markers}
        xMax={total}
      />
      {rl ? (
        <>
          <LineChart
            title="Reward by step"
            testId="reward-chart"
            series={[
              { name: 'reward', points: series(history, 'reward'), className: 'chart-s0' },
              { name: 'judge part', points: series(history, 'reward_judge'), className: 'chart-s1' },
              { name: 'verifier part', points: series(history, 'reward_verifier'), className: 'chart-s3' },
              { name: 'held-out reward (rubric + verifier)', points: series(history, 'eval_reward'), className: 'chart-s4', dots: true },
            ]}
            markers={markers}
            xMax={total}
          />
          <LineChart
            title="Judge dimensions on held-out turns by step (1–5)"
            testId="dimension-chart"
            series={DIMENSIONS.map((d, i) => ({ name: d, points: series(history, `eval_judge_${d}`), className: ['chart-s0', 'chart-s1', 'chart-s3', 'chart-s4', 'chart-s5'][i], dots: true }))}
            markers={markers}
            xMax={total}
          />
          <LineChart
            title="Clip fraction by step"
            testId="clip-chart"
            series={[{ name: 'clip fraction', points: series(history, 'clip_fraction'), className: 'chart-s1' }]}
            markers={markers}
            xMax={total}
          />
          <LineChart
            title="Sequence importance ratio s_i by step: min, mean, max"
            testId="ratio-chart"
            series={[
              { name: 'min s_i', points: series(history, 'ratio_min'), className: 'chart-s3' },
              { name: 'mean s_i', points: series(history, 'mean_ratio'), className: 'chart-s0' },
              { name: 'max s_i', points: series(history, 'ratio_max'), className: 'chart-s1' },
            ]}
            markers={markers}
            xMax={total}
          />
        </>
      ) : null}
      {latest.length ? (
        <div className="table-scroll">
          <table className="table metrics-table" data-testid="latest-metrics">
            <caption className="sr-only">Latest value of each metric</caption>
            <thead>
              <tr>
                <th scope="col">Metric</th>
                <th scope="col" className="num">
                  Latest
                </th>
                <th scope="col" className="num">
                  At step
                </th>
              </tr>
            </thead>
            <tbody>
              {latest.map((m) => (
                <tr key={m.name}>
                  <th scope="row" title={METRIC_HELP[m.name]}>
                    <code>{m.name}</code>
                  </th>
                  <td className="num">{formatMetric(m.name, m.value)}</td>
                  <td className="num">{m.step}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="muted" role="status">
          {isLive ? 'Preparing the data, tokenizer and model; the first step appears here…' : 'No metrics recorded.'}
        </p>
      )}
      {isLive || logs.length ? (
        <details className="advanced">
          <summary>Log ({logs.length})</summary>
          <pre className="field-text train-log">{logs.join('\n')}</pre>
        </details>
      ) : null}
    </section>
  );
}
