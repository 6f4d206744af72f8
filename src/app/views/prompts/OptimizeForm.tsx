// The form that starts a prompt optimization from a template version: the dataset's held-out
// turns (domains, dev and test samples per domain), the simulated model (a baseline, a stored
// checkpoint, a Hugging Face or ONNX folder picked in this page, an endpoint: the Bench's backends
// and its folder pickers), the judge, the optimizer (offline, or an LLM at
// an endpoint, its key kept in memory as the Bench's), rounds, candidates, margin and budget.
import { useMemo, useState } from 'react';
import { EndpointSelect } from '../../components/EndpointForm.tsx';
import { useDatasetStore } from '../../stores/datasets.ts';
import { useEndpointStore } from '../../stores/endpoints.ts';
import { useOptimizeStore, type OptimizeDraft } from '../../stores/optimize.ts';
import { useTemplateStore } from '../../stores/templates.ts';
import { missingWebGpu } from '../../../jobs/client.ts';
import { HfFolderPicker } from '../../components/HfFolderPicker.tsx';
import { OnnxFolderPicker } from '../../components/OnnxFolderPicker.tsx';
import { usable, useHfFolderStore } from '../../stores/hfFolders.ts';
import { chosenFile, pageExecution, usableOnnx, useOnnxFolderStore } from '../../stores/onnxFolders.ts';
import { OPTIMIZE_DEFAULTS, parseOptimizeNumbers, type OptimizeNumberFields } from './optimizeForm.ts';
import { Field } from '../../components/Field.tsx';
import { guardJob, OPTIMIZE_WRITE } from '../../stores/storage.ts';

type Kind = 'local' | 'endpoint';
type BackendChoice = { value: string; label: string; backend: OptimizeDraft['backend'] };

/** Baselines, then each run's last (and best, when another) checkpoint. */
function useBackendChoices(): BackendChoice[] {
  const runs = useOptimizeStore((s) => s.runs);
  return useMemo(() => {
    const out: BackendChoice[] = [
      { value: 'copy-last', label: 'copy-last baseline (repeats the last observation)', backend: { kind: 'copy-last' } },
      { value: 'reference', label: 'reference baseline (the real observation)', backend: { kind: 'reference' } },
    ];
    for (const r of runs)
      for (const tag of ['last', 'best'] as const) {
        const c = r.checkpoints[tag];
        if (!c || (tag === 'best' && r.checkpoints.last?.key === c.key)) continue;
        out.push({
          value: c.key,
          label: `${r.name} · ${tag} · step ${c.step}`,
          backend: { kind: 'checkpoint', checkpoint: { runId: r.id, runName: r.name, stage: r.stage, tag, step: c.step, key: c.key } },
        });
      }
    out.push({ value: 'hf', label: 'a Hugging Face folder (pick it below)…', backend: { kind: 'copy-last' } });
    out.push({ value: 'onnx', label: 'an ONNX folder (pick it below)…', backend: { kind: 'copy-last' } });
    out.push({ value: 'endpoint', label: 'a model at an endpoint…', backend: { kind: 'copy-last' } });
    return out;
  }, [runs]);
}

interface Choices {
  version: string;
  datasetId: string;
  domains: string[];
  numbers: OptimizeNumberFields;
  backend: string;
  backendEndpoint: string;
  /** The Hugging Face or ONNX folder of the page taken as the simulated model (by id). */
  backendFolder: string;
  judge: Kind;
  judgeEndpoint: string;
  optimizer: 'offline' | 'endpoint';
  optimizerEndpoint: string;
  name: string;
}

