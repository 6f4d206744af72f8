// The run on screen: its state, pause / resume / stop, progress, the loss (and reward) chart,
// and the latest value of every metric.
import { useMemo } from 'react';
import { maskConfigChanges } from '../../../core/masking/index.ts';
import type { RunRecord } from '../../../core/records.ts';
import { runMaskConfig } from '../../../storage/runs.ts';
import { LineChart, type ChartSeries } from '../../components/LineChart.tsx';
import { ScrollTable, type Column } from '../../components/Table.tsx';
import { useTrainStore, type MetricPoint } from '../../stores/train.ts';
import { DIMENSIONS } from '../../../core/judge/types.ts';
import { DEFAULT_KEEP_THRESHOLD } from '../../../core/trainSpec.ts';
import { folderNeeded } from '../../../train/hfFolder.ts';
import type { TrainProgress } from '../../../jobs/jobs.ts';
import { FolderAgain } from './RunFolder.tsx';
import {
  coverageSummary,
  domainEvalTable,
  formatMetric,
  METRIC_HELP,
  metricOrder,
  overallMetrics,
  preparingText,
  recipeRunText,
  retentionLines,
  templateMixText,
  type LatestMetric,
} from './metrics.ts';
import { guardJob, resumeWrite } from '../../stores/storage.ts';

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

export function latestValues(history: MetricPoint[]): LatestMetric[] {
  const latest = new Map<string, { value: number; step: number }>();
  for (const m of history) for (const [k, v] of Object.entries(m.values)) latest.set(k, { value: v, step: m.step });
  return [...latest.entries()].map(([name, x]) => ({ name, ...x })).sort((a, b) => metricOrder(a.name, b.name));
}

export function StatePill({ state }: { state: RunRecord['state'] | string }) {
  const cls = state === 'done' ? 'ok' : state === 'failed' ? 'bad' : state === 'running' || state === 'queued' ? 'run' : 'off';
  return <span className={`pill ${cls}`}>{state}</span>;
}

/** The model a run trains: its preset, or its Hugging Face folder and how (LoRA rank, or every weight). */
export function runModel(run: RunRecord): string {
  if (!run.hf) return run.spec.preset;
  return `${run.hf.folder.name} (${run.spec.lora ? `LoRA rank ${run.spec.lora.rank}, alpha ${run.spec.lora.alpha ?? 2 * run.spec.lora.rank}` : 'full fine-tuning'})`;
}

/** Where the run came from: stage, preset, data, starting checkpoint, mask, reward and labels. */
function RunSummary({ run }: { run: RunRecord }) {
  const rlSpec = run.spec.rl;
  return (
    <p className="muted small" data-testid="run-summary">
      {run.recipe ? `${recipeRunText(run)} · ` : ''}
      {run.stage.toUpperCase()} · {runModel(run)} · {run.recipe ? `${run.data.trajectories.toLocaleString('en-US')} generated trajectories` : run.data.name}
      {run.spec.domains?.length && !run.recipe ? ` (${run.spec.domains.join(', ')})` : ''}
      {run.from ? ` · from ${run.from.runName} (${run.from.stage.toUpperCase()} ${run.from.tag}, step ${run.from.step})` : ''}
      {maskNote(run)}
      {run.stage === 'rl'
        ? ` · reward ${rlSpec?.reward ?? 'rubric'} (${rlSpec?.rewardJudge === 'endpoint' ? `judge ${rlSpec.judgeEndpoint?.model ?? 'endpoint'}` : 'local judge'})`
        : ''}
      {run.spec.labels
        ? ` · labels by rejection sampling (${run.spec.labels.teacher} teacher, keep ≥ ${run.spec.labels.threshold ?? DEFAULT_KEEP_THRESHOLD})`
        : ''}
    </p>
  );
}

/** The template versions the run renders its samples with (the stage's mix), the user's own ones described. */
function TemplateMix({ run }: { run: RunRecord }) {
  const { mix, own } = templateMixText(run);
  return (
    <p className="muted small" data-testid="run-templates">
      Templates: {mix}
      {own.map((line) => (
        <span key={line}>
          <br />
          {line}
        </span>
      ))}
    </p>
  );
}

/** Pause / resume / stop for the live run; resume-from-checkpoint for a stopped or failed one. */
function RunControls({ run, state, isLive, unfinished }: { run: RunRecord | undefined; state: string; isLive: boolean; unfinished: boolean }) {
  const { live, pause, resume, stop, resumeRun } = useTrainStore();
  const canResume = !isLive && run && !live && (run.state === 'stopped' || run.state === 'failed') && unfinished;
  return (
    <>
      {canResume && folderNeeded(run) ? <FolderAgain run={run} purpose="resume" /> : null}
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
        {canResume ? (
          <button type="button" onClick={() => guardJob(resumeWrite(run), () => void resumeRun(run.id))}>
            Resume from {run.checkpoints.last ? `step ${run.checkpoints.last.step}` : 'the start'}
          </button>
        ) : null}
      </div>
    </>
  );
}

/** One chart colour per judge dimension, in DIMENSIONS order (chart-s2 is the baselines' colour). */
const DIMENSION_CLASS = ['chart-s0', 'chart-s1', 'chart-s3', 'chart-s4', 'chart-s5'];

