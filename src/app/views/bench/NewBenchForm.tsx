// The form that starts a benchmark: a dataset's held-out turns (domains, samples per domain, the
// eval split), the backends (stored checkpoints, Hugging Face and ONNX folders picked in this
// page, endpoints, the two baselines), the generation
// settings and the judge. Endpoints are those set up on this device (shared with the Playground,
// keys in memory unless remembered there): the form picks them, or adds one.
import { useMemo, useState } from 'react';
import { EndpointForm, EndpointSelect, keyStatus } from '../../components/EndpointForm.tsx';
import { HfFolderPicker } from '../../components/HfFolderPicker.tsx';
import { usable, useHfFolderStore, type PickedFolder } from '../../stores/hfFolders.ts';
import { OnnxFolderPicker } from '../../components/OnnxFolderPicker.tsx';
import { chosenFile, pageExecution, usableOnnx, useOnnxFolderStore, type PickedOnnxFolder } from '../../stores/onnxFolders.ts';
import { useBenchStore, type BenchDraft } from '../../stores/bench.ts';
import { useDatasetStore } from '../../stores/datasets.ts';
import { useEndpointStore } from '../../stores/endpoints.ts';
import { missingWebGpu } from '../../../jobs/client.ts';
import { parseBenchNumbers, type BenchNumberFields } from './form.ts';
import { Field } from '../../components/Field.tsx';
import { BENCH_WRITE, guardJob } from '../../stores/storage.ts';

type Baseline = 'copy-last' | 'reference';
type CheckpointChoice = { value: string; label: string; ref: BenchDraft['checkpoints'][number] };
type EndpointChoice = ReturnType<typeof useEndpointStore.getState>['endpoints'][number];
type Dataset = ReturnType<typeof useDatasetStore.getState>['datasets'][number];

/** A list with x added (on) or taken out. */
function toggled<T>(list: T[], x: T, on: boolean): T[] {
  return on ? [...list, x] : list.filter((y) => y !== x);
}

/** The stored checkpoints a bench can run: each run's last, and its best when that is another one. */
function useCheckpointChoices(runs: ReturnType<typeof useBenchStore.getState>['runs']): CheckpointChoice[] {
  return useMemo(
    () =>
      runs.flatMap((r) =>
        (['last', 'best'] as const).flatMap((tag) => {
          const c = r.checkpoints[tag];
          if (!c || (tag === 'best' && r.checkpoints.last?.key === c.key)) return [];
          return [
            {
              value: c.key,
              label: `${r.name} · ${tag} · step ${c.step}`,
              ref: { runId: r.id, runName: r.name, stage: r.stage, tag, step: c.step, key: c.key },
            },
          ];
        }),
      ),
    [runs],
  );
}

interface FormInput {
  name: string;
  dataset: Dataset | undefined;
  domains: string[];
  numbers: BenchNumberFields;
  baselines: Baseline[];
  checkpoints: CheckpointChoice[];
  endpoints: EndpointChoice[];
  /** Hugging Face folders chosen (those no longer picked in the page are left out by the caller). */
  folders: PickedFolder[];
  /** ONNX folders chosen (likewise). */
  onnx: PickedOnnxFolder[];
  judgeKind: 'local' | 'endpoint';
  judgeEndpoint: EndpointChoice | undefined;
}

