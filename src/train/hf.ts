// Hugging Face model folders in the worker: the 'hf-inspect' job (what a picked folder holds and
// whether it fits the adapter, from config.json and the safetensors headers alone: nothing else is
// read) and loading a folder as a backend for the Playground's 'generate' job and the Bench. The
// page only posts the folder's File objects (src/train/hfFolder.ts); the loader
// (src/model/hf/*) runs here. Every error a folder can cause reaches the page as a message that
// names the file at fault.
import { bytesBudget, folderError, runContext } from '../backends/folders.ts';
import { configFromHf } from '../model/hf/config.ts';
import { filesFolder, indexWeights, readJsonFile, type ModelFiles } from '../model/hf/files.ts';
import { limitsFromReport } from '../model/hf/load.ts';
import { checkFolderMemory, type FitReport, type RunMode, type RunShape } from '../model/hf/memory.ts';
import { UserFacingError, type JobContext } from './context.ts';
import type { HfFit, HfFolderFile, HfFolderInfo, HfInspectJobSpec, HfRunSettings, HfTrainShape } from './hfFolder.ts';

/** The folder of the page's files (paths relative to the picked folder). */
export function folderOf(files: readonly HfFolderFile[] | undefined, name?: string): ModelFiles {
  if (!files?.length) throw new UserFacingError('No files were given: pick a Hugging Face model folder (config.json, *.safetensors, tokenizer.json).');
  return filesFolder(files, name);
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

/** The memory check's run: inference with one sequence (its weights f32, or f16 when asked), or training of `train`'s shape (a LoRA base may be f16). */
export function runShape(train: HfTrainShape | undefined, context: number, weights?: HfRunSettings['weights']): RunShape {
  if (!train) return { mode: { kind: 'inference' }, context, batch: 1, ...(weights === 'f16' && { weightBytes: 2 as const }) };
  const mode: RunMode = train.tuning === 'lora' ? { kind: 'lora', rank: train.rank ?? 8 } : { kind: 'full' };
  const half = train.tuning === 'lora' && train.baseWeights === 'f16';
  return { mode, context, batch: train.batch, ...(train.generates && { generates: true }), ...(half && { weightBytes: 2 as const }) };
}

/** What a folder holds and whether the run fits, from config.json and the safetensors headers (no tensor is read). */
export async function inspectHfFolder(
  files: ModelFiles,
  settings: HfRunSettings,
  limits: { maxBufferSize: number; maxStorageBufferBindingSize: number },
  train?: HfTrainShape,
): Promise<HfFolderInfo> {
  const label = files.label;
  try {
    const budget = bytesBudget(settings);
    const raw = await readJsonFile(files, 'config.json');
    const hf = configFromHf(raw);
    const weights = await indexWeights(files);
    const c = hf.config;
    const context = runContext(settings, c.contextLength);
    const report = checkFolderMemory({ config: raw, files, weights }, runShape(train, context, settings.weights), limitsFromReport({ limits }, budget));
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
