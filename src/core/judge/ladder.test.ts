import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DOMAINS, type Trajectory } from '../schema/types.ts';
import { generateTrajectories } from '../../envs/index.ts';
import { expandTurns } from '../turns/index.ts';
import { verify } from './verifier.ts';
import {
  FIXED_STRINGS,
  ladderInput,
  ladderPredictions,
  ladderSamples,
  ladderViolations,
  oneTokenChange,
  randomText,
  RUNGS,
  runLadder,
  toPercent,
} from './ladder.ts';
import { rubricJudge } from './rubric.ts';

// The held-out turns of the default dataset (its eval split), every domain.
const trajectories = readFileSync(new URL('../../../public/default-dataset.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Trajectory);
const samples = ladderSamples(trajectories);

describe('the ladder predictions', () => {
  it('change exactly one character of a deterministic token, which the verifier then rejects', () => {
    let checked = 0;
    for (const s of samples.slice(0, 300)) {
      const p = ladderPredictions(s);
      if (!p) continue;
      const diff = [...p.one_token].filter((ch, i) => ch !== s.targetObservation[i]).length;
      expect(p.one_token.length).toBe(s.targetObservation.length);
      expect(diff).toBe(1);
      expect(
        verify({ domain: s.domain, history: s.history, action: s.action, reference: s.targetObservation, prediction: p.one_token, spans: s.targetSpans }).pass,
      ).toBe(false);
      checked++;
    }
    expect(checked).toBeGreaterThan(200);
  });

  it('are deterministic, and random text keeps only the reference length and line breaks', () => {
    const s = samples.find((x) => x.targetObservation.includes('\n') && ladderPredictions(x))!;
    expect(ladderPredictions(s)).toEqual(ladderPredictions(s));
    const p = ladderPredictions(s)!;
    expect(p.random.length).toBe(s.targetObservation.length);
    expect(p.random.split('\n').map((l) => l.length)).toEqual(s.targetObservation.split('\n').map((l) => l.length));
    expect(p.previous).toBe(s.turnIndex > 0 ? s.history[s.turnIndex - 1].observation : s.systemPrompt.initial_state);
  });

  it('leave a turn out only when no deterministic span holds a letter or digit', () => {
    expect(oneTokenChange('ok', [{ start: 0, end: 2, kind: 'pre_existing' }], () => 0)).toBeNull();
    expect(oneTokenChange('$ ', [{ start: 0, end: 2, kind: 'deterministic' }], () => 0)).toBeNull();
    expect(oneTokenChange('a9', [{ start: 0, end: 2, kind: 'deterministic' }], () => 0.99)).toBe('a0');
    expect(randomText('ab\ncd', () => 0)).toBe('aa\naa');
  });

  it('have a fixed plausible string for every domain', () => {
    for (const d of DOMAINS) expect(FIXED_STRINGS[d].length).toBeGreaterThan(40);
  });
});

describe('the local rubric judge on the ladder (eval split of the default dataset)', () => {
  const rows = runLadder(samples, ladderInput, rubricJudge);

  it('judges every domain on many held-out turns', () => {
    expect(rows.map((r) => r.domain).sort()).toEqual([...DOMAINS].sort());
    for (const r of rows) expect(r.turns).toBeGreaterThanOrEqual(70);
  });

  it.each(DOMAINS)('%s: means fall strictly down the ladder, fixed and random text score under 25', (domain) => {
    const row = rows.find((r) => r.domain === domain)!;
    expect(ladderViolations(row)).toEqual([]);
    expect(toPercent(row.mean.reference)).toBe(100);
    expect(toPercent(row.mean.empty)).toBe(0);
    expect(row.mean.one_token).toBeGreaterThan(row.mean.previous);
    for (const r of ['fixed', 'random'] as const) expect(toPercent(row.mean[r])).toBeLessThan(25);
    for (let i = 1; i < RUNGS.length; i++) expect(row.mean[RUNGS[i - 1]]).toBeGreaterThan(row.mean[RUNGS[i]]);
  });

  it('holds on fresh trajectories from the environments too (seed 7, not the default dataset)', () => {
    const fresh = expandTurns(DOMAINS.flatMap((d) => generateTrajectories(d, 25, 7)));
    expect(runLadder(fresh, ladderInput, rubricJudge).flatMap((r) => ladderViolations(r))).toEqual([]);
  });

  it('holds without span labels too (data imported from formats that carry none)', () => {
    const bare = runLadder(samples, (s, p) => ({ ...ladderInput(s, p), spans: undefined }), rubricJudge);
    expect(bare.flatMap((r) => ladderViolations(r))).toEqual([]);
  });
});