/** The form's errors by field, and the bench to start when there are none. */
function checkForm(f: FormInput): { errors: Record<string, string>; draft: BenchDraft | null } {
  const errs: Record<string, string> = {};
  const { dataset, domains: chosenDomains, judgeEndpoint } = f;
  if (!dataset) errs.dataset = 'Choose a dataset (load or import one in the Data view).';
  if (!chosenDomains.length) errs.domains = 'Choose at least one domain.';
  const parsed = parseBenchNumbers(f.numbers);
  Object.assign(errs, parsed.errors);
  if (!f.baselines.length && !f.checkpoints.length && !f.endpoints.length && !f.folders.length && !f.onnx.length)
    errs.backends = 'Choose at least one backend.';
  const unfit = f.folders.filter((x) => !usable(x));
  if (unfit.length) errs.folders = `${unfit.map((x) => x.name).join(', ')}: not checked yet, or does not fit this GPU with its settings (see its message).`;
  const unusable = f.onnx.filter((x) => !usableOnnx(x));
  if (unusable.length) errs.onnx = `${unusable.map((x) => x.name).join(', ')}: not checked yet, or cannot run (see its message).`;
  if (f.judgeKind === 'endpoint' && !judgeEndpoint) errs.judge = 'Choose the judge’s endpoint, or add one.';
  if (Object.keys(errs).length || !dataset || !parsed.values) return { errors: errs, draft: null };
  const draft: BenchDraft = {
    name: f.name,
    datasetId: dataset.id,
    datasetName: dataset.name,
    domains: chosenDomains,
    perDomain: parsed.values.perDomain,
    evalFraction: parsed.values.evalFraction,
    seed: parsed.values.seed,
    baselines: f.baselines,
    checkpoints: f.checkpoints.map((c) => c.ref),
    endpoints: f.endpoints,
    folders: f.folders.map((x) => ({
      folderId: x.id,
      name: x.name,
      architecture: x.info?.architecture ?? '',
      parameters: x.info?.parameters ?? 0,
      context: x.settings.context,
      memoryGiB: x.settings.memoryGiB,
    })),
    onnx: f.onnx.map((x) => ({ folderId: x.id, name: x.name, file: chosenFile(x) ?? '', execution: pageExecution() })),
    generation: parsed.values.generation,
    judge: f.judgeKind === 'endpoint' && judgeEndpoint ? { kind: 'endpoint', endpoint: judgeEndpoint } : { kind: 'local' },
  };
  return { errors: errs, draft };
}

function DatasetField({ datasets, value, onChange, error }: { datasets: Dataset[]; value: string; onChange(id: string): void; error?: string }) {
  return (
    <Field id="bench-dataset" label="Dataset" error={error}>
      <select id="bench-dataset" value={value} onChange={(e) => onChange(e.target.value)}>
        {datasets.map((d) => (
          <option key={d.id} value={d.id}>
            {d.name}
          </option>
        ))}
      </select>
    </Field>
  );
}

function DomainsFieldset({ domains, chosen, onChange, error }: { domains: string[]; chosen: string[]; onChange(domains: string[]): void; error?: string }) {
  return (
    <fieldset>
      <legend>Domains</legend>
      {domains.map((d) => (
        <label key={d} className="check">
          <input type="checkbox" checked={chosen.includes(d)} onChange={(e) => onChange(toggled(chosen, d, e.target.checked))} />
          {d}
        </label>
      ))}
      {error ? <span className="error-text small">{error}</span> : null}
    </fieldset>
  );
}

/** The endpoints set up on this device, to pick, and the form that adds one. */
function EndpointChecks({ chosen, onChange }: { chosen: string[]; onChange(ids: string[]): void }) {
  const known = useEndpointStore((s) => s.endpoints);
  const [adding, setAdding] = useState(false);
  return (
    <>
      {known.length ? (
        <ul className="plain" aria-label="Endpoints">
          {known.map((ep) => (
            <li key={ep.id}>
              <label className="check">
                <input type="checkbox" checked={chosen.includes(ep.id)} onChange={(e) => onChange(toggled(chosen, ep.id, e.target.checked))} />
                <span>
                  endpoint:{ep.model}{' '}
                  <span className="muted small">
                    at {ep.baseUrl} · {keyStatus(ep.id)}
                  </span>
                </span>
              </label>
            </li>
          ))}
        </ul>
      ) : null}
      {adding ? (
        <EndpointForm
          initial={null}
          label="New endpoint"
          submitLabel="Add endpoint"
          onDone={(id) => {
            setAdding(false);
            if (id) onChange([...chosen, id]);
          }}
        />
      ) : (
        <button type="button" className="secondary small" onClick={() => setAdding(true)}>
          Add an OpenAI-compatible endpoint
        </button>
      )}
    </>
  );
}

interface BackendsProps {
  baselines: Baseline[];
  setBaselines(b: Baseline[]): void;
  choices: CheckpointChoice[];
  checkpoints: string[];
  setCheckpoints(keys: string[]): void;
  endpointIds: string[];
  setEndpointIds(ids: string[]): void;
  folderIds: string[];
  setFolderIds(ids: string[]): void;
  onnxIds: string[];
  setOnnxIds(ids: string[]): void;
  /** Why checkpoints cannot run here (no WebGPU), or null. */
  noGpu: string | null;
  error?: string;
}

