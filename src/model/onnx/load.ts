// An ONNX causal-LM folder opened for generation: the model file (onnx/model.onnx or the asked-for
// variant, with its external data when it has some) in onnxruntime-web, config.json, the tokenizer
// (src/core/tokenizer/hf.ts, as for Hugging Face folders) and the ids generation stops at
// (generation_config.json's eos_token_id, else config.json's, else the tokenizer's). The same
// in Node (src/model/hf/node.ts's nodeFolder) and in the browser (files.ts's filesFolder).
import type { HfTokenizer } from '../../core/tokenizer/hf.ts';
import { loadHfTokenizer, readGenerationConfig, readJsonFile, stopTokenIds, type ModelFiles } from '../hf/files.ts';
import { chooseOnnxFile, OnnxLayoutError } from './layout.ts';
import { OnnxDecoder, type ExecutionProvider } from './session.ts';
import { TEMPLATE_FILE, templateFromJson } from '../templateFile.ts';
import type { PromptTemplate } from '../../core/templates/index.ts';

export interface LoadOnnxOptions {
  /** A variant of the model ('fp32', 'fp16', 'q4', 'quantized', … or a file name); default: see layout.ts's chooseOnnxFile. */
  variant?: string;
  executionProvider?: ExecutionProvider;
}

export interface LoadedOnnxModel {
  /** The folder's name (the last part of its label). */
  name: string;
  /** The model file in the folder (e.g. 'onnx/model.onnx'). */
  file: string;
  decoder: OnnxDecoder;
  /** config.json as parsed (null when the folder has none). */
  rawConfig: Record<string, unknown> | null;
  /** null when the folder has no tokenizer.json. */
  tokenizer: HfTokenizer | null;
  hasChatTemplate: boolean;
  stopIds: number[];
  /** config.json's max_position_embeddings (n_positions for GPT-2), when it says. */
  contextLength: number | null;
  /** The prompt template our checkpoint was trained with (lwm_template.json), when the folder keeps one. */
  template?: PromptTemplate;
}

const positiveInt = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);

/** KV heads and head width from config.json, for graphs that leave them symbolic (transformers.js reads them the same way). */
function kvShape(cfg: Record<string, unknown> | null): { kvHeads?: number; headDim?: number } {
  if (!cfg) return {};
  const heads = positiveInt(cfg.num_attention_heads) ?? positiveInt(cfg.n_head);
  const width = positiveInt(cfg.hidden_size) ?? positiveInt(cfg.n_embd);
  return { kvHeads: positiveInt(cfg.num_key_value_heads) ?? heads, headDim: positiveInt(cfg.head_dim) ?? (heads && width ? width / heads : undefined) };
}

export async function loadOnnxModel(files: ModelFiles, options: LoadOnnxOptions = {}): Promise<LoadedOnnxModel> {
  const list = files.list();
  const file = chooseOnnxFile(list, files.label, options.variant);
  const raw = await readJsonFile(files, 'config.json', true);
  if (raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) throw new OnnxLayoutError(`${files.label}/config.json: must be a JSON object`);
  const rawConfig = raw as Record<string, unknown> | null;
  const tokenizer = list.includes('tokenizer.json') ? await loadHfTokenizer(files) : null;
  const generation = await readGenerationConfig(files);
  const templateJson = await readJsonFile(files, TEMPLATE_FILE, true);
  const template = templateJson === null ? undefined : templateFromJson(templateJson, `${files.label}/${TEMPLATE_FILE}`);
  // External data: `model.onnx_data` (and onnxruntime's numbered `model.onnx_data_1`, …) beside the model, named as the graph names them.
  const dir = file.slice(0, file.lastIndexOf('/') + 1);
  const externalData = await Promise.all(
    list
      .filter((p) => p.startsWith(`${file}_data`) && !p.slice(dir.length).includes('/'))
      .map(async (p) => ({ path: p.slice(dir.length), data: await files.read(p) })),
  );
  const decoder = await OnnxDecoder.create(await files.read(file), {
    label: `${files.label}/${file}`,
    ...(externalData.length && { externalData }),
    executionProvider: options.executionProvider,
    ...kvShape(rawConfig),
  });
  return {
    name: files.label.split(/[\\/]/).filter(Boolean).at(-1) ?? files.label,
    file,
    decoder,
    rawConfig,
    tokenizer,
    hasChatTemplate: (tokenizer?.chatTemplateNames.length ?? 0) > 0,
    stopIds: stopTokenIds(generation, rawConfig, tokenizer),
    contextLength: positiveInt(rawConfig?.max_position_embeddings) ?? positiveInt(rawConfig?.n_positions) ?? null,
    ...(template && { template }),
  };
}
