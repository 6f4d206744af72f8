// Data: the datasets kept in this browser, importing files (every format the data core reads),
// per-domain statistics with the mask-category mix, and export in every format it writes.
import { useEffect, useMemo, useState } from 'react';
import { Link } from 'wouter';
import {
  FORMAT_NAMES,
  EXPORT_TARGETS,
  exportLines,
  exportSizeWarning,
  exportVerlParquet,
  type ExportTarget,
  type FormatName,
  type TrainingExportKind,
} from '../../core/formats/index.ts';
import { checkDistribution } from '../../core/templates/index.ts';
import type { MaskStats } from '../../core/masking/index.ts';
import { DOMAINS, type Trajectory } from '../../core/schema/types.ts';
import type { DatasetMeta } from '../../core/records.ts';
import { CategoryBar, CategoryLegend } from '../components/CategoryBar.tsx';
import { ConfirmDelete, useDeleteTarget } from '../components/ConfirmDialog.tsx';
import { Options } from '../components/Options.tsx';
import { ACTIONS_COLUMN, ScrollTable, type Column } from '../components/Table.tsx';
import { DatasetError, LoadProgress, useDatasets } from '../components/DatasetGate.tsx';
import { pct } from '../components/categories.ts';
import { saveFile } from '../lib/download.ts';
import { describeError, useDatasetStore, type ImportOutcome } from '../stores/datasets.ts';
import { useMaskResult, useMaskSettings } from '../stores/mask.ts';
import { templateSet, useTemplateStore } from '../stores/templates.ts';

const FORMAT_LABEL: Record<FormatName, string> = {
  native: 'LWM native JSONL / JSON',
  agentworldbench: 'AgentWorldBench ({domain}_test.jsonl)',
  openai: 'OpenAI chat messages',
  sharegpt: 'ShareGPT conversations',
  agentinstruct: 'AgentInstruct',
};

const EXPORT_LABEL: Record<ExportTarget, string> = {
  native: 'LWM native JSONL',
  agentworldbench: 'AgentWorldBench JSONL',
  trl: 'TRL (prompt / completion)',
  verl: 'verl (prompt / response)',
};

function DatasetRow({ dataset: d, onDelete }: { dataset: DatasetMeta; onDelete(): void }) {
  const { loadedId, activeId, select } = useDatasetStore();
  return (
    <tr aria-current={d.id === loadedId ? 'true' : undefined}>
      <td>
        <input type="radio" name="active-dataset" checked={d.id === activeId} onChange={() => void select(d.id)} aria-label={`Use ${d.name}`} />
      </td>
      <td>
        {d.name}
        <div className="muted small">
          {d.origin === 'builtin' ? 'built in' : `imported ${new Date(d.createdAt).toLocaleString()}`} · {d.formats.join(', ')}
        </div>
      </td>
      <td className="num">{d.trajectories.toLocaleString()}</td>
      <td className="num">{d.turns.toLocaleString()}</td>
      <td>{d.domains.join(', ')}</td>
      <td className="num">{d.errorCount}</td>
      <td>
        <button type="button" className="secondary small" onClick={onDelete} aria-label={`Delete ${d.name}`}>
          Delete
        </button>
      </td>
    </tr>
  );
}

const DATASET_COLUMNS: Column[] = ['Active', 'Name', 'Trajectories', 'Turns', 'Domains', 'Skipped lines', ACTIONS_COLUMN];

