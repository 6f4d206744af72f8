import { describe, expect, it } from 'vitest';
import { DEFAULT_STAGE_TEMPLATES } from '../../../core/templates/index.ts';
import { PRESETS } from '../../../core/model/config.ts';
import type { DatasetMeta, RunRecord } from '../../../core/records.ts';
import { DEFAULT_FORM, type TrainForm } from '../../stores/trainForm.ts';
import { buildSpec, checkpointChoices, runContext, type FormContext } from './form.ts';

const dataset: DatasetMeta = {
  id: 'default',
  name: 'Default',
  createdAt: 0,
  origin: 'builtin',
  formats: ['native'],
  files: [],
  trajectories: 1400,
  turns: 9000,
  domains: ['mcp', 'terminal'],
  errorCount: 0,
  chunks: 3,
};
const ctx = (extra: Partial<FormContext> = {}): FormContext => ({
  datasets: [dataset],
  runs: [],
  templateMix: (s) => ({ ...DEFAULT_STAGE_TEMPLATES[s] }),
  webgpuProblem: null,
  ...extra,
});
const form = (f: Partial<TrainForm>): TrainForm => ({ ...DEFAULT_FORM, datasetId: 'default', ...f });

const cptRun: RunRecord = {
  id: 'r1',
  name: 'CPT one',
  createdAt: 0,
  updatedAt: 0,
  stage: 'cpt',
  spec: { kind: 'train', stage: 'cpt', preset: 'micro', steps: 20 },
  data: { datasetId: 'default', name: 'Default', trajectories: 1400 },
  from: null,
  state: 'done',
  step: 20,
  checkpoints: { last: { key: 'k20', step: 20, size: 10, createdAt: 0 } },
  resumes: [],
};

