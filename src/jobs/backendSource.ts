// Where a model a job opens comes from, in the jobs worker: a run's checkpoint from browser
// storage, a file the page dropped (its bytes sent with the job), the files of a folder the page
// picked (File handles sent with the job), the worker's GPU device. Every job that opens a model
// (the Playground's generate, the Bench, prompt optimization) opens it through
// src/backends/open.ts with this source.
import type { BackendSource } from '../backends/open.ts';
import { BackendError } from '../backends/errors.ts';
import { checkpointLabel, FILE_KEY_PREFIX, type FolderRef } from '../core/backendRef.ts';
import { MODEL_NOT_LOADED } from './protocol.ts';
import { filesFolder } from '../model/hf/files.ts';
import { CheckpointError } from '../core/model/checkpoint.ts';
import { loadCheckpointBytes } from '../storage/runs.ts';
import type { HfFolderFile } from '../train/hfFolder.ts';
import type { JobContext } from '../train/context.ts';

export interface WorkerSourceOptions {
  /** An endpoint's API key (the page keeps keys; a job carries the one it needs). */
  apiKey?: string;
  /** The files of folders the page sent with the job, by folder id. */
  folders?: Readonly<Record<string, readonly HfFolderFile[]>>;
  /** Bytes of files dropped in the page, by checkpoint key (`file:ID`). */
  files?: Readonly<Record<string, Uint8Array>>;
  /** What to do when a folder's files were not sent (a reload since the job's record was made). */
  missingFolder?: (f: FolderRef) => string;
}

const NOT_OPEN = (f: FolderRef) => `The folder ${f.name} is not open in this page (folders are not kept after a reload): pick the same folder again.`;

/** The worker's source for a job's models. */
export function workerSource(ctx: Pick<JobContext, 'gpu'> & Partial<Pick<JobContext, 'log'>>, o: WorkerSourceOptions = {}): BackendSource {
  return {
    gpu: () => ctx.gpu(),
    async checkpoint(c) {
      if (c.key.startsWith(FILE_KEY_PREFIX)) {
        const bytes = o.files && Object.hasOwn(o.files, c.key) ? o.files[c.key] : undefined;
        if (!bytes) throw new BackendError(MODEL_NOT_LOADED, 'checkpoint');
        return bytes;
      }
      return loadCheckpointBytes(c.key).catch((e: Error) => {
        throw new CheckpointError(`${checkpointLabel(c)} could not be read from browser storage (${e.message}); it may have been deleted in the Train view.`);
      });
    },
    async folder(f) {
      const files = o.folders && Object.hasOwn(o.folders, f.folderId) ? o.folders[f.folderId] : undefined;
      if (!files?.length) throw new BackendError((o.missingFolder ?? NOT_OPEN)(f), 'folder');
      return filesFolder(files, f.name);
    },
    apiKey: () => o.apiKey,
    ...(ctx.log && { log: ctx.log }),
  };
}