function DatasetList() {
  const { datasets, remove, defaultSeeded, loadDefault, status } = useDatasetStore();
  const { target, ask, close } = useDeleteTarget(datasets);
  return (
    <article className="card wide" aria-labelledby="datasets-title">
      <div className="card-head">
        <h2 id="datasets-title">Datasets in this browser</h2>
        {!datasets.some((d) => d.origin === 'builtin') && defaultSeeded && status !== 'loading' ? (
          <button type="button" className="secondary" onClick={() => void loadDefault()}>
            Load the default dataset
          </button>
        ) : null}
      </div>
      {datasets.length === 0 ? (
        <p className="muted">No datasets stored yet.</p>
      ) : (
        <ScrollTable testId="dataset-list" columns={DATASET_COLUMNS}>
          {datasets.map((d) => (
            <DatasetRow key={d.id} dataset={d} onDelete={() => ask(d.id)} />
          ))}
        </ScrollTable>
      )}
      <ConfirmDelete target={target} what="dataset" onClose={close} onDelete={(d) => void remove(d.id)}>
        <p>
          <strong>{target?.name}</strong> ({target?.trajectories.toLocaleString()} trajectories) will be removed from this browser. Files you imported it from
          are not touched.
        </p>
      </ConfirmDelete>
    </article>
  );
}

/** Where files are dropped or chosen; each drop or choice is one import. */
function DropZone({ busy, onFiles }: { busy: boolean; onFiles(list: FileList | null): void }) {
  const [dragging, setDragging] = useState(false);
  return (
    <div
      className={dragging ? 'dropzone dragging' : 'dropzone'}
      data-testid="dropzone"
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        onFiles(e.dataTransfer.files);
      }}
    >
      <p>Drop JSONL or JSON files here, or</p>
      <label className="button-like">
        Choose files…
        <input
          type="file"
          accept=".jsonl,.json,.ndjson,application/json,application/x-ndjson,text/plain"
          multiple
          disabled={busy}
          className="sr-only"
          data-testid="import-input"
          onChange={(e) => {
            onFiles(e.target.files);
            e.target.value = '';
          }}
        />
      </label>
      <p className="muted small">Each import becomes a new dataset; nothing stored is changed.</p>
    </div>
  );
}

