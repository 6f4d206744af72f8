// The Bench view's data model, pure: from a stored benchmark and its results to the
// AgentWorldBench tables (one per backend, the public scorer's numbers through scoreJudged, as
// `lwm score` computes them), the comparison rows that put the backends side by side with the
// baselines as reference rows, the records an export writes, judge agreement (as `lwm agree`),
// a judged file read as a benchmark, and the line diff of a prediction against its reference.
import { agreementScore } from '../../core/bench/agreement.ts';
import { readRecords, sampleKey, toJsonl, type AwbJudgedRecord, type AwbPredictionRecord } from '../../core/bench/records.ts';
import { scoreJudged } from '../../core/bench/runner.ts';
import type { ScoreRow, ScoreTable } from '../../core/bench/score.ts';
import { judgeAgreement, type JudgePairAgreement, type JudgedScore } from '../../core/judge/agree.ts';
import type { BenchBackendRef, BenchJudgeRef, BenchRecord, BenchResult } from '../../core/records.ts';

/** Baselines are reference rows: shown beside the models, never ranked among them. */
export function isBaseline(ref: Pick<BenchBackendRef, 'kind' | 'name'>): boolean {
  return ref.kind === 'copy-last' || ref.kind === 'reference' || (ref.kind === 'imported' && (ref.name === 'copy-last' || ref.name === 'reference'));
}

/** Models first (in the bench's order), then the baselines. */
export function orderedBackends(bench: Pick<BenchRecord, 'backends'>): BenchBackendRef[] {
  return [...bench.backends.filter((b) => !isBaseline(b)), ...bench.backends.filter(isBaseline)];
}

/** Results by backend id, each list in sample order. */
export function resultsByBackend(results: readonly BenchResult[]): Map<string, BenchResult[]> {
  const by = new Map<string, BenchResult[]>();
  for (const r of results) {
    let list = by.get(r.backend);
    if (!list) by.set(r.backend, (list = []));
    list.push(r);
  }
  for (const list of by.values()) list.sort((a, b) => a.index - b.index);
  return by;
}

/** A backend's judged records by one judge, in sample order: what the table scores and an export writes. */
export function judgedRecords(results: readonly BenchResult[], backendId: string, judgeId: string): AwbJudgedRecord[] {
  return results
    .filter((r) => r.backend === backendId && Object.hasOwn(r.judged, judgeId))
    .sort((a, b) => a.index - b.index)
    .map((r) => r.judged[judgeId]);
}

/** A backend's prediction records, in sample order. */
export function predictionRecords(results: readonly BenchResult[], backendId: string): AwbPredictionRecord[] {
  return results
    .filter((r) => r.backend === backendId)
    .sort((a, b) => a.index - b.index)
    .map((r) => r.prediction);
}

export interface BackendTable {
  backend: BenchBackendRef;
  baseline: boolean;
  /** Judged records the table scores (so far, while a run goes on). */
  judged: number;
  table: ScoreTable;
}

/** One AgentWorldBench table per backend that has judged records by `judgeId`. */
export function backendTables(bench: Pick<BenchRecord, 'backends'>, results: readonly BenchResult[], judgeId: string): BackendTable[] {
  const out: BackendTable[] = [];
  for (const backend of orderedBackends(bench)) {
    const records = judgedRecords(results, backend.id, judgeId);
    if (!records.length) continue;
    out.push({ backend, baseline: isBaseline(backend), judged: records.length, table: scoreJudged(records) });
  }
  return out;
}

export interface ComparisonGroup {
  /** A domain, or 'overall' (last). */
  domain: string;
  rows: { backend: BenchBackendRef; baseline: boolean; row: ScoreRow }[];
}

/** Rows grouped by domain (every domain any backend has, in table order), then overall: the backends side by side. */
export function comparison(tables: readonly BackendTable[]): ComparisonGroup[] {
  const domains: string[] = [];
  for (const t of tables) for (const r of t.table.domains) if (!domains.includes(r.domain)) domains.push(r.domain);
  const groups: ComparisonGroup[] = domains.map((domain) => ({
    domain,
    rows: tables.flatMap((t) => {
      const row = t.table.domains.find((r) => r.domain === domain);
      return row ? [{ backend: t.backend, baseline: t.baseline, row }] : [];
    }),
  }));
  groups.push({ domain: 'overall', rows: tables.map((t) => ({ backend: t.backend, baseline: t.baseline, row: t.table.overall })) });
  return groups;
}

/** Judge agreement over every pair of the bench's judges, as `lwm agree` computes it (failed and zero totals left out). */
export function benchAgreement(bench: Pick<BenchRecord, 'backends' | 'judges'>, results: readonly BenchResult[]): JudgePairAgreement[] {
  const names = new Map(bench.backends.map((b) => [b.id, b.name]));
  const scores: JudgedScore[] = [];
  for (const r of results) {
    for (const j of bench.judges) {
      if (!Object.hasOwn(r.judged, j.id)) continue;
      const score = agreementScore(r.judged[j.id], j.id, names.get(r.backend) ?? r.backend);
      if (score) scores.push(score);
    }
  }
  return judgeAgreement(scores);
}

