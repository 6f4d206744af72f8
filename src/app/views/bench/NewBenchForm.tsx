// The form that starts a benchmark: a dataset's held-out turns (domains, samples per domain, the
// eval split), the backends (stored checkpoints, endpoints, the two baselines), the generation
// settings and the judge. Endpoints are those set up on this device (shared with the Playground,
// keys in memory unless remembered there): the form picks them, or adds one.
import { useMemo, useState, type ReactNode } from 'react';
import { EndpointForm, EndpointSelect, keyStatus } from '../../components/EndpointForm.tsx';
import { useBenchStore, type BenchDraft } from '../../stores/bench.ts';
import { useDatasetStore } from '../../stores/datasets.ts';
import { useEndpointStore } from '../../stores/endpoints.ts';
import { parseBenchNumbers, type BenchNumberFields } from './form.ts';

function Field({ id, label, error, hint, children }: { id: string; label: string; error?: string; hint?: ReactNode; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {hint ? <span className="muted small">{hint}</span> : null}
      {error ? <span className="error-text small">{error}</span> : null}
    </div>
  );
}

export function NewBenchForm() {
  const datasets = useDatasetStore((s) => s.datasets);
  const activeId = useDatasetStore((s) => s.activeId);
  const { runs, live, create } = useBenchStore();
  const [datasetChoice, setDatasetChoice] = useState('');
  const [name, setName] = useState('');
  const [domains, setDomains] = useState<string[] | null>(null);
  const [numbers, setNumbers] = useState<BenchNumberFields>({ perDomain: '20', evalFraction: '0.1', seed: '0', maxTokens: '', temperature: '' });
  const [baselines, setBaselines] = useState<('copy-last' | 'reference')[]>(['copy-last', 'reference']);
  const [checkpoints, setCheckpoints] = useState<string[]>([]);
  const known = useEndpointStore((s) => s.endpoints);
  /** Ids of the chosen endpoints. */
  const [endpointIds, setEndpointIds] = useState<string[]>([]);
  const [adding, setAdding] = useState(false);
  const [judgeKind, setJudgeKind] = useState<'local' | 'endpoint'>('local');
  const [judgeId, setJudgeId] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});

  const datasetId = datasetChoice && datasets.some((d) => d.id === datasetChoice) ? datasetChoice : (activeId ?? datasets[0]?.id ?? '');
  const dataset = datasets.find((d) => d.id === datasetId);
  const chosenDomains = domains ?? dataset?.domains ?? [];
  const choices = useMemo(
    () =>
      runs.flatMap((r) =>
        (['last', 'best'] as const).flatMap((tag) => {
          const c = r.checkpoints[tag];
          if (!c || (tag === 'best' && r.checkpoints.last?.key === c.key)) return [];
          return [{ value: c.key, label: `${r.name} · ${tag} · step ${c.step}`, ref: { runId: r.id, runName: r.name, stage: r.stage, tag, step: c.step, key: c.key } }];
        }),
      ),
    [runs],
  );

  function submit(e: React.FormEvent) {
    e.preventDefault();
    const errs: Record<string, string> = {};
    if (!dataset) errs.dataset = 'Choose a dataset (load or import one in the Data view).';
    if (!chosenDomains.length) errs.domains = 'Choose at least one domain.';
    const parsed = parseBenchNumbers(numbers);
    Object.assign(errs, parsed.errors);
    const chosen = choices.filter((c) => checkpoints.includes(c.value));
    const endpoints = known.filter((e) => endpointIds.includes(e.id));
    if (!baselines.length && !chosen.length && !endpoints.length) errs.backends = 'Choose at least one backend.';
    const judgeEndpoint = known.find((e) => e.id === judgeId);
    if (judgeKind === 'endpoint' && !judgeEndpoint) errs.judge = 'Choose the judge’s endpoint, or add one.';
    setErrors(errs);
    if (Object.keys(errs).length || !dataset || !parsed.values) return;
    const draft: BenchDraft = {
      name,
      datasetId: dataset.id,
      datasetName: dataset.name,
      domains: chosenDomains,
      perDomain: parsed.values.perDomain,
      evalFraction: parsed.values.evalFraction,
      seed: parsed.values.seed,
      baselines,
      checkpoints: chosen.map((c) => c.ref),
      endpoints,
      generation: parsed.values.generation,
      judge: judgeKind === 'endpoint' && judgeEndpoint ? { kind: 'endpoint', endpoint: judgeEndpoint } : { kind: 'local' },
    };
    void create(draft);
  }

  const num = (field: keyof BenchNumberFields, label: string, hint?: string) => (
    <Field id={`bench-${field}`} label={label} error={errors[field]} hint={hint}>
      <input id={`bench-${field}`} type="text" inputMode="decimal" value={numbers[field]} onChange={(e) => setNumbers({ ...numbers, [field]: e.target.value })} aria-invalid={errors[field] ? true : undefined} />
    </Field>
  );

  return (
    <form className="card bench-form" onSubmit={submit} aria-labelledby="bench-form-title" noValidate>
      <h2 id="bench-form-title">New benchmark</h2>
      <Field id="bench-dataset" label="Dataset" error={errors.dataset}>
        <select id="bench-dataset" value={datasetId} onChange={(e) => (setDatasetChoice(e.target.value), setDomains(null))}>
          {datasets.map((d) => (
            <option key={d.id} value={d.id}>
              {d.name}
            </option>
          ))}
        </select>
      </Field>
      <fieldset>
        <legend>Domains</legend>
        {(dataset?.domains ?? []).map((d) => (
          <label key={d} className="check">
            <input type="checkbox" checked={chosenDomains.includes(d)} onChange={(e) => setDomains(e.target.checked ? [...chosenDomains, d] : chosenDomains.filter((x) => x !== d))} />
            {d}
          </label>
        ))}
        {errors.domains ? <span className="error-text small">{errors.domains}</span> : null}
      </fieldset>
      <div className="train-grid">
        {num('perDomain', 'Samples per domain')}
        {num('evalFraction', 'Eval share', 'trajectories held out, as training')}
        {num('seed', 'Split seed', 'training uses 0')}
      </div>
      <fieldset>
        <legend>Backends</legend>
        {(['copy-last', 'reference'] as const).map((b) => (
          <label key={b} className="check">
            <input type="checkbox" checked={baselines.includes(b)} onChange={(e) => setBaselines(e.target.checked ? [...baselines, b] : baselines.filter((x) => x !== b))} />
            <span>
              {b} <span className="muted small">{b === 'copy-last' ? 'baseline: the previous observation' : 'baseline: the real observation (the ceiling)'}</span>
            </span>
          </label>
        ))}
        {choices.length ? <p className="muted small">Checkpoints (on this GPU, with the template each was trained with):</p> : <p className="muted small">No stored checkpoint yet: train one in the Train view.</p>}
        {choices.map((c) => (
          <label key={c.value} className="check">
            <input type="checkbox" checked={checkpoints.includes(c.value)} onChange={(e) => setCheckpoints(e.target.checked ? [...checkpoints, c.value] : checkpoints.filter((x) => x !== c.value))} />
            {c.label}
          </label>
        ))}
        {known.length ? (
          <ul className="plain" aria-label="Endpoints">
            {known.map((ep) => (
              <li key={ep.id}>
                <label className="check">
                  <input type="checkbox" checked={endpointIds.includes(ep.id)} onChange={(e) => setEndpointIds(e.target.checked ? [...endpointIds, ep.id] : endpointIds.filter((x) => x !== ep.id))} />
                  <span>
                    endpoint:{ep.model} <span className="muted small">at {ep.baseUrl} · {keyStatus(ep.id)}</span>
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
              if (id) setEndpointIds([...endpointIds, id]);
            }}
          />
        ) : (
          <button type="button" className="secondary small" onClick={() => setAdding(true)}>
            Add an OpenAI-compatible endpoint
          </button>
        )}
        {errors.backends ? <span className="error-text small">{errors.backends}</span> : null}
      </fieldset>
      <div className="train-grid">
        {num('maxTokens', 'Max new tokens', 'blank: a quarter of a checkpoint’s context; 32768 for an endpoint')}
        {num('temperature', 'Temperature', 'blank: 0 for a checkpoint, 0.6 for an endpoint')}
      </div>
      <Field id="bench-judge" label="Judge">
        <select id="bench-judge" value={judgeKind} onChange={(e) => setJudgeKind(e.target.value as 'local' | 'endpoint')}>
          <option value="local">Local rubric judge (in the browser)</option>
          <option value="endpoint">LLM judge at an endpoint (AgentWorldBench verdict format)</option>
        </select>
      </Field>
      {judgeKind === 'endpoint' ? (
        <EndpointSelect id="bench-judge-endpoint" label="Judge endpoint" value={judgeId} onChange={setJudgeId} error={errors.judge} />
      ) : null}
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
