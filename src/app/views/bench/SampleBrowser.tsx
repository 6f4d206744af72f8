// Drill into the samples of a benchmark: each held-out turn with every backend's total score by
// the judge shown; open one to see the action, the prediction against the reference as a line
// diff, and the judge's verdict (five scores, strengths, weaknesses) and the verifier's.
import { useMemo, useState } from 'react';
import { judgeInputOf, sampleKey, type AwbJudgedRecord } from '../../../core/bench/records.ts';
import { DIMENSIONS } from '../../../core/judge/types.ts';
import { domainOfTask } from '../../../core/schema/types.ts';
import type { BenchRecord, BenchResult } from '../../../core/records.ts';
import { lineDiff, orderedBackends } from '../../stores/benchModel.ts';

const PAGE = 50;

interface SampleRow {
  key: string;
  domain: string;
  id: string;
  turn: number;
  /** By backend id. */
  results: Map<string, BenchResult>;
}

function sampleRows(results: readonly BenchResult[]): SampleRow[] {
  const rows = new Map<string, SampleRow>();
  const sorted = [...results].sort((a, b) => a.index - b.index);
  for (const r of sorted) {
    const key = sampleKey(r.prediction);
    let row = rows.get(key);
    if (!row)
      rows.set(key, (row = { key, domain: domainOfTask(r.prediction.task), id: String(r.prediction.id), turn: r.prediction.turn_idx, results: new Map() }));
    row.results.set(r.backend, r);
  }
  return [...rows.values()];
}

function score(rec: AwbJudgedRecord | undefined): string {
  if (!rec) return '…';
  if (rec.failed) return 'failed';
  return typeof rec.total_score === 'number' ? rec.total_score.toFixed(2) : '–';
}

function Diff({ reference, prediction }: { reference: string; prediction: string }) {
  const lines = useMemo(() => lineDiff(reference, prediction), [reference, prediction]);
  return (
    <div className="diff mono" role="group" aria-label="Prediction against reference, line by line" data-testid="bench-diff">
      {lines.map((l, i) => (
        <div key={i} className={l.op === '-' ? 'del' : l.op === '+' ? 'add' : undefined}>
          <span className="op" aria-hidden="true">
            {l.op === '=' ? ' ' : l.op}
          </span>
          <span className="sr-only">{l.op === '-' ? 'only in the reference: ' : l.op === '+' ? 'only in the prediction: ' : ''}</span>
          {l.text || ' '}
        </div>
      ))}
    </div>
  );
}

function Verdict({ rec }: { rec: AwbJudgedRecord }) {
  const v = rec.verifier as { pass?: number; applicable?: boolean; rule?: string; failure?: string } | undefined;
  return (
    <div data-testid="bench-verdict">
      {rec.failed ? (
        <p className="error-text">Failed: {String(rec.error ?? 'no usable verdict')}</p>
      ) : (
        <>
          <div className="verdict-scores">
            {DIMENSIONS.map((d) => (
              <span key={d}>
                {d} <strong>{rec[d] ?? '–'}</strong>
              </span>
            ))}
            <span>
              total <strong>{typeof rec.total_score === 'number' ? rec.total_score.toFixed(2) : '–'}</strong>
            </span>
          </div>
          {Array.isArray(rec.strengths) && rec.strengths.length ? (
            <>
              <h5>Strengths</h5>
              <ul>
                {rec.strengths.map((s, i) => (
                  <li key={i}>{String(s)}</li>
                ))}
              </ul>
            </>
          ) : null}
          {Array.isArray(rec.weaknesses) && rec.weaknesses.length ? (
            <>
              <h5>Weaknesses</h5>
              <ul>
                {rec.weaknesses.map((s, i) => (
                  <li key={i}>{String(s)}</li>
                ))}
              </ul>
            </>
          ) : null}
        </>
      )}
      {v && typeof v === 'object' ? (
        <p className="small">
          Verifier:{' '}
          {v.applicable === false ? (
            'no deterministic region to check'
          ) : v.pass ? (
            <span className="pill ok">exact match</span>
          ) : (
            <>
              <span className="pill bad">mismatch</span> {v.failure ?? ''}
            </>
          )}
        </p>
      ) : null}
    </div>
  );
}

type Backend = ReturnType<typeof orderedBackends>[number];