/** The picked folder taken as the simulated model, as the Bench records it, or what is wrong. */
function folderBackend(kind: 'hf' | 'onnx', id: string, noGpu: string | null): { backend: OptimizeDraft['backend'] } | { error: string } {
  if (kind === 'hf') {
    const f = useHfFolderStore.getState().get(id);
    if (!f) return { error: 'Pick a Hugging Face folder below and press “Use as the simulated model”.' };
    if (noGpu) return { error: `A Hugging Face folder runs on the GPU: ${noGpu}` };
    if (!usable(f)) return { error: `${f.name}: not checked yet, or does not fit this GPU with its settings (see its message).` };
    return {
      backend: {
        kind: 'hf',
        hf: {
          folderId: f.id,
          name: f.name,
          architecture: f.info.architecture,
          parameters: f.info.parameters,
          context: f.settings.context,
          memoryGiB: f.settings.memoryGiB,
        },
      },
    };
  }
  const f = useOnnxFolderStore.getState().get(id);
  if (!f) return { error: 'Pick an ONNX folder below and press “Use as the simulated model”.' };
  if (!usableOnnx(f)) return { error: `${f.name}: not checked yet, or cannot run (see its message).` };
  return { backend: { kind: 'onnx', onnx: { folderId: f.id, name: f.name, file: chosenFile(f) ?? '', execution: pageExecution() } } };
}

/** The draft of a filled form, or what is wrong with it (each message names its field). */
function checkChoices(c: Choices, ctx: { backends: BackendChoice[]; noGpu: string | null }): { errors: Record<string, string>; draft: OptimizeDraft | null } {
  const { values, errors: numErrors } = parseOptimizeNumbers(c.numbers);
  const errors: Record<string, string> = { ...numErrors } as Record<string, string>;
  const template = useTemplateStore.getState().versions.find((v) => v.version === c.version)?.template;
  const dataset = useDatasetStore.getState().datasets.find((d) => d.id === c.datasetId);
  const endpoints = useEndpointStore.getState().endpoints;
  const endpoint = (id: string) => endpoints.find((e) => e.id === id);
  if (!template) errors.version = 'Choose the template version to start from.';
  if (!dataset) errors.dataset = 'Choose a dataset (load or import one in the Data view).';
  if (!c.domains.length) errors.domains = 'Choose at least one domain.';
  const choice = ctx.backends.find((b) => b.value === c.backend);
  if (!choice) errors.backend = 'Choose the simulated model.';
  if (choice?.backend.kind === 'checkpoint' && ctx.noGpu) errors.backend = `A checkpoint runs on the GPU: ${ctx.noGpu}`;
  if (c.backend === 'endpoint' && !endpoint(c.backendEndpoint)) errors.backend = 'Choose the model’s endpoint, or add one.';
  const folder = c.backend === 'hf' || c.backend === 'onnx' ? folderBackend(c.backend, c.backendFolder, ctx.noGpu) : null;
  if (folder && 'error' in folder) errors.backend = folder.error;
  if (c.judge === 'endpoint' && !endpoint(c.judgeEndpoint)) errors.judge = 'Choose the judge’s endpoint, or add one.';
  if (c.optimizer === 'endpoint' && !endpoint(c.optimizerEndpoint)) errors.optimizer = 'Choose the optimizer’s endpoint, or add one.';
  if (Object.keys(errors).length || !values || !template || !dataset || !choice) return { errors, draft: null };
  const backend: OptimizeDraft['backend'] =
    c.backend === 'endpoint' ? { kind: 'endpoint', endpoint: endpoint(c.backendEndpoint)! } : folder && 'backend' in folder ? folder.backend : choice.backend;
  return {
    errors,
    draft: {
      name: c.name,
      version: c.version,
      template,
      datasetId: dataset.id,
      datasetName: dataset.name,
      domains: c.domains,
      evalFraction: values.evalFraction,
      seed: values.seed,
      devPerDomain: values.devPerDomain,
      testPerDomain: values.testPerDomain,
      backend,
      judge: c.judge === 'endpoint' ? { kind: 'endpoint', endpoint: endpoint(c.judgeEndpoint)! } : { kind: 'local' },
      optimizer: c.optimizer === 'endpoint' ? { kind: 'endpoint', endpoint: endpoint(c.optimizerEndpoint)! } : { kind: 'offline' },
      generation: values.generation,
      loop: {
        rounds: values.rounds,
        candidates: values.candidates,
        margin: values.margin,
        level: 0.95,
        seed: values.seed,
        ...(values.budget !== undefined && { budget: { modelCalls: values.budget, judgeCalls: values.budget } }),
      },
    },
  };
}

