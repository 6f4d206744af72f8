// ONNX causal-LM folders in the worker: the 'onnx-inspect' job (the folder's model files and what
// its config.json and tokenizer say, before any model is opened) and opening a folder's chosen
// model file in onnxruntime-web as a backend for the Playground's 'generate' job and the Bench.
// Neither needs the worker's GPU device: onnxruntime-web runs on its own WebGPU execution provider
// where the page has WebGPU, else on WASM (the page says which: src/jobs/onnxFolder.ts). The page
// posts the folder's File objects; the loaders (src/model/onnx/*, src/model/hf/files.ts) run here.
// Every error a folder can cause reaches the page as a message naming the file at fault.
import { filesFolder, HfFolderError, loadHfTokenizer, readJsonFile, type ModelFiles } from '../model/hf/files.ts';
import { chooseOnnxFile, onnxModelFiles } from '../model/onnx/layout.ts';
import { onnxFolderError } from '../backends/folders.ts';
import type { HfFolderFile } from '../train/hfFolder.ts';
import { UserFacingError } from '../train/context.ts';
import type { OnnxFolderInfo, OnnxInspectJobSpec } from './onnxFolder.ts';

/** The folder of the page's files (paths relative to the picked folder). */
export function onnxFolderOf(files: readonly HfFolderFile[] | undefined, name?: string): ModelFiles {
  if (!files?.length) throw new UserFacingError('No files were given: pick an ONNX model folder (onnx/model.onnx, config.json, tokenizer.json).');
  return filesFolder(files, name);
}

const count = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null);

/** config.json's shape of the model, as far as it says (GPT-2 names as well as Llama's). */
function configSummary(c: Record<string, unknown>): Pick<OnnxFolderInfo, 'architecture' | 'layers' | 'hidden' | 'heads' | 'kvHeads' | 'vocab' | 'maxContext'> {
  const archs = Array.isArray(c.architectures) ? c.architectures.filter((a): a is string => typeof a === 'string') : [];
  const heads = count(c.num_attention_heads) ?? count(c.n_head);
  return {
    architecture: archs[0] ?? (typeof c.model_type === 'string' ? c.model_type : null),
    layers: count(c.num_hidden_layers) ?? count(c.n_layer),
    hidden: count(c.hidden_size) ?? count(c.n_embd),
    heads,
    kvHeads: count(c.num_key_value_heads) ?? heads,
    vocab: count(c.vocab_size),
    maxContext: count(c.max_position_embeddings) ?? count(c.n_positions),
  };
}

/** A model file's bytes with its external data beside it (model.onnx_data, model.onnx_data_1, …). */
async function variantBytes(files: ModelFiles, file: string): Promise<number> {
  let n = await files.size(file);
  for (const p of files.list()) if (p.startsWith(`${file}_data`)) n += await files.size(p);
  return n;
}

/** What an ONNX folder holds, from its listing, config.json and tokenizer files (no model is opened). */
export async function inspectOnnxFolder(files: ModelFiles): Promise<OnnxFolderInfo> {
  const label = files.label;
  try {
    const list = files.list();
    const defaultFile = chooseOnnxFile(list, label);
    const raw = await readJsonFile(files, 'config.json');
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new HfFolderError(`${label}/config.json: must be a JSON object`);
    const tokenizer = list.includes('tokenizer.json') ? await loadHfTokenizer(files) : null;
    const variants = await Promise.all(onnxModelFiles(list).map(async (file) => ({ file, bytes: await variantBytes(files, file) })));
    return {
      name: label,
      variants,
      defaultFile,
      ...configSummary(raw as Record<string, unknown>),
      files: list.length,
      tokenizer: tokenizer !== null,
      chatTemplate: (tokenizer?.chatTemplateNames.length ?? 0) > 0,
    };
  } catch (e) {
    throw onnxFolderError(e, label);
  }
}

/** The 'onnx-inspect' job: the page shows the result (and the variants to choose from) before the user loads the folder. */
export function runOnnxInspectJob(spec: OnnxInspectJobSpec): Promise<OnnxFolderInfo> {
  return inspectOnnxFolder(onnxFolderOf(spec.files, spec.name));
}
