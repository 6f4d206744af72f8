// The Train view's form: what a person types, checked field by field into a job spec. Pure, so
// every message is tested without a browser (form.test.ts).
import { PRESETS } from '../../../core/model/config.ts';
import type { MaskConfig } from '../../../core/masking/index.ts';
import type { TemplateDistribution } from '../../../core/templates/index.ts';
import type { DatasetMeta, RunRecord } from '../../../core/records.ts';
import type { NewTrainJob, RecipeJobSpec } from '../../../jobs/jobs.ts';
import { RECIPES } from '../../../train/recipe.ts';
import { probedTaskFamilies } from '../../../envs/tasks/index.ts';
import { DOMAINS, type KnownDomain } from '../../../core/schema/types.ts';
import { LR_MIN_FRACTION, MIN_PROMPT_TOKENS, MIN_SEQUENCE_TOKENS, type Stage, type TrainSpec } from '../../../core/trainSpec.ts';
import { HF_START, type TrainForm } from '../../stores/trainForm.ts';
import { chatProblem, folderMismatch, folderName, type HfFolderFile, type HfFolderInfo, type HfTrainFolder } from '../../../train/hfFolder.ts';
import type { HfFolderRef } from '../../../core/trainSpec.ts';
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
  /** The Train view's Hugging Face folder (picked, and checked by the worker for the run's shape). */
  hf?: HfFormFolder;
}

export interface HfFormFolder {
  folder: { name: string; files: HfFolderFile[]; ref: HfFolderRef } | null;
  status: 'idle' | 'inspecting' | 'ready' | 'error';
  info: HfFolderInfo | null;
  error: string | null;
}

/** Tokens per sequence of a folder's run when the field is blank: the model's context, up to this (activations grow with it). */
export const HF_DEFAULT_TOKENS = 512;

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

type NewJobSpec = Omit<NewTrainJob, 'runId'>;
type Secrets = NonNullable<NewJobSpec['secrets']>;

/** Bounds the length fields while the preset is not a known one (its own error says so). */
export const FALLBACK_CONTEXT = 64;

/**
 * The context of a stored run's checkpoints: a folder's run, its sequence length (the folder's
 * context is not stored); a fresh model, its rows' length within its preset's context, as
 * training gives it (src/train/stages/common.ts).
 */
export function runContext(run: Pick<RunRecord, 'spec' | 'hf'>): number {
  if (run.hf) return run.spec.T ?? FALLBACK_CONTEXT;
  const preset = run.spec.preset in PRESETS ? PRESETS[run.spec.preset as keyof typeof PRESETS].contextLength : FALLBACK_CONTEXT;
  return Math.min(run.spec.T ?? preset, preset);
}

/** The dataset to train on, or the reason it cannot be used. */
function checkDataset(form: TrainForm, ctx: FormContext, errors: FormErrors): DatasetMeta | undefined {
  const dataset = ctx.datasets.find((d) => d.id === form.datasetId);
  if (!form.datasetId || !dataset)
    errors.datasetId = ctx.datasets.length
      ? 'Pick a dataset to train on.'
      : 'There is no dataset in this browser yet: load the default dataset or import one in the Data view.';
  else if (dataset.trajectories === 0)
    errors.datasetId = `The dataset ${dataset.name} is empty: it has no trajectories to train on. Import data in the Data view.`;
  else if (form.domain && !dataset.domains.includes(form.domain))
    errors.domain = `The dataset ${dataset.name} has no ${form.domain} trajectories; it has ${dataset.domains.join(', ')}.`;
  return dataset;
}

interface Start {
  from: RunRecord['from'];
  preset: TrainForm['preset'];
  minSteps: number;
  /** The longest sequence the model takes. */
  context: number;
  /** The folder the job sends (a folder's run, or the base of a LoRA checkpoint's run). */
  hf?: HfTrainFolder;
  lora?: TrainSpec['lora'];
  /** A folder's model in the run's name ("TinyChat LoRA r4"). */
  model?: string;
}