function ModelFields({ c, set, backends, errors }: { c: Choices; set(p: Partial<Choices>): void; backends: BackendChoice[]; errors: Record<string, string> }) {
  return (
    <>
      <Field id="opt-backend" label="Simulated model" error={c.backend === 'endpoint' ? undefined : errors.backend}>
        <select id="opt-backend" value={c.backend} onChange={(e) => set({ backend: e.target.value })}>
          {backends.map((b) => (
            <option key={b.value} value={b.value}>
              {b.label}
            </option>
          ))}
        </select>
      </Field>
      {c.backend === 'endpoint' ? (
        <EndpointSelect
          id="opt-backend-endpoint"
          label="Model endpoint"
          value={c.backendEndpoint}
          onChange={(id) => set({ backendEndpoint: id })}
          error={errors.backend}
        />
      ) : null}
      {c.backend === 'hf' ? (
        <HfFolderPicker
          idPrefix="opt"
          useLabel="Use as the simulated model"
          isUsed={(id) => id === c.backendFolder}
          onUse={(f) => set({ backendFolder: f.id })}
        />
      ) : null}
      {c.backend === 'onnx' ? (
        <OnnxFolderPicker
          idPrefix="opt"
          useLabel="Use as the simulated model"
          isUsed={(id) => id === c.backendFolder}
          onUse={(f) => set({ backendFolder: f.id })}
        />
      ) : null}
      <Field id="opt-judge" label="Judge">
        <select id="opt-judge" value={c.judge} onChange={(e) => set({ judge: e.target.value as Kind })}>
          <option value="local">Local rubric judge (in the browser)</option>
          <option value="endpoint">LLM judge at an endpoint</option>
        </select>
      </Field>
      {c.judge === 'endpoint' ? (
        <EndpointSelect
          id="opt-judge-endpoint"
          label="Judge endpoint"
          value={c.judgeEndpoint}
          onChange={(id) => set({ judgeEndpoint: id })}
          error={errors.judge}
        />
      ) : null}
      <Field
        id="opt-optimizer"
        label="Optimizer"
        hint="offline: edits from a library of instructions keyed to the judge’s weak dimensions; endpoint: an LLM rewrites the template"
      >
        <select id="opt-optimizer" value={c.optimizer} onChange={(e) => set({ optimizer: e.target.value as Choices['optimizer'] })}>
          <option value="offline">Offline (no endpoint)</option>
          <option value="endpoint">LLM at an endpoint</option>
        </select>
      </Field>
      {c.optimizer === 'endpoint' ? (
        <EndpointSelect
          id="opt-optimizer-endpoint"
          label="Optimizer endpoint"
          value={c.optimizerEndpoint}
          onChange={(id) => set({ optimizerEndpoint: id })}
          error={errors.optimizer}
        />
      ) : null}
    </>
  );
}

function NumberField({
  field,
  label,
  hint,
  value,
  error,
  onChange,
}: {
  field: string;
  label: string;
  hint?: string;
  value: string;
  error?: string;
  onChange(v: string): void;
}) {
  return (
    <Field id={`opt-${field}`} label={label} error={error} hint={hint}>
      <input
        id={`opt-${field}`}
        type="text"
        inputMode="decimal"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={error ? true : undefined}
      />
    </Field>
  );
}

function DomainsField({ all, chosen, onChange, error }: { all: string[]; chosen: string[]; onChange(domains: string[]): void; error?: string }) {
  return (
    <fieldset>
      <legend>Domains</legend>
      {all.map((d) => (
        <label key={d} className="check">
          <input type="checkbox" checked={chosen.includes(d)} onChange={(e) => onChange(e.target.checked ? [...chosen, d] : chosen.filter((x) => x !== d))} />
          {d}
        </label>
      ))}
      {error ? <span className="error-text small">{error}</span> : null}
    </fieldset>
  );
}

