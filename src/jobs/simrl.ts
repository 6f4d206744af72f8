// The 'simrl' job: the Sim RL experiment (src/train/agent/experiment.ts) in the worker that owns
// the GPU, for a stored ExperimentRecord (src/storage/experiments.ts). The world model of the
// model arms is opened as the Playground and the Bench open a model (src/backends/open.ts: a
// stored checkpoint, an endpoint with the key the page sent, or the copy-last baseline), answering
// greedily. The experiment's state is
// written into the record after every evaluation and sent to the page without its checkpoint
// bytes, so the Train view draws the curves as they grow, and a reload resumes from the last
// evaluation stored.
import { openReady, type ReadyBackend } from '../backends/open.ts';
import type { ExperimentRecord } from '../core/records.ts';
import { getExperiment, updateExperiment } from '../storage/experiments.ts';
import { AGENT_ARMS, runAgentExperiment, needsWorld, type AgentExperimentState } from '../train/agent/experiment.ts';
import { POLICY_BATCH, type AgentHfStart } from '../train/agent/run.ts';
import { folderFingerprint, folderMismatch, type HfTrainFolder } from '../train/hfFolder.ts';
import { openFolderFor } from '../train/hfTrain.ts';
import { DeviceLostDuringJob, StopRequested, UserFacingError, userMessage, type JobContext } from '../train/context.ts';
import { workerSource } from './backendSource.ts';
import { experimentLockName } from './protocol.ts';
import { experimentView, type SimRlProgress } from './simrlView.ts';

export type { ExperimentView, SimRlProgress } from './simrlView.ts';

export interface SimRlJobSpec {
  kind: 'simrl';
  /** The stored experiment to run (or go on with). */
  expId: string;
  /** Its Hugging Face policy's folder, when it has one (the files the page picked). */
  folder?: HfTrainFolder;
  /** An endpoint world's API key, as the Bench's and the optimization's jobs carry theirs: the page keeps keys; the record never holds one. */
  secrets?: { apiKeys?: { world?: string } };
}

export interface SimRlJobResult {
  expId: string;
  done: boolean;
}

type StoredExperiment = ExperimentRecord<AgentExperimentState>;

/** The record's world model, opened to answer greedily (null when no arm needs one); `apiKey`: an endpoint's, from the page. */
export async function openWorld(e: StoredExperiment, ctx: Pick<JobContext, 'gpu'>, apiKey: string | undefined): Promise<ReadyBackend | null> {
  if (!needsWorld(e.experiment.spec.arms)) return null;
  if (!e.world)
    throw new UserFacingError(
      `The arms ${e.experiment.spec.arms.join(', ')} need a world model; this experiment names none. Start a new one with a world model.`,
    );
  const ref = e.world;
  try {
    return await openReady(
      ref,
      workerSource(ctx, { ...(apiKey && { apiKey }) }),
      { maxTokens: e.worldMaxTokens, temperature: 0 },
      { name: `world:${e.experiment.spec.world ?? ref.kind}` },
    );
  } catch (err) {
    throw new UserFacingError(`The world model ${e.experiment.spec.world ?? ref.kind} could not be opened: ${(err as Error).message}`);
  }
}

/** The record's Hugging Face policy, read from the folder given (checked to be the one it began with); undefined for a fresh policy. */
async function openPolicy(e: StoredExperiment, folder: HfTrainFolder | undefined, ctx: JobContext): Promise<AgentHfStart | undefined> {
  const policy = e.experiment.spec.policy;
  if (!policy || !e.policy) return undefined;
  if (!folder?.files.length)
    throw new UserFacingError(
      `${e.name} trains the Hugging Face folder ${e.policy.folder.name}, which the page does not keep after a reload: pick that folder again to go on.`,
    );
  const mismatch = folderMismatch(e.policy.folder, await folderFingerprint(folder.files, folder.name ?? e.policy.folder.name));
  if (mismatch) throw new UserFacingError(mismatch);
  const t = e.experiment.spec.train;
  const lora = policy.lora;
  const opened = await openFolderFor(
    ctx.rt,
    { ...folder, memoryGiB: e.policy.memoryGiB },
    { tuning: lora ? 'lora' : 'full', ...(lora && { rank: lora.rank }), batch: Math.max(t.batch, POLICY_BATCH), generates: true },
    t.T,
  );
  return { hfBase: opened.hfBase, ...(lora && { lora }) };
}

