// A benchmark's results: the AgentWorldBench table with the backends side by side (baselines as
// reference rows), the verifier's exact-match rate per domain, a bar chart of the totals, the
// exports (AgentWorldBench JSONL, what `lwm score` reads), and judge agreement.
import { useMemo, useState } from 'react';
import { DIMENSIONS } from '../../../core/judge/types.ts';
import { pyFixed } from '../../../core/judge/pyfloat.ts';
import type { ScoreRow } from '../../../core/bench/score.ts';
import type { BenchRecord, BenchResult } from '../../../core/records.ts';
import { BarChart } from '../../components/BarChart.tsx';
import { saveFile } from '../../lib/download.ts';
import { useBenchStore } from '../../stores/bench.ts';
import { useEndpointStore } from '../../stores/endpoints.ts';
import { backendTables, benchAgreement, comparison, exportJudged, exportPredictions, orderedBackends } from '../../stores/benchModel.ts';
import { EndpointSelect } from '../../components/EndpointForm.tsx';
import { guardJob, JUDGE_WRITE } from '../../stores/storage.ts';

/** Two decimals as `lwm score` prints them (Python's rounding of the exact value). */
export const fmt2 = (x: number | null): string => (x === null ? '–' : pyFixed(x, 2));
const fmt3 = (x: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(3));

function download(file: { name: string; text: string }) {
  saveFile(new Blob([file.text], { type: 'application/jsonl' }), file.name);
}

function Cells({ row, withVerifier }: { row: ScoreRow; withVerifier: boolean }) {
  return (
    <>
      {DIMENSIONS.map((d) => (
        <td key={d} className="num" data-col={d}>
          {fmt2(row.dimensions[d])}
        </td>
      ))}
      <td className="num total" data-col="total">
        {fmt2(row.total)}
      </td>
      <td className="num" data-col="valid">
        {row.valid}
      </td>
      <td className="num" data-col="failed">
        {row.failed}
      </td>
      {withVerifier ? (
        <>
          <td className="num" data-col="exact">
            {fmt2(row.verifier.rate)}
          </td>
          <td className="num" data-col="checked">
            {row.verifier.checked}
          </td>
        </>
      ) : null}
    </>
  );
}

type BackendTable = ReturnType<typeof backendTables>[number];
type DomainGroup = ReturnType<typeof comparison>[number];

function ScoreHead({ withVerifier }: { withVerifier: boolean }) {
  return (
    <thead>
      <tr>
        <th scope="col">domain</th>
        <th scope="col">backend</th>
        {DIMENSIONS.map((d) => (
          <th key={d} scope="col" className="num">
            {d}
          </th>
        ))}
        <th scope="col" className="num">
          total
        </th>
        <th scope="col" className="num">
          valid
        </th>
        <th scope="col" className="num">
          failed
        </th>
        {withVerifier ? (
          <>
            <th scope="col" className="num" title="the verifier's exact-match rate on the deterministic region">
              exact %
            </th>
            <th scope="col" className="num" title="samples with a deterministic region to check">
              checked
            </th>
          </>
        ) : null}
      </tr>
    </thead>
  );
}

/** The AgentWorldBench table: a row group per domain, the backends side by side, the best overall total marked. */
function ScoreTable({ groups, judgeId, best, withVerifier }: { groups: DomainGroup[]; judgeId: string; best: number; withVerifier: boolean }) {
  return (
    <div className="table-scroll">
      <table className="table compact bench-table" data-testid="bench-table" aria-label={`AgentWorldBench scores by ${judgeId}`}>
        <caption className="muted small" style={{ textAlign: 'left' }}>
          Per domain and dimension, (mean − 1) / 4 × 100 over the valid samples, as the public scorer computes it; total from each sample’s total_score; exact:
          the verifier’s exact-match rate on the deterministic region over the samples it could check. Baselines are reference rows, in italics.
        </caption>
        <ScoreHead withVerifier={withVerifier} />
        {groups.map((g) => (
          <tbody key={g.domain} className={g.domain === 'overall' ? 'group overall' : 'group'} data-domain={g.domain}>
            {g.rows.map((r, i) => (
              <tr
                key={r.backend.id}
                className={[r.baseline ? 'baseline' : '', g.domain === 'overall' && r.row.total === best ? 'best' : ''].join(' ').trim() || undefined}
                data-backend={r.backend.name}
              >
                {i === 0 ? (
                  <th scope="rowgroup" rowSpan={g.rows.length}>
                    {g.domain}
                  </th>
                ) : null}
                <th scope="row" style={{ fontWeight: 500 }}>
                  {r.backend.name}
                  {r.baseline ? <span className="muted small"> (baseline)</span> : null}
                </th>
                <Cells row={r.row} withVerifier={withVerifier} />
              </tr>
            ))}
          </tbody>
        ))}
      </table>
    </div>
  );
}

