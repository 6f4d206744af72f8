// The Hugging Face folder of the Train view: the one a new run starts from, and the one a run of a
// folder is given again after a reload (to resume, or to merge its adapter into the base). Its
// File objects stay in memory only (never stored: a reload forgets them and the user picks the
// folder again); its fingerprint (file sizes, config.json and safetensors headers hashed) is
// computed here when it is picked, so the page can say at once whether it is a run's own folder.
// The worker checks the memory a training run needs ('hf-inspect' with the run's shape) and, when
// the job starts, checks the folder again.
import { create } from 'zustand';
import { missingWebGpu } from '../../jobs/client.ts';
import {
  folderFingerprint,
  folderId,
  folderMismatch,
  folderName,
  settingsProblem,
  type HfFolderFile,
  type HfFolderInfo,
  type HfInspectJobSpec,
  type HfTrainFolder,
  type HfTrainShape,
} from '../../train/hfFolder.ts';
import type { HfFolderRef } from '../../core/trainSpec.ts';
import { jobClient } from './jobClient.ts';

/** What the estimate is asked for: the run's shape, its tokens per sequence and the memory budget. */
export interface TrainCheck {
  train: HfTrainShape;
  context: number;
  memoryGiB: number;
}

export interface TrainFolder {
  id: string;
  name: string;
  files: HfFolderFile[];
  ref: HfFolderRef;
}

interface TrainFolderState {
  folder: TrainFolder | null;
  status: 'idle' | 'inspecting' | 'ready' | 'error';
  info: HfFolderInfo | null;
  /** The check `info` answers (a newer one replaces it). */
  checked: TrainCheck | null;
  /** Why the folder cannot be read (a file missing or broken, no WebGPU). */
  error: string | null;
  pick(files: HfFolderFile[]): Promise<void>;
  check(c: TrainCheck): Promise<void>;
  forget(): void;
}

const sameCheck = (a: TrainCheck | null, b: TrainCheck) => !!a && JSON.stringify(a) === JSON.stringify(b);

/** Counts picks (and forgets): a pick whose files finish reading after a newer one leaves the store alone. */
let picks = 0;

export const useTrainFolderStore = create<TrainFolderState>()((set, get) => ({
  folder: null,
  status: 'idle',
  info: null,
  checked: null,
  error: null,
  async pick(files) {
    if (!files.length) return;
    const name = folderName(files) ?? 'the picked files';
    const pick = ++picks;
    set({ folder: null, status: 'inspecting', info: null, error: null });
    try {
      const ref = await folderFingerprint(files, name);
      if (pick !== picks) return;
      set({ folder: { id: folderId(files), name, files, ref } });
    } catch (e) {
      if (pick === picks) set({ status: 'error', error: `${name}: could not read its files (${(e as Error).message})` });
      return;
    }
    const last = get().checked;
    if (last) await get().check({ ...last });
    else set({ status: 'idle' });
  },
  async check(c) {
    const folder = get().folder;
    if (!folder) return;
    const problem =
      settingsProblem({ context: c.context, memoryGiB: c.memoryGiB }) ??
      (missingWebGpu() ? `Reading the folder needs the GPU worker, and ${missingWebGpu()!.message}` : null);
    set({ checked: c, status: 'inspecting', error: null });
    if (problem) return set({ status: 'error', error: problem, info: null });
    const spec: HfInspectJobSpec = {
      kind: 'hf-inspect',
      ...(folderName(folder.files) ? {} : { name: folder.name }),
      files: folder.files,
      settings: { context: c.context, memoryGiB: c.memoryGiB },
      train: c.train,
    };
    try {
      const info = await jobClient().result(spec);
      if (get().folder?.id === folder.id && sameCheck(get().checked, c)) set({ status: 'ready', info, error: null });
    } catch (e) {
      if (get().folder?.id === folder.id && sameCheck(get().checked, c)) set({ status: 'error', info: null, error: (e as Error).message });
    }
  },
  forget() {
    picks++;
    set({ folder: null, status: 'idle', info: null, error: null });
  },
}));

/** The picked folder as a job sends it. */
export function jobFolder(folder: TrainFolder, memoryGiB: number): HfTrainFolder {
  return { files: folder.files, memoryGiB, ...(folderName(folder.files) ? {} : { name: folder.name }) };
}

/** Whether the picked folder is `run`'s own: null when it is, else what to do (pick it, or why this one is another). */
export function runFolderProblem(run: { name: string; hf?: { folder: HfFolderRef } }, folder: TrainFolder | null): string | null {
  if (!run.hf) return null;
  if (!folder)
    return `${run.name} trains on the Hugging Face folder ${run.hf.folder.name}, which this page does not keep after a reload: pick that folder again.`;
  return folderMismatch(run.hf.folder, folder.ref);
}
