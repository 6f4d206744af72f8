// The form that starts a run: the quick recipe (one click, the default), or a custom run's data,
// stage, model, schedule, and (RL) rollout settings. Every field is checked by buildSpec or
// buildRecipeSpec (form.ts); problems show next to the field and in a summary. Either shows its
// expected time from a step measured on this adapter (RecipeRun.tsx).
import { useMemo, useState } from 'react';
import { Field } from '../../components/Field.tsx';
import { useFormFields } from './fields.tsx';
import { HfStartFields } from './HfStart.tsx';
import { FolderAgain } from './RunFolder.tsx';
import { useTrainFolderStore } from '../../stores/trainFolder.ts';
import { Link } from 'wouter';
import { Options } from '../../components/Options.tsx';
import { PRESETS, type PresetName } from '../../../core/model/config.ts';
import { MIN_SEQUENCE_TOKENS, type Stage } from '../../../core/trainSpec.ts';
import { maskConfigChanges } from '../../../core/masking/index.ts';
import { useDatasetStore } from '../../stores/datasets.ts';
import { useMaskSettings } from '../../stores/mask.ts';
import { useTemplateStore } from '../../stores/templates.ts';
import { useTrainStore } from '../../stores/train.ts';
import { HF_START, type TrainForm } from '../../stores/trainForm.ts';
import { useStepTimeStore } from '../../stores/stepTime.ts';
import { CustomEstimate, RecipeFields, RunKindChoice } from './RecipeRun.tsx';
import {
  buildRecipeSpec,
  buildSpec,
  checkpointChoices,
  FALLBACK_CONTEXT,
  HF_DEFAULT_TOKENS,
  REWARD_LABEL,
  runContext,
  STAGE_LABEL,
  type CheckpointChoice,
  type FormErrors,
} from './form.ts';
import { REWARD_KINDS, type RewardKind } from '../../../core/judge/reward.ts';
import type { DatasetMeta } from '../../../core/records.ts';
import { guardJob, newTrainWrite } from '../../stores/storage.ts';

/** An OpenAI-compatible endpoint's address, model and key, for the judge or the teacher. */
function EndpointFields({ errors, who }: { errors: FormErrors; who: 'judge' | 'teacher' }) {
  const { input } = useFormFields(errors);
  const Who = who === 'judge' ? 'Judge' : 'Teacher';
  return (
    <>
      {input(`${who}BaseUrl`, `${Who} base URL`, 'e.g. http://127.0.0.1:8000/v1')}
      {input(`${who}Model`, `${Who} model`)}
      {input(`${who}ApiKey`, `${Who} API key`, 'sent with the job, never stored', 'password')}
    </>
  );
}

/** Which judge scores the samples; an endpoint judge's address, model and key. */
function JudgeFields({ errors }: { errors: FormErrors }) {
  const { form, select } = useFormFields(errors);
  return (
    <>
      {select(
        'rewardJudge',
        'Judge',
        [
          ['local', 'Local rubric (in the browser)'],
          ['endpoint', 'LLM judge (OpenAI-compatible endpoint)'],
        ],
        form.rewardJudge === 'local' ? 'deterministic, instant, offline' : 'the endpoint must allow this page’s origin (CORS)',
      )}
      {form.rewardJudge === 'endpoint' ? <EndpointFields errors={errors} who="judge" /> : null}
    </>
  );
}

function WebGpuAlert({ problem }: { problem: string }) {
  return (
    <div className="callout error" role="alert">
      <p>
        <strong>Training needs WebGPU.</strong> {problem}
      </p>
      <p>
        See the <Link href="~/system">System view</Link> for what this browser offers and how to enable WebGPU.
      </p>
    </div>
  );
}