const modelName = (folder: string, lora: TrainSpec['lora']) => `${folder} ${lora ? `LoRA r${lora.rank}` : 'full'}`;

function positive(errors: FormErrors, field: FormField, text: string, label: string, max: number): number {
  const n = Number(text.trim());
  if (text.trim() === '' || !(n > 0 && n <= max)) errors[field] = `${label} must be a number above 0 and at most ${max}; got '${text}'.`;
  return n;
}

/** A run from the picked Hugging Face folder: the folder read and fitting, its chat template, full or LoRA, the memory budget. */
function checkHfStart(form: TrainForm, ctx: FormContext, errors: FormErrors): Start {
  const hf = ctx.hf;
  const info = hf?.info ?? null;
  if (!hf?.folder) errors.from = 'Pick the Hugging Face folder to start from (Open a Hugging Face folder…, or drop it on the box).';
  else if (hf.status === 'error') errors.from = hf.error ?? `${hf.folder.name} could not be read.`;
  else if (!info || hf.status !== 'ready') errors.from = `${hf.folder.name} is still being read; start when its estimate is shown.`;
  else if (chatProblem(info)) errors.from = chatProblem(info)!;
  else if (!info.fit.fits) errors.from = `Does not fit: ${info.fit.message}`;
  if (form.stage === 'cpt') errors.stage = 'A Hugging Face folder trains with SFT or RL (GSPO), in its own chat format: pick one of those.';
  const memoryGiB = positive(errors, 'memoryGiB', form.memoryGiB, 'GPU memory (GiB)', 1024);
  let lora: TrainSpec['lora'];
  if (form.tuning === 'lora') {
    const rank = int(errors, 'loraRank', form.loraRank, 'LoRA rank', 1, 4096);
    const alpha = form.loraAlpha.trim() === '' ? undefined : positive(errors, 'loraAlpha', form.loraAlpha, 'LoRA alpha', 1e6);
    lora = { rank, ...(alpha !== undefined && { alpha }) };
  }
  const folder = hf?.folder;
  const job = folder ? { files: folder.files, memoryGiB, ...(folderName(folder.files) ? {} : { name: folder.name }) } : undefined;
  return {
    from: null,
    preset: form.preset,
    minSteps: 1,
    context: info?.maxContext ?? FALLBACK_CONTEXT,
    ...(job && { hf: job }),
    ...(lora && { lora }),
    ...(folder && { model: modelName(folder.name, lora) }),
  };
}

/** Where the run starts: a Hugging Face folder, a stored checkpoint (which fixes the preset and may fix the first step) or a fresh preset. */
function checkStart(form: TrainForm, ctx: FormContext, errors: FormErrors): Start {
  const contextOf = (preset: string) => (preset in PRESETS ? PRESETS[preset as keyof typeof PRESETS].contextLength : FALLBACK_CONTEXT);
  if (form.from === HF_START) return checkHfStart(form, ctx, errors);
  if (!form.from) {
    if (!Object.hasOwn(PRESETS, form.preset)) errors.preset = `Pick a preset: ${Object.keys(PRESETS).join(', ')}.`;
    return { from: null, preset: form.preset, minSteps: 1, context: contextOf(form.preset) };
  }
  const choice = checkpointChoices(ctx.runs).find((c) => c.value === form.from);
  if (!choice) {
    errors.from = 'That checkpoint is no longer stored; pick another or start fresh.';
    return { from: null, preset: form.preset, minSteps: 1, context: contextOf(form.preset) };
  }
  const ref = choice.run.checkpoints[choice.tag]!;
  const start: Start = {
    from: { runId: choice.run.id, runName: choice.run.name, tag: choice.tag, step: ref.step, stage: choice.run.stage, key: ref.key },
    // The checkpoint fixes the model's shape and tokenizer.
    preset: choice.run.spec.preset,
    // The same stage continues the checkpoint's step count (its schedule and batches).
    minSteps: choice.run.stage === form.stage ? ref.step + 1 : 1,
    context: runContext(choice.run),
    ...(choice.run.spec.lora && { lora: choice.run.spec.lora }),
    ...(choice.run.hf && { model: modelName(choice.run.hf.folder.name, choice.run.spec.lora) }),
  };
  // A LoRA checkpoint holds the adapter alone: its base folder is picked again.
  if (choice.run.hf?.tuning === 'lora') {
    const folder = ctx.hf?.folder;
    const problem = folder
      ? folderMismatch(choice.run.hf.folder, folder.ref)
      : `This adapter trains on the Hugging Face folder ${choice.run.hf.folder.name}, which this page does not keep after a reload: pick that folder again.`;
    if (problem) errors.from = problem;
    else if (folder) start.hf = { files: folder.files, memoryGiB: choice.run.hf.memoryGiB, ...(folderName(folder.files) ? {} : { name: folder.name }) };
  }
  return start;
}

