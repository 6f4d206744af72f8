// Hugging Face model folders the user picked or dropped in this page, shared by the Playground and
// the Bench. Each is checked by the worker as soon as it is picked (the 'hf-inspect' job reads its
// config.json and safetensors headers and estimates its memory against the adapter), so the page
// shows what it is and whether it fits before anything is loaded. The File objects live in memory
// only: they are not persisted (a reload loses them; the user picks the folder again), and they
// stay across view switches.
import { create, type StoreApi, type UseBoundStore } from 'zustand';
import { missingWebGpu, type JobClient } from '../../jobs/client.ts';
import {
  chatProblem,
  DEFAULT_HF_SETTINGS,
  folderId,
  folderName,
  settingsProblem,
  type HfFolderFile,
  type HfFolderInfo,
  type HfInspectJobSpec,
  type HfRunSettings,
} from '../../train/hfFolder.ts';
import { jobClient } from './jobClient.ts';

export interface PickedFolder {
  id: string;
  /** The picked folder's name, or "the picked files" (dropped files without a folder). */
  name: string;
  files: HfFolderFile[];
  settings: HfRunSettings;
  status: 'inspecting' | 'ready' | 'error';
  info: HfFolderInfo | null;
  /** Why it cannot be used (a file missing or broken, no WebGPU); the refusal of a run that does not fit is info.fit. */
  error: string | null;
}

/** A folder that was checked, fits the adapter with its settings, and has what a turn needs (a tokenizer and a chat template). */
export function usable(f: PickedFolder | undefined): f is PickedFolder & { info: HfFolderInfo } {
  return !!f && f.status === 'ready' && !!f.info?.fit.fits && chatProblem(f.info) === null;
}

export interface HfFolderDeps {
  jobs(): JobClient;
  webgpu(): { message: string; help: string } | null;
}

export interface HfFolderState {
  folders: PickedFolder[];
  /** Adds the files of one folder (the same files again: checked again) and checks them; its id, or null when no file was given. */
  add(files: HfFolderFile[]): Promise<string | null>;
  /** New run settings (context, memory) for a folder, checked again. */
  setSettings(id: string, settings: Partial<HfRunSettings>): Promise<void>;
  remove(id: string): void;
  get(id: string): PickedFolder | undefined;
}

type Set = StoreApi<HfFolderState>['setState'];
type Get = StoreApi<HfFolderState>['getState'];

function patch(set: Set, id: string, change: Partial<PickedFolder>) {
  set((s) => ({ folders: s.folders.map((f) => (f.id === id ? { ...f, ...change } : f)) }));
}

/** Runs the 'hf-inspect' job for a folder's files and settings. */
function inspectJob(client: JobClient, spec: HfInspectJobSpec): Promise<HfFolderInfo> {
  return client.result(spec);
}

/** Checks one folder in the worker; a newer check of the same folder wins over an older one. */
async function inspect(deps: HfFolderDeps, set: Set, get: Get, id: string): Promise<void> {
  const f = get().get(id);
  if (!f) return;
  const problem = settingsProblem(f.settings) ?? (deps.webgpu() ? `Reading the folder needs the GPU worker, and ${deps.webgpu()!.message}` : null);
  if (problem) {
    patch(set, id, { status: 'error', error: problem, info: null });
    return;
  }
  const settings = f.settings;
  patch(set, id, { status: 'inspecting', error: null });
  try {
    const info = await inspectJob(deps.jobs(), { kind: 'hf-inspect', ...(folderName(f.files) ? {} : { name: f.name }), files: f.files, settings });
    if (get().get(id)?.settings === settings) patch(set, id, { status: 'ready', info, error: null, name: info.name });
  } catch (e) {
    if (get().get(id)?.settings === settings) patch(set, id, { status: 'error', info: null, error: (e as Error).message });
  }
}

export function createHfFolderStore(deps: HfFolderDeps): UseBoundStore<StoreApi<HfFolderState>> {
  return create<HfFolderState>()((set, get) => ({
    folders: [],
    async add(files) {
      if (!files.length) return null;
      const id = folderId(files);
      const old = get().get(id);
      const folder: PickedFolder = {
        id,
        name: folderName(files) ?? 'the picked files',
        files,
        settings: old?.settings ?? { ...DEFAULT_HF_SETTINGS },
        status: 'inspecting',
        info: null,
        error: null,
      };
      set((s) => ({ folders: [...s.folders.filter((f) => f.id !== id), folder] }));
      await inspect(deps, set, get, id);
      return id;
    },
    async setSettings(id, settings) {
      const f = get().get(id);
      if (!f) return;
      patch(set, id, { settings: { ...f.settings, ...settings } });
      await inspect(deps, set, get, id);
    },
    remove(id) {
      set((s) => ({ folders: s.folders.filter((f) => f.id !== id) }));
    },
    get(id) {
      return get().folders.find((f) => f.id === id);
    },
  }));
}

/** The page's folders: checked by the jobs worker (started on first use). */
export const useHfFolderStore = createHfFolderStore({ jobs: jobClient, webgpu: missingWebGpu });
