// Picking a Hugging Face model folder (config.json, *.safetensors, tokenizer.json), shared by the
// Playground and the Bench: a folder picker (<input webkitdirectory>) or a drop of the folder or its
// files. Each picked folder is checked by the worker before anything is loaded (stores/hfFolders.ts):
// its name, architecture, parameter count and memory estimate against the adapter are shown, with
// the refusal and what would fit instead when it does not fit, or the message naming the file at
// fault. A picked folder is not kept after a reload; a model typed as a Hub id ("From the Hub",
// HubIdField) is downloaded into this browser's storage and found there again.
import { useState, type KeyboardEvent } from 'react';
import { FolderDropBox, FolderError, PickedFolderCard } from './FolderInput.tsx';
import { HubIdField } from './HubIdField.tsx';
import { usable, useHfFolderStore, type PickedFolder } from '../stores/hfFolders.ts';
import { useOnnxFolderStore } from '../stores/onnxFolders.ts';
import { isOnnxFiles } from '../../jobs/onnxFolder.ts';
import { chatProblem, describeFolder, F16_WEIGHTS, formatGiB, HF_NOT_KEPT, type HfFolderFile, type HfRunSettings } from '../../train/hfFolder.ts';

interface Props {
  /** Prefix of the element ids (two pickers may share a page). */
  idPrefix: string;
  /** The button that takes a folder that fits ("Load", "Add to the benchmark"). */
  useLabel: string;
  onUse(folder: PickedFolder): void;
  /** Folders already taken: their button is shown pressed. */
  isUsed?(id: string): boolean;
}

/** The run settings a user types: context (blank: the model's own, up to 2048), GPU memory, and the weights' precision. */
function SettingsFields({ folder, idPrefix }: { folder: PickedFolder; idPrefix: string }) {
  const setSettings = useHfFolderStore((s) => s.setSettings);
  const [context, setContext] = useState(folder.settings.context === null ? '' : String(folder.settings.context));
  const [memory, setMemory] = useState(String(folder.settings.memoryGiB));
  const apply = () => {
    const next: HfRunSettings = { ...folder.settings, context: context.trim() === '' ? null : Number(context), memoryGiB: Number(memory) };
    if (next.context !== folder.settings.context || next.memoryGiB !== folder.settings.memoryGiB) void setSettings(folder.id, next);
  };
  const onKey = (e: KeyboardEvent) => e.key === 'Enter' && (e.preventDefault(), apply());
  const id = `${idPrefix}-${folder.id.replace(/[^\w-]/g, '_')}`;
  return (
    <div className="pg-row">
      <div className="field">
        <label htmlFor={`${id}-context`}>Context (tokens)</label>
        <input
          id={`${id}-context`}
          type="text"
          inputMode="numeric"
          placeholder="auto"
          title="Blank: the model's maximum, up to 2048 tokens"
          value={context}
          onChange={(e) => setContext(e.target.value)}
          onBlur={apply}
          onKeyDown={onKey}
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-memory`}>GPU memory (GiB)</label>
        <input
          id={`${id}-memory`}
          type="text"
          inputMode="decimal"
          title="WebGPU does not report the device's memory: how much the model may take"
          value={memory}
          onChange={(e) => setMemory(e.target.value)}
          onBlur={apply}
          onKeyDown={onKey}
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-weights`}>Weights</label>
        <select
          id={`${id}-weights`}
          title="f16 keeps the weight matrices in half the GPU memory (products and sums stay f32; outputs move by f16 rounding)"
          value={folder.settings.weights ?? 'f32'}
          onChange={(e) => void setSettings(folder.id, { weights: e.target.value as 'f32' | 'f16' })}
        >
          <option value="f32">f32</option>
          <option value="f16">f16 (half the memory)</option>
        </select>
      </div>
    </div>
  );
}

function FolderCard({
  folder,
  idPrefix,
  useLabel,
  onUse,
  used,
}: {
  folder: PickedFolder;
  idPrefix: string;
  useLabel: string;
  onUse(f: PickedFolder): void;
  used: boolean;
}) {
  const remove = useHfFolderStore((s) => s.remove);
  const setSettings = useHfFolderStore((s) => s.setSettings);
  const info = folder.info;
  return (
    <PickedFolderCard
      folder={folder}
      testId="hf-folder"
      reading="Reading config.json and the safetensors headers…"
      useLabel={useLabel}
      used={used}
      usable={usable(folder)}
      onUse={() => onUse(folder)}
      onForget={() => remove(folder.id)}
    >
      {info ? (
        <>
          <p className="small" data-testid="hf-folder-info">
            {describeFolder(info)}
            {info.tokenizer ? (info.chatTemplate ? ' · tokenizer and chat template' : ' · tokenizer, no chat template') : ' · no tokenizer'}
          </p>
          {chatProblem(info) ? <FolderError testId="hf-folder-error">{chatProblem(info)}</FolderError> : null}
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
              {info.fit.alternatives
                .filter((a) => a.change === F16_WEIGHTS)
                .map((a) => (
                  <button key={a.change} type="button" className="secondary small" onClick={() => void setSettings(folder.id, { weights: 'f16' })}>
                    Use f16 weights ({formatGiB(a.total)})
                  </button>
                ))}
            </div>
          )}
        </>
      ) : null}
      <SettingsFields key={`${folder.settings.context}/${folder.settings.memoryGiB}/${folder.settings.weights}`} folder={folder} idPrefix={idPrefix} />
    </PickedFolderCard>
  );
}

export function HfFolderPicker({ idPrefix, useLabel, onUse, isUsed }: Props) {
  const folders = useHfFolderStore((s) => s.folders);
  const add = useHfFolderStore((s) => s.add);
  const addOnnx = useOnnxFolderStore((s) => s.add);
  // An ONNX folder dropped here goes to the ONNX folders (OnnxFolderPicker) rather than failing as a Hugging Face one.
  const take = (files: HfFolderFile[]) => void (isOnnxFiles(files) ? addOnnx(files) : add(files));
  const intro = (
    <>
      <strong>Hugging Face folder</strong> (Llama, Qwen2, Qwen3: config.json, *.safetensors, tokenizer.json): pick it or drop it here. {HF_NOT_KEPT}
    </>
  );
  return (
    <FolderDropBox
      testId={`${idPrefix}-hf`}
      intro={intro}
      input={{ label: 'Open a Hugging Face model folder', text: 'Open a Hugging Face folder…', testId: `${idPrefix}-hf-input` }}
      onFiles={take}
      extra={<HubIdField scope={idPrefix} onFiles={take} />}
    >
      {folders.map((f) => (
        <FolderCard key={f.id} folder={f} idPrefix={idPrefix} useLabel={useLabel} onUse={onUse} used={isUsed?.(f.id) ?? false} />
      ))}
    </FolderDropBox>
  );
}
