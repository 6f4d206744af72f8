// Choosing what plays the environment: a stored checkpoint of a training run, a dropped
// .safetensors file, a Hugging Face model folder (picked or dropped; checked before it is loaded),
// an ONNX model folder (the same; run by onnxruntime-web on WebGPU or WASM), an OpenAI-compatible
// endpoint, or a baseline. Endpoint keys stay in memory unless "remember on
// this device" is ticked.
import { useEffect, useRef, useState, type DragEvent } from 'react';
import type { RunRecord } from '../../../core/records.ts';
import { listRuns } from '../../../storage/runs.ts';
import { EndpointForm, keyStatus } from '../../components/EndpointForm.tsx';
import { HfFolderPicker } from '../../components/HfFolderPicker.tsx';
import { OnnxFolderPicker } from '../../components/OnnxFolderPicker.tsx';
import { chosenFile, usableOnnx, useOnnxFolderStore, type PickedOnnxFolder } from '../../stores/onnxFolders.ts';
import { isOnnxFiles } from '../../../jobs/onnxFolder.ts';
import { droppedFiles } from '../../lib/droppedFiles.ts';
import { folderFiles, formatBytes } from '../../../train/hfFolder.ts';
import { usable, useHfFolderStore, type PickedFolder } from '../../stores/hfFolders.ts';
import { useEndpointStore, type EndpointSettings } from '../../stores/endpoints.ts';
import { isLoaded, isLocalChoice, usePlaygroundStore, type BackendChoice, type PlaygroundError, type PlaygroundState } from '../../stores/playground.ts';