/** A file name part from a backend or judge name. */
export function fileSafe(name: string): string {
  return (
    name
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60) || 'bench'
  );
}

export function exportJudged(results: readonly BenchResult[], backend: BenchBackendRef, judgeId: string): { name: string; text: string } {
  return { name: `${fileSafe(backend.name)}.${fileSafe(judgeId)}.judged.jsonl`, text: toJsonl(judgedRecords(results, backend.id, judgeId)) };
}

export function exportPredictions(results: readonly BenchResult[], backend: BenchBackendRef): { name: string; text: string } {
  return { name: `${fileSafe(backend.name)}.predictions.jsonl`, text: toJsonl(predictionRecords(results, backend.id)) };
}

export interface ImportedBench {
  bench: BenchRecord;
  results: BenchResult[];
}

/**
 * A judged AgentWorldBench file (ours, or the public scorer's input) as a benchmark: records
 * grouped by their `model` (else the file name) into backends and by their `judge` (else
 * "imported") into judges; a sample judged by two judges is one result with both verdicts.
 * Errors are `file:line: message`, as `lwm score` prints them; nothing is kept when there are any.
 */
export function importJudgedFile(text: string, file: string, id: string, now = Date.now()): ImportedBench | { errors: string[] } {
  const { records, errors } = readRecords<AwbJudgedRecord>(text, file, 'judged');
  if (errors.length) return { errors };
  if (!records.length) return { errors: [`${file}: no judged records`] };
  const fallbackModel = file.replace(/\.jsonl$/i, '').replace(/\.judged$/i, '') || 'imported';
  const backends: BenchBackendRef[] = [];
  const judges: BenchJudgeRef[] = [];
  const results = new Map<string, BenchResult>();
  const next = new Map<string, number>();
  for (const rec of records) {
    const model = typeof rec.model === 'string' && rec.model ? rec.model : fallbackModel;
    const judge = typeof rec.judge === 'string' && rec.judge ? rec.judge : 'imported';
    let b = backends.find((x) => x.name === model);
    if (!b) backends.push((b = { id: `b${backends.length}`, name: model, kind: 'imported' }));
    if (!judges.some((j) => j.id === judge)) judges.push({ id: judge, kind: 'imported' });
    const key = `${b.id}\u0000${sampleKey(rec)}`;
    let r = results.get(key);
    if (!r) {
      const index = next.get(b.id) ?? 0;
      next.set(b.id, index + 1);
      const {
        format: _f,
        factuality: _a,
        consistency: _c,
        realism: _r,
        quality: _q,
        total_score: _t,
        failed: _x,
        strengths: _s,
        weaknesses: _w,
        judge: _j,
        verifier: _v,
        error: _e,
        ...prediction
      } = rec;
      results.set(key, (r = { benchId: id, backend: b.id, index, prediction: prediction as AwbPredictionRecord, judged: {} }));
    }
    // A second verdict of the same judge on the same sample: the later line wins, as a rewrite would.
    r.judged[judge] = rec;
  }
  const list = [...results.values()];
  const bench: BenchRecord = {
    id,
    name: file,
    createdAt: now,
    updatedAt: now,
    origin: 'import',
    state: 'done',
    data: { datasetId: null, name: file, perDomain: null, evalFraction: 0, seed: 0, domains: [...new Set(records.map((r) => r.task))] },
    samples: [],
    backends,
    judges,
    generation: {},
    progress: { done: records.length, total: records.length },
  };
  return { bench, results: list };
}

export type DiffLine = { op: '=' | '-' | '+'; text: string };

/**
 * Lines of `a` (the reference) against `b` (the prediction): kept, removed, added, by the
 * longest common subsequence. Beyond `limit` line pairs it compares line by line instead (a
 * bound on the work for very long observations).
 */
export function lineDiff(a: string, b: string, limit = 4_000_000): DiffLine[] {
  const x = a.split('\n');
  const y = b.split('\n');
  if (x.length * y.length > limit) {
    const out: DiffLine[] = [];
    for (let i = 0; i < Math.max(x.length, y.length); i++) {
      if (i < x.length && i < y.length && x[i] === y[i]) out.push({ op: '=', text: x[i] });
      else {
        if (i < x.length) out.push({ op: '-', text: x[i] });
        if (i < y.length) out.push({ op: '+', text: y[i] });
      }
    }
    return out;
  }
  const n = x.length;
  const m = y.length;
  // lcs[i][j]: the LCS length of x[i..] and y[j..], one flat array.
  const lcs = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i * (m + 1) + j] = x[i] === y[j] ? lcs[(i + 1) * (m + 1) + j + 1] + 1 : Math.max(lcs[(i + 1) * (m + 1) + j], lcs[i * (m + 1) + j + 1]);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      out.push({ op: '=', text: x[i] });
      i++;
      j++;
    } else if (lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1]) out.push({ op: '-', text: x[i++] });
    else out.push({ op: '+', text: y[j++] });
  }
  while (i < n) out.push({ op: '-', text: x[i++] });
  while (j < m) out.push({ op: '+', text: y[j++] });
  return out;
}

/** "1 min 5 s" style, for the ETA. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}
