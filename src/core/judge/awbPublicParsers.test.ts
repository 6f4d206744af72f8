// Our prediction extraction and verdict parsing against the public AgentWorldBench parsers'
// outputs on the same inputs (src/core/judge/fixtures/awb-public-parsers.json, written by
// scripts/fixtures/agentworldbench-scorer.py, which runs the public code).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { extractPrediction, stripThink } from './extract.ts';
import { parseVerdict } from './parse.ts';
import { DIMENSIONS, meanScore } from './types.ts';

const fixture = JSON.parse(readFileSync(new URL('./fixtures/awb-public-parsers.json', import.meta.url), 'utf8')) as {
  predictions: { raw: string; output: string; think_removed: string }[];
  verdicts: { raw: string; success: boolean; scores: Record<string, number>; total_score: number }[];
};

describe('think removal and extraction as the public parser does them', () => {
  it('removes think blocks exactly as _remove_thinking_tags (unclosed ones stop at the answer tag)', () => {
    for (const c of fixture.predictions) expect(stripThink(c.raw, ['predicted_observation']).trim(), JSON.stringify(c.raw)).toBe(c.think_removed.trim());
  });

  it('extracts the prediction parse_model_output extracts', () => {
    for (const c of fixture.predictions) {
      const cleaned = stripThink(c.raw, ['predicted_observation']).toLowerCase();
      // Ours only: a closing tag with no opener means the opener sat in the prompt (the public
      // parser passes the whole text on, closing tag and all).
      if (!cleaned.includes('<predicted_observation>') && cleaned.includes('</predicted_observation>')) continue;
      // The public parser returns the words "No output" where nothing is left; we return "".
      expect(extractPrediction(c.raw).trim(), JSON.stringify(c.raw)).toBe(c.output === 'No output' ? '' : c.output);
    }
  });

  it('keeps the answer after an unclosed think (the case that used to be swallowed)', () => {
    expect(extractPrediction('<think>unclosed thought\n<predicted_observation>\nfile.txt\n</predicted_observation>')).toBe('file.txt');
    expect(extractPrediction('answer first\n<think>I should also say <predicted_observation>x')).toBe('x');
    expect(extractPrediction('answer\n<think>no tag follows')).toBe('answer');
  });
});

describe('verdict parsing as parse_judge_output does it', () => {
  it('gives the public scores and total_score (0 = invalid dimension, half-to-even, clamped)', () => {
    for (const c of fixture.verdicts) {
      const v = parseVerdict(c.raw);
      const label = JSON.stringify(c.raw.slice(0, 120));
      expect(v.ok, label).toBe(c.success);
      if (!v.ok) continue;
      // Where we differ on purpose: the public parser keeps a negative score unclamped (and then
      // leaves it out of total_score); we clamp it to 1 like every other out-of-range score.
      const negative = DIMENSIONS.filter((d) => c.scores[d] < 0);
      const expected = { ...c.scores };
      for (const d of negative) expected[d] = 1;
      expect(v.scores, label).toEqual(expected);
      if (!negative.length) expect(meanScore(v.scores), label).toBe(c.total_score);
    }
  });

  it('reads the verdict after an unclosed think instead of losing it', () => {
    const v = parseVerdict(
      '<think>the answer will be <final_evaluation>{"scores": {"format": 2, "factuality": 2, "consistency": 2, "realism": 2, "quality": 2}}</final_evaluation>',
    );
    expect(v.ok && v.scores.format).toBe(2);
  });
});