/** One page of the samples: a row each, the total score of each backend's prediction by the judge. */
function SamplesTable({
  rows,
  backends,
  judgeId,
  open,
  setOpen,
}: {
  rows: SampleRow[];
  backends: Backend[];
  judgeId: string;
  open: string | null;
  setOpen(key: string | null): void;
}) {
  return (
    <div className="table-scroll">
      <table className="table compact bench-samples" data-testid="bench-samples">
        <thead>
          <tr>
            <th scope="col">sample</th>
            <th scope="col">domain</th>
            <th scope="col" className="num">
              turn
            </th>
            {backends.map((b) => (
              <th key={b.id} scope="col" className="num">
                {b.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key} className={r.key === open ? 'selected' : undefined}>
              <th scope="row" style={{ fontWeight: 500 }}>
                <button type="button" className="linklike" aria-expanded={r.key === open} onClick={() => setOpen(r.key === open ? null : r.key)}>
                  {r.id}
                </button>
              </th>
              <td>{r.domain}</td>
              <td className="num">{r.turn}</td>
              {backends.map((b) => {
                const res = r.results.get(b.id);
                return (
                  <td key={b.id} className="num">
                    {res ? score(Object.hasOwn(res.judged, judgeId) ? res.judged[judgeId] : undefined) : ''}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Pager({ current, pages, setPage }: { current: number; pages: number; setPage(page: number): void }) {
  if (pages <= 1) return null;
  return (
    <div className="toolbar">
      <button type="button" className="secondary small" disabled={current === 0} onClick={() => setPage(current - 1)}>
        Previous
      </button>
      <span className="small">
        page {current + 1} of {pages}
      </span>
      <button type="button" className="secondary small" disabled={current >= pages - 1} onClick={() => setPage(current + 1)}>
        Next
      </button>
    </div>
  );
}

/** The open sample: one backend's prediction against the reference, and the judge's verdict on it. */
function SampleDetail({
  row,
  backends,
  backendId,
  setBackend,
  judgeId,
}: {
  row: SampleRow;
  backends: Backend[];
  backendId: string;
  setBackend(id: string): void;
  judgeId: string;
}) {
  const result = row.results.get(backendId);
  const input = result ? judgeInputOf(result.prediction) : null;
  if (!result || !input) return null;
  const judged = Object.hasOwn(result.judged, judgeId) ? result.judged[judgeId] : undefined;
  return (
    <div className="card" data-testid="bench-sample" role="region" aria-label={`Sample ${row.id}`}>
      <div className="toolbar">
        <h4 style={{ margin: 0 }}>
          {row.id} · {row.domain} · turn {row.turn}
        </h4>
        <label htmlFor="bench-sample-backend">Backend</label>
        <select id="bench-sample-backend" value={backendId} onChange={(e) => setBackend(e.target.value)}>
          {backends
            .filter((b) => row.results.has(b.id))
            .map((b) => (
              <option key={b.id} value={b.id}>
                {b.name}
              </option>
            ))}
        </select>
      </div>
      <p className="small">
        <strong>Action</strong> (after {input.history.length} earlier turn{input.history.length === 1 ? '' : 's'}):
      </p>
      <pre className="diff mono">{input.action}</pre>
      {result.prediction.gen_error !== undefined ? <p className="error-text small">Generation failed: {String(result.prediction.gen_error)}</p> : null}
      <div className="sample-grid">
        <div>
          <h5>Prediction against the reference</h5>
          <Diff reference={input.reference} prediction={input.prediction} />
          <p className="muted small">− only in the real observation · + only in the prediction</p>
        </div>
        <div>
          <h5>Verdict of {judgeId}</h5>
          {judged ? <Verdict rec={judged} /> : <p className="muted">Not judged yet.</p>}
        </div>
      </div>
    </div>
  );
}

export function SampleBrowser({ bench, results, judgeId }: { bench: BenchRecord; results: BenchResult[]; judgeId: string }) {
  const rows = useMemo(() => sampleRows(results), [results]);
  const backends = orderedBackends(bench);
  const [domain, setDomain] = useState('');
  const [page, setPage] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  const [backendShown, setBackendShown] = useState('');
  const shown = rows.filter((r) => !domain || r.domain === domain);
  const pages = Math.max(1, Math.ceil(shown.length / PAGE));
  const current = Math.min(page, pages - 1);
  const openRow = rows.find((r) => r.key === open);
  const backendId = backendShown && openRow?.results.has(backendShown) ? backendShown : (backends.find((b) => openRow?.results.has(b.id))?.id ?? '');
  const domains = [...new Set(rows.map((r) => r.domain))];
  return (
    <section aria-labelledby="bench-samples-title">
      <h3 id="bench-samples-title">Samples</h3>
      <div className="toolbar">
        <label htmlFor="bench-sample-domain">Domain</label>
        <select id="bench-sample-domain" value={domain} onChange={(e) => (setDomain(e.target.value), setPage(0))}>
          <option value="">all</option>
          {domains.map((d) => (
            <option key={d} value={d}>
              {d}
            </option>
          ))}
        </select>
        <span className="muted small">
          {shown.length} samples · total score by {judgeId}
        </span>
      </div>
      <SamplesTable rows={shown.slice(current * PAGE, (current + 1) * PAGE)} backends={backends} judgeId={judgeId} open={open} setOpen={setOpen} />
      <Pager current={current} pages={pages} setPage={setPage} />
      {openRow ? <SampleDetail row={openRow} backends={backends} backendId={backendId} setBackend={setBackendShown} judgeId={judgeId} /> : null}
    </section>
  );
}
