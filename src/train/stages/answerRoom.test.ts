// TrainSpec.answerRoom end to end without a GPU: the spec's checks, and SFT rows that start with
// exactly the prompt a generator leaving that room is given (src/backends/local.ts's room).
import { describe, expect, it } from 'vitest';
import { generateTrajectory } from '../../envs/index.ts';
import { fitPrompt } from '../../core/templates/fit.ts';
import { BUILTIN_TEMPLATES } from '../../core/templates/index.ts';
import { expandTurns } from '../../core/turns/index.ts';
import type { TrainSpec } from '../../core/trainSpec.ts';
import type { GpuRuntime } from '../../gpu/runtime.ts';
import { prepare, resolveSpec } from './common.ts';
import { supervisedRows } from './sft.ts';

const trajectories = [0, 1, 2, 3, 4, 5].map((i) => generateTrajectory('terminal', 77, i));
const base: TrainSpec = { kind: 'train', stage: 'sft', preset: 'micro', steps: 1, batch: 2, T: 64, vocabSize: 300, templates: { compact: 1 }, seed: 1 };
const host = { rt: undefined as unknown as GpuRuntime, step: async () => {}, metric: () => {}, log: () => {}, checkpoint: () => {} };

describe('answerRoom', () => {
  it('is a whole number of tokens, at most half the row', async () => {
    for (const answerRoom of [0, 2.5, -3])
      expect(() => resolveSpec({ ...base, answerRoom })).toThrow(`answerRoom must be a whole number of tokens, at least 1; got ${answerRoom}`);
    const spec = resolveSpec({ ...base, answerRoom: 40 });
    await expect(supervisedRows(spec, prepare(spec, trajectories), host, undefined, {})).rejects.toThrow(
      'answerRoom 40 leaves the prompt less than half of the 64-token rows; at most 32',
    );
  });

  it('gives every training row the prompt a generator with that answer budget is given', async () => {
    const spec = resolveSpec({ ...base, answerRoom: 16 });
    const p = prepare(spec, trajectories);
    const { rows } = await supervisedRows(spec, p, host, undefined, {});
    const samples = expandTurns(p.train);
    expect(rows.length).toBe(samples.length);
    for (const row of rows) {
      const s = samples.find((x) => x.trajectoryId === row.trajectoryId && x.turnIndex === row.turnIndex)!;
      // The local backend's room: its context length less maxTokens.
      const prompt = fitPrompt(p.tok, BUILTIN_TEMPLATES.compact, s, p.T - 16).ids;
      expect(row.ids.slice(0, prompt.length)).toEqual(prompt);
    }
  });

  it('lays out rows of chosen labels the same way', async () => {
    const spec = resolveSpec({ ...base, answerRoom: 16 });
    const p = prepare(spec, trajectories);
    // Labels as rejection sampling gives them: the sample with another target.
    const sftLabels = expandTurns(p.train).map((sample) => ({ sample: { ...sample, targetObservation: `label of ${sample.trajectoryId}` } }));
    const { rows } = await supervisedRows(spec, p, host, undefined, { sftLabels });
    expect(rows.length).toBe(sftLabels.length);
    for (const [i, row] of rows.entries()) {
      const prompt = fitPrompt(p.tok, BUILTIN_TEMPLATES.compact, sftLabels[i]!.sample, p.T - 16).ids;
      expect(row.ids.slice(0, prompt.length)).toEqual(prompt);
    }
    // The room is what laid them out: without it the same labels' contexts are fitted otherwise.
    const plain = await supervisedRows(resolveSpec(base), p, host, undefined, { sftLabels });
    expect(plain.rows.map((r) => r.promptLength)).not.toEqual(rows.map((r) => r.promptLength));
  });
});
