// The settings of an OpenAI-compatible endpoint (stores/endpoints.ts), shared by the Playground
// and the Bench: base URL, model, API key with "remember on this device", context, streaming.
// The key goes to the endpoint store's key memory (localStorage only when ticked), never into the
// settings. Not a <form> of its own: it sits inside the Bench's forms.
import { useId, useState, type KeyboardEvent } from 'react';
import { apiKey, endpointProblems, isKeyRemembered, newEndpointId, setApiKey, useEndpointStore, type EndpointSettings } from '../stores/endpoints.ts';

/** Where an endpoint's key is, in words. */
export function keyStatus(id: string): string {
  return apiKey(id) ? (isKeyRemembered(id) ? 'key remembered on this device' : 'key in memory only') : 'no key';
}

export function EndpointForm({
  initial,
  onDone,
  label = 'Endpoint settings',
  submitLabel = 'Use this endpoint',
}: {
  initial: EndpointSettings | null;
  onDone: (id: string | null) => void;
  label?: string;
  submitLabel?: string;
}) {
  const save = useEndpointStore((s) => s.save);
  const [id] = useState(() => initial?.id ?? newEndpointId());
  const [baseUrl, setBaseUrl] = useState(initial?.baseUrl ?? 'http://127.0.0.1:8000/v1');
  const [model, setModel] = useState(initial?.model ?? '');
  const [key, setKey] = useState(initial ? apiKey(initial.id) : '');
  const [remember, setRemember] = useState(initial ? isKeyRemembered(initial.id) : false);
  const [context, setContext] = useState(initial?.contextLength ? String(initial.contextLength) : '');
  const [stream, setStream] = useState(initial?.stream ?? true);
  const [problems, setProblems] = useState<string[]>([]);
  const uid = useId();
  const submit = () => {
    const ctx = context.trim() ? Number(context) : null;
    const p = endpointProblems({ baseUrl, model });
    if (ctx !== null && !(Number.isInteger(ctx) && ctx > 0)) p.push(`Context must be a whole number of tokens, or empty; got '${context}'.`);
    setProblems(p);
    if (p.length) return;
    save({ id, baseUrl: baseUrl.trim(), model: model.trim(), contextLength: ctx, stream });
    setApiKey(id, key, remember);
    onDone(id);
  };
  const enter = (e: KeyboardEvent) => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    submit();
  };
  return (
    <div className="endpoint-form" role="form" aria-label={label} onKeyDown={enter}>
      <div className="field">
        <label htmlFor={`${uid}-url`}>Base URL</label>
        <input id={`${uid}-url`} type="text" value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} placeholder="http://127.0.0.1:8000/v1" />
      </div>
      <div className="field">
        <label htmlFor={`${uid}-model`}>Model name</label>
        <input id={`${uid}-model`} type="text" value={model} onChange={(e) => setModel(e.target.value)} placeholder="Qwen/Qwen2.5-7B-Instruct" />
      </div>
      <div className="field">
        <label htmlFor={`${uid}-key`}>API key</label>
        <input id={`${uid}-key`} type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} placeholder="optional" />
      </div>
      <label className="check">
        <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.target.checked)} />
        <span>Remember the key on this device (otherwise it is kept only until this page closes; it never goes into an exported file)</span>
      </label>
      <div className="endpoint-row">
        <div className="field">
          <label htmlFor={`${uid}-ctx`}>Context (tokens)</label>
          <input id={`${uid}-ctx`} type="number" min={1} value={context} onChange={(e) => setContext(e.target.value)} placeholder="unknown" />
        </div>
        <label className="check">
          <input type="checkbox" checked={stream} onChange={(e) => setStream(e.target.checked)} />
          <span>Stream the reply</span>
        </label>
      </div>
      {problems.length ? (
        <ul className="problems" role="alert">
          {problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      ) : null}
      <div className="toolbar">
        <button type="button" onClick={submit}>
          {submitLabel}
        </button>
        <button type="button" className="secondary" onClick={() => onDone(null)}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/**
 * A choice among the endpoints set up on this device, or a new one (its settings form inline).
 * `value` is an endpoint id ('' for none yet).
 */
export function EndpointSelect({
  id,
  label,
  value,
  onChange,
  error,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (id: string) => void;
  error?: string;
}) {
  const endpoints = useEndpointStore((s) => s.endpoints);
  const [adding, setAdding] = useState(false);
  const known = endpoints.some((e) => e.id === value);
  return (
    <>
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <select
          id={id}
          value={adding ? 'new-endpoint' : known ? value : ''}
          onChange={(e) => (e.target.value === 'new-endpoint' ? setAdding(true) : (setAdding(false), onChange(e.target.value)))}
          aria-invalid={error ? true : undefined}
        >
          <option value="">Choose…</option>
          {endpoints.map((e) => (
            <option key={e.id} value={e.id}>
              {e.model} at {e.baseUrl} ({keyStatus(e.id)})
            </option>
          ))}
          <option value="new-endpoint">Add an endpoint…</option>
        </select>
        {error ? <span className="error-text small">{error}</span> : null}
      </div>
      {adding ? (
        <EndpointForm
          initial={null}
          label={`${label}: new endpoint`}
          onDone={(newId) => {
            setAdding(false);
            if (newId) onChange(newId);
          }}
        />
      ) : null}
    </>
  );
}