describe('Train form', () => {
  it('builds an SFT spec from the defaults', () => {
    const { spec, errors } = buildSpec(form({ domain: 'terminal', preset: 'micro', steps: '8', batch: '2', tokens: '32', evalEvery: '2', lr: '3e-3' }), ctx());
    expect(errors).toEqual({});
    expect(spec).toMatchObject({
      kind: 'train',
      data: { datasetId: 'default' },
      from: null,
      train: {
        stage: 'sft',
        preset: 'micro',
        steps: 8,
        batch: 2,
        T: 32,
        evalEvery: 2,
        domains: ['terminal'],
        lr: { peak: 3e-3 },
        evalJudgeSamples: 0,
        templates: DEFAULT_STAGE_TEMPLATES.sft,
      },
    });
  });

  it("an SFT run carries the Trajectories panel's mask settings; other stages do not use them", async () => {
    const { maskConfig } = await import('../../../core/masking/index.ts');
    const mask = maskConfig({ echoMinJaccard: 0.4, ratios: { echo: 0.2 } });
    const { spec } = buildSpec(form({ steps: '8', evalEvery: '2' }), ctx({ mask }));
    expect(spec!.train.mask).toEqual(mask);
    expect(spec!.train.mask).not.toBe(mask);
    expect(buildSpec(form({ stage: 'cpt', steps: '8', evalEvery: '2' }), ctx({ mask })).spec!.train.mask).toBeUndefined();
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
    expect(ok.spec?.train.rl).toEqual({
      groupSize: 4,
      promptsPerStep: 1,
      maxNewTokens: 12,
      temperature: 1,
      evalSamples: 4,
      reward: 'rubric',
      rewardJudge: 'local',
    });
    expect(buildSpec(form({ stage: 'rl', tokens: '48', maxNewTokens: '12', temperature: '0.6' }), ctx()).spec?.train.rl?.temperature).toBe(0.6);
    for (const t of ['0', '-1', 'hot']) expect(buildSpec(form({ stage: 'rl', temperature: t }), ctx()).errors.temperature).toMatch(/above 0/);
    expect(buildSpec(form({ stage: 'rl', groupSize: '1' }), ctx()).errors.groupSize).toMatch(/between 2 and 64/);
    expect(buildSpec(form({ stage: 'rl', tokens: '32', maxNewTokens: '30' }), ctx()).errors.maxNewTokens).toMatch(/room for a prompt/);
  });

  it('starts a stage from a stored checkpoint, and requires more steps for the same stage', () => {
    expect(checkpointChoices([cptRun]).map((c) => c.label)).toEqual(['CPT one · CPT · last · step 20']);
    const sft = buildSpec(form({ from: 'r1|last', preset: 'mini', steps: '8', evalEvery: '4' }), ctx({ runs: [cptRun] }));
    expect(sft.spec).toMatchObject({ from: { runId: 'r1', key: 'k20', stage: 'cpt', step: 20 }, train: { preset: 'micro', stage: 'sft' } });
    expect(buildSpec(form({ from: 'r1|last', stage: 'cpt', steps: '8', evalEvery: '4' }), ctx({ runs: [cptRun] })).errors.steps).toMatch(/more than 20/);
    expect(buildSpec(form({ from: 'gone|last' }), ctx()).errors.from).toMatch(/no longer stored/);
    // A run of 40-token rows left a checkpoint of context 40 (micro's is 64): a blank field means 40, and more is refused.
    const short = { ...cptRun, spec: { ...cptRun.spec, T: 40 } };
    expect(runContext(short)).toBe(40);
    expect(runContext(cptRun)).toBe(64);
    const next = buildSpec(form({ from: 'r1|last', stage: 'sft', steps: '8', evalEvery: '4', tokens: '' }), ctx({ runs: [short] }));
    expect(next.spec?.train.T).toBe(40);
    expect(buildSpec(form({ from: 'r1|last', stage: 'sft', steps: '8', evalEvery: '4', tokens: '64' }), ctx({ runs: [short] })).errors.tokens).toMatch(/40/);
  });

  it("passes a template mix with the user's own versions on to the job (which attaches them)", () => {
    const r = buildSpec(form({}), ctx({ templateMix: () => ({ v0: 1, v3: 1 }) }));
    expect(r.errors.form).toBeUndefined();
    expect(r.spec?.train.templates).toEqual({ v0: 1, v3: 1 });
  });

  it('RL: the reward of the ablation and an endpoint judge, whose key travels with the job and not in the stored spec', () => {
    const rl = { stage: 'rl' as const, steps: '4', evalEvery: '2', tokens: '64', maxNewTokens: '16' };
    const local = buildSpec(form({ ...rl, reward: 'turing', evalSamples: '6' }), ctx());
    expect(local.errors).toEqual({});
    expect(local.spec!.train.rl).toMatchObject({ reward: 'turing', rewardJudge: 'local', evalSamples: 6 });
    const bad = buildSpec(form({ ...rl, rewardJudge: 'endpoint', judgeBaseUrl: 'localhost:8000', judgeModel: ' ' }), ctx());
    expect(bad.errors.judgeBaseUrl).toMatch(/Judge base URL must start with http:\/\/ or https:\/\//);
    expect(bad.errors.judgeModel).toMatch(/Judge model/);
    const ep = buildSpec(
      form({ ...rl, reward: 'reference-ab', rewardJudge: 'endpoint', judgeBaseUrl: 'http://127.0.0.1:8000/v1', judgeModel: 'qwen', judgeApiKey: 'sk-secret' }),
      ctx(),
    );
    expect(ep.errors).toEqual({});
    expect(ep.spec!.train.rl).toMatchObject({
      reward: 'reference-ab',
      rewardJudge: 'endpoint',
      judgeEndpoint: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'qwen' },
    });
    expect(ep.spec!.secrets).toEqual({ judgeApiKey: 'sk-secret' });
    expect(JSON.stringify(ep.spec!.train)).not.toContain('sk-secret');
    expect(buildSpec(form({ ...rl, evalSamples: '0' }), ctx()).errors.evalSamples).toMatch(/Held-out turns judged must be between 1 and/);
  });

  it('SFT: labels by rejection sampling from the starting checkpoint or an endpoint teacher', () => {
    const sft = { steps: '8', evalEvery: '2', labels: 'rejection' as const };
    expect(buildSpec(form({ ...sft, teacher: 'local' }), ctx()).errors.from).toMatch(/local teacher samples from the starting checkpoint/);
    const local = buildSpec(
      form({ ...sft, teacher: 'local', from: 'r1|last', labelThreshold: '3.5', labelCandidates: '2', labelSamples: '20' }),
      ctx({ runs: [cptRun] }),
    );
    expect(local.errors).toEqual({});
    expect(local.spec!.train.labels).toEqual({ teacher: 'local', candidates: 2, threshold: 3.5, samples: 20, judge: 'local' });
    expect(buildSpec(form({ ...sft, teacher: 'local', from: 'r1|last', labelThreshold: '6' }), ctx({ runs: [cptRun] })).errors.labelThreshold).toMatch(
      /judge mean from 1 to 5/,
    );
    const ep = buildSpec(form({ ...sft, teacher: 'endpoint', teacherBaseUrl: 'https://api.example/v1', teacherModel: 'big', teacherApiKey: 'k1' }), ctx());
    expect(ep.errors).toEqual({});
    expect(ep.spec!.train.labels).toMatchObject({ teacher: 'endpoint', teacherEndpoint: { baseUrl: 'https://api.example/v1', model: 'big' } });
    expect(ep.spec!.secrets).toEqual({ teacherApiKey: 'k1' });
    // The reference labels (the default) add nothing to the spec.
    expect(buildSpec(form({ steps: '8', evalEvery: '2' }), ctx()).spec!.train.labels).toBeUndefined();
  });
});