/** What the last import stored or why it stored nothing, with the lines it skipped. */
function ImportResult({ outcome, onDismiss }: { outcome: ImportOutcome; onDismiss(): void }) {
  return (
    <div
      className={outcome.failure ? 'callout error' : outcome.errorCount ? 'callout warn' : 'callout'}
      role={outcome.failure || outcome.errorCount ? 'alert' : 'status'}
      data-testid="import-result"
    >
      <p>
        {outcome.failure ?? `Imported ${outcome.imported.toLocaleString()} trajectories from ${outcome.files.join(', ')} into a new dataset.`}
        {outcome.errorCount ? ` ${outcome.errorCount} problem${outcome.errorCount === 1 ? '' : 's'}: the lines below were skipped.` : ''}
      </p>
      {outcome.errors.length ? (
        <ol className="errors" data-testid="import-errors">
          {outcome.errors.map((e, i) => (
            <li key={i} className="mono">
              {describeError(e)}
            </li>
          ))}
          {outcome.errorCount > outcome.errors.length ? <li>… and {outcome.errorCount - outcome.errors.length} more</li> : null}
        </ol>
      ) : null}
      <button type="button" className="secondary small" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}

function ImportCard() {
  const importing = useDatasetStore((s) => s.importing);
  const lastImport = useDatasetStore((s) => s.lastImport);
  const importFiles = useDatasetStore((s) => s.importFiles);
  const dismiss = useDatasetStore((s) => s.dismissImport);
  const [format, setFormat] = useState<FormatName | 'auto'>('auto');
  const busy = !!importing;

  const start = (list: FileList | null) => {
    const files = list ? [...list] : [];
    if (!files.length || busy) return;
    void importFiles(files, format);
  };

  return (
    <article className="card span2" aria-labelledby="import-title">
      <h2 id="import-title">Import</h2>
      <DropZone busy={busy} onFiles={start} />
      <div className="field">
        <label htmlFor="import-format">File format</label>
        <select id="import-format" value={format} onChange={(e) => setFormat(e.target.value as FormatName | 'auto')} disabled={busy}>
          <option value="auto">Detect automatically</option>
          <Options items={FORMAT_NAMES} label={(f) => FORMAT_LABEL[f]} />
        </select>
      </div>
      {importing ? (
        <div role="status" aria-live="polite">
          <progress
            className="wide"
            max={importing.total || 1}
            value={importing.consumed}
            aria-label={`Importing ${importing.file}`}
            data-testid="import-progress"
          />
          <p className="small">
            {importing.file}: {importing.trajectories} trajectories, {importing.errors} errors so far
          </p>
        </div>
      ) : null}
      {lastImport ? <ImportResult outcome={lastImport} onDismiss={dismiss} /> : null}
    </article>
  );
}

function ExportCard() {
  const trajectories = useDatasetStore((s) => s.trajectories);
  const name = useDatasetStore((s) => s.datasets.find((d) => d.id === s.loadedId)?.name ?? 'dataset');
  const config = useMaskSettings((s) => s.config);
  const versions = useTemplateStore((s) => s.versions);
  const stages = useTemplateStore((s) => s.stages);
  const [target, setTarget] = useState<ExportTarget>('native');
  const [chosenKind, setKind] = useState<TrainingExportKind>('sft');
  // Multi-turn rows (one per trajectory) are a verl layout; other targets fall back to SFT.
  const kind = chosenKind === 'multiturn' && target !== 'verl' ? 'sft' : chosenKind;
  const [error, setError] = useState<string | null>(null);
  const training = target === 'trl' || target === 'verl';
  const bigExport = useMemo(() => exportSizeWarning(target, trajectories, { kind }), [target, trajectories, kind]);

  const download = () => {
    setError(null);
    try {
      const set = versions.length ? templateSet(versions) : undefined;
      const stage = kind === 'rl' ? 'rl' : 'sft';
      const dist = set ? stages[stage] : undefined;
      if (set && dist) {
        const problems = checkDistribution(dist, set);
        if (problems.length) throw new Error(`the ${stage.toUpperCase()} template distribution is invalid: ${problems.join('; ')}`);
      }
      const options = { kind, mask: config, templateSet: set, templates: dist };
      // verl reads Parquet; every other target is JSON lines.
      const blob =
        target === 'verl'
          ? new Blob([exportVerlParquet(trajectories, options).bytes as BlobPart], { type: 'application/vnd.apache.parquet' })
          : new Blob(
              Array.from(exportLines(target, trajectories, options), (l) => l + '\n'),
              { type: 'application/x-ndjson' },
            ); // parts: no one string past V8's limit
      saveFile(
        blob,
        `${name.replace(/\.(jsonl?|ndjson)$/i, '').replace(/[^\w.-]+/g, '_')}.${target}${training ? '.' + kind : ''}.${target === 'verl' ? 'parquet' : 'jsonl'}`,
      );
    } catch (e) {
      setError(`Export failed: ${(e as Error).message}`);
    }
  };

  return (
    <article className="card" aria-labelledby="export-title">
      <h2 id="export-title">Export</h2>
      <div className="field">
        <label htmlFor="export-target">Export format</label>
        <select id="export-target" value={target} onChange={(e) => setTarget(e.target.value as ExportTarget)}>
          <Options items={EXPORT_TARGETS} label={(t) => EXPORT_LABEL[t]} />
        </select>
      </div>
      {training ? (
        <div className="field">
          <label htmlFor="export-kind">Samples</label>
          <select id="export-kind" value={kind} onChange={(e) => setKind(e.target.value as TrainingExportKind)}>
            <option value="sft">SFT: every turn, with mask category and loss weight</option>
            <option value="rl">RL pool: one turn per trajectory</option>
            {target === 'verl' ? <option value="multiturn">Multi-turn SFT: one row per trajectory, a loss weight per turn</option> : null}
          </select>
          <p className="muted small">Rendered with the stage's template mix from the Prompts view and the current mask settings.</p>
        </div>
      ) : null}
      <button type="button" onClick={download} disabled={!trajectories.length}>
        Download {trajectories.length.toLocaleString()} trajectories
      </button>
      {bigExport ? (
        <p className="muted small" role="status">
          Warning: {bigExport}.
        </p>
      ) : null}
      {error ? (
        <p className="error-text" role="alert">
          {error}
        </p>
      ) : null}
    </article>
  );
}

/** Where a domain sorts: the known domains in their canonical order, then anything else an import brought. */
function domainRank(domain: string): number {
  const i = (DOMAINS as readonly string[]).indexOf(domain);
  return i < 0 ? DOMAINS.length : i;
}

/** Trajectories per domain, in domainRank order (then by name). */
function countByDomain(trajectories: readonly Trajectory[]): [string, number][] {
  const m = new Map<string, number>();
  for (const t of trajectories) m.set(t.domain, (m.get(t.domain) ?? 0) + 1);
  return [...m.entries()].sort(([a], [b]) => domainRank(a) - domainRank(b) || (a < b ? -1 : 1));
}

const STATS_COLUMNS: Column[] = [
  'Domain',
  'Trajectories',
  'Turns',
  { label: 'Mean loss weight', title: 'Mean loss weight of an observation under the current mask settings' },
  'Mask categories',
];

function StatsTable({ perDomain, trajectories, stats }: { perDomain: [string, number][]; trajectories: number; stats: MaskStats }) {
  return (
    <ScrollTable className="table stats" testId="stats-table" columns={STATS_COLUMNS}>
      {perDomain.map(([d, n]) => {
        const c = stats.perDomain[d];
        return (
          <tr key={d} data-domain={d}>
            <th scope="row">{d}</th>
            <td className="num">{n.toLocaleString()}</td>
            <td className="num">{c?.total.toLocaleString() ?? 0}</td>
            <td className="num" data-testid={`mean-weight-${d}`}>
              {c ? c.meanWeight.toFixed(3) : '–'}
            </td>
            <td className="bar-cell">{c ? <CategoryBar shares={c.shares} width="100%" label={d} /> : null}</td>
          </tr>
        );
      })}
      <tr className="total" data-domain="overall">
        <th scope="row">All</th>
        <td className="num" data-testid="total-trajectories">
          {trajectories.toLocaleString()}
        </td>
        <td className="num" data-testid="total-turns">
          {stats.overall.total.toLocaleString()}
        </td>
        <td className="num" data-testid="mean-weight-overall">
          {stats.overall.meanWeight.toFixed(3)}
        </td>
        <td className="bar-cell">
          <CategoryBar shares={stats.overall.shares} width="100%" label="all domains" />
        </td>
      </tr>
    </ScrollTable>
  );
}

function Statistics() {
  const trajectories = useDatasetStore((s) => s.trajectories);
  const result = useMaskResult(trajectories);
  const perDomain = useMemo(() => countByDomain(trajectories), [trajectories]);
  if (!trajectories.length) return null;
  return (
    <article className="card wide" aria-labelledby="stats-title">
      <div className="card-head">
        <h2 id="stats-title">Statistics by domain</h2>
        <Link href="~/trajectories">Adjust mask thresholds and ratios →</Link>
      </div>
      {!result ? (
        <p className="loading">Computing mask categories…</p>
      ) : (
        <>
          <StatsTable perDomain={perDomain} trajectories={trajectories.length} stats={result.stats} />
          <CategoryLegend counts={result.stats.overall.counts} />
          <p className="muted small">
            Shares of turns per mask category; overall:{' '}
            {Object.entries(result.stats.overall.shares)
              .filter(([, v]) => v > 0)
              .map(([k, v]) => `${k} ${pct(v)}`)
              .join(', ')}
            .
          </p>
        </>
      )}
    </article>
  );
}

export default function DataView() {
  const { status } = useDatasets();
  const loadTemplates = useTemplateStore((s) => s.load);
  const templateStatus = useTemplateStore((s) => s.status);
  useEffect(() => {
    // Exports render training samples with the user's template versions.
    if (templateStatus === 'idle') void loadTemplates();
  }, [templateStatus, loadTemplates]);
  return (
    <section className="view" aria-labelledby="data-title">
      <h1 id="data-title">Data</h1>
      <DatasetError />
      {status === 'loading' ? <LoadProgress /> : null}
      <div className="cards">
        <DatasetList />
        <ImportCard />
        <ExportCard />
        <Statistics />
      </div>
    </section>
  );
}
