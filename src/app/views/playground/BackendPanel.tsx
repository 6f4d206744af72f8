// Choosing what plays the environment: a stored checkpoint of a training run, a dropped
// .safetensors file, an OpenAI-compatible endpoint, or a baseline. Endpoint keys stay in memory
// unless "remember on this device" is ticked.
import { useEffect, useState } from 'react';
import type { RunRecord } from '../../../storage/db.ts';
import { listRuns } from '../../../storage/runs.ts';
import { EndpointForm, keyStatus } from '../../components/EndpointForm.tsx';
import { useEndpointStore, type EndpointSettings } from '../../stores/endpoints.ts';
import { usePlaygroundStore, type BackendChoice } from '../../stores/playground.ts';

/** The value of the backend <select>. */
function choiceValue(b: BackendChoice | null): string {
  if (!b) return '';
  if (b.kind === 'run') return `run:${b.key}`;
  if (b.kind === 'file') return `file:${b.id}`;
  if (b.kind === 'endpoint') return `endpoint:${b.id}`;
  return b.kind;
}

interface CheckpointOption {
  key: string;
  label: string;
}

function checkpointOptions(runs: RunRecord[]): CheckpointOption[] {
  const out: CheckpointOption[] = [];
  for (const r of runs) {
    for (const tag of ['best', 'last'] as const) {
      const c = r.checkpoints[tag];
      if (!c || (tag === 'last' && r.checkpoints.best?.key === c.key)) continue;
      out.push({ key: c.key, label: `${r.name} · ${tag} · step ${c.step}` });
    }
  }
  return out;
}

export function BackendPanel() {
  const backend = usePlaygroundStore((s) => s.backend);
  const model = usePlaygroundStore((s) => s.model);
  const setBackend = usePlaygroundStore((s) => s.setBackend);
  const error = usePlaygroundStore((s) => s.error);
  const endpoints = useEndpointStore((s) => s.endpoints);
  const removeEndpoint = useEndpointStore((s) => s.remove);
  const [runs, setRuns] = useState<RunRecord[] | null>(null);
  const [runsError, setRunsError] = useState<string | null>(null);
  const [files, setFiles] = useState<{ id: string; name: string }[]>(backend?.kind === 'file' ? [{ id: backend.id, name: backend.name }] : []);
  const [editing, setEditing] = useState<EndpointSettings | 'new' | null>(null);
  const [dragging, setDragging] = useState(false);

  useEffect(() => {
    listRuns().then(setRuns, (e: Error) => setRunsError(`Stored runs could not be read: ${e.message}`));
  }, []);
  const ckpts = checkpointOptions(runs ?? []);
  const chosenEndpoint = backend?.kind === 'endpoint' ? endpoints.find((e) => e.id === backend.id) : undefined;

  const addFile = async (file: File) => {
    const bytes = new Uint8Array(await file.arrayBuffer());
    const id = `${file.name}:${file.size}:${file.lastModified}`;
    setFiles((f) => [...f.filter((x) => x.id !== id), { id, name: file.name }]);
    setBackend({ kind: 'file', id, name: file.name }, bytes);
  };

  const onSelect = (v: string) => {
    if (v === 'new-endpoint') {
      setEditing('new');
      return;
    }
    if (!v) return setBackend(null);
    const [kind, ...rest] = v.split(':');
    const id = rest.join(':');
    if (kind === 'run') {
      const c = ckpts.find((x) => x.key === id);
      if (c) setBackend({ kind: 'run', key: c.key, label: c.label });
    } else if (kind === 'file') {
      const f = files.find((x) => x.id === id);
      if (f) setBackend({ kind: 'file', id: f.id, name: f.name });
    } else if (kind === 'endpoint') setBackend({ kind: 'endpoint', id });
    else if (kind === 'copy-last' || kind === 'reference') setBackend({ kind });
  };

  return (
    <div
      className={dragging ? 'pg-backend dropzone dragging' : 'pg-backend'}
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        const f = e.dataTransfer.files[0];
        if (f) void addFile(f);
      }}
    >
      <div className="field">
        <label htmlFor="pg-backend">Backend</label>
        <select id="pg-backend" value={choiceValue(backend)} onChange={(e) => onSelect(e.target.value)}>
          <option value="">Choose…</option>
          <optgroup label="Checkpoints (on the GPU)">
            {ckpts.map((c) => (
              <option key={c.key} value={`run:${c.key}`}>
                {c.label}
              </option>
            ))}
            {files.map((f) => (
              <option key={f.id} value={`file:${f.id}`}>
                {f.name} (file)
              </option>
            ))}
          </optgroup>
          <optgroup label="Endpoints (OpenAI-compatible)">
            {endpoints.map((e) => (
              <option key={e.id} value={`endpoint:${e.id}`}>
                {e.model || '(no model)'} at {e.baseUrl}
              </option>
            ))}
            <option value="new-endpoint">Add an endpoint…</option>
          </optgroup>
          <optgroup label="Baselines">
            <option value="copy-last">copy-last: repeat the previous observation</option>
            <option value="reference">reference: the real observation (the ceiling)</option>
          </optgroup>
        </select>
      </div>
      {runsError ? <p className="error-text">{runsError}</p> : null}
      {runs && !ckpts.length ? <p className="small muted">No stored checkpoint yet: train one in the Train view, or drop a .safetensors file here.</p> : null}
      <label className="button-like small pg-file">
        Open a .safetensors file…
        <input
          type="file"
          accept=".safetensors"
          className="sr-only"
          aria-label="Open a checkpoint file"
          onChange={(e) => {
            const f = e.target.files?.[0];
            if (f) void addFile(f);
            e.target.value = '';
          }}
        />
      </label>
      {backend && (backend.kind === 'run' || backend.kind === 'file') ? (
        <p className="small" data-testid="pg-model">
          {model && model.id === (backend.kind === 'run' ? `run:${backend.key}` : `file:${backend.id}`)
            ? `Loaded on the GPU: ${model.name} · ${model.layers} layers × ${model.dModel} · context ${model.contextLength} tokens · vocabulary ${model.vocabSize} · trained template ${model.template}`
            : error?.kind === 'checkpoint' || error?.kind === 'no-webgpu'
              ? 'Not loaded: see the message above.'
              : 'Loading the checkpoint on the GPU…'}
        </p>
      ) : null}
      {chosenEndpoint ? (
        <p className="small">
          {chosenEndpoint.model} at {chosenEndpoint.baseUrl}
          {chosenEndpoint.contextLength ? ` · context ${chosenEndpoint.contextLength}` : ''} · {keyStatus(chosenEndpoint.id)}{' '}
          <button type="button" className="linklike" onClick={() => setEditing(chosenEndpoint)}>
            Edit
          </button>{' '}
          <button
            type="button"
            className="linklike"
            onClick={() => {
              removeEndpoint(chosenEndpoint.id);
              setBackend(null);
            }}
          >
            Remove
          </button>
        </p>
      ) : null}
      {editing ? (
        <EndpointForm
          initial={editing === 'new' ? null : editing}
          onDone={(id) => {
            setEditing(null);
            if (id) setBackend({ kind: 'endpoint', id });
          }}
        />
      ) : null}
    </div>
  );
}
