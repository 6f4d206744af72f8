// Train: start a CPT, SFT or RL run in the jobs worker, watch its loss (and reward) live, pause,
// resume or stop it, and keep its checkpoints. Runs live in IndexedDB: a reload during a run
// offers to resume it from its last checkpoint, and the curve continues where it was.
import { useEffect } from 'react';
import { DatasetError, LoadProgress, useDatasets } from '../components/DatasetGate.tsx';
import { useTemplateStore } from '../stores/templates.ts';
import { useTrainStore } from '../stores/train.ts';
import { NewRunForm } from './train/NewRunForm.tsx';
import { RunList } from './train/RunList.tsx';
import { RunPanel } from './train/RunPanel.tsx';
import { SimRlPanel } from './train/SimRlPanel.tsx';
import { FolderAgain } from './train/RunFolder.tsx';
import { runFolderProblem, useTrainFolderStore } from '../stores/trainFolder.ts';
import { folderNeeded } from '../../train/hfFolder.ts';
import { guardJob, resumeWrite } from '../stores/storage.ts';
import { ErrorCallout } from '../components/ErrorCallout.tsx';

function Interrupted() {
  const { interrupted, resumeRun, dismissInterrupted, live } = useTrainStore();
  const folder = useTrainFolderStore((s) => s.folder);
  if (!interrupted.length) return null;
  return (
    <>
      {interrupted.map((r) => (
        <div key={r.id} className="callout warn" role="region" aria-label="Interrupted run" data-testid="resume-offer">
          <p>
            <strong>{r.name}</strong>{' '}
            {r.state === 'failed' ? 'was training when the GPU device was lost' : `was ${r.state === 'paused' ? 'paused' : 'training'} when the page closed`}{' '}
            (step {r.step} of {r.spec.steps}).{' '}
            {r.checkpoints.last
              ? `Its last checkpoint is at step ${r.checkpoints.last.step}.`
              : 'It has no checkpoint yet, so it would start again from the beginning.'}
          </p>
          {folderNeeded(r) ? <FolderAgain run={r} purpose="resume" /> : null}
          <div className="toolbar">
            <button
              type="button"
              disabled={!!live || (folderNeeded(r) && runFolderProblem(r, folder) !== null)}
              onClick={() => guardJob(resumeWrite(r), () => void resumeRun(r.id))}
            >
              {r.checkpoints.last ? `Resume from step ${r.checkpoints.last.step}` : 'Restart it'}
            </button>
            <button type="button" className="secondary" onClick={() => void dismissInterrupted(r.id)}>
              Leave it stopped
            </button>
          </div>
        </div>
      ))}
    </>
  );
}

export default function TrainView() {
  useDatasets();
  const loadTemplates = useTemplateStore((s) => s.load);
  const { init, error, dismissError } = useTrainStore();
  useEffect(() => {
    void loadTemplates();
    void init();
  }, [init, loadTemplates]);
  return (
    <section className="view" aria-labelledby="train-title">
      <h1 id="train-title">Train</h1>
      <LoadProgress />
      <DatasetError />
      <Interrupted />
      <ErrorCallout error={error} onDismiss={dismissError} testId="train-error" />
      <div className="train-layout">
        <NewRunForm />
        <RunPanel />
      </div>
      <RunList />
      <SimRlPanel />
    </section>
  );
}
