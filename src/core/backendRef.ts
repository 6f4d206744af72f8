// Which model answers a turn, as plain data: the one description the Playground, the Bench and
// the prompt optimizer (in the page and the jobs worker), the `lwm` CLI and the server share.
// A reference names a model; it never holds one. Where its bytes come from (browser storage, a
// file dropped in the page, a folder on disk) is the opener's business: src/backends/open.ts
// reads them through a BackendSource of the place it runs in.

/** How much of a model's run to give it: tokens and GPU memory (a Hugging Face folder's run settings). */
export interface FolderRunSettings {
  /** Tokens a prompt and its generation may take together; null: the model's own, up to a default. */
  context: number | null;
  /** GPU memory the model may take, in GiB (WebGPU reports no device memory, so the user says). */
  memoryGiB: number;
  /** How the weights are held for inference (absent: f32); f16 halves the matrices' memory. */
  weights?: 'f32' | 'f16';
}

/** Context when none is asked: the model's maximum, but no more than this (the KV cache and the prefill grow with it). */
export const DEFAULT_FOLDER_CONTEXT = 2048;

/** Why run settings cannot be a run's (a context below 16 tokens, no memory), or null. */
export function folderSettingsProblem(s: FolderRunSettings): string | null {
  if (s.context !== null && (!Number.isInteger(s.context) || s.context < 16)) return `Context must be a whole number of tokens, at least 16; got ${s.context}.`;
  if (!(Number.isFinite(s.memoryGiB) && s.memoryGiB > 0 && s.memoryGiB <= 1024))
    return `GPU memory must be a number of GiB above 0 (at most 1024); got ${s.memoryGiB}.`;
  return null;
}

/** Where onnxruntime-web runs an ONNX model: 'auto' (WebGPU, else WASM) or 'wasm' (a page without WebGPU, Node). */
export type OnnxExecution = 'auto' | 'wasm';

/** The checkpoint key of a file dropped in a page (`file:ID`): its bytes travel with the job, never stored. */
export const FILE_KEY_PREFIX = 'file:';

/** A checkpoint of ours (.safetensors with its config, tokenizer and training template inside). */
export interface CheckpointRef {
  /**
   * Where its bytes are, as the opener's source reads them: a stored checkpoint's key (browser
   * storage: a run's last or best checkpoint), `file:ID` (a file dropped in the page), or a path
   * (Node).
   */
  key: string;
  /** How messages name it ("the best checkpoint of run 3", "model.safetensors"); absent: from the run fields, else the key. */
  label?: string;
  /** A run's checkpoint: which run and which of its checkpoints (tables show them). */
  runId?: string;
  runName?: string;
  tag?: 'last' | 'best';
  step?: number;
  /** The trained template to prompt with (absent: the one it was trained with). */
  template?: string;
  /** Prompts whose KV cache is kept for the next prompt that starts the same way (absent: 4; 0: off). */
  prefixSlots?: number;
  weights?: 'f32' | 'f16';
}

/** A model folder (Hugging Face layout, or an ONNX export): which one, never its files. */
export interface FolderRef {
  /** What the opener's source looks the files up by: a folder picked in the page (its id), a directory (Node). */
  folderId: string;
  /** The folder's name, for messages and tables. */
  name: string;
}

export interface EndpointRef {
  /** An OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1. */
  baseUrl: string;
  model: string;
  /** Requests in flight at once (absent: 4). */
  concurrency?: number;
  /** Per request, or between streamed chunks. */
  timeoutMs?: number;
  retries?: number;
  /** Ask for a stream (absent: yes). */
  stream?: boolean;
}

/** A Hugging Face folder on our WebGPU engine, loaded with these run settings (architecture and size: what it was, for tables). */
export type HfModelRef = FolderRef & FolderRunSettings & { architecture?: string; parameters?: number };

/** An ONNX folder in onnxruntime-web: `file` is the model file chosen (absent: the folder's default). */
export type OnnxModelRef = FolderRef & { file?: string; execution: OnnxExecution };

/** One model. An endpoint's API key is not part of it: the source gives it (a key is never stored with a reference). */
export type BackendRef =
  | { kind: 'copy-last' }
  | { kind: 'reference' }
  | { kind: 'checkpoint'; checkpoint: CheckpointRef }
  | { kind: 'hf'; hf: HfModelRef }
  | { kind: 'onnx'; onnx: OnnxModelRef }
  | { kind: 'endpoint'; endpoint: EndpointRef };

export type BackendKind = BackendRef['kind'];

/** The two answers that need no model. */
export function isBaseline(ref: { kind: string }): boolean {
  return ref.kind === 'copy-last' || ref.kind === 'reference';
}

/** Whether the model runs on our WebGPU engine (a checkpoint, a Hugging Face folder): it needs a GPU device. */
export function needsGpu(ref: { kind: string }): boolean {
  return ref.kind === 'checkpoint' || ref.kind === 'hf';
}

/** A checkpoint's name in messages. */
export function checkpointLabel(c: CheckpointRef): string {
  if (c.label) return c.label;
  if (c.runName) return `the ${c.tag ?? 'last'} checkpoint of ${c.runName}`;
  return c.key;
}

/**
 * Generation settings asked of a model; absent fields take the model's defaults: a quarter of a
 * model's context (an endpoint: 32768, as the public inference script) and greedy (an endpoint: 0.6).
 */
export interface GenerationSettings {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
}

/** A stable key of what a reference loads: two references with one key open the same model the same way. */
export function backendKey(ref: BackendRef): string {
  switch (ref.kind) {
    case 'checkpoint': {
      const c = ref.checkpoint;
      return `checkpoint:${c.key}:${c.template ?? ''}:${c.prefixSlots ?? ''}:${c.weights ?? 'f32'}`;
    }
    case 'hf':
      return `hf:${ref.hf.folderId}:${ref.hf.context ?? 'auto'}:${ref.hf.memoryGiB}:${ref.hf.weights ?? 'f32'}`;
    case 'onnx':
      return `onnx:${ref.onnx.folderId}:${ref.onnx.file ?? 'default'}:${ref.onnx.execution}`;
    case 'endpoint':
      return `endpoint:${ref.endpoint.baseUrl}:${ref.endpoint.model}`;
    default:
      return ref.kind;
  }
}
