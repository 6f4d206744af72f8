// Our scoring against the public AgentWorldBench scorer's own output on the same files
// (fixtures written by scripts/fixtures/agentworldbench-scorer.py, which runs the public code).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { exactMean, pyFixed } from '../judge/pyfloat.ts';
import { extractPrediction } from '../judge/extract.ts';
import { createLlmJudge } from '../judge/llm.ts';
import { DIMENSIONS } from '../judge/types.ts';
import { isFailedRecord, readRecords, type AwbJudgedRecord, type AwbPredictionRecord } from './records.ts';
import { judgeRecord, scoreJudged } from './runner.ts';
import { formatOfficial } from './score.ts';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const text = (name: string) => readFileSync(fixture(name), 'utf8');

describe("the public scorer's judged file", () => {
  it('reads the public file: domains without their prefix, numeric failed, 0 left out of the mean', () => {
    const { records, errors } = readRecords<AwbJudgedRecord>(text('awb-public-judged.jsonl'), 'j.jsonl', 'judged');
    expect(errors).toEqual([]);
    const table = scoreJudged(records);
    expect(table.domains.map((r) => r.domain).sort()).toEqual(['mcp', 'mytools', 'search', 'terminal', 'web']);
    const term = table.domains.find((r) => r.domain === 'terminal')!;
    expect([term.valid, term.failed]).toEqual([4, 2]);
    // Factuality 4, 0 (invalid), 2, 4 → mean of 4, 2, 4 = 10/3 → 58.33, not (4+0+2+4)/4 → 37.50.
    expect(pyFixed(term.dimensions.factuality!, 2)).toBe('58.33');
    expect(formatOfficial(table)).toBe(text('awb-public-judged.score.txt'));
  });
});

describe("lwm judge on the public judge's inputs and replies", () => {
  it('writes the scores the public judge wrote, and scores them to the same printed report', async () => {
    const { records: pub } = readRecords<AwbJudgedRecord>(text('awb-public-judged.jsonl'), 'j.jsonl', 'judged');
    const JUDGED_KEYS = ['total_score', ...DIMENSIONS, 'failed', 'strengths', 'weaknesses', 'extracted_output', 'judge_raw_output', 'error_message'];
    const ours: AwbJudgedRecord[] = [];
    for (const r of pub) {
      const pred = Object.fromEntries(Object.entries(r).filter(([k]) => !JUDGED_KEYS.includes(k))) as AwbPredictionRecord;
      // The reply the public judge parsed; a case it could not parse gets an unparseable reply.
      const reply = typeof r.judge_raw_output === 'string' ? r.judge_raw_output : 'I cannot grade this.';
      const judge = createLlmJudge({ name: 'replay', retries: 0, complete: async () => reply });
      const j = await judgeRecord(pred, judge);
      const label = String(r.id);
      if (r.id === 'w1') {
        // Where we differ on purpose: a verdict whose "scores" object holds no usable score is a
        // success with total 0 for the public judge (then counted valid but scored nowhere); for
        // us it is no verdict (retried, then failed). Score the public record in its place.
        expect(j.failed && String(j.error)).toContain('lacks a usable score');
        ours.push(r);
        continue;
      }
      expect(j.failed, label).toBe(isFailedRecord(r));
      if (typeof r.extracted_output === 'string') expect(extractPrediction(pred.gen), label).toBe(r.extracted_output);
      if (!j.failed) {
        for (const d of DIMENSIONS) expect(j[d], `${label} ${d}`).toBe(r[d]);
        expect(j.total_score, label).toBe(r.total_score);
      }
      ours.push(j);
    }
    expect(ours.find((r) => r.id === 't4')).toMatchObject({ failed: true, error: 'No model generation' });
    expect(formatOfficial(scoreJudged(ours))).toBe(text('awb-public-judged.score.txt'));
  });
});

describe("Python's float figures", () => {
  const numbers = JSON.parse(text('awb-public-numbers.json')) as {
    means: { values: number[]; mean: number; naive: number }[];
    fixed: { x: number; text: string }[];
  };

  it('exactMean is statistics.mean bit for bit where the float sum is not exact', () => {
    for (const c of numbers.means) {
      expect(c.naive).not.toBe(c.mean); // the cases were chosen so a plain sum / n differs
      expect(exactMean(c.values)).toBe(c.mean);
    }
    expect(exactMean([1, 2])).toBe(1.5);
    expect(exactMean([-1, 0.5])).toBe(-0.25);
  });

  it('pyFixed is "{:.2f}", ties to even', () => {
    for (const c of numbers.fixed) expect(pyFixed(c.x, 2), String(c.x)).toBe(c.text);
    expect((3.125).toFixed(2)).toBe('3.13'); // why toFixed is not used
  });
});
