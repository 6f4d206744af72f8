import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../envs/generate.ts';
import { categorizeDataset } from '../core/masking/index.ts';
import { expandTurns, splitByTrajectory } from '../core/turns/index.ts';
import { labelledRows, trainLabels } from './pipeline.ts';
import { labelRecords, labelSamples, readLabelFile, retentionMetrics, retentionReport } from './labels.ts';
import { keptAsSamples, type KeptCandidate } from './rejection.ts';
import { trainBpe } from '../core/tokenizer/index.ts';

const data = [...generateTrajectories('terminal', 10, 3), ...generateTrajectories('mcp', 10, 3)];
const split = splitByTrajectory(data, { evalFraction: 0.2, seed: 5 });
const masks = new Map(categorizeDataset(data).map((m) => [m.id, m]));
const maskWeight = (id: string, i: number) => masks.get(id)!.turns[i].weight;

describe('label files', () => {
  it('are made for the train split only, the one lwm train makes with the same settings', () => {
    const samples = labelSamples(data, { evalFraction: 0.2, seed: 5 });
    const trainIds = new Set(split.train.map((t) => t.id));
    expect(samples.length).toBe(expandTurns(split.train).length);
    expect(samples.every((s) => trainIds.has(s.trajectoryId))).toBe(true);
    expect(labelSamples(data, { evalFraction: 0.2, seed: 5, domains: ['mcp'] }).every((s) => s.domain === 'mcp')).toBe(true);
  });

  it('round-trip: written records read back as labels on the right turns', () => {
    const s = expandTurns(split.train).slice(0, 3);
    const kept: KeptCandidate[] = s.map((x, i) => ({
      sample: x,
      output: '',
      prediction: `LABEL ${i}`,
      score: 4.5,
      weight: 0.6,
      ...(i === 1 ? { reasoning: 'why' } : {}),
    }));
    const text = labelRecords(kept)
      .map((r) => JSON.stringify(r))
      .join('\n');
    const r = readLabelFile(text, 'l.jsonl', data);
    expect(r.errors).toEqual([]);
    expect(r.labels.map((l) => [l.sample.trajectoryId, l.sample.turnIndex, l.sample.targetObservation, l.reasoning])).toEqual(
      s.map((x, i) => [x.trajectoryId, x.turnIndex, `LABEL ${i}`, i === 1 ? 'why' : undefined]),
    );
    // The history and action come from the data, the target from the label.
    expect(r.labels[2].sample.action).toBe(s[2].action);
    expect(r.labels[2].sample.history).toEqual(s[2].history);
  });

  it('report every problem with its file and line', () => {
    const t = data[0];
    const lines = [
      JSON.stringify({ trajectory_id: t.id, turn_index: 0, domain: t.domain, label: 'ok' }),
      '{not json',
      JSON.stringify({ trajectory_id: 'nope', turn_index: 0, label: 'x' }),
      JSON.stringify({ trajectory_id: t.id, turn_index: 99, label: 'x' }),
      JSON.stringify({ trajectory_id: t.id, turn_index: -1, label: 3 }),
      JSON.stringify({ trajectory_id: t.id, turn_index: 0, label: 'x', weight: 2 }),
    ];
    const r = readLabelFile(lines.join('\n'), 'l.jsonl', data);
    expect(r.labels.length).toBe(1);
    expect(r.errors.join('\n')).toMatch(/l\.jsonl:2: not valid JSON/);
    expect(r.errors.join('\n')).toMatch(/l\.jsonl:3: no trajectory "nope"/);
    expect(r.errors.join('\n')).toMatch(/l\.jsonl:4: trajectory ".*" has \d+ turns; turn_index 99 is past its end/);
    expect(r.errors.join('\n')).toMatch(/l\.jsonl:5: "turn_index" must be an integer ≥ 0/);
    expect(r.errors.join('\n')).toMatch(/l\.jsonl:5: "label" .* must be a string/);
    expect(r.errors.join('\n')).toMatch(/l\.jsonl:6: "weight" must be a number in \[0, 1\]/);
  });
});

describe('labels in training', () => {
  const labels = [...expandTurns(split.train).slice(0, 6), ...expandTurns(split.eval).slice(0, 2)].map((s) => ({
    sample: { ...s, targetObservation: `L-${s.trajectoryId}-${s.turnIndex}` },
  }));

  it('keep their turn’s mask weight and never train a held-out turn', () => {
    const logs: string[] = [];
    const used = trainLabels(labels, split, masks, { log: (m) => logs.push(m) });
    expect(used.length).toBe(6);
    expect(logs[0]).toMatch(/2 of 8 belong to eval-split trajectories/);
    for (const l of used) expect(l.weight).toBe(maskWeight(l.sample.trajectoryId, l.sample.turnIndex));
    // The weights really differ between turns (otherwise the test could not tell).
    expect(new Set(used.map((l) => l.weight)).size).toBeGreaterThan(1);
    // And reach the encoded row: the label's tokens carry that weight.
    const tok = trainBpe(
      data.flatMap((t) => t.turns.map((u) => u.observation)),
      { vocabSize: 300 },
    );
    const rows = labelledRows({ tok, T: 20_000 }, used, { v0: 1 }, 0);
    rows.forEach((row, i) => {
      const w = used[i].weight!;
      expect(tok.decode(row.ids.filter((_, j) => row.weights[j] === w))).toContain(used[i].sample.targetObservation);
    });
  });

  it('a label’s own weight (from keptAsSamples) is kept; labels only of eval turns are refused', () => {
    const k: KeptCandidate = { sample: expandTurns(split.train)[0], output: '', prediction: 'P', score: 5, weight: 0.05 };
    expect(trainLabels(keptAsSamples([k]), split, masks)[0].weight).toBe(0.05);
    expect(() => trainLabels(labels.slice(6), split, masks)).toThrow(/none of the 2 labels belongs to a train-split trajectory/);
  });
});

describe('retention report', () => {
  it('overall and per domain, failures apart, as metrics too', () => {
    const r = {
      overall: { kept: 7094, rejected: 3156, failed: 12, judged: 10250, total: 10262, rate: 7094 / 10250 },
      perDomain: {
        terminal: { kept: 94, rejected: 156, failed: 12, judged: 250, total: 262, rate: 94 / 250 },
        mcp: { kept: 7000, rejected: 3000, failed: 0, judged: 10000, total: 10000, rate: 0.7 },
      },
    };
    expect(retentionReport(r)).toBe(
      'retention: 7,094 of 10,250 kept, 69.2% (12 judge failures left out)\n  mcp: 7,000 of 10,000 kept, 70.0%\n  terminal: 94 of 250 kept, 37.6% (12 judge failures left out)\n',
    );
    expect(retentionMetrics(r)).toMatchObject({
      labels_kept: 7094,
      labels_rejected: 3156,
      labels_judge_failed: 12,
      labels_retention: 7094 / 10250,
      labels_retention_mcp: 0.7,
      labels_judged_terminal: 250,
    });
  });
});