/** The value of the backend <select>. */
function choiceValue(b: BackendChoice | null): string {
  if (!b) return '';
  if (b.kind === 'run') return `run:${b.key}`;
  if (b.kind === 'file') return `file:${b.id}`;
  if (b.kind === 'hf') return `hf:${b.id}`;
  if (b.kind === 'onnx') return `onnx:${b.id}`;
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

/** The backend a <select> value names: null for none, undefined when it names nothing known. */
function choiceFromValue(
  v: string,
  ckpts: CheckpointOption[],
  files: { id: string; name: string }[],
  folders: PickedFolder[],
  onnx: PickedOnnxFolder[],
): BackendChoice | null | undefined {
  if (!v) return null;
  const [kind, ...rest] = v.split(':');
  const id = rest.join(':');
  if (kind === 'run') {
    const c = ckpts.find((x) => x.key === id);
    return c ? { kind: 'run', key: c.key, label: c.label } : undefined;
  }
  if (kind === 'file') {
    const f = files.find((x) => x.id === id);
    return f ? { kind: 'file', id: f.id, name: f.name } : undefined;
  }
  if (kind === 'hf') {
    const f = folders.find((x) => x.id === id);
    return f ? { kind: 'hf', id: f.id, name: f.name } : undefined;
  }
  if (kind === 'onnx') {
    const f = onnx.find((x) => x.id === id);
    return f ? { kind: 'onnx', id: f.id, name: f.name } : undefined;
  }
  if (kind === 'endpoint') return { kind: 'endpoint', id };
  if (kind === 'copy-last' || kind === 'reference') return { kind };
  return undefined;
}

/** The file picker (the panel is also a drop zone). */
function FilePicker({ onFile }: { onFile: (f: File) => void }) {
  return (
    <label className="button-like small pg-file">
      Open a .safetensors file…
      <input
        type="file"
        accept=".safetensors"
        className="sr-only"
        aria-label="Open a checkpoint file"
        onChange={(e) => {
          const f = e.target.files?.[0];
          if (f) onFile(f);
          e.target.value = '';
        }}
      />
    </label>
  );
}

/** The backend <select>: checkpoints, dropped files, endpoints and baselines. */
function BackendSelect({
  backend,
  ckpts,
  files,
  folders,
  onnx,
  endpoints,
  onSelect,
}: {
  backend: BackendChoice | null;
  ckpts: CheckpointOption[];
  files: { id: string; name: string }[];
  folders: PickedFolder[];
  onnx: PickedOnnxFolder[];
  endpoints: EndpointSettings[];
  onSelect: (v: string) => void;
}) {
  return (
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
      <optgroup label="Hugging Face folders (on the GPU)">
        {folders
          .filter((f) => usable(f) || (backend?.kind === 'hf' && backend.id === f.id))
          .map((f) => (
            <option key={f.id} value={`hf:${f.id}`}>
              {f.name} (Hugging Face)
            </option>
          ))}
      </optgroup>
      <optgroup label="ONNX folders (onnxruntime-web)">
        {onnx
          .filter((f) => usableOnnx(f) || (backend?.kind === 'onnx' && backend.id === f.id))
          .map((f) => (
            <option key={f.id} value={`onnx:${f.id}`}>
              {f.name} (ONNX)
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
  );
}

/** Where onnxruntime-web runs a loaded ONNX folder, in words. */
function onnxWhere(ep: string): string {
  return ep === 'webgpu' ? 'WebGPU' : ep === 'wasm' ? 'WASM (CPU)' : ep;
}

/** Where a loaded ONNX folder's KV cache outputs have gone so far (shown after its first generation). */
function onnxKvLine(kv: { onGpu: number; onCpu: number; live: number } | undefined): string {
  return kv ? ` · KV cache outputs so far: ${kv.onGpu} kept on the GPU, ${kv.onCpu} on the CPU, ${kv.live} alive` : '';
}

/** What the worker loaded for a checkpoint backend, or why not. */
function ModelStatus({
  backend,
  model,
  error,
}: {
  backend: Extract<BackendChoice, { kind: 'run' | 'file' | 'hf' | 'onnx' }>;
  model: PlaygroundState['model'];
  error: PlaygroundError | null;
}) {
  const hf = backend.kind === 'hf';
  const chosen = useOnnxFolderStore((s) => (backend.kind === 'onnx' ? s.get(backend.id) : undefined));
  if (backend.kind === 'onnx') {
    const want = chosen ? chosenFile(chosen) : null;
    const loaded = model && isLoaded(backend, model) && model.onnx && (want === null || model.onnx.file === want);
    return (
      <p className="small" data-testid="pg-model">
        {loaded
          ? `Loaded in onnxruntime-web on ${onnxWhere(model.onnx!.executionProvider)}: ${model.name} · ${model.onnx!.file} · ${model.architecture} · ${model.layers} layers · context ${model.contextLength} tokens · prompted with its ${model.template} · stops at token ${model.stopIds?.join(', ') || '(none)'}${onnxKvLine(model.onnx!.kv)}`
          : error?.kind === 'folder' || error?.kind === 'checkpoint'
            ? 'Not loaded: see the message above.'
            : 'Opening the model in onnxruntime-web…'}
      </p>
    );
  }
  return (
    <p className="small" data-testid="pg-model">
      {model && isLoaded(backend, model)
        ? hf
          ? `Loaded on the GPU: ${model.name} · ${model.architecture} · ${model.layers} layers × ${model.dModel} · context ${model.contextLength} tokens · vocabulary ${model.vocabSize} · prompted with its ${model.template} · stops at token ${model.stopIds?.join(', ') || '(none)'}${model.weights ? ` · ${model.weights.storage} weights, ${formatBytes(model.weights.bytes)} on the GPU` : ''}`
          : `Loaded on the GPU: ${model.name} · ${model.layers} layers × ${model.dModel} · context ${model.contextLength} tokens · vocabulary ${model.vocabSize} · trained template ${model.template}`
        : error?.kind === 'checkpoint' || error?.kind === 'folder' || error?.kind === 'no-webgpu'
          ? 'Not loaded: see the message above.'
          : hf
            ? 'Loading the folder’s weights onto the GPU…'
            : 'Loading the checkpoint on the GPU…'}
    </p>
  );
}

/** The chosen endpoint, with its key status and edit / remove buttons. */
function EndpointSummary({ endpoint, onEdit, onRemove }: { endpoint: EndpointSettings; onEdit: () => void; onRemove: () => void }) {
  return (
    <p className="small">
      {endpoint.model} at {endpoint.baseUrl}
      {endpoint.contextLength ? ` · context ${endpoint.contextLength}` : ''} · {keyStatus(endpoint.id)}{' '}
      <button type="button" className="linklike" onClick={onEdit}>
        Edit
      </button>{' '}
      <button type="button" className="linklike" onClick={onRemove}>
        Remove
      </button>
    </p>
  );
}

/** The .safetensors files dropped or opened here (their bytes go to the store), listed in the backend <select>. */
function useCheckpointFiles(backend: BackendChoice | null, setBackend: PlaygroundState['setBackend']) {
  const [files, setFiles] = useState<{ id: string; name: string }[]>(backend?.kind === 'file' ? [{ id: backend.id, name: backend.name }] : []);
  const addFile = async (file: File) => {
    const bytes = new Uint8Array(await file.arrayBuffer());
    const id = `${file.name}:${file.size}:${file.lastModified}`;
    setFiles((f) => [...f.filter((x) => x.id !== id), { id, name: file.name }]);
    setBackend({ kind: 'file', id, name: file.name }, bytes);
  };
  return { files, addFile };
}

/** The panel as a drop zone: a folder, or several files, is a model folder (ONNX when it holds an .onnx file, else Hugging Face); one file a checkpoint. */
function usePanelDrop(addFile: (f: File) => Promise<void>) {
  const addFolder = useHfFolderStore((s) => s.add);
  const addOnnx = useOnnxFolderStore((s) => s.add);
  const [dragging, setDragging] = useState(false);
  return {
    dragging,
    onDragOver(e: DragEvent) {
      e.preventDefault();
      setDragging(true);
    },
    onDragLeave() {
      setDragging(false);
    },
    onDrop(e: DragEvent) {
      e.preventDefault();
      setDragging(false);
      const dt = e.dataTransfer;
      const entries = Array.from(dt.items ?? []).map((i) =>
        (i as DataTransferItem & { webkitGetAsEntry?: () => { isDirectory: boolean } | null }).webkitGetAsEntry?.(),
      );
      if (dt.files.length > 1 || entries.some((x) => x?.isDirectory)) {
        void droppedFiles(dt).then((list) => {
          const picked = folderFiles(list);
          return isOnnxFiles(picked) ? addOnnx(picked) : addFolder(picked);
        });
      } else if (dt.files[0]) void addFile(dt.files[0]);
    },
  };
}

/** A new model file chosen for the ONNX folder in use opens that file at once (the worker replaces the one it holds). */
function useReopenOnModelFile(backend: BackendChoice | null, setBackend: PlaygroundState['setBackend']) {
  const file = useOnnxFolderStore((s) => (backend?.kind === 'onnx' ? (s.get(backend.id)?.file ?? null) : null));
  const seen = useRef(file);
  useEffect(() => {
    if (seen.current === file) return;
    seen.current = file;
    if (backend?.kind === 'onnx') setBackend(backend);
  }, [file, backend, setBackend]);
}

export function BackendPanel() {
  const backend = usePlaygroundStore((s) => s.backend);
  const model = usePlaygroundStore((s) => s.model);
  const setBackend = usePlaygroundStore((s) => s.setBackend);
  const error = usePlaygroundStore((s) => s.error);
  const endpoints = useEndpointStore((s) => s.endpoints);
  const folders = useHfFolderStore((s) => s.folders);
  const removeEndpoint = useEndpointStore((s) => s.remove);
  const onnxFolders = useOnnxFolderStore((s) => s.folders);
  const [runs, setRuns] = useState<RunRecord[] | null>(null);
  const [runsError, setRunsError] = useState<string | null>(null);
  const { files, addFile } = useCheckpointFiles(backend, setBackend);
  const [editing, setEditing] = useState<EndpointSettings | 'new' | null>(null);
  const drop = usePanelDrop(addFile);
  useReopenOnModelFile(backend, setBackend);

  useEffect(() => {
    listRuns().then(setRuns, (e: Error) => setRunsError(`Stored runs could not be read: ${e.message}`));
  }, []);
  const ckpts = checkpointOptions(runs ?? []);
  const chosenEndpoint = backend?.kind === 'endpoint' ? endpoints.find((e) => e.id === backend.id) : undefined;

  const onSelect = (v: string) => {
    if (v === 'new-endpoint') {
      setEditing('new');
      return;
    }
    const choice = choiceFromValue(v, ckpts, files, folders, onnxFolders);
    if (choice !== undefined) setBackend(choice);
  };

  return (
    <div
      className={drop.dragging ? 'pg-backend dropzone dragging' : 'pg-backend'}
      onDragOver={drop.onDragOver}
      onDragLeave={drop.onDragLeave}
      onDrop={drop.onDrop}
    >
      <div className="field">
        <label htmlFor="pg-backend">Backend</label>
        <BackendSelect backend={backend} ckpts={ckpts} files={files} folders={folders} onnx={onnxFolders} endpoints={endpoints} onSelect={onSelect} />
      </div>
      {runsError ? <p className="error-text">{runsError}</p> : null}
      {runs && !ckpts.length ? <p className="small muted">No stored checkpoint yet: train one in the Train view, or drop a .safetensors file here.</p> : null}
      <FilePicker onFile={(f) => void addFile(f)} />
      <HfFolderPicker
        idPrefix="pg"
        useLabel="Load in the Playground"
        onUse={(f) => setBackend({ kind: 'hf', id: f.id, name: f.name })}
        isUsed={(id) => backend?.kind === 'hf' && backend.id === id}
      />
      <OnnxFolderPicker
        idPrefix="pg"
        useLabel="Load in the Playground"
        onUse={(f) => setBackend({ kind: 'onnx', id: f.id, name: f.name })}
        isUsed={(id) => backend?.kind === 'onnx' && backend.id === id}
      />
      {isLocalChoice(backend) ? <ModelStatus backend={backend} model={model} error={error} /> : null}
      {chosenEndpoint ? (
        <EndpointSummary
          endpoint={chosenEndpoint}
          onEdit={() => setEditing(chosenEndpoint)}
          onRemove={() => {
            removeEndpoint(chosenEndpoint.id);
            setBackend(null);
          }}
        />
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
