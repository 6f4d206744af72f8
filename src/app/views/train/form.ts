// The Train view's form: what a person types, checked field by field into a job spec. Pure, so
// every message is tested without a browser (form.test.ts).
import { PRESETS } from '../../../model/config.ts';
import type { MaskConfig } from '../../../core/masking/index.ts';
import type { TemplateDistribution } from '../../../core/templates/index.ts';
import type { DatasetMeta, RunRecord } from '../../../storage/db.ts';
import type { TrainJobSpec } from '../../../train/jobs.ts';
import type { Stage, TrainSpec } from '../../../train/spec.ts';
import type { TrainForm } from '../../stores/trainForm.ts';
import { REWARD_KINDS, type RewardKind } from '../../../core/judge/reward.ts';

export const REWARD_LABEL: Record<RewardKind, string> = {
  rubric: 'rubric + verifier (0.9 / 0.1): the method’s default, the one that converged stably',
  'reference-ab': 'binary: 1 when the judge finds the sample closer to the real observation than a sibling sample',
  turing: 'binary: 1 when the judge takes the sample for the real environment’s output',
};

export type FormField = keyof TrainForm;
export type FormErrors = Partial<Record<FormField | 'webgpu' | 'form', string>>;

export const STAGE_LABEL: Record<Stage, string> = {
  cpt: 'continued pre-training on packed knowledge text and trajectories',
  sft: 'predict the next observation of each turn (loss on the observation)',
  rl: 'GSPO: groups of sampled predictions rewarded by the judge and the verifier',
};

export interface FormContext {
  datasets: DatasetMeta[];
  runs: RunRecord[];
  /** The stage's template mix from the Prompts view. */
  templateMix: (stage: Stage) => TemplateDistribution;
  /** null when WebGPU is fine; else what is wrong (the form says where to look). */
  webgpuProblem: string | null;
  /** The Trajectories panel's current loss-mask settings: an SFT run trains with them. */
  mask?: MaskConfig;
}

function int(errors: FormErrors, field: FormField, text: string, label: string, min: number, max: number): number {
  const t = text.trim();
  const n = Number(t);
  if (t === '' || !Number.isFinite(n)) errors[field] = `${label} must be a number; got '${text}'.`;
  else if (!Number.isInteger(n)) errors[field] = `${label} must be a whole number; got ${text}.`;
  else if (n < min || n > max) errors[field] = `${label} must be between ${min} and ${max}; got ${n}.`;
  return n;
}

/** A stored checkpoint the form can start from. */
export interface CheckpointChoice {
  value: string;
  run: RunRecord;
  tag: 'last' | 'best';
  label: string;
}

export function checkpointChoices(runs: RunRecord[]): CheckpointChoice[] {
  const out: CheckpointChoice[] = [];
  for (const run of runs) {
    for (const tag of ['best', 'last'] as const) {
      const c = run.checkpoints[tag];
      if (!c) continue;
      out.push({ value: `${run.id}|${tag}`, run, tag, label: `${run.name} · ${run.stage.toUpperCase()} · ${tag} · step ${c.step}` });
    }
  }
  return out;
}

/** The stage that usually follows a checkpoint's stage (CPT → SFT → RL). */
export function nextStage(stage: Stage): Stage {
  return stage === 'cpt' ? 'sft' : 'rl';
}

