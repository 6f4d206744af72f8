// The form that starts a benchmark: a dataset's held-out turns (domains, samples per domain, the
// eval split), the backends (stored checkpoints, endpoints, the two baselines), the generation
// settings and the judge. Endpoint API keys stay in this form's memory and the job's message.
import { useMemo, useState, type ReactNode } from 'react';
import { useBenchStore, type BenchDraft, type EndpointDraft } from '../../stores/bench.ts';
import { useDatasetStore } from '../../stores/datasets.ts';
import { checkEndpoint, parseBenchNumbers, type BenchNumberFields } from './form.ts';

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

export function EndpointFields({ prefix, value, onChange, errors }: { prefix: string; value: EndpointDraft; onChange: (v: EndpointDraft) => void; errors: Partial<Record<keyof EndpointDraft, string>> }) {
  return (
    <>
      <Field id={`${prefix}-url`} label={prefix.endsWith('judge') ? 'Judge base URL' : 'Base URL'} error={errors.baseUrl} hint="e.g. http://127.0.0.1:8000/v1 (vLLM, SGLang), http://localhost:11434/v1 (Ollama)">
        <input id={`${prefix}-url`} type="text" value={value.baseUrl} onChange={(e) => onChange({ ...value, baseUrl: e.target.value })} aria-invalid={errors.baseUrl ? true : undefined} />
      </Field>
      <Field id={`${prefix}-model`} label={prefix.endsWith('judge') ? 'Judge model' : 'Model'} error={errors.model}>
        <input id={`${prefix}-model`} type="text" value={value.model} onChange={(e) => onChange({ ...value, model: e.target.value })} aria-invalid={errors.model ? true : undefined} />
      </Field>
      <Field id={`${prefix}-key`} label={prefix.endsWith('judge') ? 'Judge API key' : 'API key'} hint="Kept in this page's memory only: never stored or exported.">
        <input id={`${prefix}-key`} type="password" autoComplete="off" value={value.apiKey} onChange={(e) => onChange({ ...value, apiKey: e.target.value })} />
      </Field>
    </>
  );
}

const EMPTY_ENDPOINT: EndpointDraft = { baseUrl: '', model: '', apiKey: '' };

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
  const [endpoints, setEndpoints] = useState<EndpointDraft[]>([]);
  const [endpointDraft, setEndpointDraft] = useState<EndpointDraft>(EMPTY_ENDPOINT);
  const [endpointErrors, setEndpointErrors] = useState<Partial<Record<keyof EndpointDraft, string>>>({});
  const [judgeKind, setJudgeKind] = useState<'local' | 'endpoint'>('local');
  const [judge, setJudge] = useState<EndpointDraft>(EMPTY_ENDPOINT);
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

  function addEndpoint() {
    const errs = checkEndpoint(endpointDraft);
    setEndpointErrors(errs);
    if (Object.keys(errs).length) return;
    setEndpoints([...endpoints, { ...endpointDraft }]);
    setEndpointDraft(EMPTY_ENDPOINT);
  }

  function submit(e: React.FormEvent) {
    e.preventDefault();
    const errs: Record<string, string> = {};
    if (!dataset) errs.dataset = 'Choose a dataset (load or import one in the Data view).';
    if (!chosenDomains.length) errs.domains = 'Choose at least one domain.';
    const parsed = parseBenchNumbers(numbers);
    Object.assign(errs, parsed.errors);
    const chosen = choices.filter((c) => checkpoints.includes(c.value));
    if (!baselines.length && !chosen.length && !endpoints.length) errs.backends = 'Choose at least one backend.';
    if (judgeKind === 'endpoint') for (const [k, v] of Object.entries(checkEndpoint(judge))) errs[`judge-${k}`] = v;
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
      judge: judgeKind === 'local' ? { kind: 'local' } : { kind: 'endpoint', ...judge },
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
        {endpoints.length ? (
          <ul className="plain" aria-label="Endpoints">
            {endpoints.map((ep, i) => (
              <li key={`${ep.baseUrl}-${ep.model}-${i}`}>
                <code>{ep.model}</code> at <code>{ep.baseUrl}</code>{' '}
                <button type="button" className="secondary small" onClick={() => setEndpoints(endpoints.filter((_, k) => k !== i))}>
                  Remove
                </button>
              </li>
            ))}
          </ul>
        ) : null}
        <details>
          <summary>Add an OpenAI-compatible endpoint</summary>
          <EndpointFields prefix="bench-endpoint" value={endpointDraft} onChange={setEndpointDraft} errors={endpointErrors} />
          <button type="button" className="secondary small" onClick={addEndpoint}>
            Add endpoint
          </button>
        </details>
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
        <EndpointFields prefix="bench-judge" value={judge} onChange={setJudge} errors={{ baseUrl: errors['judge-baseUrl'], model: errors['judge-model'] }} />
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
