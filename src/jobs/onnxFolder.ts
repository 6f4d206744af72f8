// What the page and the worker say about an ONNX causal-LM folder the user picked or dropped
// (onnx/model.onnx or its variants model_fp16.onnx, model_q4.onnx, …, beside config.json,
// tokenizer.json, tokenizer_config.json, generation_config.json): its files (File handles, as for a
// Hugging Face folder, src/train/hfFolder.ts), the model file the user chose, the execution
// provider asked for, and what the worker found before loading it ('onnx-inspect' job). Plain data
// and pure helpers, so the page imports this without onnxruntime-web or the loaders.
import { formatGiB, type HfFolderFile } from '../train/hfFolder.ts';

/**
 * Where onnxruntime-web runs the model: 'auto' is WebGPU, with WASM when WebGPU cannot take it;
 * 'wasm' is WASM only (what a page without WebGPU asks: its worker may still see WebGPU).
 */
export type { OnnxExecution } from '../core/backendRef.ts';

/** One model file of the folder (a variant). */
export interface OnnxVariant {
  /** Its path in the folder, e.g. 'onnx/model_q4.onnx'. */
  file: string;
  /** The model file's bytes, with its external data (model.onnx_data, …). */
  bytes: number;
}

/** What the worker tells the page about an ONNX folder before anything is loaded. */
export interface OnnxFolderInfo {
  name: string;
  variants: OnnxVariant[];
  /** The file opened when the user chooses none (model.onnx first, see src/model/onnx/layout.ts). */
  defaultFile: string;
  /** config.json's architectures[0] / model_type, when it says. */
  architecture: string | null;
  layers: number | null;
  hidden: number | null;
  heads: number | null;
  kvHeads: number | null;
  vocab: number | null;
  /** config.json's max_position_embeddings (n_positions). */
  maxContext: number | null;
  files: number;
  tokenizer: boolean;
  chatTemplate: boolean;
}

/** The 'onnx-inspect' job: lists a folder's model files and reads its config and tokenizer. */
export interface OnnxInspectJobSpec {
  kind: 'onnx-inspect';
  name?: string;
  files: HfFolderFile[];
}

/**
 * Whether dropped files are an ONNX folder rather than a Hugging Face one: an .onnx file and no
 * .safetensors (a Hub folder with both is taken as Hugging Face; its ONNX files can still be
 * opened with the ONNX picker).
 */
export function isOnnxFiles(files: readonly HfFolderFile[]): boolean {
  return files.some((f) => /\.onnx$/i.test(f.path)) && !files.some((f) => /\.safetensors$/i.test(f.path));
}

/** A model file as the page shows it: 'model_q4.onnx (q4)'. */
export function variantLabel(file: string): string {
  const base = file.slice(file.lastIndexOf('/') + 1);
  const m = /^model_(.+)\.onnx$/.exec(base);
  return m ? `${base} (${m[1]})` : base === 'model.onnx' ? `${base} (fp32)` : base;
}

/** One line for the page: name, architecture and shape from config.json, the model files. */
export function describeOnnxFolder(info: OnnxFolderInfo): string {
  const shape =
    info.layers !== null && info.hidden !== null
      ? ` (${info.layers} layers × ${info.hidden}${info.heads !== null ? `, ${info.heads} heads / ${info.kvHeads ?? info.heads} KV heads` : ''}${info.vocab !== null ? `, vocabulary ${info.vocab}` : ''})`
      : '';
  const context = info.maxContext !== null ? `, context ${info.maxContext}` : '';
  const files = info.variants.map((v) => `${v.file.slice(v.file.lastIndexOf('/') + 1)} ${formatGiB(v.bytes)}`).join(', ');
  return `${info.name}: ONNX, ${info.architecture ?? 'architecture not in config.json'}${shape}${context}; ${files}`;
}

/** Why the Playground and the Bench cannot run the folder (they need its tokenizer and context length), or null. */
export function onnxFolderProblem(info: Pick<OnnxFolderInfo, 'name' | 'tokenizer' | 'maxContext'>): string | null {
  if (!info.tokenizer) return `${info.name} has no tokenizer.json, so text cannot be turned into its token ids.`;
  if (info.maxContext === null) return `${info.name}/config.json gives no context length (max_position_embeddings), which sizes the prompt.`;
  return null;
}
