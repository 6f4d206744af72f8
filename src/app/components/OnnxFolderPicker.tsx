// Picking an ONNX causal-LM folder (onnx/model.onnx or its variants, config.json, tokenizer.json,
// tokenizer_config.json, generation_config.json), shared by the Playground and the Bench, beside
// the Hugging Face folder picker: a folder picker or a drop of the folder or its files. Each picked
// folder is checked by the worker before anything is opened (stores/onnxFolders.ts): its name,
// architecture and shape from config.json and its model files are shown, with a choice of model
// file when it has several, or the message naming the file at fault. onnxruntime-web runs it on
// WebGPU where this page has it, else on WASM, so it works in a browser without WebGPU.
import { FolderDropBox, FolderError, PickedFolderCard } from './FolderInput.tsx';
import { HubIdField } from './HubIdField.tsx';
import { useHfFolderStore } from '../stores/hfFolders.ts';
import { chosenFile, pageExecution, usableOnnx, useOnnxFolderStore, type PickedOnnxFolder } from '../stores/onnxFolders.ts';
import { HF_NOT_KEPT } from '../../train/hfFolder.ts';
import { describeOnnxFolder, isOnnxFiles, onnxFolderProblem, variantLabel } from '../../jobs/onnxFolder.ts';
import type { HfFolderFile } from '../../train/hfFolder.ts';

interface Props {
  /** Prefix of the element ids (two pickers may share a page). */
  idPrefix: string;
  /** The button that takes a checked folder ("Load", "Add to the benchmark"). */
  useLabel: string;
  onUse(folder: PickedOnnxFolder): void;
  isUsed?(id: string): boolean;
}

/** The model file to run, when the folder has several. */
function VariantSelect({ folder, idPrefix }: { folder: PickedOnnxFolder; idPrefix: string }) {
  const setFile = useOnnxFolderStore((s) => s.setFile);
  const variants = folder.info?.variants ?? [];
  if (variants.length < 2) return null;
  const id = `${idPrefix}-onnx-variant-${folder.id.replace(/[^\w-]/g, '_')}`;
  return (
    <div className="field">
      <label htmlFor={id}>Model file</label>
      <select id={id} value={chosenFile(folder) ?? ''} onChange={(e) => setFile(folder.id, e.target.value)}>
        {variants.map((v) => (
          <option key={v.file} value={v.file}>
            {variantLabel(v.file)}
          </option>
        ))}
      </select>
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
  folder: PickedOnnxFolder;
  idPrefix: string;
  useLabel: string;
  onUse(f: PickedOnnxFolder): void;
  used: boolean;
}) {
  const remove = useOnnxFolderStore((s) => s.remove);
  const info = folder.info;
  const problem = info ? onnxFolderProblem(info) : null;
  return (
    <PickedFolderCard
      folder={folder}
      testId="onnx-folder"
      reading="Reading config.json, the tokenizer and the list of model files…"
      useLabel={useLabel}
      used={used}
      usable={usableOnnx(folder)}
      onUse={() => onUse(folder)}
      onForget={() => remove(folder.id)}
    >
      {info ? (
        <p className="small" data-testid="onnx-folder-info">
          {describeOnnxFolder(info)}
          {info.tokenizer ? (info.chatTemplate ? ' · tokenizer and chat template' : ' · tokenizer, no chat template (prompted with the LWM template)') : ''}
        </p>
      ) : null}
      {problem ? <FolderError testId="onnx-folder-error">{problem}</FolderError> : null}
      <VariantSelect folder={folder} idPrefix={idPrefix} />
    </PickedFolderCard>
  );
}

export function OnnxFolderPicker({ idPrefix, useLabel, onUse, isUsed }: Props) {
  const folders = useOnnxFolderStore((s) => s.folders);
  const add = useOnnxFolderStore((s) => s.add);
  const addHf = useHfFolderStore((s) => s.add);
  // A repo fetched here that holds safetensors, not ONNX, goes to the Hugging Face folders (HfFolderPicker does the converse).
  const take = (files: HfFolderFile[]) => void (isOnnxFiles(files) ? add(files) : addHf(files));
  const where = pageExecution() === 'wasm' ? 'on WASM (this browser has no WebGPU)' : 'on WebGPU, or WASM where WebGPU cannot take it';
  const intro = (
    <>
      <strong>ONNX folder</strong> (onnx/model.onnx or model_fp16.onnx, model_q4.onnx, …, config.json, tokenizer.json): pick it or drop it here; onnxruntime-web
      runs it {where}. {HF_NOT_KEPT}
    </>
  );
  return (
    <FolderDropBox
      testId={`${idPrefix}-onnx`}
      intro={intro}
      input={{ label: 'Open an ONNX model folder', text: 'Open an ONNX folder…', testId: `${idPrefix}-onnx-input` }}
      onFiles={(files) => void add(files)}
      extra={<HubIdField scope={`${idPrefix}-onnx`} onFiles={take} />}
    >
      {folders.map((f) => (
        <FolderCard key={f.id} folder={f} idPrefix={idPrefix} useLabel={useLabel} onUse={onUse} used={isUsed?.(f.id) ?? false} />
      ))}
    </FolderDropBox>
  );
}
