// A Hugging Face model folder loaded for our engine, in one call: config.json mapped onto our
// ModelConfig (config.ts), the tokenizer and stop ids (files.ts), the memory the run needs checked
// against the adapter's limits from the safetensors headers alone (memory.ts), and only then the
// tensors read and laid out as our flat parameters (weights.ts). The same in Node (node.ts's
// nodeFolder) and in the browser (files.ts's filesFolder). An export of a fine-tune of ours also
// holds lwm_template.json (../templateFile.ts): the template it trained with, which the Hugging
// Face backend wraps in the model's chat format to prompt it as training did.
import type { PromptTemplate } from '../../core/templates/index.ts';
import type { HfTokenizer } from '../../core/tokenizer/hf.ts';
import type { ModelConfig } from '../../core/model/config.ts';
import { configFromHf, type HfModelConfig } from './config.ts';
import { indexWeights, loadHfTokenizer, readGenerationConfig, readJsonFile, readWeights, stopTokenIds, type ModelFiles } from './files.ts';
import { checkFolderMemory, type AdapterLimits, type FitReport, type RunMode } from './memory.ts';
import { TEMPLATE_FILE, templateFromJson } from '../templateFile.ts';
import { paramsFromHf } from './weights.ts';
import type { WeightStorage } from '../halfWeights.ts';

/** The model does not fit the adapter; the message says what it needs and what would fit. */
export class HfMemoryError extends Error {
  constructor(readonly report: FitReport) {
    super(report.message);
    this.name = 'HfMemoryError';
  }
}

export interface LoadHfOptions {
  /** What the adapter allows (limitsFromReport turns a runtime's report and a budget into these). */
  limits: AdapterLimits;
  /**
   * Tokens per sequence the run needs (prompt + generated tokens), or a function of the folder's
   * tokenizer (null when it has none) giving it, so a prompt can be counted before the check.
   * Default: config.json's max_position_embeddings.
   */
  context?: number | ((tokenizer: HfTokenizer | null) => number);
  /** Sequences at once (default 1). */
  batch?: number;
  /** Default inference. */
  mode?: RunMode;
  /** Training that also generates (GSPO rollouts): a KV cache beside the activations. */
  generates?: boolean;
  /** How the weights will be held on the GPU (default f32): f16 halves the matrices' bytes in the memory check. */
  weights?: WeightStorage;
}

export interface LoadedHfModel {
  /** The folder's name (the last part of its label). */
  name: string;
  config: ModelConfig;
  hf: HfModelConfig;
  /** config.json as parsed. */
  rawConfig: unknown;
  /** Our flat parameter layout (src/core/model/params.ts), f32. */
  params: Float32Array;
  /** null when the folder has no tokenizer files. */
  tokenizer: HfTokenizer | null;
  hasChatTemplate: boolean;
  /** Where generation stops: generation_config.json's eos ids, else config.json's, else the tokenizer's. */
  stopIds: number[];
  /** The memory check that let it load. */
  fit: FitReport;
  /** The template a fine-tune of ours trained with (lwm_template.json, unwrapped), when the folder keeps one. */
  template?: PromptTemplate;
}

const TOKENIZER_FILES = ['tokenizer.json', 'vocab.json', 'merges.txt', 'tokenizer.model'];

/** AdapterLimits from a runtime's adapter report and a device-memory budget (WebGPU reports none). Weights load as f32. */
export function limitsFromReport(
  report: { limits: Pick<AdapterLimits, 'maxBufferSize' | 'maxStorageBufferBindingSize'> },
  memoryBudget: number,
): AdapterLimits {
  return { maxBufferSize: report.limits.maxBufferSize, maxStorageBufferBindingSize: report.limits.maxStorageBufferBindingSize, memoryBudget };
}

/**
 * Loads a folder: config.json, the tokenizer (when there is one), generation_config.json and the
 * safetensors headers; checks the run's memory (HfMemoryError when it does not fit, before any
 * tensor is read); then reads the weights into our layout.
 */
export async function loadHfModel(files: ModelFiles, options: LoadHfOptions): Promise<LoadedHfModel> {
  const rawConfig = await readJsonFile(files, 'config.json');
  const hf = configFromHf(rawConfig);
  const list = files.list();
  const tokenizer = TOKENIZER_FILES.some((f) => list.includes(f)) ? await loadHfTokenizer(files) : null;
  const generation = await readGenerationConfig(files);
  // Read (and checked) before the weights: a broken file is refused at once, naming it.
  const templateJson = await readJsonFile(files, TEMPLATE_FILE, true);
  const template = templateJson === null ? undefined : templateFromJson(templateJson, `${files.label}/${TEMPLATE_FILE}`);
  const weights = await indexWeights(files);
  const context = typeof options.context === 'function' ? options.context(tokenizer) : (options.context ?? hf.config.contextLength);
  const run = {
    mode: options.mode ?? { kind: 'inference' },
    context,
    batch: options.batch ?? 1,
    ...(options.generates && { generates: true }),
    ...(options.weights === 'f16' && { weightBytes: 2 as const }),
  };
  const fit = checkFolderMemory({ config: rawConfig, files, weights }, run, options.limits);
  if (!fit.fits) throw new HfMemoryError(fit);
  const params = paramsFromHf(hf.config, await readWeights(files, weights));
  return {
    name: files.label.split(/[\\/]/).filter(Boolean).at(-1) ?? files.label,
    config: hf.config,
    hf,
    rawConfig,
    params,
    tokenizer,
    hasChatTemplate: (tokenizer?.chatTemplateNames.length ?? 0) > 0,
    stopIds: stopTokenIds(generation, rawConfig, tokenizer),
    fit,
    ...(template && { template }),
  };
}
