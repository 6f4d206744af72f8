// Stored runs and their checkpoints: view, resume, download (.safetensors), delete, and start the
// next stage from a checkpoint.
import { useState } from 'react';
import type { CheckpointTag, RunRecord } from '../../../core/records.ts';
import { ConfirmDelete, ConfirmDialog, useDeleteTarget } from '../../components/ConfirmDialog.tsx';
import { ACTIONS_COLUMN, ScrollTable, type Column } from '../../components/Table.tsx';
import { useTrainStore } from '../../stores/train.ts';
import { useTrainFormStore } from '../../stores/trainForm.ts';
import { nextStage } from './form.ts';
import { recipeRunText } from './metrics.ts';
import { runModel, StatePill } from './RunPanel.tsx';
import { guardJob, resumeWrite } from '../../stores/storage.ts';

const KB = 1024;
const MB = 1024 * KB;
/** A checkpoint's or the storage's size in KB below a megabyte (at least 1 KB), else in MB to one decimal. */
const size = (n: number) => (n >= MB ? `${(n / MB).toFixed(1)} MB` : `${Math.max(1, Math.round(n / KB))} KB`);

/** A folder's run as files people load elsewhere: the LoRA adapter in PEFT's layout, and the merged model folder. */
function HfDownloads({
  run,
  tag,
  exporting,
  exportHf,
}: {
  run: RunRecord;
  tag: CheckpointTag;
  exporting: string | null;
  exportHf(runId: string, tag: CheckpointTag, what: 'adapter' | 'merged'): Promise<void>;
}) {
  const label = `${tag} checkpoint of ${run.name}`;
  const busy = (what: string) => exporting === `${run.id}|${tag}|${what}`;
  return (
    <>
      {run.hf?.tuning === 'lora' ? (
        <button
          type="button"
          className="secondary small"
          disabled={!!exporting}
          onClick={() => void exportHf(run.id, tag, 'adapter')}
          aria-label={`Download the LoRA adapter (PEFT) of the ${label}`}
          title="adapter_config.json + adapter_model.safetensors (+ lwm_template.json, the template it trained with): put them in one folder for PeftModel.from_pretrained"
        >
          {busy('adapter') ? 'Exporting…' : 'Adapter (PEFT)'}
        </button>
      ) : null}
      <button
        type="button"
        className="secondary small"
        disabled={!!exporting}
        onClick={() => void exportHf(run.id, tag, 'merged')}
        aria-label={`Download the merged Hugging Face folder of the ${label}`}
        title={`config.json, model.safetensors, the tokenizer files and lwm_template.json (the template it trained with, so LWM Studio serves it in that layout), one download each: put them in one folder${run.hf?.tuning === 'lora' ? ' (the merge needs the base folder picked again after a reload)' : ''}`}
      >
        {busy('merged') ? 'Exporting…' : 'Merged folder'}
      </button>
    </>
  );
}

function Checkpoint({ run, tag, busy }: { run: RunRecord; tag: CheckpointTag; busy: boolean }) {
  const { download, deleteCheckpoint, exportHf, exporting } = useTrainStore();
  const setForm = useTrainFormStore((s) => s.set);
  const [confirm, setConfirm] = useState(false);
  const c = run.checkpoints[tag];
  if (!c) return null;
  const label = `${tag} checkpoint of ${run.name}`;
  const next = nextStage(run.stage);
  return (
    <li className="ckpt">
      <span>
        <strong>{tag}</strong> · step {c.step}
        {c.evalLoss !== undefined ? ` · ${run.stage === 'rl' ? `held-out reward ${(-c.evalLoss).toFixed(2)}` : `eval ${c.evalLoss.toFixed(3)}`}` : ''} ·{' '}
        {size(c.size)}
      </span>
      <span className="ckpt-actions">
        <button
          type="button"
          className="secondary small"
          onClick={() => void download(run.id, tag)}
          aria-label={`Download the ${label}`}
          title="The run's own checkpoint (with its AdamW state): what resumes it"
        >
          Download
        </button>
        {run.hf ? <HfDownloads run={run} tag={tag} exporting={exporting} exportHf={exportHf} /> : null}
        {run.stage !== 'rl' ? (
          <button
            type="button"
            className="secondary small"
            onClick={() => {
              setForm({ from: `${run.id}|${tag}`, stage: next });
              document.getElementById('train-steps')?.focus();
            }}
            aria-label={`Train ${next.toUpperCase()} from the ${label}`}
          >
            Train {next.toUpperCase()} from it
          </button>
        ) : null}
        <button type="button" className="secondary small" disabled={busy} onClick={() => setConfirm(true)} aria-label={`Delete the ${label}`}>
          Delete
        </button>
      </span>
      <ConfirmDialog
        open={confirm}
        title={`Delete the ${tag} checkpoint?`}
        confirmLabel="Delete checkpoint"
        onCancel={() => setConfirm(false)}
        onConfirm={() => {
          setConfirm(false);
          void deleteCheckpoint(run.id, tag);
        }}
      >
        <p>
          The {label} (step {c.step}) is removed from this browser.{tag === 'last' ? ' The run can then only resume from its beginning.' : ''}
        </p>
      </ConfirmDialog>
    </li>
  );
}

