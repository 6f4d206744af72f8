// The bench runner's record handling (scripts/bench-records.mjs) and the judge suite's output.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { appendRecords, parseRecords, speedupRecords } from '../../scripts/bench-records.mjs';

const tmp = mkdtempSync(join(tmpdir(), 'lwm-bench-'));
const rec = (suite: string, engine: string, metric: string, value: number) => ({ suite, case: 'c', engine, metric, value, unit: 'u' });
const lines = (f: string) =>
  readFileSync(f, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('bench records', () => {
  it('appends each suite as it finishes, after what the file already held', () => {
    const out = join(tmp, 'sub', 'bench.jsonl');
    appendRecords(out, [rec('old', 'lwm', 'x', 1)]);
    appendRecords(out, [rec('tokenizer', 'lwm-bpe', 'train_s', 2)], { run: 'r1', runtime: 'node' });
    // The first suite's records are on disk before the second suite runs (or crashes).
    expect(lines(out).map((r) => r.suite)).toEqual(['old', 'tokenizer']);
    appendRecords(out, [rec('judge', 'lwm-rubric', 'judge_per_s', 3), rec('judge', 'lwm-verifier', 'verify_per_s', 4)], { run: 'r1' });
    expect(lines(out)).toEqual([
      rec('old', 'lwm', 'x', 1),
      { ...rec('tokenizer', 'lwm-bpe', 'train_s', 2), run: 'r1', runtime: 'node' },
      { ...rec('judge', 'lwm-rubric', 'judge_per_s', 3), run: 'r1' },
      { ...rec('judge', 'lwm-verifier', 'verify_per_s', 4), run: 'r1' },
    ]);
    expect(appendRecords(out, [])).toEqual([]);
    expect(lines(out)).toHaveLength(4);
  });
  it('keeps the good lines of a suite output and names every bad one instead of crashing', () => {
    const text = [JSON.stringify(rec('s', 'e', 'm', 1)), '{', '  "judgements": 5000,', JSON.stringify({ suite: 's', case: 'c' }), '[1]', ''].join('\n');
    const { records, errors } = parseRecords(text, 's');
    expect(records).toEqual([rec('s', 'e', 'm', 1)]);
    expect(errors).toHaveLength(4);
    expect(errors[0]).toMatch(/^suite 's' output line 2 is not JSON/);
    expect(errors[2]).toBe("suite 's' output line 4 lacks engine, metric, unit, value");
    expect(errors[3]).toBe("suite 's' output line 5 is not a JSON object");
  });
  it('computes our speed against each peer of the same case and metric', () => {
    const s = speedupRecords(
      [rec('m', 'lwm-webgpu', 'gflops', 30), rec('m', 'tfjs', 'gflops', 10), rec('m', 'tfjs', 'ms', 1), rec('n', 'tfjs', 'gflops', 1)],
      'r',
    );
    expect(s).toEqual([{ suite: 'm', case: 'c', engine: 'lwm-vs-tfjs', metric: 'speedup_gflops', value: 3, unit: 'x', peer: 'tfjs', run: 'r' }]);
  });
  it('the judge suite writes JSON lines of bench records', () => {
    const out = join(tmp, 'judge.jsonl');
    writeFileSync(out, '');
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench-judge.ts', '--n', '200', '--json', out], { cwd: root, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const { records, errors } = parseRecords(readFileSync(out, 'utf8'), 'judge');
    expect(errors).toEqual([]);
    expect(records.map((x) => x.metric)).toEqual(['judge_per_s', 'judge_us_each', 'judge_cold_per_s', 'verify_per_s', 'mean_total', 'pass_rate']);
    for (const x of records) {
      expect(x.suite).toBe('judge');
      expect(Number.isFinite(x.value)).toBe(true);
    }
  });
});
