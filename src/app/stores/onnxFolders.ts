// ONNX causal-LM folders the user picked or dropped in this page, shared by the Playground and the
// Bench, as Hugging Face folders are (stores/hfFolders.ts): each is checked by the worker as soon as
// it is picked (the 'onnx-inspect' job lists its model files and reads config.json and the
// tokenizer), so the page shows what it is, and which model file to run when it has several
// (model.onnx, model_fp16.onnx, model_q4.onnx, …), before anything is opened. Unlike a Hugging Face
// folder it needs no WebGPU: onnxruntime-web runs it on WebGPU where the page has it, else on WASM.
// The File objects live in memory only (a reload loses them).
import { create, type StoreApi, type UseBoundStore } from 'zustand';
import { missingWebGpu, type JobClient } from '../../jobs/client.ts';
import { folderId, folderName, type HfFolderFile } from '../../train/hfFolder.ts';
import { onnxFolderProblem, type OnnxExecution, type OnnxFolderInfo, type OnnxInspectJobSpec } from '../../jobs/onnxFolder.ts';
import { jobClient } from './jobClient.ts';

export interface PickedOnnxFolder {
  id: string;
  name: string;
  files: HfFolderFile[];
  /** The model file chosen (null: the folder's default, info.defaultFile). */
  file: string | null;
  status: 'inspecting' | 'ready' | 'error';
  info: OnnxFolderInfo | null;
  error: string | null;
}

/** The model file a folder runs: the one chosen, else its default. */
export function chosenFile(f: PickedOnnxFolder): string | null {
  return f.file ?? f.info?.defaultFile ?? null;
}

/** A folder that was checked and has what a turn needs (a tokenizer and a context length). */
export function usableOnnx(f: PickedOnnxFolder | undefined): f is PickedOnnxFolder & { info: OnnxFolderInfo } {
  return !!f && f.status === 'ready' && !!f.info && onnxFolderProblem(f.info) === null;
}

/** Where onnxruntime-web runs a model for this page: WebGPU with WASM behind it, or WASM only when the page has no WebGPU. */
export function pageExecution(webgpu: () => { message: string } | null = missingWebGpu): OnnxExecution {
  return webgpu() ? 'wasm' : 'auto';
}

export interface OnnxFolderState {
  folders: PickedOnnxFolder[];
  /** Adds the files of one folder and checks them; its id, or null when no file was given. */
  add(files: HfFolderFile[]): Promise<string | null>;
  /** Chooses the model file a folder runs. */
  setFile(id: string, file: string): void;
  remove(id: string): void;
  get(id: string): PickedOnnxFolder | undefined;
}

type Set = StoreApi<OnnxFolderState>['setState'];

function patch(set: Set, id: string, change: Partial<PickedOnnxFolder>) {
  set((s) => ({ folders: s.folders.map((f) => (f.id === id ? { ...f, ...change } : f)) }));
}

/** Runs the 'onnx-inspect' job for a folder's files. */
async function inspectJob(client: JobClient, spec: OnnxInspectJobSpec): Promise<OnnxFolderInfo> {
  return client.result(spec);
}

export function createOnnxFolderStore(deps: { jobs(): JobClient }): UseBoundStore<StoreApi<OnnxFolderState>> {
  return create<OnnxFolderState>()((set, get) => ({
    folders: [],
    async add(files) {
      if (!files.length) return null;
      const id = folderId(files);
      const name = folderName(files);
      const folder: PickedOnnxFolder = { id, name: name ?? 'the picked files', files, file: null, status: 'inspecting', info: null, error: null };
      set((s) => ({ folders: [...s.folders.filter((f) => f.id !== id), folder] }));
      try {
        const info = await inspectJob(deps.jobs(), { kind: 'onnx-inspect', ...(name ? {} : { name: folder.name }), files });
        if (get().get(id)?.files === files) patch(set, id, { status: 'ready', info, name: info.name });
      } catch (e) {
        if (get().get(id)?.files === files) patch(set, id, { status: 'error', error: (e as Error).message });
      }
      return id;
    },
    setFile(id, file) {
      patch(set, id, { file });
    },
    remove(id) {
      set((s) => ({ folders: s.folders.filter((f) => f.id !== id) }));
    },
    get(id) {
      return get().folders.find((f) => f.id === id);
    },
  }));
}

/** The page's ONNX folders: checked by the jobs worker (started on first use). */
export const useOnnxFolderStore = createOnnxFolderStore({ jobs: jobClient });