export function OptimizeForm({ from }: { from?: string }) {
  const versions = useTemplateStore((s) => s.versions);
  const datasets = useDatasetStore((s) => s.datasets);
  const activeId = useDatasetStore((s) => s.activeId);
  const { live, create } = useOptimizeStore();
  const backends = useBackendChoices();
  const noGpu = useMemo(() => missingWebGpu()?.message ?? null, []);
  const [c, setC] = useState<Choices>({
    version: from ?? 'v0',
    datasetId: '',
    domains: [],
    numbers: OPTIMIZE_DEFAULTS,
    backend: 'copy-last',
    backendEndpoint: '',
    backendFolder: '',
    judge: 'local',
    judgeEndpoint: '',
    optimizer: 'offline',
    optimizerEndpoint: '',
    name: '',
  });
  const [domainsTouched, setDomainsTouched] = useState(false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const set = (p: Partial<Choices>) => setC((x) => ({ ...x, ...p }));
  const datasetId = c.datasetId && datasets.some((d) => d.id === c.datasetId) ? c.datasetId : (activeId ?? datasets[0]?.id ?? '');
  const dataset = datasets.find((d) => d.id === datasetId);
  const domains = domainsTouched ? c.domains : (dataset?.domains ?? []);
  const version = c.version;

  function submit(e: React.FormEvent) {
    e.preventDefault();
    const checked = checkChoices({ ...c, version, datasetId, domains }, { backends, noGpu });
    setErrors(checked.errors);
    const draft = checked.draft;
    if (draft) guardJob(OPTIMIZE_WRITE, () => void create(draft));
  }
  const num = (field: keyof OptimizeNumberFields, label: string, hint?: string) => (
    <NumberField
      field={field}
      label={label}
      hint={hint}
      value={c.numbers[field]}
      error={errors[field]}
      onChange={(v) => set({ numbers: { ...c.numbers, [field]: v } })}
    />
  );
  return (
    <form className="card bench-form" onSubmit={submit} aria-labelledby="opt-form-title" noValidate data-testid="optimize-form">
      <h2 id="opt-form-title">Optimize a template</h2>
      <div className="train-grid">
        <Field id="opt-version" label="Start from" error={errors.version}>
          <select id="opt-version" value={version} onChange={(e) => set({ version: e.target.value })}>
            {versions.map((v) => (
              <option key={v.version} value={v.version}>
                {v.version}
              </option>
            ))}
          </select>
        </Field>
        <Field id="opt-dataset" label="Dataset" error={errors.dataset}>
          <select id="opt-dataset" value={datasetId} onChange={(e) => (set({ datasetId: e.target.value }), setDomainsTouched(false))}>
            {datasets.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <DomainsField all={dataset?.domains ?? []} chosen={domains} onChange={(d) => (setDomainsTouched(true), set({ domains: d }))} error={errors.domains} />
      <div className="train-grid">
        {num('devPerDomain', 'Dev samples per domain', 'the loop’s working set')}
        {num('testPerDomain', 'Test samples per domain', 'scored once, at the end')}
        {num('evalFraction', 'Eval share', 'held-out trajectories, as training')}
        {num('seed', 'Seed')}
      </div>
      <ModelFields c={c} set={set} backends={backends} errors={errors} />
      <div className="train-grid">
        {num('rounds', 'Rounds')}
        {num('candidates', 'Candidates per round')}
        {num('margin', 'Margin', 'a candidate must win by more, at the 95% interval’s lower end')}
        {num('budget', 'Budget (model calls)', 'blank: none; as many judge calls')}
        {num('maxTokens', 'Max new tokens', 'blank: the Bench’s defaults')}
        {num('temperature', 'Temperature', 'blank: 0 for a checkpoint')}
      </div>
      <Field id="opt-name" label="Name (optional)">
        <input id="opt-name" type="text" value={c.name} onChange={(e) => set({ name: e.target.value })} />
      </Field>
      {Object.keys(errors).length ? (
        <p className="error-text small" role="alert" data-testid="optimize-form-errors">
          {Object.values(errors).join(' ')}
        </p>
      ) : null}
      <div className="toolbar">
        <button type="submit" disabled={!!live}>
          Start optimization
        </button>
      </div>
    </form>
  );
}