/** The dataset to train on and, optionally, the one domain of it. */
function DataFields({ errors, datasetId, dataset }: { errors: FormErrors; datasetId: string; dataset: DatasetMeta | undefined }) {
  const { form, setForm } = useFormFields(errors);
  const datasets = useDatasetStore((s) => s.datasets);
  return (
    <>
      <Field
        id="train-datasetId"
        label="Dataset"
        error={errors.datasetId}
        hint={
          dataset ? (
            `${dataset.trajectories.toLocaleString('en-US')} trajectories · ${dataset.domains.join(', ')}`
          ) : (
            <Link href="~/data">Load or import data</Link>
          )
        }
      >
        <select
          id="train-datasetId"
          value={datasetId}
          onChange={(e) => setForm({ datasetId: e.target.value, domain: '' })}
          aria-invalid={errors.datasetId ? true : undefined}
        >
          {datasets.length === 0 ? <option value="">(no datasets yet)</option> : null}
          <Options items={datasets} value={(d) => d.id} label={(d) => d.name} />
        </select>
      </Field>
      <Field id="train-domain" label="Domains" error={errors.domain} hint="One domain trains faster on a slow GPU">
        <select id="train-domain" value={form.domain} onChange={(e) => setForm({ domain: e.target.value })}>
          <option value="">All domains</option>
          <Options items={dataset?.domains ?? []} />
        </select>
      </Field>
    </>
  );
}

function startHint(form: TrainForm, fromChoice: CheckpointChoice | undefined): string {
  if (form.from === HF_START) return 'a pretrained model: its tokenizer, chat template and weights';
  if (!fromChoice) return 'a new tokenizer and fresh weights';
  return fromChoice.run.stage === form.stage ? 'same stage: continues its step count' : 'a new stage on these weights and tokenizer';
}

/** The stage, the model preset, and where the run starts: scratch, a Hugging Face folder, or a stored checkpoint (which fixes the preset). */
function ModelFields({ errors, choices, fromChoice }: { errors: FormErrors; choices: CheckpointChoice[]; fromChoice: CheckpointChoice | undefined }) {
  const { form, setForm } = useFormFields(errors);
  const adapter = useTrainStore((s) => s.adapter);
  const hf = form.from === HF_START;
  const presetHint = hf
    ? 'set by the folder'
    : fromChoice
      ? `set by the checkpoint: ${fromChoice.run.spec.preset}`
      : adapter?.isFallbackAdapter
        ? 'this adapter is a CPU fallback: micro fits it'
        : undefined;
  return (
    <>
      <div className="train-grid">
        <Field id="train-stage" label="Stage" error={errors.stage} hint={STAGE_LABEL[form.stage]}>
          <select id="train-stage" value={form.stage} onChange={(e) => setForm({ stage: e.target.value as Stage })}>
            <Options items={Object.keys(STAGE_LABEL) as Stage[]} label={(s) => (s === 'rl' ? 'RL (GSPO)' : s.toUpperCase())} />
          </select>
        </Field>
        <Field id="train-preset" label="Model preset" error={errors.preset} hint={presetHint}>
          <select
            id="train-preset"
            value={fromChoice ? fromChoice.run.spec.preset : form.preset}
            disabled={!!fromChoice || hf}
            onChange={(e) => setForm({ preset: e.target.value as PresetName })}
          >
            <Options
              items={Object.entries(PRESETS)}
              value={([name]) => name}
              label={([name, c]) => `${name} · ${c.layers}×${c.dModel} · ctx ${c.contextLength}`}
            />
          </select>
        </Field>
      </div>
      <Field id="train-from" label="Start from" error={errors.from} hint={startHint(form, fromChoice)}>
        <select id="train-from" value={form.from} onChange={(e) => setForm({ from: e.target.value })}>
          <option value="">Scratch (a preset)</option>
          <option value={HF_START}>A Hugging Face folder</option>
          <Options items={choices} value={(c) => c.value} label={(c) => c.label} />
        </select>
      </Field>
      {hf ? <HfStartFields errors={errors} /> : null}
      {fromChoice?.run.hf?.tuning === 'lora' ? <FolderAgain run={fromChoice.run} purpose="train on its adapter" /> : null}
    </>
  );
}

