// `lwm export` for runs of a pretrained model (`lwm train --from HF_FOLDER`): a full fine-tune's
// checkpoint (it carries its base's files) or a LoRA adapter folder, whose adapter is merged into
// the base's weights (W + alpha/r · B·A) or, with --unmerged, written as a clean PEFT folder.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { hfTrainedTemplate } from '../../backends/checkpoint.ts';
import { loadCheckpoint } from '../../core/model/checkpoint.ts';
import { peftFolderFiles, readPeftAdapter } from '../../model/hf/adapter.ts';
import { baseFromJson, openHfBase, readHfBase, type HfBase } from '../../model/hf/base.ts';
import { hfLlamaExportFiles } from '../../model/hf/export.ts';
import { nodeFolder } from '../../model/hf/node.ts';
import { mergeLora } from '../../model/lora.ts';
import { readSafetensors } from '../../core/model/safetensors.ts';
import { TEMPLATE_FILE, templateFileBytes } from '../../model/templateFile.ts';

type Files = { name: string; bytes: Uint8Array }[];

/** Export needs no GPU: the base is read whatever its size. */
const CPU_LIMITS = { maxBufferSize: 2 ** 52, maxStorageBufferBindingSize: 2 ** 52, memoryBudget: 2 ** 52, shaderF16: false };

/** Whether CKPT is a LoRA adapter folder (adapter_config.json inside). */
export function isAdapterFolder(path: string): boolean {
  return existsSync(join(path, 'adapter_config.json'));
}

/** A checkpoint of ours that carries a Hugging Face base (a full fine-tune of one); null otherwise. */
export function hfCheckpointBase(bytes: Uint8Array): HfBase | null {
  const meta = readSafetensors(bytes).metadata.hf_base;
  return meta ? baseFromJson(meta) : null;
}

/** A full fine-tune's checkpoint as a Llama / Qwen folder, with the template it trained with (lwm_template.json). */
export function fullFineTuneFiles(bytes: Uint8Array, source: string): Files {
  const ck = loadCheckpoint(bytes, { source });
  return hfLlamaExportFiles(ck.config, ck.params, baseFromJson(ck.extraMetadata!.hf_base), hfTrainedTemplate(ck.extraMetadata));
}

/**
 * Where an adapter's base is: base_model_name_or_path as a path from here (as PEFT reads it),
 * else from the adapter's folder.
 */
export function adapterBaseDir(dir: string, base: string): string {
  return existsSync(join(resolve(base), 'config.json')) ? resolve(base) : resolve(dir, base);
}

/**
 * adapterBaseDir, or, when no such folder is on disk and the name is a Hugging Face Hub id (as
 * PEFT writes it), that model's folder in the Hugging Face cache, downloaded if need be.
 */
export async function adapterBase(dir: string, base: string, log?: (line: string) => void): Promise<string> {
  const local = adapterBaseDir(dir, base);
  if (existsSync(local)) return local;
  const { modelPath } = await import('../../backends/node.ts');
  const found = await modelPath(base, log ? { log } : {});
  return found === base ? local : found;
}

/**
 * A LoRA adapter folder (ours or PEFT's): merged into its base (a whole model folder), or unmerged
 * (PEFT's folder, the adapter alone, plus the base's tokenizer files). Ours also keeps the template
 * the run trained with (its adapter_model.safetensors carries the run's spec) as lwm_template.json.
 */
export async function adapterExportFiles(dir: string, unmerged: boolean, log?: (line: string) => void): Promise<Files> {
  const adapterConfig = JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8')) as { base_model_name_or_path?: string };
  const baseDir = await adapterBase(dir, adapterConfig.base_model_name_or_path ?? '', log);
  const { base, params } = await readHfBase(await nodeFolder(baseDir), { limits: CPU_LIMITS }, adapterConfig.base_model_name_or_path ?? baseDir);
  const config = openHfBase(base).config;
  const weights = new Uint8Array(readFileSync(join(dir, 'adapter_model.safetensors')));
  const a = readPeftAdapter(config, adapterConfig, weights, dir);
  const template = hfTrainedTemplate(readSafetensors(weights, `${dir}/adapter_model.safetensors`).metadata);
  if (!unmerged) return hfLlamaExportFiles(config, mergeLora(params, a.layout, a.lora), base, template);
  const tokenizerFiles = Object.entries(base.files).filter(([n]) => n !== 'config.json' && n !== 'generation_config.json');
  return [
    ...peftFolderFiles({ config, settings: a.settings, baseModel: a.baseModel, lora: a.lora }),
    ...tokenizerFiles.map(([name, text]) => ({ name, bytes: new TextEncoder().encode(text) })),
    ...(template ? [{ name: TEMPLATE_FILE, bytes: templateFileBytes(template) }] : []),
  ];
}