/** The optional peak learning rate; undefined keeps the preset's. */
function checkLr(form: TrainForm, errors: FormErrors): number | undefined {
  if (form.lr.trim() === '') return undefined;
  const lr = Number(form.lr.trim());
  if (!Number.isFinite(lr)) errors.lr = `Learning rate must be a number such as 0.002 or 2e-3; got '${form.lr}'.`;
  else if (!(lr > 0 && lr < 1)) errors.lr = `Learning rate must be above 0 and below 1; got ${lr}.`;
  return lr;
}

/** An endpoint judge's or teacher's address and model; its API key goes to the secrets, never into the stored spec. */
function endpointSpec(errors: FormErrors, form: TrainForm, who: 'judge' | 'teacher', secrets: Secrets): { baseUrl: string; model: string } {
  endpointFields(errors, form, who);
  const key = (who === 'judge' ? form.judgeApiKey : form.teacherApiKey).trim();
  if (key) secrets[who === 'judge' ? 'judgeApiKey' : 'teacherApiKey'] = key;
  return who === 'judge'
    ? { baseUrl: form.judgeBaseUrl.trim(), model: form.judgeModel.trim() }
    : { baseUrl: form.teacherBaseUrl.trim(), model: form.teacherModel.trim() };
}

/** The RL stage's settings: groups, response length, sampling, held-out judging and the reward. */
function rlSettings(form: TrainForm, errors: FormErrors, context: number, tokens: number, secrets: Secrets): NonNullable<TrainSpec['rl']> {
  const groupSize = int(errors, 'groupSize', form.groupSize, 'Group size', 2, 64);
  const promptsPerStep = int(errors, 'promptsPerStep', form.promptsPerStep, 'Prompts per step', 1, 64);
  const maxNewTokens = int(errors, 'maxNewTokens', form.maxNewTokens, 'Response length', 1, context);
  const room = tokens - MIN_PROMPT_TOKENS;
  if (!errors.maxNewTokens && !errors.tokens && maxNewTokens >= room)
    errors.maxNewTokens = `Response length must leave room for a prompt: below ${room} with ${tokens} tokens per sequence.`;
  const temperature = Number((form.temperature ?? '1').trim() || '1');
  if (!(temperature > 0 && temperature <= 10)) errors.temperature = `Temperature must be a number above 0 and at most 10; got '${form.temperature}'.`;
  const evalSamples = int(errors, 'evalSamples', form.evalSamples, 'Held-out turns judged', 1, 256);
  if (!REWARD_KINDS.includes(form.reward)) errors.reward = `Pick a reward: ${REWARD_KINDS.join(', ')}.`;
  const rl: NonNullable<TrainSpec['rl']> = {
    groupSize,
    promptsPerStep,
    maxNewTokens,
    temperature,
    evalSamples,
    reward: form.reward,
    rewardJudge: form.rewardJudge,
  };
  if (form.rewardJudge === 'endpoint') rl.judgeEndpoint = endpointSpec(errors, form, 'judge', secrets);
  return rl;
}