/** Steps, batch, sequence length, learning rate and evaluation; SFT's loss-mask note. */
function ScheduleFields({ errors, context }: { errors: FormErrors; context: number }) {
  const { form, input } = useFormFields(errors);
  const maskChanges = maskConfigChanges(useMaskSettings((s) => s.config));
  return (
    <>
      <div className="train-grid">
        {input('steps', 'Steps', undefined, 'number')}
        {form.stage === 'rl' ? null : input('batch', 'Batch', 'sequences per step', 'number')}
        {input('tokens', 'Tokens per sequence', `${MIN_SEQUENCE_TOKENS}–${context}; empty: ${context}`, 'number')}
        {input('lr', 'Learning rate', 'peak; empty: the stage default')}
        {input('evalEvery', 'Evaluate every', 'steps; a checkpoint each time', 'number')}
        {form.stage === 'sft' ? input('judgeSamples', 'Judged samples', 'per evaluation (slow on CPU)', 'number') : null}
      </div>
      {form.stage === 'sft' ? (
        <p className="muted small" data-testid="train-mask">
          Loss mask: the <Link href="~/trajectories">Trajectories panel</Link>&apos;s current settings —{' '}
          {maskChanges.length ? `changed from the defaults: ${maskChanges.join(', ')}` : 'the default thresholds and ratios'}. The run and its checkpoints keep
          them.
        </p>
      ) : null}
    </>
  );
}

const REWARD_OPTION: Record<RewardKind, string> = {
  rubric: 'Rubric + verifier',
  'reference-ab': 'Binary: closer to the reference (A/B)',
  turing: 'Binary: Turing test',
};

function RlSettings({ errors }: { errors: FormErrors }) {
  const { form, select, input } = useFormFields(errors);
  return (
    <fieldset className="train-grid rl-settings">
      <legend>GSPO rollouts</legend>
      {input('groupSize', 'Group size', 'samples per prompt (G)', 'number')}
      {input('promptsPerStep', 'Prompts per step', undefined, 'number')}
      {input('maxNewTokens', 'Response length', 'tokens', 'number')}
      {input('temperature', 'Temperature', 'rollout sampling; log-probs use the same')}
      {select(
        'reward',
        'Reward',
        REWARD_KINDS.map((k) => [k, REWARD_OPTION[k]]),
        REWARD_LABEL[form.reward],
      )}
      {input('evalSamples', 'Held-out turns judged', 'per evaluation; the best checkpoint is chosen on them', 'number')}
      <JudgeFields errors={errors} />
    </fieldset>
  );
}

/** SFT's labels: the real observations, or rejection sampling from a teacher with a judge. */
function SftLabels({ errors }: { errors: FormErrors }) {
  const { form, select, input } = useFormFields(errors);
  return (
    <fieldset className="train-grid sft-labels">
      <legend>SFT labels</legend>
      {select(
        'labels',
        'Labels',
        [
          ['reference', 'Real observations'],
          ['rejection', 'Rejection sampling'],
        ],
        form.labels === 'rejection' ? 'candidates judged against the real observation; those above the threshold are trained on' : undefined,
      )}
      {form.labels === 'rejection' ? (
        <>
          {select('teacher', 'Teacher', [
            ['local', 'Local: the starting checkpoint'],
            ['endpoint', 'Endpoint model'],
          ])}
          {form.teacher === 'endpoint' ? <EndpointFields errors={errors} who="teacher" /> : null}
          {input('labelCandidates', 'Candidates per turn', undefined, 'number')}
          {input('labelThreshold', 'Keep threshold', 'judge mean, 1–5')}
          {input('labelSamples', 'Turns to label', 'of the train split', 'number')}
          <JudgeFields errors={errors} />
        </>
      ) : null}
    </fieldset>
  );
}

function ProblemSummary({ errors }: { errors: FormErrors }) {
  const problems = Object.entries(errors).filter(([k]) => k !== 'webgpu');
  if (!problems.length) return null;
  return (
    <div className="callout error" role="alert" data-testid="train-form-errors">
      <p>
        <strong>Fix {problems.length === 1 ? 'this' : `these ${problems.length}`} before training:</strong>
      </p>
      <ul className="errors">
        {problems.map(([k, v]) => (
          <li key={k}>{v}</li>
        ))}
      </ul>
    </div>
  );
}