function RunRow({ run: r, selected, onDelete }: { run: RunRecord; selected: boolean; onDelete(): void }) {
  const { select, live, resumeRun } = useTrainStore();
  const busy = live?.runId === r.id;
  return (
    <tr aria-current={selected ? 'true' : undefined}>
      <td>
        <button type="button" className="linklike" onClick={() => void select(r.id)}>
          {r.name}
        </button>
        <div className="muted small">
          {r.recipe ? `${recipeRunText(r)} · ` : ''}
          {r.stage.toUpperCase()} · {runModel(r)} · {new Date(r.createdAt).toLocaleString()}
        </div>
      </td>
      <td>
        <StatePill state={busy ? (live?.state ?? r.state) : r.state} />
      </td>
      <td className="num">
        {r.step} / {r.spec.steps}
      </td>
      <td>
        <ul className="ckpts">
          <Checkpoint run={r} tag="last" busy={busy} />
          <Checkpoint run={r} tag="best" busy={busy} />
        </ul>
        {!r.checkpoints.last && !r.checkpoints.best ? <span className="muted small">none yet</span> : null}
      </td>
      <td>
        <div className="actions">
          {!live && r.state !== 'done' && r.step < r.spec.steps ? (
            <button type="button" className="secondary small" onClick={() => guardJob(resumeWrite(r), () => void resumeRun(r.id))}>
              Resume
            </button>
          ) : null}
          <button type="button" className="secondary small" disabled={busy} onClick={onDelete} aria-label={`Delete run ${r.name}`}>
            Delete
          </button>
        </div>
      </td>
    </tr>
  );
}

const RUN_COLUMNS: Column[] = ['Run', 'State', { label: 'Step', className: 'num' }, 'Checkpoints', ACTIONS_COLUMN];

export function RunList() {
  const { runs, selectedRunId, deleteRun, storage } = useTrainStore();
  const { target, ask, close } = useDeleteTarget(runs);
  return (
    <section className="card wide" aria-labelledby="runs-title">
      <div className="card-head">
        <h2 id="runs-title">Runs in this browser</h2>
        {storage?.quota ? (
          <span className="muted small">
            browser storage: {size(storage.usage)} used of {size(storage.quota)}
          </span>
        ) : null}
      </div>
      {runs.length === 0 ? (
        <p className="muted">No runs yet.</p>
      ) : (
        <ScrollTable testId="run-list" columns={RUN_COLUMNS}>
          {runs.map((r) => (
            <RunRow key={r.id} run={r} selected={r.id === selectedRunId} onDelete={() => ask(r.id)} />
          ))}
        </ScrollTable>
      )}
      <ConfirmDelete target={target} what="run" onClose={close} onDelete={(run) => void deleteRun(run.id)}>
        <p>{target ? `${target.name}, its metric history and its checkpoints are removed from this browser.` : ''}</p>
      </ConfirmDelete>
    </section>
  );
}