function BackendsFieldset({
  baselines,
  setBaselines,
  choices,
  checkpoints,
  setCheckpoints,
  endpointIds,
  setEndpointIds,
  folderIds,
  setFolderIds,
  onnxIds,
  setOnnxIds,
  noGpu,
  error,
}: BackendsProps) {
  return (
    <fieldset>
      <legend>Backends</legend>
      {(['copy-last', 'reference'] as const).map((b) => (
        <label key={b} className="check">
          <input type="checkbox" checked={baselines.includes(b)} onChange={(e) => setBaselines(toggled(baselines, b, e.target.checked))} />
          <span>
            {b} <span className="muted small">{b === 'copy-last' ? 'baseline: the previous observation' : 'baseline: the real observation (the ceiling)'}</span>
          </span>
        </label>
      ))}
      {choices.length ? (
        <p className="muted small">Checkpoints (on this GPU, with the template each was trained with):</p>
      ) : (
        <p className="muted small">No stored checkpoint yet: train one in the Train view.</p>
      )}
      {choices.length && noGpu ? (
        <p className="muted small" data-testid="bench-checkpoints-unavailable">
          Checkpoints are unavailable here: {noGpu} The baselines and endpoints run without WebGPU.
        </p>
      ) : null}
      {choices.map((c) => (
        <label key={c.value} className="check">
          <input
            type="checkbox"
            disabled={!!noGpu}
            checked={!noGpu && checkpoints.includes(c.value)}
            onChange={(e) => setCheckpoints(toggled(checkpoints, c.value, e.target.checked))}
          />
          {c.label}
          {noGpu ? <span className="muted small"> (unavailable: needs WebGPU)</span> : null}
        </label>
      ))}
      <HfFolderPicker
        idPrefix="bench"
        useLabel="Add to the benchmark"
        isUsed={(id) => folderIds.includes(id)}
        onUse={(f) => setFolderIds(toggled(folderIds, f.id, !folderIds.includes(f.id)))}
      />
      <OnnxFolderPicker
        idPrefix="bench"
        useLabel="Add to the benchmark"
        isUsed={(id) => onnxIds.includes(id)}
        onUse={(f) => setOnnxIds(toggled(onnxIds, f.id, !onnxIds.includes(f.id)))}
      />
      <EndpointChecks chosen={endpointIds} onChange={setEndpointIds} />
      {error ? <span className="error-text small">{error}</span> : null}
    </fieldset>
  );
}

function JudgeFields({
  kind,
  setKind,
  endpointId,
  setEndpointId,
  error,
}: {
  kind: 'local' | 'endpoint';
  setKind(k: 'local' | 'endpoint'): void;
  endpointId: string;
  setEndpointId(id: string): void;
  error?: string;
}) {
  return (
    <>
      <Field id="bench-judge" label="Judge">
        <select id="bench-judge" value={kind} onChange={(e) => setKind(e.target.value as 'local' | 'endpoint')}>
          <option value="local">Local rubric judge (in the browser)</option>
          <option value="endpoint">LLM judge at an endpoint (AgentWorldBench verdict format)</option>
        </select>
      </Field>
      {kind === 'endpoint' ? (
        <EndpointSelect id="bench-judge-endpoint" label="Judge endpoint" value={endpointId} onChange={setEndpointId} error={error} />
      ) : null}
    </>
  );
}

/** The Hugging Face and ONNX folders of the page chosen for the bench (by id), and the folders themselves. */
function usePickedFolders() {
  const folders = useHfFolderStore((s) => s.folders);
  const [folderIds, setFolderIds] = useState<string[]>([]);
  const onnxFolders = useOnnxFolderStore((s) => s.folders);
  const [onnxIds, setOnnxIds] = useState<string[]>([]);
  return {
    ids: { folderIds, setFolderIds, onnxIds, setOnnxIds },
    chosen: () => ({ folders: folders.filter((f) => folderIds.includes(f.id)), onnx: onnxFolders.filter((f) => onnxIds.includes(f.id)) }),
  };
}

