// The Train form's first choice: the quick recipe (one click: its data generated in the worker,
// its model and schedule fixed) or a custom run; the recipe's domain and cost; and the expected
// time of either, from a training step measured on this adapter (estimate.ts).
import { useEffect, type ReactNode } from 'react';
import { DOMAINS, type KnownDomain } from '../../../core/schema/types.ts';
import { PRESETS } from '../../../core/model/config.ts';
import { recipeCost } from '../../../train/recipe.ts';
import { Field } from '../../components/Field.tsx';
import { Options } from '../../components/Options.tsx';
import { useStepTimeStore } from '../../stores/stepTime.ts';
import { useTrainStore } from '../../stores/train.ts';
import { useTrainFormStore } from '../../stores/trainForm.ts';
import { cpuFallbackName, customTimeText, formatFlops, measuredText, recipeStepTimeSpec, recipeTimeText, type CustomRunShape } from './estimate.ts';
import { QUICK_RECIPE, recipeTaskChoices, type FormErrors } from './form.ts';

/** The form measures a step by itself this long after it shows the recipe with a ready worker (a quick switch to the custom form skips it). */
const AUTO_MEASURE_DELAY_MS = 1500;

/** Quick recipe or custom run. */
export function RunKindChoice() {
  const mode = useTrainFormStore((s) => s.form.mode);
  const setForm = useTrainFormStore((s) => s.set);
  // The radio is named by its title alone; the hint describes it.
  const option = (value: 'recipe' | 'custom', title: string, hint: string) => (
    <label className="run-kind-option">
      <input
        type="radio"
        name="train-mode"
        value={value}
        checked={mode === value}
        onChange={() => setForm({ mode: value })}
        aria-label={title}
        aria-describedby={`train-mode-${value}-hint`}
      />
      <span>
        <strong>{title}</strong>
        <span className="muted small" id={`train-mode-${value}-hint`}>
          {' '}
          {hint}
        </span>
      </span>
    </label>
  );
  return (
    <fieldset className="run-kind">
      <legend>What to train</legend>
      {option('recipe', 'Quick recipe', 'one click: a ~1M-parameter world model of one domain, trained on freshly generated trajectories; no dataset needed')}
      {option('custom', 'Custom run', 'your own data, training phase, model and schedule')}
    </fieldset>
  );
}

/** The measured step's line and the Measure button; the form measures once by itself where `auto`. */
function StepMeasure({ auto }: { auto: boolean }) {
  const { status, result, error, tried, measure } = useStepTimeStore();
  const worker = useTrainStore((s) => s.worker);
  const live = useTrainStore((s) => s.live);
  const adapter = useTrainStore((s) => s.adapter);
  useEffect(() => {
    if (!auto || tried || worker !== 'ready' || live) return;
    const timer = setTimeout(() => measure(recipeStepTimeSpec(QUICK_RECIPE, adapter)), AUTO_MEASURE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [auto, tried, worker, live, measure, adapter]);
  const line =
    status === 'measuring'
      ? 'Measuring a training step of the quick recipe’s model on this adapter…'
      : status === 'error'
        ? error
        : result
          ? measuredText(result, QUICK_RECIPE)
          : null;
  return (
    <p className="muted small estimate-measure">
      {line ? <span data-testid="step-measure">{line} </span> : null}
      <button
        type="button"
        className="secondary small"
        disabled={status === 'measuring' || !!live || worker !== 'ready'}
        onClick={() => measure(recipeStepTimeSpec(QUICK_RECIPE, adapter))}
        title={
          live ? 'A run is training: measure when it has ended' : 'Time a training step of the quick recipe’s model on this adapter (a warm-up step first)'
        }
      >
        {result ? 'Measure again' : 'Measure'}
      </button>
    </p>
  );
}

function Estimate({ text, warn, testId, children }: { text: string; warn: boolean; testId: string; children: ReactNode }) {
  return (
    <div className={`estimate${warn ? ' callout warn' : ''}`} data-testid={testId} aria-live="polite">
      <p>{text}</p>
      {children}
    </div>
  );
}

/** The recipe's domain, what it trains, and its expected time here and on a laptop GPU. */
export function RecipeFields({ errors }: { errors: FormErrors }) {
  const domain = useTrainFormStore((s) => s.form.recipeDomain);
  const tasks = useTrainFormStore((s) => s.form.recipeTasks);
  const setForm = useTrainFormStore((s) => s.set);
  const choices = recipeTaskChoices(domain);
  const adapter = useTrainStore((s) => s.adapter);
  const result = useStepTimeStore((s) => s.result);
  const cost = recipeCost(QUICK_RECIPE);
  const first = QUICK_RECIPE.stages[0];
  const shape = PRESETS[first.preset];
  const stages = QUICK_RECIPE.stages
    .map((s) => `${s.stage.toUpperCase()} ${s.steps.toLocaleString('en-US')} steps of ${s.batch} × ${s.T} tokens`)
    .join(', then ');
  return (
    <>
      <Field id="train-recipeDomain" label="Domain" error={errors.recipeDomain} hint="the built-in environment whose trajectories are generated and trained on">
        <select
          id="train-recipeDomain"
          value={domain}
          onChange={(e) => {
            const next = e.target.value as KnownDomain;
            // Task play stays on where the new domain has it: all families, or the same one.
            const keep = tasks === 'probed' ? recipeTaskChoices(next).length > 0 : recipeTaskChoices(next).includes(tasks);
            setForm({ recipeDomain: next, ...(tasks && !keep && { recipeTasks: '' }) });
          }}
          aria-invalid={errors.recipeDomain ? true : undefined}
        >
          <Options items={[...DOMAINS]} />
        </select>
      </Field>
      <Field
        id="train-recipeTasks"
        label="Task play"
        error={errors.recipeTasks}
        hint={
          choices.length
            ? 'for a Sim RL world model: as many episodes of the domain’s tasks as the recipe’s own trajectories, each ended by its check (a right attempt or a near miss), so the model learns what the check shows'
            : `no task family of ${domain} has a check yet`
        }
      >
        <select
          id="train-recipeTasks"
          value={tasks}
          disabled={!choices.length && !tasks}
          onChange={(e) => setForm({ recipeTasks: e.target.value })}
          aria-describedby="train-recipeTasks-hint"
          aria-invalid={errors.recipeTasks ? true : undefined}
        >
          <option value="">none</option>
          {choices.length > 1 && <option value="probed">every family with a check ({choices.length})</option>}
          <Options items={choices} />
          {tasks && tasks !== 'probed' && !choices.includes(tasks) && <option value={tasks}>{tasks}</option>}
        </select>
      </Field>
      <p className="small" data-testid="recipe-cost">
        {first.preset} model ({shape.layers} × {shape.dModel}, {(cost.params / 1e6).toFixed(2)}M parameters) · {stages} · every row a freshly generated turn ·{' '}
        {(cost.tokens / 1e6).toFixed(1)}M tokens · {formatFlops(cost.flops)}
      </p>
      <Estimate text={recipeTimeText(QUICK_RECIPE, adapter, result)} warn={!!cpuFallbackName(result?.adapter ?? adapter)} testId="recipe-estimate">
        <StepMeasure auto />
      </Estimate>
    </>
  );
}

/** The custom run's cost and expected time from the same measurement, scaled by FLOPs. */
export function CustomEstimate({ run }: { run: CustomRunShape }) {
  const result = useStepTimeStore((s) => s.result);
  return (
    <Estimate text={customTimeText(run, QUICK_RECIPE, result)} warn={false} testId="custom-estimate">
      <StepMeasure auto={false} />
    </Estimate>
  );
}
