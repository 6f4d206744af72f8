// The opener's source in Node (the `lwm` CLI, the server, the library): a checkpoint is a path, a
// folder a directory, the GPU Dawn's WebGPU (acquired on first use, once, and released with the
// source), an endpoint's key the one given, else $LWM_API_KEY, then $OPENAI_API_KEY.
// Node-only: the app never imports this file.
import { readFile } from 'node:fs/promises';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { nodeFolder } from '../model/hf/node.ts';
import { BackendError } from './errors.ts';
import type { BackendSource } from './open.ts';

export interface NodeSource extends BackendSource {
  /** Frees the GPU runtime, if one was acquired (after every backend opened from this source is disposed). */
  release(): void;
}

export function nodeSource(o: { apiKey?: string; log?: (message: string) => void } = {}): NodeSource {
  let rt: Promise<GpuRuntime> | null = null;
  let held: GpuRuntime | null = null;
  return {
    gpu() {
      rt ??= import('../gpu/node.ts').then(async (m) => (held = await m.nodeRuntime()));
      return rt;
    },
    async checkpoint(c) {
      try {
        return new Uint8Array(await readFile(c.key));
      } catch (e) {
        throw new BackendError(`${c.key}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, 'checkpoint');
      }
    },
    folder: (f) => nodeFolder(f.folderId),
    apiKey: () => o.apiKey ?? process.env.LWM_API_KEY ?? process.env.OPENAI_API_KEY,
    pageOrigin: null,
    ...(o.log && { log: o.log }),
    release() {
      held?.dispose();
      held = null;
      rt = null;
    },
  };
}
