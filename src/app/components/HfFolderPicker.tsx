// Picking a Hugging Face model folder (config.json, *.safetensors, tokenizer.json), shared by the
// Playground and the Bench: a folder picker (<input webkitdirectory>) or a drop of the folder or its
// files. Each picked folder is checked by the worker before anything is loaded (stores/hfFolders.ts):
// its name, architecture, parameter count and memory estimate against the adapter are shown, with
// the refusal and what would fit instead when it does not fit, or the message naming the file at
// fault. Nothing is downloaded and nothing is kept after a reload.
import { useState, type KeyboardEvent } from 'react';
import { FolderInput, useFolderDrop } from './FolderInput.tsx';
import { usable, useHfFolderStore, type PickedFolder } from '../stores/hfFolders.ts';
import { useOnnxFolderStore } from '../stores/onnxFolders.ts';
import { isOnnxFiles } from '../../train/onnxFolder.ts';
import { chatProblem, describeFolder, formatGiB, HF_NOT_KEPT, type HfFolderFile, type HfRunSettings } from '../../train/hfFolder.ts';

interface Props {
  /** Prefix of the element ids (two pickers may share a page). */
  idPrefix: string;
  /** The button that takes a folder that fits ("Load", "Add to the benchmark"). */
  useLabel: string;
  onUse(folder: PickedFolder): void;
  /** Folders already taken: their button is shown pressed. */
  isUsed?(id: string): boolean;
}

/** The run settings a user types: context (blank: the model's own, up to 2048) and GPU memory. */
function SettingsFields({ folder, idPrefix }: { folder: PickedFolder; idPrefix: string }) {
  const setSettings = useHfFolderStore((s) => s.setSettings);
  const [context, setContext] = useState(folder.settings.context === null ? '' : String(folder.settings.context));
  const [memory, setMemory] = useState(String(folder.settings.memoryGiB));
  const apply = () => {
    const next: HfRunSettings = { context: context.trim() === '' ? null : Number(context), memoryGiB: Number(memory) };
    if (next.context !== folder.settings.context || next.memoryGiB !== folder.settings.memoryGiB) void setSettings(folder.id, next);
  };
  const onKey = (e: KeyboardEvent) => e.key === 'Enter' && (e.preventDefault(), apply());
  const id = `${idPrefix}-${folder.id.replace(/[^\w-]/g, '_')}`;
  return (
    <div className="pg-row">
      <div className="field">
        <label htmlFor={`${id}-context`}>Context (tokens)</label>
        <input id={`${id}-context`} type="text" inputMode="numeric" placeholder="auto" title="Blank: the model's maximum, up to 2048 tokens" value={context} onChange={(e) => setContext(e.target.value)} onBlur={apply} onKeyDown={onKey} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-memory`}>GPU memory (GiB)</label>
        <input id={`${id}-memory`} type="text" inputMode="decimal" title="WebGPU does not report the device's memory: how much the model may take" value={memory} onChange={(e) => setMemory(e.target.value)} onBlur={apply} onKeyDown={onKey} />
      </div>
    </div>
  );
}

function FolderCard({ folder, idPrefix, useLabel, onUse, used }: { folder: PickedFolder; idPrefix: string; useLabel: string; onUse(f: PickedFolder): void; used: boolean }) {
  const remove = useHfFolderStore((s) => s.remove);
  const setSettings = useHfFolderStore((s) => s.setSettings);
  const info = folder.info;
  return (
    <li className="hf-folder" data-testid="hf-folder">
      <strong>{folder.name}</strong> <span className="muted small">({folder.files.length} files)</span>
      {folder.status === 'inspecting' ? <p className="small muted">Reading config.json and the safetensors headers…</p> : null}
      {folder.error ? (
        <p className="error-text small" role="alert" data-testid="hf-folder-error">
          {folder.error}
        </p>
      ) : null}
      {info ? (
        <>
          <p className="small" data-testid="hf-folder-info">
            {describeFolder(info)}
            {info.tokenizer ? (info.chatTemplate ? ' · tokenizer and chat template' : ' · tokenizer, no chat template') : ' · no tokenizer'}
          </p>
          {chatProblem(info) ? (
            <p className="error-text small" role="alert" data-testid="hf-folder-error">
              {chatProblem(info)}
            </p>
          ) : null}
          {info.fit.fits ? null : (
            <div className="callout error small" role="alert" data-testid="hf-folder-refusal">
              <p>Does not fit: {info.fit.message}</p>
              {info.fit.alternatives
                .filter((a) => a.context !== info.context && /^context \d+$/.test(a.change))
                .slice(0, 1)
                .map((a) => (
                  <button key={a.change} type="button" className="secondary small" onClick={() => void setSettings(folder.id, { context: a.context })}>
                    Use context {a.context} ({formatGiB(a.total)})
                  </button>
                ))}
            </div>
          )}
        </>
      ) : null}
      <SettingsFields key={`${folder.settings.context}/${folder.settings.memoryGiB}`} folder={folder} idPrefix={idPrefix} />
      <div className="toolbar">
        <button type="button" className="small" disabled={!usable(folder)} aria-pressed={used || undefined} onClick={() => onUse(folder)}>
          {used ? `${useLabel} ✓` : useLabel}
        </button>
        <button type="button" className="secondary small" onClick={() => remove(folder.id)}>
          Forget
        </button>
      </div>
    </li>
  );
}

export function HfFolderPicker({ idPrefix, useLabel, onUse, isUsed }: Props) {
  const folders = useHfFolderStore((s) => s.folders);
  const add = useHfFolderStore((s) => s.add);
  const addOnnx = useOnnxFolderStore((s) => s.add);
  // An ONNX folder dropped here goes to the ONNX folders (OnnxFolderPicker) rather than failing as a Hugging Face one.
  const take = (files: HfFolderFile[]) => void (isOnnxFiles(files) ? addOnnx(files) : add(files));
  const { dragging, handlers } = useFolderDrop(take);
  return (
    <div
      className={dragging ? 'hf-picker dropzone dragging' : 'hf-picker dropzone'}
      data-testid={`${idPrefix}-hf`}
      {...handlers}
    >
      <p className="small">
        <strong>Hugging Face folder</strong> (Llama, Qwen2, Qwen3: config.json, *.safetensors, tokenizer.json): pick it or drop it here. {HF_NOT_KEPT}
      </p>
      <FolderInput label="Open a Hugging Face model folder" text="Open a Hugging Face folder…" testId={`${idPrefix}-hf-input`} onFiles={take} />
      {folders.length ? (
        <ul className="plain">
          {folders.map((f) => (
            <FolderCard key={f.id} folder={f} idPrefix={idPrefix} useLabel={useLabel} onUse={onUse} used={isUsed?.(f.id) ?? false} />
          ))}
        </ul>
      ) : null}
    </div>
  );
}
