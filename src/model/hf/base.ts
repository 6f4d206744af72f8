// A Hugging Face folder as the start of a training run (`lwm train --from HF_FOLDER`): its small
// text files (config, tokenizer, chat template, generation config), kept whole so a checkpoint can
// carry them and an export can write them back, and its weights in our layout.
import { HfTokenizer } from '../../core/tokenizer/hf.ts';
import type { ModelConfig } from '../../core/model/config.ts';
import { configFromHf } from './config.ts';
import { parseGenerationConfig, stopTokenIds, type ModelFiles } from './files.ts';
import { loadHfModel, type LoadHfOptions } from './load.ts';

/** The text files a run keeps from its base folder (config.json and tokenizer.json are required). */
export const BASE_TEXT_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'chat_template.jinja', 'generation_config.json'] as const;

export interface HfBase {
  /** The folder it came from: base_model_name_or_path in an adapter's config. */
  name: string;
  /** Its text files by name (BASE_TEXT_FILES that it has). */
  files: Record<string, string>;
}

export interface OpenedBase {
  config: ModelConfig;
  tokenizer: HfTokenizer;
  /** Where generation stops (generation_config.json's eos ids, else config.json's, else the tokenizer's). */
  stopIds: number[];
}

/** Reads a folder's text files and weights (memory checked for `options.mode` first). */
export async function readHfBase(files: ModelFiles, options: LoadHfOptions, name = files.label): Promise<{ base: HfBase; params: Float32Array }> {
  const loaded = await loadHfModel(files, options);
  if (!loaded.tokenizer) throw new Error(`${files.label}: has no tokenizer.json; training needs the model's tokenizer`);
  const texts: Record<string, string> = {};
  const list = files.list();
  for (const f of BASE_TEXT_FILES) if (list.includes(f)) texts[f] = new TextDecoder().decode(await files.read(f));
  return { base: { name, files: texts }, params: loaded.params };
}

/** The config, tokenizer and stop ids of a base from its text files alone. */
export function openHfBase(base: HfBase): OpenedBase {
  const f = base.files;
  const raw = JSON.parse(f['config.json'] ?? 'null');
  const config = configFromHf(raw).config;
  const tokenizer = HfTokenizer.fromJSON(
    JSON.parse(f['tokenizer.json'] ?? 'null'),
    JSON.parse(f['tokenizer_config.json'] ?? '{}'),
    f['chat_template.jinja'] !== undefined ? { chatTemplate: f['chat_template.jinja'] } : {},
  );
  const generation = f['generation_config.json'] !== undefined ? parseGenerationConfig(JSON.parse(f['generation_config.json'])) : null;
  return { config, tokenizer, stopIds: stopTokenIds(generation, raw, tokenizer) };
}

/** A base as one metadata string (a checkpoint's `hf_base`), and back. */
export function baseToJson(base: HfBase): string {
  return JSON.stringify({ name: base.name, files: base.files });
}

export function baseFromJson(text: string): HfBase {
  const j = JSON.parse(text) as HfBase;
  if (typeof j?.name !== 'string' || typeof j.files !== 'object' || typeof j.files['config.json'] !== 'string')
    throw new Error('hf_base metadata is not a base model description');
  return { name: j.name, files: j.files };
}
