// A run of a Hugging Face folder, given its folder again: the page keeps no files across a reload,
// so resuming a LoRA run (its checkpoints hold the adapter alone), training on its adapter, or
// merging the adapter into the base asks for the same folder, and says at once whether the picked
// one is it (file sizes, config.json and safetensors headers; the worker checks again).
import type { RunRecord } from '../../../core/records.ts';
import { runFolderProblem, useTrainFolderStore } from '../../stores/trainFolder.ts';
import { FolderInput, useFolderDrop } from '../../components/FolderInput.tsx';

export function FolderAgain({ run, purpose }: { run: RunRecord; purpose: string }) {
  const folder = useTrainFolderStore((s) => s.folder);
  const pick = useTrainFolderStore((s) => s.pick);
  const { dragging, handlers } = useFolderDrop((files) => void pick(files));
  if (!run.hf) return null;
  const problem = folder ? runFolderProblem(run, folder) : null;
  const name = run.hf.folder.name;
  return (
    <div className={dragging ? 'hf-again dropzone dragging' : 'hf-again dropzone'} data-testid="hf-again" {...handlers}>
      <p className="small">
        {folder && !problem ? (
          <span data-testid="hf-again-ok">
            ✓ {folder.name} is the folder this run trained on ({name}).
          </span>
        ) : (
          <>
            It trains on the Hugging Face folder <strong>{name}</strong>, which this page does not keep after a reload: pick (or drop) that folder again to{' '}
            {purpose}.
          </>
        )}
      </p>
      {problem ? (
        <p className="error-text small" role="alert" data-testid="hf-again-error">
          {problem}
        </p>
      ) : null}
      <FolderInput
        label={`Pick the folder ${name} again`}
        text={folder && !problem ? 'Pick another folder…' : `Pick ${name} again…`}
        testId="hf-again-input"
        onFiles={(files) => void pick(files)}
      />
    </div>
  );
}