/** RL's charts: reward and its parts, the judge's dimensions, clipping and the importance ratio. */
function RlCharts({ history, markers, total }: { history: MetricPoint[]; markers: { x: number; label: string }[]; total: number }) {
  const chart = (title: string, testId: string, lines: ChartSeries[]) => (
    <LineChart title={title} testId={testId} series={lines} markers={markers} xMax={total} />
  );
  const line = (name: string, key: string, className: string, dots?: boolean): ChartSeries => ({
    name,
    points: series(history, key),
    className,
    ...(dots ? { dots } : {}),
  });
  return (
    <>
      {chart('Reward by step', 'reward-chart', [
        line('reward', 'reward', 'chart-s0'),
        line('judge part', 'reward_judge', 'chart-s1'),
        line('verifier part', 'reward_verifier', 'chart-s3'),
        line('held-out reward (rubric + verifier)', 'eval_reward', 'chart-s4', true),
      ])}
      {chart(
        'Judge dimensions on held-out turns by step (1–5)',
        'dimension-chart',
        DIMENSIONS.map((d, i) => line(d, `eval_judge_${d}`, DIMENSION_CLASS[i], true)),
      )}
      {chart('Clip fraction by step', 'clip-chart', [line('clip fraction', 'clip_fraction', 'chart-s1')])}
      {chart('Sequence importance ratio s_i by step: min, mean, max', 'ratio-chart', [
        line('min s_i', 'ratio_min', 'chart-s3'),
        line('mean s_i', 'mean_ratio', 'chart-s0'),
        line('max s_i', 'ratio_max', 'chart-s1'),
      ])}
    </>
  );
}

const METRIC_COLUMNS: Column[] = ['Metric', { label: 'Latest', className: 'num' }, { label: 'At step', className: 'num' }];

function LatestMetrics({ latest }: { latest: LatestMetric[] }) {
  return (
    <ScrollTable className="table metrics-table" testId="latest-metrics" caption="Latest value of each metric" columns={METRIC_COLUMNS}>
      {latest.map((m) => (
        <tr key={m.name}>
          <th scope="row" title={METRIC_HELP[m.name]}>
            <code>{m.name}</code>
          </th>
          <td className="num">{formatMetric(m.name, m.value)}</td>
          <td className="num">{m.step}</td>
        </tr>
      ))}
    </ScrollTable>
  );
}

/** The latest evaluation figures of each domain (the `<metric>/<domain>` metrics), one row per domain. */
function DomainEval({ latest }: { latest: LatestMetric[] }) {
  const { metrics, rows } = domainEvalTable(latest);
  if (!rows.length) return null;
  const columns: Column[] = [
    'Domain',
    ...metrics.map((m) => ({ label: <code>{m}</code>, className: 'num', key: m, title: METRIC_HELP[m] })),
    { label: 'At step', className: 'num' },
  ];
  return (
    <div>
      <p className="small">
        <strong>Latest evaluation by domain</strong>
      </p>
      <ScrollTable className="table metrics-table" testId="domain-eval" caption="Latest evaluation figures of each domain's held-out turns" columns={columns}>
        {rows.map((r) => (
          <tr key={r.domain}>
            <th scope="row">{r.domain}</th>
            {metrics.map((m) => (
              <td key={m} className="num">
                {r.values[m] === undefined ? '–' : formatMetric(m, r.values[m])}
              </td>
            ))}
            <td className="num">{r.step}</td>
          </tr>
        ))}
      </ScrollTable>
    </div>
  );
}

function RunProgress({ step, total, tokensPerSecond }: { step: number; total: number; tokensPerSecond: number | undefined }) {
  return (
    <div className="run-progress">
      <progress max={total || 1} value={step} aria-label="Training progress" />
      <span className="small" data-testid="run-step">
        step {step} / {total}
        {tokensPerSecond !== undefined ? ` · ${formatMetric('tokens_per_s', tokensPerSecond)} tokens/s` : ''}
      </span>
    </div>
  );
}

function RetentionList({ lines }: { lines: string[] }) {
  return (
    <div className="small" data-testid="label-retention">
      <strong>Label retention</strong>
      <ul className="plain">
        {lines.map((l) => (
          <li key={l}>{l}</li>
        ))}
      </ul>
    </div>
  );
}

/** What the live job does before its first step (generating a recipe's data), while it does it. */
function Preparing({ progress }: { progress: TrainProgress | null }) {
  const text = preparingText(progress);
  return text ? (
    <p className="small" role="status" data-testid="run-preparing">
      {text}
    </p>
  ) : null;
}

export function RunPanel() {
  const { runs, selectedRunId, metrics, live, logs, liveProgress } = useTrainStore();
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
  const latestByName = Object.fromEntries(latest.map((m) => [m.name, m.value]));
  const retention = retentionLines(latestByName);
  const coverage = coverageSummary(latestByName);
  return (
    <section className="card run-panel" aria-labelledby="run-title" data-testid="run-panel">
      <div className="card-head">
        <h2 id="run-title">{run?.name ?? 'Starting…'}</h2>
        <span data-testid="run-state">
          <StatePill state={state} />
        </span>
      </div>
      {run ? <RunSummary run={run} /> : null}
      {run ? <TemplateMix run={run} /> : null}
      {retention.length ? <RetentionList lines={retention} /> : null}
      <RunControls run={run} state={state} isLive={isLive} unfinished={step < total} />
      <RunProgress step={step} total={total} tokensPerSecond={latestByName.tokens_per_s} />
      {isLive ? <Preparing progress={liveProgress} /> : null}
      {coverage ? (
        <p className="small" data-testid="run-coverage" title="What the context holds of each training sample, after the truncation policy">
          {coverage}
        </p>
      ) : null}
      {!isLive && run?.state === 'failed' && run.error ? (
        <p className="error-text" role="alert" data-testid="run-error">
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
      {rl ? <RlCharts history={history} markers={markers} total={total} /> : null}
      <DomainEval latest={latest} />
      {latest.length ? (
        <LatestMetrics latest={overallMetrics(latest)} />
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