/** Checks every field; returns the job spec (without its runId) or the problems by field. */
export function buildSpec(form: TrainForm, ctx: FormContext): { spec: Omit<Extract<TrainJobSpec, { resume?: false }>, 'runId'> | null; errors: FormErrors } {
  const errors: FormErrors = {};
  if (ctx.webgpuProblem) errors.webgpu = ctx.webgpuProblem;
  const dataset = ctx.datasets.find((d) => d.id === form.datasetId);
  if (!form.datasetId || !dataset) errors.datasetId = ctx.datasets.length ? 'Pick a dataset to train on.' : 'There is no dataset in this browser yet: load the default dataset or import one in the Data view.';
  else if (dataset.trajectories === 0) errors.datasetId = `The dataset ${dataset.name} is empty: it has no trajectories to train on. Import data in the Data view.`;
  else if (form.domain && !dataset.domains.includes(form.domain)) errors.domain = `The dataset ${dataset.name} has no ${form.domain} trajectories; it has ${dataset.domains.join(', ')}.`;

  if (!Object.hasOwn(STAGE_LABEL, form.stage)) errors.stage = 'Pick a stage: CPT, SFT or RL.';
  let from: RunRecord['from'] = null;
  let preset = form.preset;
  let minSteps = 1;
  if (form.from) {
    const choice = checkpointChoices(ctx.runs).find((c) => c.value === form.from);
    if (!choice) errors.from = 'That checkpoint is no longer stored; pick another or start fresh.';
    else {
      const ref = choice.run.checkpoints[choice.tag]!;
      from = { runId: choice.run.id, runName: choice.run.name, tag: choice.tag, step: ref.step, stage: choice.run.stage, key: ref.key };
      // The checkpoint fixes the model's shape and tokenizer.
      preset = choice.run.spec.preset;
      // The same stage continues the checkpoint's step count (its schedule and batches).
      if (choice.run.stage === form.stage) minSteps = ref.step + 1;
    }
  } else if (!Object.hasOwn(PRESETS, form.preset)) errors.preset = `Pick a preset: ${Object.keys(PRESETS).join(', ')}.`;

  const context = preset in PRESETS ? PRESETS[preset].contextLength : 64;
  const steps = int(errors, 'steps', form.steps, 'Steps', 1, 1_000_000);
  if (!errors.steps && steps < minSteps) errors.steps = `The checkpoint is a ${form.stage.toUpperCase()} checkpoint at step ${minSteps - 1}: a run of the same stage continues its step count, so steps must be more than ${minSteps - 1}.`;
  // Empty: the whole context of the preset.
  const tokens = form.tokens.trim() === '' ? context : int(errors, 'tokens', form.tokens, 'Tokens per sequence', 8, context);
  const evalEvery = int(errors, 'evalEvery', form.evalEvery, 'Evaluate every', 1, 1_000_000);
  if (!errors.evalEvery && !errors.steps && evalEvery > steps) errors.evalEvery = `Evaluate every must be at most the number of steps (${steps}); the run checkpoints at each evaluation.`;
  const seed = int(errors, 'seed', form.seed, 'Seed', 0, 2 ** 31 - 1);
  let lr: number | undefined;
  if (form.lr.trim() !== '') {
    lr = Number(form.lr.trim());
    if (!Number.isFinite(lr)) errors.lr = `Learning rate must be a number such as 0.002 or 2e-3; got '${form.lr}'.`;
    else if (!(lr > 0 && lr < 1)) errors.lr = `Learning rate must be above 0 and below 1; got ${lr}.`;
  }
  const secrets: NonNullable<Extract<TrainJobSpec, { resume?: false }>['secrets']> = {};
  const spec: TrainSpec = {
    kind: 'train',
    stage: form.stage,
    preset,
    steps,
    T: tokens,
    evalEvery,
    seed,
    templates: ctx.templateMix(form.stage),
    ...(form.domain ? { domains: [form.domain] } : {}),
    ...(lr !== undefined ? { lr: { peak: lr, min: lr / 10 } } : {}),
  };
  if (form.stage === 'rl') {
    const groupSize = int(errors, 'groupSize', form.groupSize, 'Group size', 2, 64);
    const promptsPerStep = int(errors, 'promptsPerStep', form.promptsPerStep, 'Prompts per step', 1, 64);
    const maxNewTokens = int(errors, 'maxNewTokens', form.maxNewTokens, 'Response length', 1, context);
    if (!errors.maxNewTokens && !errors.tokens && maxNewTokens >= tokens - 8) errors.maxNewTokens = `Response length must leave room for a prompt: below ${tokens - 8} with ${tokens} tokens per sequence.`;
    const temperature = Number((form.temperature ?? '1').trim() || '1');
    if (!(temperature > 0 && temperature <= 10)) errors.temperature = `Temperature must be a number above 0 and at most 10; got '${form.temperature}'.`;
    const evalSamples = int(errors, 'evalSamples', form.evalSamples, 'Held-out turns judged', 1, 256);
    if (!REWARD_KINDS.includes(form.reward)) errors.reward = `Pick a reward: ${REWARD_KINDS.join(', ')}.`;
    spec.rl = { groupSize, promptsPerStep, maxNewTokens, temperature, evalSamples, reward: form.reward, rewardJudge: form.rewardJudge };
    if (form.rewardJudge === 'endpoint') {
      endpointFields(errors, form, 'judge');
      spec.rl.judgeEndpoint = { baseUrl: form.judgeBaseUrl.trim(), model: form.judgeModel.trim() };
      if (form.judgeApiKey.trim()) secrets.judgeApiKey = form.judgeApiKey.trim();
    }
  } else {
    spec.batch = int(errors, 'batch', form.batch, 'Batch', 1, 256);
    if (form.stage === 'sft' && ctx.mask) spec.mask = structuredClone(ctx.mask);
    spec.evalJudgeSamples = form.stage === 'sft' ? int(errors, 'judgeSamples', form.judgeSamples, 'Judged samples', 0, 64) : 0;
  }
  if (form.stage === 'sft' && form.labels === 'rejection') {
    const candidates = int(errors, 'labelCandidates', form.labelCandidates, 'Candidates per turn', 1, 64);
    const samples = int(errors, 'labelSamples', form.labelSamples, 'Turns to label', 1, 1_000_000);
    const threshold = Number(form.labelThreshold.trim());
    if (form.labelThreshold.trim() === '' || !(threshold >= 1 && threshold <= 5)) errors.labelThreshold = `Keep threshold is a judge mean from 1 to 5; got '${form.labelThreshold}'.`;
    if (form.teacher === 'local' && !form.from) errors.from = 'Rejection sampling with the local teacher samples from the starting checkpoint: pick one in Start from (or use an endpoint teacher).';
    spec.labels = { teacher: form.teacher, candidates, threshold, samples, judge: form.rewardJudge };
    if (form.teacher === 'endpoint') {
      endpointFields(errors, form, 'teacher');
      spec.labels.teacherEndpoint = { baseUrl: form.teacherBaseUrl.trim(), model: form.teacherModel.trim() };
      if (form.teacherApiKey.trim()) secrets.teacherApiKey = form.teacherApiKey.trim();
    }
    if (form.rewardJudge === 'endpoint') {
      endpointFields(errors, form, 'judge');
      spec.labels.judgeEndpoint = { baseUrl: form.judgeBaseUrl.trim(), model: form.judgeModel.trim() };
      if (form.judgeApiKey.trim()) secrets.judgeApiKey = form.judgeApiKey.trim();
    }
  }
  if (Object.keys(errors).length) return { spec: null, errors };
  const name = form.name.trim() || `${form.stage.toUpperCase()} · ${dataset!.name}${form.domain ? ` · ${form.domain}` : ''}`;
  return { spec: { kind: 'train', name, train: spec, data: { datasetId: dataset!.id, name: dataset!.name }, from, ...(Object.keys(secrets).length ? { secrets } : {}) }, errors };
}

function endpointFields(errors: FormErrors, form: TrainForm, who: 'judge' | 'teacher') {
  const url = who === 'judge' ? form.judgeBaseUrl : form.teacherBaseUrl;
  const model = who === 'judge' ? form.judgeModel : form.teacherModel;
  const Who = who === 'judge' ? 'Judge' : 'Teacher';
  if (!/^https?:\/\/\S+$/i.test(url.trim())) errors[`${who}BaseUrl`] = `${Who} base URL must start with http:// or https://, e.g. http://127.0.0.1:8000/v1; got '${url}'.`;
  if (!model.trim()) errors[`${who}Model`] = `${Who} model: the model name the endpoint serves.`;
}
