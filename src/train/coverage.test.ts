// What the model sees of the default dataset's rows (docs/method.md §11): at the micro context (CI) and at
// the Train view's default preset, with the tokenizer a run would train (vocabulary as the
// pipeline chooses it: the preset's, at least 384).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { emptySystemPrompt, type Trajectory } from '../core/schema/types.ts';
import {
  BUILTIN_TEMPLATES,
  DEFAULT_STAGE_TEMPLATES,
  renderTrajectory,
  templateForSample,
  templateLiterals,
  sampleLayout,
  itemText,
  type PromptTemplate,
} from '../core/templates/index.ts';
import { ELISION } from '../core/templates/fit.ts';
import { trainBpe, type Tokenizer } from '../core/tokenizer/index.ts';
import { expandTurns, type TurnSample } from '../core/turns/index.ts';
import { PRESETS } from '../core/model/config.ts';
import { coverageMetrics, encodeSftSample } from './data.ts';

const PER_DOMAIN = 10;
const data: Trajectory[] = (() => {
  const lines = readFileSync(new URL('../../public/default-dataset.jsonl', import.meta.url), 'utf8').split('\n');
  const per = new Map<string, number>();
  const out: Trajectory[] = [];
  for (const line of lines) {
    if (!line.trim()) continue;
    const t = JSON.parse(line) as Trajectory;
    if ((per.get(t.domain) ?? 0) >= PER_DOMAIN) continue;
    per.set(t.domain, (per.get(t.domain) ?? 0) + 1);
    out.push(t);
  }
  return out;
})();
const samples = expandTurns(data);

function tokenizer(vocabSize: number): Tokenizer {
  const texts = data.map((t) => renderTrajectory(BUILTIN_TEMPLATES.v0, t));
  for (const v of Object.values(BUILTIN_TEMPLATES)) texts.push(...templateLiterals(v.text));
  return trainBpe(texts, { vocabSize: Math.max(384, vocabSize) });
}

/** Tokens of the whole render of a sample reduced to its initial state and its newest `turns` turns (merges across pieces only shorten it). */
function need(tok: Tokenizer, t: PromptTemplate, s: TurnSample, turns: number): number {
  const reduced = {
    ...s,
    systemPrompt: { ...emptySystemPrompt(), initial_state: s.systemPrompt.initial_state },
    history: s.history.slice(s.history.length - turns),
  };
  // The template's own prose left out, as the fitter may leave it out.
  const context = sampleLayout(t, reduced)
    .filter((item) => item.name !== 'preamble' && item.name !== 'closing')
    .map((item) => itemText(item, reduced))
    .join('');
  return tok.encode(context + t.targetOpen + reduced.targetObservation + t.targetClose, { allowSpecial: true }).length;
}

/** Pieces are encoded apart, which can cost a few tokens over the whole render: the margin for "fits". */
const MARGIN = 8;

function check(tok: Tokenizer, budget: number, templateOf: (s: TurnSample) => PromptTemplate) {
  let stateFits = 0;
  let stateWhole = 0;
  let stateShown = 0;
  let lastFits = 0;
  let withHistory = 0;
  let lastWhole = 0;
  const rows = samples.map((s) => {
    const t = templateOf(s);
    const row = encodeSftSample(tok, s, t, 1, { maxTokens: budget });
    expect(row.ids.length).toBeLessThanOrEqual(budget);
    const text = tok.decode(row.ids);
    const state = s.systemPrompt.initial_state;
    const heading = (sampleLayout(t, s).find((x) => x.name === 'initial_state')!.pieces[0] as string).replace(/\n$/, '');
    if (row.coverage!.initialState === 1) {
      stateWhole++;
      expect(text).toContain(`${heading}\n${state}`);
    } else if (row.coverage!.initialState! > 0) {
      // Elided: the heading, then the head of the state up to the marker.
      const at = text.indexOf(`${heading}\n`);
      expect(at).toBeGreaterThanOrEqual(0);
      const head = text.slice(at + heading.length + 1).split(ELISION)[0];
      expect(head.length).toBeGreaterThan(0);
      expect(state.startsWith(head.replace(/\uFFFD+$/, ''))).toBe(true);
    }
    if (row.coverage!.initialState! > 0) stateShown++;
    // Whenever the state (and the newest turn) fit beside the action and the target, they are there whole.
    if (need(tok, t, s, 0) + MARGIN <= budget) {
      stateFits++;
      expect(row.coverage!.initialState, `${s.trajectoryId}#${s.turnIndex}`).toBe(1);
    }
    if (s.history.length) {
      withHistory++;
      if (row.coverage!.keptTurns > 0) {
        lastWhole++;
        const last = s.history[s.history.length - 1];
        expect(text).toContain(last.observation);
      }
      if (need(tok, t, s, 1) + MARGIN <= budget) {
        lastFits++;
        expect(row.coverage!.keptTurns, `${s.trajectoryId}#${s.turnIndex}`).toBeGreaterThan(0);
      }
    }
    return row;
  });
  return { rows, n: samples.length, stateFits, stateWhole, stateShown, lastFits, lastWhole, withHistory };
}

describe('what the model sees of the default dataset', () => {
  it('at the micro context (64): the initial state and the newest turn when they fit, else the head of the state', () => {
    const tok = tokenizer(PRESETS.micro.vocabSize);
    const budget = PRESETS.micro.contextLength + 1;
    // The SFT mix: every template obeys the policy.
    check(tok, budget, (s) => templateForSample(DEFAULT_STAGE_TEMPLATES.sft, s, 0));
    // The compact template leaves room for the head of the state in most rows (the old cut kept the
    // preamble and the task instead, and never showed the state).
    const r = check(tok, budget, () => BUILTIN_TEMPLATES.compact);
    expect(r.stateShown / r.n).toBeGreaterThan(0.6);
    const m = coverageMetrics(r.rows);
    expect(m.coverage_initial_state).toBeGreaterThan(0.05);
    expect(m.coverage_system).toBeLessThan(0.2);
  });

  // The Train view's default preset (form.test.ts checks that it is this one).
  it('at the mini preset (512): the whole state in every row and the newest turn in most', () => {
    const preset = PRESETS.mini;
    const tok = tokenizer(preset.vocabSize);
    const r = check(tok, preset.contextLength + 1, () => BUILTIN_TEMPLATES.compact);
    expect(r.stateWhole / r.n).toBeGreaterThanOrEqual(0.98);
    expect(r.lastWhole / r.withHistory).toBeGreaterThanOrEqual(0.8);
    expect(r.lastFits / r.withHistory).toBeGreaterThanOrEqual(0.8);
    const m = coverageMetrics(r.rows);
    expect(m.coverage_last_turn).toBeCloseTo(r.lastWhole / r.withHistory, 12);
    expect(m.coverage_initial_state).toBeGreaterThanOrEqual(0.98);
  });
});
