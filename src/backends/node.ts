// The opener's source in Node (the `lwm` CLI, the server, the library): a checkpoint is a path, a
// folder a directory, the GPU Dawn's WebGPU (acquired on first use, once, and released with the
// source), an endpoint's key the one given, else $LWM_API_KEY, then $OPENAI_API_KEY. Where a
// model is named by the user, modelPath() is the one place a Hugging Face Hub id
// (`org/name[@revision]`) becomes a folder: its snapshot in the Hugging Face cache (src/hub/).
// Node-only: the app never imports this file.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { BackendRef } from '../core/backendRef.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { nodeFolder } from '../model/hf/node.ts';
import { HubError } from '../hub/errors.ts';
import { progressLines, resolveHubPath } from '../hub/node.ts';
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

/** How a model found by its path is opened: a checkpoint's template and weights, a folder's run settings, an ONNX folder's file. */
export interface PathOptions {
  template?: string;
  weights?: 'f32' | 'f16';
  /** A Hugging Face folder's context (absent: its own, up to a default). */
  context?: number;
  /** GPU memory a Hugging Face folder may take, in GiB (default 8). */
  memoryGiB?: number;
  /** An ONNX folder's model file (fp16, q4, … or a file name). */
  variant?: string;
}

/**
 * The path on disk `model` names: itself when it exists or is written as a path (`./x`, `/x`,
 * `x/`); a Hugging Face Hub id (`org/name`, `org/name@revision`) otherwise, downloaded into the
 * Hugging Face cache or found there ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub;
 * HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE), its progress written to `log` line by line. A Hub
 * failure is a BackendError about the folder, one paragraph naming the id.
 */
export async function modelPath(model: string, o: { log?: (line: string) => void; signal?: AbortSignal } = {}): Promise<string> {
  try {
    const r = await resolveHubPath(model, {
      ...(o.log && { progress: progressLines(o.log), log: (m: string) => o.log!(`${m}\n`) }),
      ...(o.signal && { signal: o.signal }),
    });
    return r.path;
  } catch (e) {
    if (e instanceof HubError) throw new BackendError(`${e.message}${pathHint(model)}`, 'folder');
    throw e;
  }
}

/**
 * What a Hub failure adds when the id's first part is a folder here: the user most likely meant a
 * path in it (`runs/w` with no `w` in runs/), and a path is written so (`./runs/w`).
 */
function pathHint(model: string): string {
  const [dir, rest] = model.split('/');
  if (!rest || !existsSync(dir) || !statSync(dir).isDirectory()) return '';
  return ` (${dir}/ is a folder here without ${rest.split('@')[0]} in it; a path is written ./${model})`;
}

/** refFromPath for a path or a Hub id (modelPath): a Hub model is named by its id. */
export async function refFromModel(model: string, o: PathOptions = {}, log?: (line: string) => void): Promise<BackendRef> {
  const path = await modelPath(model, log ? { log } : {});
  const ref = refFromPath(path, o);
  if (path === model) return ref;
  if (ref.kind === 'hf') return { ...ref, hf: { ...ref.hf, name: model } };
  if (ref.kind === 'onnx') return { ...ref, onnx: { ...ref.onnx, name: model } };
  return ref;
}

/**
 * The model at `path`: a file is a checkpoint of ours, a folder with safetensors a Hugging Face
 * folder, a folder with ONNX files and no safetensors an ONNX export; `copy-last` the baseline.
 */
export function refFromPath(path: string, o: PathOptions = {}): BackendRef {
  if (path === 'copy-last') return { kind: 'copy-last' };
  if (!existsSync(path)) throw new BackendError(`${path}: no such file or folder (a checkpoint, a Hugging Face folder, or an ONNX folder)`, 'folder');
  const name = basename(path.replace(/[/\\]+$/, ''));
  if (statSync(path).isFile()) {
    return {
      kind: 'checkpoint',
      checkpoint: { key: path, label: name, ...(o.template !== undefined && { template: o.template }), ...(o.weights && { weights: o.weights }) },
    };
  }
  const files = readdirSync(path);
  const onnx = existsSync(join(path, 'onnx')) || files.some((f) => f.endsWith('.onnx'));
  const safetensors = files.some((f) => f.endsWith('.safetensors') || f === 'model.safetensors.index.json');
  if (onnx && !safetensors) return { kind: 'onnx', onnx: { folderId: path, name, ...(o.variant !== undefined && { file: o.variant }), execution: 'wasm' } };
  if (!safetensors) throw new BackendError(`${path}: a folder without *.safetensors or onnx/*.onnx is not a model folder`, 'folder');
  return { kind: 'hf', hf: { folderId: path, name, context: o.context ?? null, memoryGiB: o.memoryGiB ?? 8, ...(o.weights && { weights: o.weights }) } };
}