/** Rejection-sampled labels for SFT: the teacher, how many candidates and turns, the keep threshold and the judge. */
function labelSettings(form: TrainForm, errors: FormErrors, secrets: Secrets): NonNullable<TrainSpec['labels']> {
  const candidates = int(errors, 'labelCandidates', form.labelCandidates, 'Candidates per turn', 1, 64);
  const samples = int(errors, 'labelSamples', form.labelSamples, 'Turns to label', 1, 1_000_000);
  const threshold = Number(form.labelThreshold.trim());
  if (form.labelThreshold.trim() === '' || !(threshold >= 1 && threshold <= 5))
    errors.labelThreshold = `Keep threshold is a judge mean from 1 to 5; got '${form.labelThreshold}'.`;
  if (form.teacher === 'local' && (!form.from || form.from === HF_START))
    errors.from = 'Rejection sampling with the local teacher samples from the starting checkpoint: pick one in Start from (or use an endpoint teacher).';
  const labels: NonNullable<TrainSpec['labels']> = { teacher: form.teacher, candidates, threshold, samples, judge: form.rewardJudge };
  if (form.teacher === 'endpoint') labels.teacherEndpoint = endpointSpec(errors, form, 'teacher', secrets);
  if (form.rewardJudge === 'endpoint') labels.judgeEndpoint = endpointSpec(errors, form, 'judge', secrets);
  return labels;
}

/** Checks every field; returns the job spec (without its runId) or the problems by field. */
export function buildSpec(form: TrainForm, ctx: FormContext): { spec: NewJobSpec | null; errors: FormErrors } {
  const errors: FormErrors = {};
  if (ctx.webgpuProblem) errors.webgpu = ctx.webgpuProblem;
  const dataset = checkDataset(form, ctx, errors);
  if (!Object.hasOwn(STAGE_LABEL, form.stage)) errors.stage = 'Pick a stage: CPT, SFT or RL.';
  const { from, preset, minSteps, context, hf, lora, model } = checkStart(form, ctx, errors);
  const hfRun = form.from === HF_START;
  const steps = int(errors, 'steps', form.steps, 'Steps', 1, 1_000_000);
  if (!errors.steps && steps < minSteps)
    errors.steps = `The checkpoint is a ${form.stage.toUpperCase()} checkpoint at step ${minSteps - 1}: a run of the same stage continues its step count, so steps must be more than ${minSteps - 1}.`;
  // Empty: the whole context of the preset (of a folder's model: up to HF_DEFAULT_TOKENS).
  const tokens =
    form.tokens.trim() === ''
      ? hfRun
        ? Math.min(context, HF_DEFAULT_TOKENS)
        : context
      : int(errors, 'tokens', form.tokens, 'Tokens per sequence', MIN_SEQUENCE_TOKENS, context);
  const evalEvery = int(errors, 'evalEvery', form.evalEvery, 'Evaluate every', 1, 1_000_000);
  if (!errors.evalEvery && !errors.steps && evalEvery > steps)
    errors.evalEvery = `Evaluate every must be at most the number of steps (${steps}); the run checkpoints at each evaluation.`;
  const seed = int(errors, 'seed', form.seed, 'Seed', 0, 2 ** 31 - 1);
  const lr = checkLr(form, errors);
  const secrets: Secrets = {};
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
    ...(lr !== undefined ? { lr: { peak: lr, min: lr * LR_MIN_FRACTION } } : {}),
    ...(lora && { lora }),
  };
  if (form.stage === 'rl') spec.rl = rlSettings(form, errors, context, tokens, secrets);
  else {
    spec.batch = int(errors, 'batch', form.batch, 'Batch', 1, 256);
    if (form.stage === 'sft' && ctx.mask) spec.mask = structuredClone(ctx.mask);
    spec.evalJudgeSamples = form.stage === 'sft' ? int(errors, 'judgeSamples', form.judgeSamples, 'Judged samples', 0, 64) : 0;
  }
  if (form.stage === 'sft' && form.labels === 'rejection') spec.labels = labelSettings(form, errors, secrets);
  if (Object.keys(errors).length) return { spec: null, errors };
  const name = form.name.trim() || `${form.stage.toUpperCase()}${model ? ` · ${model}` : ''} · ${dataset!.name}${form.domain ? ` · ${form.domain}` : ''}`;
  return {
    spec: {
      kind: 'train',
      name,
      train: spec,
      data: { datasetId: dataset!.id, name: dataset!.name },
      from,
      ...(hf && { hf }),
      ...(Object.keys(secrets).length ? { secrets } : {}),
    },
    errors,
  };
}

