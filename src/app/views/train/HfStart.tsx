// "Start from: a Hugging Face folder" in the Train form: pick or drop the folder (as in the
// Playground; nothing is uploaded or kept after a reload), see what it is and the memory the run
// needs before starting (weights, LoRA adapter, gradients, AdamW state — for LoRA the adapter's
// alone —, activations, and for RL the rollouts' KV cache) against the budget, with the refusal and
// what would fit instead; choose full fine-tuning or LoRA (rank, alpha; the targets are the CLI's:
// q, k, v, o, gate, up, down).
import { useEffect, type ReactNode } from 'react';
import { FolderInput, useFolderDrop } from '../../components/FolderInput.tsx';
import { HubIdField } from '../../components/HubIdField.tsx';
import { useTrainFolderStore, type TrainCheck } from '../../stores/trainFolder.ts';
import type { TrainForm } from '../../stores/trainForm.ts';
import { chatProblem, describeTrainFit, formatCount, formatGiB, HF_NOT_KEPT, type HfFolderInfo } from '../../../train/hfFolder.ts';
import { useFormFields } from './fields.tsx';
import { HF_DEFAULT_TOKENS, type FormErrors } from './form.ts';

/** The run's shape for the estimate, from the form as typed; null while a field is not a number yet. */
export function trainCheck(form: TrainForm): TrainCheck | null {
  const num = (t: string) => (t.trim() === '' ? NaN : Number(t));
  const rank = num(form.loraRank);
  const batch = form.stage === 'rl' ? num(form.groupSize) : num(form.batch);
  const context = form.tokens.trim() === '' ? HF_DEFAULT_TOKENS : num(form.tokens);
  const memoryGiB = num(form.memoryGiB);
  if (!Number.isInteger(batch) || batch < 1 || !Number.isInteger(context) || context < 16 || !(memoryGiB > 0)) return null;
  if (form.tuning === 'lora' && !(Number.isInteger(rank) && rank >= 1)) return null;
  const train = { tuning: form.tuning, ...(form.tuning === 'lora' && { rank }), batch, ...(form.stage === 'rl' && { generates: true }) };
  return { train, context, memoryGiB };
}

/** A change the memory check offers, as form fields (null: not one the form can make). */
function alternativeFields(change: string, stage: TrainForm['stage']): Partial<TrainForm> | null {
  const out: Partial<TrainForm> = {};
  for (const part of change.split(', ')) {
    const lora = /^LoRA rank (\d+)/.exec(part);
    const context = /^context (\d+)$/.exec(part);
    if (lora) Object.assign(out, { tuning: 'lora', loraRank: lora[1] });
    else if (context) out.tokens = context[1];
    else if (part === 'batch 1' && stage !== 'rl') out.batch = '1';
    else return null;
  }
  return out;
}

function Refusal({ info }: { info: HfFolderInfo }) {
  const { form, setForm } = useFormFields({});
  const offers = info.fit.alternatives.map((a) => ({ a, fields: alternativeFields(a.change, form.stage) })).filter((o) => o.fields);
  return (
    <div className="callout error small" role="alert" data-testid="hf-folder-refusal">
      <p>Does not fit: {info.fit.message}</p>
      {offers.slice(0, 3).map(({ a, fields }) => (
        <button key={a.change} type="button" className="secondary small" onClick={() => setForm(fields!)}>
          Use {a.change} ({formatGiB(a.total)})
        </button>
      ))}
    </div>
  );
}

function FolderStatus({ check }: { check: TrainCheck | null }) {
  const { folder, status, info, error } = useTrainFolderStore();
  if (!folder) return null;
  let body: ReactNode = null;
  if (error)
    body = (
      <p className="error-text small" role="alert" data-testid="hf-folder-error">
        {error}
      </p>
    );
  else if (status === 'inspecting' || !info) body = <p className="small muted">Reading config.json and the safetensors headers…</p>;
  else {
    body = (
      <>
        <p className="small" data-testid="hf-folder-info">
          {info.architecture}, {formatCount(info.parameters)} parameters ({info.layers} layers × {info.hidden}, {info.heads} heads / {info.kvHeads} KV heads,
          vocabulary {info.vocab}), context {info.maxContext}
          {info.tokenizer ? (info.chatTemplate ? ' · its chat template is the prompt format' : ' · no chat template') : ' · no tokenizer'}
        </p>
        {check ? (
          <p className="small" data-testid="train-hf-estimate">
            {describeTrainFit(info, check.train)}
          </p>
        ) : null}
        {chatProblem(info) ? (
          <p className="error-text small" role="alert" data-testid="hf-folder-error">
            {chatProblem(info)}
          </p>
        ) : null}
        {info.fit.fits ? null : <Refusal info={info} />}
      </>
    );
  }
  return (
    <div className="hf-folder" data-testid="hf-folder">
      <strong>{folder.name}</strong> <span className="muted small">({folder.files.length} files)</span>
      {body}
    </div>
  );
}

/** The folder, its estimate for the run, and how it trains. */
export function HfStartFields({ errors }: { errors: FormErrors }) {
  const { form, select, input } = useFormFields(errors);
  const folder = useTrainFolderStore((s) => s.folder);
  const pick = useTrainFolderStore((s) => s.pick);
  const check = useTrainFolderStore((s) => s.check);
  const { dragging, handlers } = useFolderDrop((files) => void pick(files));
  const shape = trainCheck(form);
  const key = JSON.stringify(shape);
  useEffect(() => {
    if (!folder || !shape) return;
    // Typing a number re-checks once it settles.
    const t = setTimeout(() => void check(shape), 250);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- `key` is the shape
  }, [folder, key, check]);
  return (
    <fieldset className={dragging ? 'hf-start dropzone dragging' : 'hf-start dropzone'} data-testid="train-hf" {...handlers}>
      <legend>Hugging Face folder</legend>
      <p className="small">
        Llama, Qwen2 or Qwen3 (config.json, *.safetensors, tokenizer.json with a chat template): pick the folder or drop it here; samples are rendered in its
        chat format. {HF_NOT_KEPT}
      </p>
      <FolderInput label="Open a Hugging Face model folder" text="Open a Hugging Face folder…" testId="train-hf-input" onFiles={(files) => void pick(files)} />
      <HubIdField scope="train" onFiles={(files) => void pick(files)} />
      <FolderStatus check={shape} />
      <div className="train-grid">
        {select(
          'tuning',
          'Fine-tuning',
          [
            ['lora', 'LoRA (base weights frozen)'],
            ['full', 'Full fine-tuning (every weight)'],
          ],
          form.tuning === 'lora' ? 'the adapter and its AdamW state train; fits larger models' : 'every weight and its AdamW state: small models',
        )}
        {form.tuning === 'lora' ? input('loraRank', 'LoRA rank', 'on q, k, v, o, gate, up, down', 'number') : null}
        {form.tuning === 'lora' ? input('loraAlpha', 'LoRA alpha', 'blank: 2 × rank') : null}
        {input('memoryGiB', 'GPU memory (GiB)', 'WebGPU does not report it: what the run may take')}
      </div>
    </fieldset>
  );
}
