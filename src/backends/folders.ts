// Model folders as backends: a Hugging Face folder loaded onto our WebGPU engine, an ONNX folder
// opened in onnxruntime-web. The folder's files come from wherever the caller found them (File
// objects a page picked, a directory in Node: src/model/hf/files.ts's ModelFiles); every error a
// folder can cause becomes a BackendError that names the file at fault.
import type { GpuRuntime } from '../gpu/runtime.ts';
import { ChatWrapError } from '../core/templates/chatWrap.ts';
import { HfTokenizerError } from '../core/tokenizer/hf.ts';
import { DEFAULT_FOLDER_CONTEXT, folderSettingsProblem, type FolderRunSettings, type OnnxExecution } from '../core/backendRef.ts';
import type { LwmBackend } from '../core/backend.ts';
import { configFromHf, HfConfigError } from '../model/hf/config.ts';
import { HfFolderError, readJsonFile, type ModelFiles } from '../model/hf/files.ts';
import { HfMemoryError, limitsFromReport, loadHfModel } from '../model/hf/load.ts';
import { OnnxLayoutError } from '../model/onnx/layout.ts';
import { loadOnnxModel, type LoadedOnnxModel } from '../model/onnx/load.ts';
import { SafetensorsError } from '../core/model/safetensors.ts';
import { TemplateFileError } from '../model/templateFile.ts';
import { BackendError } from './errors.ts';
import { HfPromptError, openHfBackend, type HfBackend } from './hf.ts';
import { onnxBackend } from './onnx.ts';

/** A folder's error as the user reads it: config.json's errors get the folder's name in front (the others name their file already). */
export function folderError(e: unknown, label: string): Error {
  if (e instanceof BackendError) return e;
  if (e instanceof HfConfigError) return new BackendError(`${label}/${e.message}`, 'folder');
  if (e instanceof HfFolderError || e instanceof HfMemoryError || e instanceof SafetensorsError || e instanceof HfPromptError || e instanceof TemplateFileError)
    return new BackendError(e.message, 'folder');
  if (e instanceof HfTokenizerError) return new BackendError(`${label}/tokenizer.json: ${e.message}`, 'folder');
  if (e instanceof RangeError && /config\.json/.test(e.message)) return new BackendError(e.message, 'folder');
  return e as Error;
}

/** An ONNX folder's error as the user reads it (the layout's errors name the folder or file already). */
export function onnxFolderError(e: unknown, label: string): Error {
  if (e instanceof OnnxLayoutError || e instanceof TemplateFileError || e instanceof ChatWrapError) return new BackendError(e.message, 'folder');
  return folderError(e, label);
}

/** The context a run gets: the one asked, within the model's maximum; else the maximum up to DEFAULT_FOLDER_CONTEXT. */
export function runContext(s: FolderRunSettings, maxContext: number): number {
  return Math.min(maxContext, s.context ?? DEFAULT_FOLDER_CONTEXT);
}

/** The settings' GPU memory in bytes (a BackendError when the settings are not a run's). */
export function bytesBudget(s: FolderRunSettings): number {
  const problem = folderSettingsProblem(s);
  if (problem) throw new BackendError(problem, 'settings');
  return Math.floor(s.memoryGiB * 2 ** 30);
}

/** Loads a folder onto `rt` as a backend (HfMemoryError's refusal, with what would fit, when it does not fit). */
export async function loadHfBackend(rt: GpuRuntime, files: ModelFiles, settings: FolderRunSettings, name?: string): Promise<HfBackend> {
  try {
    const budget = bytesBudget(settings);
    const raw = await readJsonFile(files, 'config.json');
    const context = runContext(settings, configFromHf(raw).config.contextLength);
    const weights = settings.weights ?? 'f32';
    const model = await loadHfModel(files, { limits: limitsFromReport(rt.report, budget), context, weights });
    return openHfBackend(rt, model, { context, weights, ...(name ? { name } : {}) });
  } catch (e) {
    throw folderError(e, files.label);
  }
}

export interface OnnxOpened {
  model: LoadedOnnxModel;
  backend: LwmBackend;
  /** config.json's context. */
  context: number;
}

/** Opens `file` of a folder in onnxruntime-web (`execution`: see OnnxExecution) as a backend named `name`. */
export async function openOnnxFolder(files: ModelFiles, options: { file?: string; execution: OnnxExecution; name?: string }): Promise<OnnxOpened> {
  let model: LoadedOnnxModel | null = null;
  try {
    const variant = options.file === undefined ? undefined : options.file.slice(options.file.lastIndexOf('/') + 1);
    model = await loadOnnxModel(files, { ...(variant !== undefined && { variant }), executionProvider: options.execution });
    if (!model.tokenizer) throw new BackendError(`${files.label}: has no tokenizer.json, so text cannot be turned into its token ids`, 'folder');
    if (model.contextLength === null)
      throw new BackendError(`${files.label}/config.json: gives no context length (max_position_embeddings), which sizes the prompt`, 'folder');
    return { model, backend: onnxBackend(model, options.name ?? `onnx:${model.name}`), context: model.contextLength };
  } catch (e) {
    model?.decoder.dispose();
    throw onnxFolderError(e, files.label);
  }
}