function endpointFields(errors: FormErrors, form: TrainForm, who: 'judge' | 'teacher') {
  const url = who === 'judge' ? form.judgeBaseUrl : form.teacherBaseUrl;
  const model = who === 'judge' ? form.judgeModel : form.teacherModel;
  const Who = who === 'judge' ? 'Judge' : 'Teacher';
  if (!/^https?:\/\/\S+$/i.test(url.trim()))
    errors[`${who}BaseUrl`] = `${Who} base URL must start with http:// or https://, e.g. http://127.0.0.1:8000/v1; got '${url}'.`;
  if (!model.trim()) errors[`${who}Model`] = `${Who} model: the model name the endpoint serves.`;
}

/** The recipe the Train view offers as its one-click default. */
export const QUICK_RECIPE = RECIPES.quick;

/** A recipe's name as a title: "Quick recipe". */
export function recipeTitle(name: string): string {
  return `${name[0]?.toUpperCase() ?? ''}${name.slice(1)} recipe`;
}

/**
 * The quick recipe's job (without its runId): the recipe and the domain, nothing else, since the
 * recipe fixes its data, model and schedule; or the problems by field.
 */
export function buildRecipeSpec(
  form: Pick<TrainForm, 'recipeDomain' | 'recipeTasks' | 'name'>,
  ctx: Pick<FormContext, 'webgpuProblem'>,
): { spec: Omit<RecipeJobSpec, 'runId'> | null; errors: FormErrors } {
  const errors: FormErrors = {};
  if (ctx.webgpuProblem) errors.webgpu = ctx.webgpuProblem;
  let tasks: string[] | undefined;
  if (!(DOMAINS as readonly string[]).includes(form.recipeDomain))
    errors.recipeDomain = `Pick the domain the recipe trains on: ${DOMAINS.join(', ')}; got '${form.recipeDomain}'.`;
  else if (form.recipeTasks) {
    const playable = recipeTaskChoices(form.recipeDomain as KnownDomain);
    if (!playable.length) errors.recipeTasks = `No task family of ${form.recipeDomain} has a check to play yet; pick none.`;
    else if (form.recipeTasks === 'probed') tasks = playable;
    else if (playable.includes(form.recipeTasks)) tasks = [form.recipeTasks];
    else
      errors.recipeTasks = `'${form.recipeTasks}' is not a task family of ${form.recipeDomain} with a check to play; pick none, all, or one of ${playable.join(', ')}.`;
  }
  if (Object.keys(errors).length) return { spec: null, errors };
  const domain = form.recipeDomain as KnownDomain;
  const name = form.name.trim() || `${recipeTitle(QUICK_RECIPE.name)} · ${domain}${tasks ? ' · task play' : ''}`;
  return { spec: { kind: 'train', recipe: { name: QUICK_RECIPE.name, domain, ...(tasks && { tasks }) }, name }, errors };
}

/** The task families of `domain` whose task play a recipe can add: those with a probe (src/envs/tasks/play.ts). */
export function recipeTaskChoices(domain: KnownDomain): string[] {
  return probedTaskFamilies(domain);
}
