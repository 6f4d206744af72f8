// The Bench's table model: per-backend tables equal `lwm score`'s on the exported records, the
// baselines are reference rows after the models, agreement equals `lwm agree`, an imported
// public judged file gives the public report's numbers, and the line diff.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readRecords, type AwbJudgedRecord } from '../../core/bench/records.ts';
import { scoreJudged } from '../../core/bench/runner.ts';
import { formatOfficial } from '../../core/bench/score.ts';
import { agreementScore } from '../../core/bench/agreement.ts';
import { judgeAgreement } from '../../core/judge/agree.ts';
import type { BenchRecord, BenchResult } from '../../core/records.ts';
import { backendTables, benchAgreement, comparison, exportJudged, importJudgedFile, lineDiff, orderedBackends } from './benchModel.ts';

const FIXTURE = 'src/core/bench/fixtures/awb-public-judged.jsonl';

function rec(task: string, id: string, total: number | null, extra: Partial<AwbJudgedRecord> = {}): AwbJudgedRecord {
  const s = total ?? 0;
  return {
    task,
    id,
    turn_idx: 1,
    prompt: ['a'],
    response: ['o'],
    gen: 'g',
    format: s,
    factuality: s,
    consistency: s,
    realism: s,
    quality: s,
    total_score: total,
    failed: total === null,
    strengths: [],
    weaknesses: [],
    ...extra,
  };
}

const bench: BenchRecord = {
  id: 'b',
  name: 'b',
  createdAt: 0,
  updatedAt: 0,
  origin: 'run',
  state: 'done',
  data: { datasetId: 'd', name: 'd', perDomain: 2, evalFraction: 0.1, seed: 0, domains: [] },
  samples: [],
  backends: [
    { id: 'copy-last', name: 'copy-last', kind: 'copy-last' },
    { id: 'ck', name: 'local:sft', kind: 'checkpoint', checkpoint: { key: 'ck' } },
    { id: 'reference', name: 'reference', kind: 'reference' },
  ],
  judges: [
    { id: 'local-rubric', kind: 'local' },
    { id: 'judge:big', kind: 'endpoint', endpoint: { baseUrl: 'http://x', model: 'big' } },
  ],
  generation: {},
  progress: { done: 0, total: 0 },
};

function result(
  backend: string,
  index: number,
  task: string,
  a: number | null,
  b: number | null,
  verifier?: { pass: number; applicable: boolean },
): BenchResult {
  const id = `s${index}`;
  const r = rec(task, id, a, verifier ? { verifier } : {});
  return {
    benchId: 'b',
    backend,
    index,
    prediction: { ...r, model: backend },
    judged: { 'local-rubric': { ...r, judge: 'local-rubric' }, 'judge:big': { ...rec(task, id, b), judge: 'judge:big' } },
  };
}

const results: BenchResult[] = [
  result('copy-last', 0, 'terminal', 2, 1, { pass: 0, applicable: true }),
  result('copy-last', 1, 'mcp', 1.5, 2),
  result('ck', 0, 'terminal', 3, 3, { pass: 1, applicable: true }),
  result('ck', 1, 'mcp', null, 3),
  result('reference', 0, 'terminal', 5, 5, { pass: 1, applicable: true }),
  result('reference', 1, 'mcp', 5, 4.5),
];

describe('bench tables', () => {
  it('one table per backend, models first and the baselines after as reference rows', () => {
    const tables = backendTables(bench, results, 'local-rubric');
    expect(tables.map((t) => [t.backend.name, t.baseline])).toEqual([
      ['local:sft', false],
      ['copy-last', true],
      ['reference', true],
    ]);
    expect(orderedBackends(bench).map((b) => b.id)).toEqual(['ck', 'copy-last', 'reference']);
    const groups = comparison(tables);
    expect(groups.map((g) => g.domain)).toEqual(['mcp', 'terminal', 'overall']); // the benchmark's domain order
    // The checkpoint's mcp sample failed: the mcp group still lists it (0 valid, 1 failed).
    const mcp = groups[0].rows.find((r) => r.backend.id === 'ck')!.row;
    expect([mcp.valid, mcp.failed, mcp.total]).toEqual([0, 1, null]);
    const overall = Object.fromEntries(groups[2].rows.map((r) => [r.backend.name, r.row.total]));
    expect(overall).toEqual({ 'local:sft': 50, 'copy-last': ((1.75 - 1) / 4) * 100, reference: 100 });
    // The verifier's exact-match rate per domain, beside the judge's figures.
    expect(groups[1].rows.map((r) => r.row.verifier)).toEqual([
      { checked: 1, matched: 1, rate: 100 },
      { checked: 1, matched: 0, rate: 0 },
      { checked: 1, matched: 1, rate: 100 },
    ]);
    // Another judge, another table.
    expect(backendTables(bench, results, 'judge:big')[0].table.overall.total).toBe(50);
  });

  it('the exported judged records give the table’s numbers when read back as lwm score reads them', () => {
    for (const t of backendTables(bench, results, 'local-rubric')) {
      const file = exportJudged(results, t.backend, 'local-rubric');
      expect(file.name).toMatch(/\.local-rubric\.judged\.jsonl$/);
      // lwm score: readRecordFile (readRecords on the text) → scoreJudged.
      const back = readRecords<AwbJudgedRecord>(file.text, file.name, 'judged');
      expect(back.errors).toEqual([]);
      expect(scoreJudged(back.records)).toEqual(t.table);
    }
  });

  it('judge agreement is lwm agree’s over the exported files', () => {
    const pairs = benchAgreement(bench, results);
    expect(pairs).toHaveLength(1);
    // lwm agree JUDGE@MODEL=FILE ...: every record of each file through agreementScore.
    const scores = bench.backends.flatMap((b) =>
      bench.judges.flatMap((j) =>
        readRecords<AwbJudgedRecord>(exportJudged(results, b, j.id).text, 'f', 'judged').records.flatMap((r) => agreementScore(r, j.id, b.name) ?? []),
      ),
    );
    expect(judgeAgreement(scores)).toEqual(pairs);
    expect(pairs[0].models).toEqual(['copy-last', 'local:sft', 'reference']);
    // The failed sample of the checkpoint is left out: 5 of 6 (model, sample) pairs.
    expect(pairs[0].samples).toBe(5);
  });
});

