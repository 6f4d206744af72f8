// Hugging Face model folders in the worker: the 'hf-inspect' job (what a picked folder holds and
// whether it fits the adapter, from config.json and the safetensors headers alone: nothing else is
// read) and loading a folder as a backend for the Playground's 'generate' job and the Bench. The
// page only posts the folder's File objects (src/train/hfFolder.ts); the loader
// (src/model/hf/*) runs here. Every error a folder can cause reaches the page as a message that
// names the file at fault.
import { HfPromptError, openHfBackend, type HfBackend } from '../backends/hf.ts';
import { HfTokenizerError } from '../core/tokenizer/hf.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { SafetensorsError } from '../model/safetensors.ts';
import { configFromHf, HfConfigError } from '../model/hf/config.ts';
import { filesFolder, HfFolderError, indexWeights, readJsonFile, type ModelFiles } from '../model/hf/files.ts';
import { HfMemoryError, limitsFromReport, loadHfModel } from '../model/hf/load.ts';
import { checkFolderMemory, type FitReport, type RunMode, type RunShape } from '../model/hf/memory.ts';
import { UserFacingError, type JobContext } from './host.ts';
import { DEFAULT_HF_CONTEXT, settingsProblem, type HfFit, type HfFolderFile, type HfFolderInfo, type HfInspectJobSpec, type HfRunSettings, type HfTrainShape } from './hfFolder.ts';

/** The folder of the page's files (paths relative to the picked folder). */
export function folderOf(files: readonly HfFolderFile[] | undefined, name?: string): ModelFiles {
  if (!files?.length) throw new UserFacingError('No files were given: pick a Hugging Face model folder (config.json, *.safetensors, tokenizer.json).');
  return filesFolder(files, name);
}

/** A folder's error as the user reads it: config.json's errors get the folder's name in front (the others name their file already). */
export function folderError(e: unknown, label: string): Error {
  if (e instanceof UserFacingError) return e;
  if (e instanceof HfConfigError) return new UserFacingError(`${label}/${e.message}`);
  if (e instanceof HfFolderError || e instanceof HfMemoryError || e instanceof SafetensorsError || e instanceof HfPromptError) return new UserFacingError(e.message);
  if (e instanceof HfTokenizerError) return new UserFacingError(`${label}/tokenizer.json: ${e.message}`);
  if (e instanceof RangeError && /config\.json/.test(e.message)) return new UserFacingError(e.message);
  return e as Error;
}

function bytesBudget(s: HfRunSettings): number {
  const problem = settingsProblem(s);
  if (problem) throw new UserFacingError(problem);
  return Math.floor(s.memoryGiB * 2 ** 30);
}

/** The context a run gets: the one asked, within the model's maximum; else the maximum up to DEFAULT_HF_CONTEXT. */
export function runContext(s: HfRunSettings, maxContext: number): number {
  return Math.min(maxContext, s.context ?? DEFAULT_HF_CONTEXT);
}

export function fitOf(r: FitReport, budget: number): HfFit {
  const e = r.estimate;
  return {
    fits: r.fits,
    total: e.total,
    weights: e.weights,
    kvCache: e.kvCache,
    activations: e.activations,
    adapters: e.adapters,
    gradients: e.gradients,
    optimizer: e.optimizer,
    budget,
    message: r.message,
    alternatives: r.alternatives.map((a) => ({ change: a.change, total: a.total, context: a.run.context })),
  };
}

async function hasChatTemplate(files: ModelFiles): Promise<boolean> {
  if (files.list().includes('chat_template.jinja')) return true;
  const config = (await readJsonFile(files, 'tokenizer_config.json', true)) as Record<string, unknown> | null;
  return !!config && config.chat_template !== undefined && config.chat_template !== null;
}

/** The memory check's run: inference with one sequence, or training of `train`'s shape. */
export function runShape(train: HfTrainShape | undefined, context: number): RunShape {
  if (!train) return { mode: { kind: 'inference' }, context, batch: 1 };
  const mode: RunMode = train.tuning === 'lora' ? { kind: 'lora', rank: train.rank ?? 8 } : { kind: 'full' };
  return { mode, context, batch: train.batch, ...(train.generates && { generates: true }) };
}

/** What a folder holds and whether the run fits, from config.json and the safetensors headers (no tensor is read). */
export async function inspectHfFolder(files: ModelFiles, settings: HfRunSettings, limits: { maxBufferSize: number; maxStorageBufferBindingSize: number }, train?: HfTrainShape): Promise<HfFolderInfo> {
  const label = files.label;
  try {
    const budget = bytesBudget(settings);
    const raw = await readJsonFile(files, 'config.json');
    const hf = configFromHf(raw);
    const weights = await indexWeights(files);
    const c = hf.config;
    const context = runContext(settings, c.contextLength);
    const report = checkFolderMemory({ config: raw, files, weights }, runShape(train, context), limitsFromReport({ limits }, budget));
    const list = files.list();
    let weightBytes = 0;
    for (const f of weights.files) weightBytes += await files.size(f);
    return {
      name: label,
      architecture: hf.architecture,
      parameters: weights.tensors.reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0),
      layers: c.layers,
      hidden: c.dModel,
      heads: c.heads,
      kvHeads: c.kvHeads ?? c.heads,
      vocab: c.vocabSize,
      maxContext: c.contextLength,
      context,
      dtypes: [...new Set(weights.tensors.map((t) => t.dtype))].sort(),
      weightBytes,
      files: list.length,
      tokenizer: list.includes('tokenizer.json'),
      chatTemplate: await hasChatTemplate(files),
      fit: fitOf(report, budget),
    };
  } catch (e) {
    throw folderError(e, label);
  }
}

/** The 'hf-inspect' job: the page shows the result before the user loads the folder. */
export async function runHfInspectJob(spec: HfInspectJobSpec, ctx: JobContext): Promise<HfFolderInfo> {
  const files = folderOf(spec.files, spec.name);
  return inspectHfFolder(files, spec.settings, ctx.rt.report.limits, spec.train);
}

/** Loads a folder onto `rt` as a backend (HfMemoryError's refusal, with what would fit, when it does not fit). */
export async function loadHfBackend(rt: GpuRuntime, files: ModelFiles, settings: HfRunSettings, name?: string): Promise<HfBackend> {
  try {
    const budget = bytesBudget(settings);
    const raw = await readJsonFile(files, 'config.json');
    const context = runContext(settings, configFromHf(raw).config.contextLength);
    const model = await loadHfModel(files, { limits: limitsFromReport(rt.report, budget), context });
    return openHfBackend(rt, model, { context, ...(name ? { name } : {}) });
  } catch (e) {
    throw folderError(e, files.label);
  }
}