/** The custom run's fields, its cost and expected time. */
function CustomFields({
  errors,
  datasetId,
  dataset,
  choices,
  fromChoice,
}: {
  errors: FormErrors;
  datasetId: string;
  dataset: DatasetMeta | undefined;
  choices: CheckpointChoice[];
  fromChoice: CheckpointChoice | undefined;
}) {
  const { form } = useFormFields(errors);
  const hfFolder = useTrainFolderStore();
  const context =
    form.from === HF_START
      ? Math.min(hfFolder.info?.maxContext ?? HF_DEFAULT_TOKENS, HF_DEFAULT_TOKENS)
      : fromChoice
        ? runContext(fromChoice.run)
        : (PRESETS[form.preset as PresetName]?.contextLength ?? FALLBACK_CONTEXT);
  const tokens = form.tokens.trim() === '' ? context : Number(form.tokens);
  const shape = {
    stage: form.stage,
    preset: fromChoice?.run.spec.preset ?? form.preset,
    vocabSize: fromChoice?.run.spec.vocabSize,
    steps: Number(form.steps),
    batch: Number(form.batch),
    T: tokens,
    hf: form.from === HF_START || !!fromChoice?.run.hf,
  };
  return (
    <>
      <DataFields errors={errors} datasetId={datasetId} dataset={dataset} />
      <ModelFields errors={errors} choices={choices} fromChoice={fromChoice} />
      <ScheduleFields errors={errors} context={context} />
      {form.stage === 'rl' ? <RlSettings errors={errors} /> : null}
      {form.stage === 'sft' ? <SftLabels errors={errors} /> : null}
      <CustomEstimate run={shape} />
    </>
  );
}

export function NewRunForm() {
  const [errors, setErrors] = useState<FormErrors>({});
  const { form, input } = useFormFields(errors);
  const datasets = useDatasetStore((s) => s.datasets);
  const activeId = useDatasetStore((s) => s.activeId);
  const stages = useTemplateStore((s) => s.stages);
  const mask = useMaskSettings((s) => s.config);
  const { runs, live, worker, workerError, start } = useTrainStore();
  const cancelMeasure = useStepTimeStore((s) => s.cancel);
  const hfFolder = useTrainFolderStore();
  const datasetId = form.datasetId && datasets.some((d) => d.id === form.datasetId) ? form.datasetId : (activeId ?? datasets[0]?.id ?? '');
  const dataset = datasets.find((d) => d.id === datasetId);
  const choices = useMemo(() => checkpointChoices(runs), [runs]);
  const fromChoice = choices.find((c) => c.value === form.from);
  const webgpuProblem = worker === 'unavailable' ? (workerError ?? 'WebGPU is not available.') : null;
  const recipe = form.mode === 'recipe';

  function submit(e: React.FormEvent) {
    e.preventDefault();
    const { spec, errors } = recipe
      ? buildRecipeSpec(form, { webgpuProblem })
      : buildSpec({ ...form, datasetId }, { datasets, runs, templateMix: (s) => stages[s], webgpuProblem, mask, hf: hfFolder });
    setErrors(errors);
    if (!spec) {
      // Move focus to the first field with a problem so a keyboard user lands on it.
      const first = Object.keys(errors).find((k) => k !== 'webgpu' && k !== 'form');
      if (first) document.getElementById(`train-${first}`)?.focus();
      return;
    }
    guardJob(newTrainWrite(spec), () => {
      // A step being measured would hold the device: the run starts when it stops.
      cancelMeasure();
      start(spec);
    });
  }

  const idle = recipe ? 'Train the quick recipe' : 'Start training';
  return (
    <form className="card train-form" aria-labelledby="new-run-title" onSubmit={submit} noValidate>
      <h2 id="new-run-title">New run</h2>
      {errors.webgpu ? <WebGpuAlert problem={errors.webgpu} /> : null}
      <RunKindChoice />
      {recipe ? (
        <RecipeFields errors={errors} />
      ) : (
        <CustomFields errors={errors} datasetId={datasetId} dataset={dataset} choices={choices} fromChoice={fromChoice} />
      )}
      <details className="advanced">
        <summary>{recipe ? 'Name' : 'Name and seed'}</summary>
        <div className="train-grid">
          {input('name', 'Run name', recipe ? 'empty: the recipe and domain' : 'empty: stage and dataset')}
          {recipe ? null : input('seed', 'Seed', undefined, 'number')}
        </div>
      </details>
      <ProblemSummary errors={errors} />
      <div className="toolbar">
        <button type="submit" disabled={!!live || worker === 'starting'}>
          {live ? 'Training…' : worker === 'starting' ? 'Starting the GPU worker…' : idle}
        </button>
      </div>
    </form>
  );
}