async function runStored(expId: string, ctx: JobContext, signal: AbortSignal, folder?: HfTrainFolder, apiKey?: string): Promise<SimRlJobResult> {
  const initial = (await getExperiment(expId)) as StoredExperiment | undefined;
  if (!initial) throw new UserFacingError(`There is no stored Sim RL experiment ${expId}; it may have been deleted.`);
  const e = (await updateExperiment(expId, (r) => {
    r.state = 'running';
    r.error = undefined;
  })) as StoredExperiment;
  let world: ReadyBackend | null = null;
  // A lost device ends the job at once (JobHost reports it failed): record that now.
  const offLost = ctx.rt.on((ev) => {
    if (ev.type === 'lost')
      void updateExperiment(expId, (r) => {
        r.state = 'failed';
        r.error = userMessage(ctx.lost ?? new DeviceLostDuringJob(ev.error));
      }).catch(() => {});
  });
  try {
    world = await openWorld(e, ctx, apiKey);
    const start = await openPolicy(e, folder, ctx);
    const s = e.experiment;
    ctx.log(s.untrained ? `resuming: ${s.arms.filter((a) => a.done).length} of ${s.arms.length} arms done` : `starting: arms ${s.spec.arms.join(', ')}`);
    const final = await runAgentExperiment(
      s,
      {
        rt: ctx.rt,
        ...(world && { world: { backend: world.backend, options: world.generate } }),
        log: (m) => ctx.log(m),
        metric: (phase, step, values) => {
          if ((AGENT_ARMS as readonly string[]).includes(phase) && phase !== 'imitation')
            ctx.progress({ expId, step: { arm: phase, step, values } } satisfies SimRlProgress);
        },
        async save(state) {
          await updateExperiment(expId, (r) => (r.experiment = state));
          ctx.progress({ expId, state: experimentView(state) } satisfies SimRlProgress);
        },
        signal,
      },
      start,
    );
    if (ctx.lost) throw ctx.lost;
    await updateExperiment(expId, (r) => {
      r.experiment = final;
      r.state = 'done';
    });
    return { expId, done: final.done };
  } catch (err) {
    const stop = err instanceof StopRequested || signal.aborted;
    const failure = stop ? null : await ctx.failure(err);
    await updateExperiment(expId, (r) => {
      r.state = stop ? 'stopped' : 'failed';
      r.error = failure ? userMessage(failure as Error) : undefined;
    }).catch(() => {});
    if (stop && !(err instanceof StopRequested)) throw new StopRequested();
    throw failure ?? err;
  } finally {
    offLost();
    world?.dispose();
  }
}

/** The job runner: the stored experiment on the worker's device, stoppable between steps, locked against a second tab. */
export async function runSimRlJob(spec: SimRlJobSpec, ctx: JobContext): Promise<SimRlJobResult> {
  if (!spec.expId) throw new UserFacingError('a simrl job needs an expId');
  const stop = new AbortController();
  const offState = ctx.onState((s) => {
    if (s === 'stopping') stop.abort(new StopRequested());
  });
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  try {
    if (!locks) return await runStored(spec.expId, ctx, stop.signal, spec.folder, spec.secrets?.apiKeys?.world);
    return await locks.request(experimentLockName(spec.expId), { ifAvailable: true }, async (lock) => {
      if (!lock) throw new UserFacingError('This experiment is running in another tab of LWM Studio; watch it there or close that tab first.');
      return runStored(spec.expId, ctx, stop.signal, spec.folder, spec.secrets?.apiKeys?.world);
    });
  } finally {
    offState();
  }
}
