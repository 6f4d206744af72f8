import { describe, expect, it } from 'vitest';
import { DEFAULT_STAGE_TEMPLATES } from '../../../core/templates/index.ts';
import { PRESETS } from '../../../model/config.ts';
import type { DatasetMeta, RunRecord } from '../../../storage/db.ts';
import { buildSpec, checkpointChoices, DEFAULT_FORM, type FormContext, type TrainForm } from './form.ts';

const dataset: DatasetMeta = { id: 'default', name: 'Default', createdAt: 0, origin: 'builtin', formats: ['native'], files: [], trajectories: 1400, turns: 9000, domains: ['mcp', 'terminal'], errorCount: 0, chunks: 3 };
const ctx = (extra: Partial<FormContext> = {}): FormContext => ({ datasets: [dataset], runs: [], templateMix: (s) => ({ ...DEFAULT_STAGE_TEMPLATES[s] }), webgpuProblem: null, ...extra });
const form = (f: Partial<TrainForm>): TrainForm => ({ ...DEFAULT_FORM, datasetId: 'default', ...f });

const cptRun: RunRecord = {
  id: 'r1', name: 'CPT one', createdAt: 0, updatedAt: 0, stage: 'cpt', spec: { kind: 'train', stage: 'cpt', preset: 'micro', steps: 20 },
  data: { datasetId: 'default', name: 'Default', trajectories: 1400 }, from: null, state: 'done', step: 20,
  checkpoints: { last: { key: 'k20', step: 20, size: 10, createdAt: 0 } }, resumes: [],
};

describe('Train form', () => {
  it('builds an SFT spec from the defaults', () => {
    const { spec, errors } = buildSpec(form({ domain: 'terminal', preset: 'micro', steps: '8', batch: '2', tokens: '32', evalEvery: '2', lr: '3e-3' }), ctx());
    expect(errors).toEqual({});
    expect(spec).toMatchObject({ kind: 'train', data: { datasetId: 'default' }, from: null, train: { stage: 'sft', preset: 'micro', steps: 8, batch: 2, T: 32, evalEvery: 2, domains: ['terminal'], lr: { peak: 3e-3 }, evalJudgeSamples: 0, templates: DEFAULT_STAGE_TEMPLATES.sft } });
  });

  // src/train/coverage.test.ts checks that this preset's context holds the state and the newest turn.
  it('defaults to the mini preset over its whole context', () => {
    const { spec, errors } = buildSpec(form({}), ctx());
    expect(errors).toEqual({});
    expect(spec?.train).toMatchObject({ preset: 'mini', T: PRESETS.mini.contextLength });
    expect(buildSpec(form({ preset: 'micro' }), ctx()).spec?.train.T).toBe(64);
  });

  it('says what is wrong with each field', () => {
    const { spec, errors } = buildSpec(form({ preset: 'micro', steps: 'ten', batch: '2.5', tokens: '500', lr: '2', evalEvery: '0' }), ctx());
    expect(spec).toBeNull();
    expect(errors.steps).toBe("Steps must be a number; got 'ten'.");
    expect(errors.batch).toBe('Batch must be a whole number; got 2.5.');
    expect(errors.tokens).toBe('Tokens per sequence must be between 8 and 64; got 500.');
    expect(errors.lr).toBe('Learning rate must be above 0 and below 1; got 2.');
    expect(errors.evalEvery).toMatch(/between 1 and/);
    expect(buildSpec(form({ steps: '4', evalEvery: '10' }), ctx()).errors.evalEvery).toMatch(/at most the number of steps \(4\)/);
  });

  it('refuses an empty dataset, a missing dataset, a missing domain, and no WebGPU', () => {
    expect(buildSpec(form({}), ctx({ datasets: [{ ...dataset, trajectories: 0 }] })).errors.datasetId).toMatch(/is empty/);
    expect(buildSpec(form({ datasetId: '' }), ctx({ datasets: [] })).errors.datasetId).toMatch(/no dataset in this browser/);
    expect(buildSpec(form({ domain: 'web' }), ctx()).errors.domain).toMatch(/no web trajectories/);
    expect(buildSpec(form({}), ctx({ webgpuProblem: 'navigator.gpu is missing' })).errors.webgpu).toBe('navigator.gpu is missing');
  });

  it('checks RL settings against the sequence length', () => {
    const ok = buildSpec(form({ stage: 'rl', tokens: '48', maxNewTokens: '12', groupSize: '4', promptsPerStep: '1', evalEvery: '2', steps: '4' }), ctx());
    expect(ok.spec?.train.rl).toEqual({ groupSize: 4, promptsPerStep: 1, maxNewTokens: 12 });
    expect(buildSpec(form({ stage: 'rl', groupSize: '1' }), ctx()).errors.groupSize).toMatch(/between 2 and 64/);
    expect(buildSpec(form({ stage: 'rl', tokens: '32', maxNewTokens: '30' }), ctx()).errors.maxNewTokens).toMatch(/room for a prompt/);
  });

  it('starts a stage from a stored checkpoint, and requires more steps for the same stage', () => {
    expect(checkpointChoices([cptRun]).map((c) => c.label)).toEqual(['CPT one · CPT · last · step 20']);
    const sft = buildSpec(form({ from: 'r1|last', preset: 'mini', steps: '8', evalEvery: '4' }), ctx({ runs: [cptRun] }));
    expect(sft.spec).toMatchObject({ from: { runId: 'r1', key: 'k20', stage: 'cpt', step: 20 }, train: { preset: 'micro', stage: 'sft' } });
    expect(buildSpec(form({ from: 'r1|last', stage: 'cpt', steps: '8', evalEvery: '4' }), ctx({ runs: [cptRun] })).errors.steps).toMatch(/more than 20/);
    expect(buildSpec(form({ from: 'gone|last' }), ctx()).errors.from).toMatch(/no longer stored/);
  });

  it("passes a template mix with the user's own versions on to the job (which attaches them)", () => {
    const r = buildSpec(form({}), ctx({ templateMix: () => ({ v0: 1, v3: 1 }) }));
    expect(r.errors.form).toBeUndefined();
    expect(r.spec?.train.templates).toEqual({ v0: 1, v3: 1 });
  });
});
