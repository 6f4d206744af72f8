// The package's browser entry (`import … from 'lwm-studio'` in a bundler for the web): the shared
// API (src/index.ts), and a source for models in a page: a checkpoint's bytes (fetched or
// dropped), a Hugging Face or ONNX folder as File objects (an <input webkitdirectory> pick), an
// endpoint with its key, on the page's WebGPU (navigator.gpu).
import type { BackendRef } from './core/backendRef.ts';
import type { BackendSource } from './backends/open.ts';
import { BackendError } from './backends/errors.ts';
import { GpuRuntime } from './gpu/runtime.ts';
import { filesFolder } from './model/hf/files.ts';
import { openOwned, type WorldModel } from './lib/model.ts';

export * from './index.ts';

export interface PageModels {
  /** Checkpoints of ours by the key a CheckpointRef names them with. */
  checkpoints?: Record<string, Uint8Array | ArrayBuffer | Blob>;
  /** Model folders by the folderId a folder reference names them with: their files, with their paths in the folder. */
  folders?: Record<string, { path: string; file: Blob }[]>;
  /** An endpoint's API key. */
  apiKey?: string;
}

/** Where a page's models come from; `release()` frees the GPU device once every model opened from it is closed. */
export function browserSource(models: PageModels = {}): BackendSource & { release(): void } {
  let rt: Promise<GpuRuntime> | null = null;
  let held: GpuRuntime | null = null;
  return {
    gpu() {
      rt ??= GpuRuntime.create().then((r) => (held = r));
      return rt;
    },
    async checkpoint(c) {
      const bytes = models.checkpoints?.[c.key];
      if (bytes === undefined) throw new BackendError(`no checkpoint '${c.key}' was given to browserSource`, 'checkpoint');
      if (bytes instanceof Uint8Array) return bytes;
      return new Uint8Array(bytes instanceof ArrayBuffer ? bytes : await bytes.arrayBuffer());
    },
    async folder(f) {
      const files = models.folders?.[f.folderId];
      if (!files) throw new BackendError(`no folder '${f.folderId}' was given to browserSource`, 'folder');
      return filesFolder(files, f.name);
    },
    apiKey: () => models.apiKey,
    release() {
      held?.dispose();
      held = null;
      rt = null;
    },
  };
}

/** Opens the model `ref` names from what the page holds (`models`); closing it frees the GPU device it opened. */
export async function openModel(ref: BackendRef, models: PageModels = {}): Promise<WorldModel> {
  return openOwned(ref, browserSource(models));
}