export function NewBenchForm() {
  const datasets = useDatasetStore((s) => s.datasets);
  const activeId = useDatasetStore((s) => s.activeId);
  const { runs, live, create } = useBenchStore();
  const [datasetChoice, setDatasetChoice] = useState('');
  const [name, setName] = useState('');
  const [domains, setDomains] = useState<string[] | null>(null);
  const [numbers, setNumbers] = useState<BenchNumberFields>({ perDomain: '20', evalFraction: '0.1', seed: '0', maxTokens: '', temperature: '' });
  const [baselines, setBaselines] = useState<Baseline[]>(['copy-last', 'reference']);
  const [checkpoints, setCheckpoints] = useState<string[]>([]);
  const known = useEndpointStore((s) => s.endpoints);
  /** Ids of the chosen endpoints. */
  const [endpointIds, setEndpointIds] = useState<string[]>([]);
  const picked = usePickedFolders();
  const [judgeKind, setJudgeKind] = useState<'local' | 'endpoint'>('local');
  const [judgeId, setJudgeId] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});

  const datasetId = datasetChoice && datasets.some((d) => d.id === datasetChoice) ? datasetChoice : (activeId ?? datasets[0]?.id ?? '');
  const dataset = datasets.find((d) => d.id === datasetId);
  const chosenDomains = domains ?? dataset?.domains ?? [];
  const choices = useCheckpointChoices(runs);
  const noGpu = useMemo(() => missingWebGpu()?.message ?? null, []);

  function submit(e: React.FormEvent) {
    e.preventDefault();
    const checked = checkForm({
      name,
      dataset,
      domains: chosenDomains,
      numbers,
      baselines,
      checkpoints: noGpu ? [] : choices.filter((c) => checkpoints.includes(c.value)),
      endpoints: known.filter((ep) => endpointIds.includes(ep.id)),
      ...picked.chosen(),
      judgeKind,
      judgeEndpoint: known.find((ep) => ep.id === judgeId),
    });
    setErrors(checked.errors);
    const draft = checked.draft;
    if (draft) guardJob(BENCH_WRITE, () => void create(draft));
  }

  const num = (field: keyof BenchNumberFields, label: string, hint?: string) => (
    <Field id={`bench-${field}`} label={label} error={errors[field]} hint={hint}>
      <input
        id={`bench-${field}`}
        type="text"
        inputMode="decimal"
        value={numbers[field]}
        onChange={(e) => setNumbers({ ...numbers, [field]: e.target.value })}
        aria-invalid={errors[field] ? true : undefined}
      />
    </Field>
  );

  return (
    <form className="card bench-form" onSubmit={submit} aria-labelledby="bench-form-title" noValidate>
      <h2 id="bench-form-title">New benchmark</h2>
      <DatasetField datasets={datasets} value={datasetId} onChange={(id) => (setDatasetChoice(id), setDomains(null))} error={errors.dataset} />
      <DomainsFieldset domains={dataset?.domains ?? []} chosen={chosenDomains} onChange={setDomains} error={errors.domains} />
      <div className="train-grid">
        {num('perDomain', 'Samples per domain')}
        {num('evalFraction', 'Eval share', 'trajectories held out, as training')}
        {num('seed', 'Split seed', 'training uses 0')}
      </div>
      <BackendsFieldset
        baselines={baselines}
        setBaselines={setBaselines}
        choices={choices}
        checkpoints={checkpoints}
        setCheckpoints={setCheckpoints}
        endpointIds={endpointIds}
        setEndpointIds={setEndpointIds}
        {...picked.ids}
        noGpu={noGpu}
        error={errors.backends ?? errors.folders ?? errors.onnx}
      />
      <div className="train-grid">
        {num('maxTokens', 'Max new tokens', 'blank: a quarter of a checkpoint’s context; 32768 for an endpoint')}
        {num('temperature', 'Temperature', 'blank: 0 for a checkpoint, 0.6 for an endpoint')}
      </div>
      <JudgeFields kind={judgeKind} setKind={setJudgeKind} endpointId={judgeId} setEndpointId={setJudgeId} error={errors.judge} />
      <Field id="bench-name" label="Name (optional)">
        <input id="bench-name" type="text" value={name} onChange={(e) => setName(e.target.value)} />
      </Field>
      {Object.keys(errors).length ? (
        <p className="error-text small" role="alert" data-testid="bench-form-errors">
          {Object.values(errors).join(' ')}
        </p>
      ) : null}
      <div className="toolbar">
        <button type="submit" disabled={!!live}>
          Run benchmark
        </button>
      </div>
    </form>
  );
}
