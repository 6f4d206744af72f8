// A training run of the app that starts from a Hugging Face folder (the Train view's "Start from:
// a Hugging Face folder"), in the worker: the page posts the folder's File objects with the job;
// here they are checked against the run's memory (full fine-tuning or LoRA, the batch and the
// tokens per sequence), read into the run's base (its text files and weights) and fingerprinted,
// so a resume after a reload (the page does not keep the files) can tell the same folder from
// another. The folder's chat template becomes the prompt format in the pipeline (chat.ts).
import { configFromHf } from '../model/hf/config.ts';
import { readJsonFile } from '../model/hf/files.ts';
import { readHfBase, type HfBase } from '../model/hf/base.ts';
import { limitsFromReport } from '../model/hf/load.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import type { RunRecord } from '../core/records.ts';
import { UserFacingError } from './context.ts';
import { folderError } from '../backends/folders.ts';
import { folderOf, runShape } from './hf.ts';
import { folderFingerprint, folderMismatch, folderNeeded, settingsProblem, type HfTrainFolder, type HfTrainShape } from './hfFolder.ts';
import type { HfFolderRef, TrainSpec } from '../core/trainSpec.ts';

export interface OpenedTrainFolder {
  hfBase: { base: HfBase; params: Float32Array };
  ref: HfFolderRef;
}

/** The rows of one step the memory is checked for: SFT/CPT's batch, RL's group (with its rollouts' KV cache). */
export function trainShape(spec: TrainSpec): HfTrainShape {
  const tuning = spec.lora ? 'lora' : 'full';
  const rank = spec.lora?.rank;
  const base = spec.lora?.baseWeights ? { baseWeights: spec.lora.baseWeights } : {};
  if (spec.stage === 'rl') return { tuning, rank, batch: spec.rl?.groupSize ?? 4, generates: true, ...base };
  return { tuning, rank, batch: spec.batch ?? 8, ...base };
}

/** Reads a folder for a run (HfMemoryError's refusal, with what would fit, before any tensor is read). */
export async function openTrainFolder(rt: GpuRuntime, folder: HfTrainFolder, spec: TrainSpec): Promise<OpenedTrainFolder> {
  return openFolderFor(rt, folder, trainShape(spec), spec.T);
}

/**
 * Reads a folder for a run of this shape, at `T` tokens per sequence (capped by the model's
 * context; absent: the model's): its fingerprint, its text files and its weights, the memory checked first.
 */
export async function openFolderFor(rt: GpuRuntime, folder: HfTrainFolder, train: HfTrainShape, T?: number): Promise<OpenedTrainFolder> {
  const files = folderOf(folder.files, folder.name);
  const problem = settingsProblem({ context: null, memoryGiB: folder.memoryGiB });
  if (problem) throw new UserFacingError(problem);
  try {
    const ref = await folderFingerprint(folder.files, files.label);
    const maxContext = configFromHf(await readJsonFile(files, 'config.json')).config.contextLength;
    const shape = runShape(train, Math.min(T ?? maxContext, maxContext));
    const limits = limitsFromReport(rt.report, Math.floor(folder.memoryGiB * 2 ** 30));
    const hfBase = await readHfBase(
      files,
      {
        limits,
        mode: shape.mode,
        batch: shape.batch,
        context: shape.context,
        generates: shape.generates,
        ...(shape.weightBytes === 2 && { weights: 'f16' as const }),
      },
      files.label,
    );
    return { hfBase, ref };
  } catch (e) {
    const err = folderError(e, files.label);
    // readHfBase's own refusals (no tokenizer.json) name the folder already.
    throw err instanceof UserFacingError || !(err instanceof Error) || !err.message.startsWith(files.label) ? err : new UserFacingError(err.message);
  }
}

/**
 * The folder a resumed run (or a new run on its adapter) trains on again: required when the run
 * needs its base weights (folderNeeded), and checked to be the same folder it began with.
 */
export async function reopenTrainFolder(
  rt: GpuRuntime,
  run: RunRecord,
  folder: HfTrainFolder | undefined,
  spec: TrainSpec,
): Promise<OpenedTrainFolder | undefined> {
  if (!run.hf || !folderNeeded(run)) return undefined;
  if (!folder?.files.length) {
    throw new UserFacingError(
      `${run.name} trains on the Hugging Face folder ${run.hf.folder.name}, which the page does not keep after a reload: pick that folder again (Start from, or the resume offer) to go on.`,
    );
  }
  const picked = await folderFingerprint(folder.files, folderOf(folder.files, folder.name).label);
  const mismatch = folderMismatch(run.hf.folder, picked);
  if (mismatch) throw new UserFacingError(mismatch);
  return openTrainFolder(rt, folder, spec);
}