describe('importing a judged file', () => {
  it('reads the public scorer’s judged file and scores it as the public report', () => {
    const text = readFileSync(FIXTURE, 'utf8');
    const out = importJudgedFile(text, 'awb-public-judged.jsonl', 'imp', 1);
    if ('errors' in out) throw new Error(out.errors.join('\n'));
    expect(out.bench).toMatchObject({ origin: 'import', state: 'done', name: 'awb-public-judged.jsonl' });
    const judge = out.bench.judges[0].id;
    const tables = backendTables(out.bench, out.results, judge);
    const records = readRecords<AwbJudgedRecord>(text, FIXTURE, 'judged').records;
    expect(tables).toHaveLength(1); // the file names no model: one backend, named after the file
    expect(tables[0].backend.name).toBe('awb-public-judged');
    expect(tables[0].table).toEqual(scoreJudged(records));
    expect(formatOfficial(tables[0].table)).toBe(readFileSync('src/core/bench/fixtures/awb-public-judged.score.txt', 'utf8'));
    expect(out.results.reduce((n, r) => n + Object.keys(r.judged).length, 0)).toBe(records.length);
  });

  it('groups records by model and judge, one result with both verdicts per sample', () => {
    const lines = [
      { ...rec('terminal', 'a', 4), model: 'm1', judge: 'j1' },
      { ...rec('terminal', 'a', 2), model: 'm1', judge: 'j2' },
      { ...rec('terminal', 'a', 3), model: 'm2', judge: 'j1' },
      { ...rec('terminal', 'b', 5), model: 'm2', judge: 'j2' },
    ];
    const out = importJudgedFile(lines.map((l) => JSON.stringify(l)).join('\n'), 'x.jsonl', 'i');
    if ('errors' in out) throw new Error(out.errors.join('\n'));
    expect(out.bench.backends.map((b) => b.name)).toEqual(['m1', 'm2']);
    expect(out.bench.judges.map((j) => j.id)).toEqual(['j1', 'j2']);
    expect(out.results.map((r) => [r.backend, r.index, Object.keys(r.judged)])).toEqual([
      ['b0', 0, ['j1', 'j2']],
      ['b1', 0, ['j1']],
      ['b1', 1, ['j2']],
    ]);
    // The prediction keeps the record's own fields, not the judge's.
    expect(out.results[0].prediction).not.toHaveProperty('total_score');
    expect(out.results[0].prediction.gen).toBe('g');
  });

  it('refuses a file with bad records, saying where', () => {
    const out = importJudgedFile(
      '{"task":"terminal","id":1,"turn_idx":1,"prompt":["a"],"response":["o"],"gen":"g","format":6,"failed":false}\nnot json\n',
      'bad.jsonl',
      'i',
    );
    expect('errors' in out && out.errors).toEqual([
      expect.stringMatching(/^bad\.jsonl:1: \/format: 6 is not a score/),
      expect.stringMatching(/^bad\.jsonl:2: not valid JSON/),
    ]);
    expect(importJudgedFile('\n', 'empty.jsonl', 'i')).toEqual({ errors: ['empty.jsonl: no judged records'] });
  });
});

describe('lineDiff', () => {
  it('keeps common lines and marks removed and added ones', () => {
    expect(lineDiff('a\nb\nc', 'a\nx\nc\nd')).toEqual([
      { op: '=', text: 'a' },
      { op: '-', text: 'b' },
      { op: '+', text: 'x' },
      { op: '=', text: 'c' },
      { op: '+', text: 'd' },
    ]);
    expect(lineDiff('same', 'same')).toEqual([{ op: '=', text: 'same' }]);
  });

  it('falls back to a line-by-line comparison past its work bound, still covering both texts', () => {
    const a = Array.from({ length: 30 }, (_, i) => `l${i}`).join('\n');
    const b = Array.from({ length: 30 }, (_, i) => (i % 3 ? `l${i}` : `x${i}`)).join('\n');
    const d = lineDiff(a, b, 100);
    expect(
      d
        .filter((l) => l.op !== '+')
        .map((l) => l.text)
        .join('\n'),
    ).toBe(a);
    expect(
      d
        .filter((l) => l.op !== '-')
        .map((l) => l.text)
        .join('\n'),
    ).toBe(b);
    const full = lineDiff(a, b);
    expect(
      full
        .filter((l) => l.op !== '+')
        .map((l) => l.text)
        .join('\n'),
    ).toBe(a);
    expect(
      full
        .filter((l) => l.op !== '-')
        .map((l) => l.text)
        .join('\n'),
    ).toBe(b);
  });
});