/** Each backend's predictions and judged records as AgentWorldBench JSONL files. */
function Exports({ tables, results, judgeId }: { tables: BackendTable[]; results: BenchResult[]; judgeId: string }) {
  return (
    <>
      <h3>Export (AgentWorldBench JSONL)</h3>
      <p className="muted small">
        Judged records give these numbers under <code>lwm score FILE</code>; predictions go through <code>lwm judge</code> or the public judge.
      </p>
      <table className="table compact" aria-label="Exports">
        <tbody>
          {tables.map((t) => (
            <tr key={t.backend.id}>
              <th scope="row" style={{ fontWeight: 500 }}>
                {t.backend.name}
              </th>
              <td>
                <div className="actions">
                  <button
                    type="button"
                    className="secondary small"
                    aria-label={`Export predictions of ${t.backend.name}`}
                    onClick={() => download(exportPredictions(results, t.backend))}
                  >
                    Predictions
                  </button>
                  <button
                    type="button"
                    className="secondary small"
                    aria-label={`Export judged records of ${t.backend.name}`}
                    onClick={() => download(exportJudged(results, t.backend, judgeId))}
                  >
                    Judged ({judgeId})
                  </button>
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

export function BenchResults({
  bench,
  results,
  judgeId,
  onJudge,
}: {
  bench: BenchRecord;
  results: BenchResult[];
  judgeId: string;
  onJudge: (id: string) => void;
}) {
  const tables = useMemo(() => backendTables(bench, results, judgeId), [bench, results, judgeId]);
  const groups = useMemo(() => comparison(tables), [tables]);
  const best = useMemo(() => {
    const totals = tables.map((t) => t.table.overall.total ?? -Infinity);
    return Math.max(...totals);
  }, [tables]);
  // The verifier's columns where records carry its verdicts (as lwm score prints them).
  const withVerifier = tables.some((t) => t.table.overall.verifier.checked > 0);
  const order = orderedBackends(bench);
  const colour = (id: string) =>
    `chart-s${
      Math.max(
        0,
        order.findIndex((b) => b.id === id),
      ) % 6
    }`;
  if (!tables.length) return <p className="muted">No judged sample yet{bench.judges.length > 1 ? ' by this judge' : ''}.</p>;
  return (
    <>
      {bench.judges.length > 1 ? (
        <div className="field" style={{ maxWidth: '20rem' }}>
          <label htmlFor="bench-judge-shown">Scores by judge</label>
          <select id="bench-judge-shown" value={judgeId} onChange={(e) => onJudge(e.target.value)}>
            {bench.judges.map((j) => (
              <option key={j.id} value={j.id}>
                {j.id}
              </option>
            ))}
          </select>
        </div>
      ) : null}
      <ScoreTable groups={groups} judgeId={judgeId} best={best} withVerifier={withVerifier} />
      <BarChart
        title={`Total score by domain (${judgeId})`}
        testId="bench-chart"
        categories={groups.map((g) => g.domain)}
        yMax={100}
        series={tables.map((t) => ({
          name: t.backend.name,
          className: colour(t.backend.id),
          muted: t.baseline,
          values: groups.map((g) => g.rows.find((r) => r.backend.id === t.backend.id)?.row.total ?? null),
        }))}
      />
      <Exports tables={tables} results={results} judgeId={judgeId} />
    </>
  );
}

function AgreementTable({ pairs }: { pairs: ReturnType<typeof benchAgreement> }) {
  return (
    <>
      <table className="table compact">
        <thead>
          <tr>
            <th scope="col">judge A</th>
            <th scope="col">judge B</th>
            <th scope="col" className="num">
              models
            </th>
            <th scope="col" className="num">
              samples
            </th>
            <th scope="col" className="num">
              Spearman ρ
            </th>
            <th scope="col" className="num">
              Kendall τ-b
            </th>
            <th scope="col" className="num">
              Pearson r
            </th>
          </tr>
        </thead>
        <tbody>
          {pairs.map((p) => (
            <tr key={p.judges.join('|')}>
              <td>{p.judges[0]}</td>
              <td>{p.judges[1]}</td>
              <td className="num">{p.models.length}</td>
              <td className="num">{p.samples}</td>
              <td className="num">{fmt3(p.spearman)}</td>
              <td className="num">{fmt3(p.kendallTauB)}</td>
              <td className="num">{fmt3(p.pearson)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted small">
        Spearman and Kendall compare the judges’ rankings of the backends (by mean total score over the samples both judged); Pearson compares them sample by
        sample; as <code>lwm agree</code>.
      </p>
    </>
  );
}

/** Judges a run bench's predictions again with another judge (the local one, when it has not judged them yet, or an endpoint). */
function JudgeAgainForm({ bench }: { bench: BenchRecord }) {
  const { live, addJudge } = useBenchStore();
  const hasLocal = bench.judges.some((j) => j.kind === 'local');
  const [kind, setKind] = useState<'local' | 'endpoint'>(hasLocal ? 'endpoint' : 'local');
  const known = useEndpointStore((s) => s.endpoints);
  const [judgeId, setJudgeId] = useState('');
  const [error, setError] = useState('');
  function submit(e: React.FormEvent) {
    e.preventDefault();
    if (kind === 'endpoint') {
      const endpoint = known.find((x) => x.id === judgeId);
      setError(endpoint ? '' : 'Choose the judge’s endpoint, or add one.');
      if (endpoint) guardJob(JUDGE_WRITE, () => void addJudge(bench.id, { kind: 'endpoint', endpoint }));
    } else guardJob(JUDGE_WRITE, () => void addJudge(bench.id, { kind: 'local' }));
  }
  return (
    <form onSubmit={submit} className="bench-form" aria-label="Judge again" style={{ maxWidth: '32rem' }}>
      <div className="field" style={{ maxWidth: '26rem' }}>
        <label htmlFor="bench-again-kind">Judge the predictions again with</label>
        <select id="bench-again-kind" value={kind} onChange={(e) => setKind(e.target.value as 'local' | 'endpoint')}>
          {!hasLocal ? <option value="local">the local rubric judge</option> : null}
          <option value="endpoint">an LLM judge at an endpoint</option>
        </select>
      </div>
      {kind === 'endpoint' ? (
        <EndpointSelect id="bench-again-endpoint" label="Judge endpoint" value={judgeId} onChange={setJudgeId} error={error || undefined} />
      ) : null}
      <button type="submit" className="secondary" disabled={!!live}>
        Judge again
      </button>
    </form>
  );
}

export function Agreement({ bench, results }: { bench: BenchRecord; results: BenchResult[] }) {
  const pairs = useMemo(() => benchAgreement(bench, results), [bench, results]);
  const canRun = bench.origin === 'run';
  return (
    <section aria-labelledby="bench-agree-title" data-testid="bench-agreement">
      <h3 id="bench-agree-title">Judge agreement</h3>
      {pairs.length ? (
        <AgreementTable pairs={pairs} />
      ) : (
        <p className="muted small">
          Agreement needs a second judge of the same predictions{canRun ? ': judge them again below' : ' (import a file judged by two judges)'}.
        </p>
      )}
      {canRun ? <JudgeAgainForm bench={bench} /> : null}
    </section>
  );
}
