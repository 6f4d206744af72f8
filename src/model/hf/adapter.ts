// LoRA adapters in PEFT's folder layout, and the checkpoint of a LoRA run:
//
//   adapter_model.safetensors   PEFT's tensor names (lora.ts), F32; a run's checkpoint also holds
//                               its Adam state as optimizer.m.<name> / optimizer.v.<name> /
//                               optimizer.step (checkpointFiles moves those to a side file, as for
//                               our full checkpoints) and our metadata (config, step, stage, spec,
//                               the base model's files)
//   adapter_config.json         peft_type LORA, task_type CAUSAL_LM, r, lora_alpha,
//                               target_modules, base_model_name_or_path, ...
//
// PEFT loads the folder (`PeftModel.from_pretrained(base, folder)`) and ignores our metadata;
// scripts/fixtures/peft_check.py checks that it gives our logits, and that a PEFT-written adapter
// reads back here.
import type { ModelConfig } from '../../core/model/config.ts';
import { configFromJson, configToJson } from '../../core/model/checkpoint.ts';
import { loraFromPeft, loraLayout, loraToPeft, settingsFromAdapterConfig, adapterConfigJson, LoraError, type LoraLayout, type LoraSettings } from '../lora.ts';
import { readSafetensors, tensorToF32, tensorToInts, writeSafetensors, type TensorToWrite } from '../../core/model/safetensors.ts';

export const LORA_CHECKPOINT_FORMAT = 'lwm-studio-lora/1';

export interface LoraCheckpoint {
  config: ModelConfig;
  settings: LoraSettings;
  /** base_model_name_or_path: the folder the adapter was trained on. */
  baseModel: string;
  /** The adapter, flat in loraLayout(config, settings)'s layout. */
  lora: Float32Array;
  step: number;
  optimizer?: { m: Float32Array; v: Float32Array; step: number };
  extraMetadata?: Record<string, string>;
}

const RESERVED = ['format', 'lwm_format', 'config', 'step', 'adapter_config'];

/** A LoRA run's checkpoint as one safetensors file (adapter + Adam state + metadata). */
export function saveLoraCheckpoint(ck: LoraCheckpoint): Uint8Array {
  const layout = loraLayout(ck.config, ck.settings);
  if (ck.lora.length !== layout.totalSize) throw new LoraError(`the adapter holds ${ck.lora.length} elements; its layout needs ${layout.totalSize}`);
  const metadata: Record<string, string> = {
    format: 'pt',
    lwm_format: LORA_CHECKPOINT_FORMAT,
    config: configToJson(ck.config),
    step: String(ck.step),
    adapter_config: JSON.stringify(adapterConfigJson(ck.settings, ck.baseModel)),
  };
  for (const [k, v] of Object.entries(ck.extraMetadata ?? {})) {
    if (RESERVED.includes(k)) throw new LoraError(`extra metadata key '${k}' is reserved`);
    metadata[k] = v;
  }
  const tensors: TensorToWrite[] = [...loraToPeft(layout, ck.lora)].map(([name, t]) => ({ name, dtype: 'F32', shape: [...t.shape], data: t.data }));
  if (ck.optimizer) {
    for (const which of ['m', 'v'] as const) {
      for (const [name, t] of loraToPeft(layout, ck.optimizer[which]))
        tensors.push({ name: `optimizer.${which}.${name}`, dtype: 'F32', shape: [...t.shape], data: t.data });
    }
    tensors.push({ name: 'optimizer.step', dtype: 'I32', shape: [], data: new Int32Array([ck.optimizer.step]) });
  }
  return writeSafetensors(tensors, metadata);
}

/** Whether these safetensors bytes are a LoRA run's checkpoint (not a full model's). */
export function isLoraCheckpoint(bytes: Uint8Array): boolean {
  try {
    return readSafetensors(bytes).metadata.lwm_format === LORA_CHECKPOINT_FORMAT;
  } catch {
    return false;
  }
}

export function loadLoraCheckpoint(bytes: Uint8Array, source = 'LoRA checkpoint'): LoraCheckpoint {
  const file = readSafetensors(bytes, source);
  const meta = file.metadata;
  if (meta.lwm_format !== LORA_CHECKPOINT_FORMAT)
    throw new LoraError(`${source}: lwm_format is ${JSON.stringify(meta.lwm_format ?? null)}, not '${LORA_CHECKPOINT_FORMAT}'`);
  const config = configFromJson(meta.config ?? '', source);
  const { settings, baseModel } = settingsFromAdapterConfig(JSON.parse(meta.adapter_config ?? 'null'), `${source} (adapter_config)`);
  const layout = loraLayout(config, settings);
  const group = (prefix: string) =>
    new Map(
      file.tensors
        .filter((t) => t.name.startsWith(prefix) && t.name !== 'optimizer.step')
        .map((t) => [t.name.slice(prefix.length), { shape: t.shape, data: tensorToF32(t, source) }]),
    );
  const lora = loraFromPeft(layout, new Map([...group('base_model.')].map(([k, v]) => [`base_model.${k}`, v])), source);
  const stepT = file.tensors.find((t) => t.name === 'optimizer.step');
  const optimizer = stepT
    ? {
        m: loraFromPeft(layout, group('optimizer.m.'), `${source} (optimizer m)`),
        v: loraFromPeft(layout, group('optimizer.v.'), `${source} (optimizer v)`),
        step: tensorToInts(stepT)[0],
      }
    : undefined;
  const extraMetadata = Object.fromEntries(Object.entries(meta).filter(([k]) => !RESERVED.includes(k)));
  return { config, settings, baseModel, lora, step: Number(meta.step ?? 0), ...(optimizer && { optimizer }), extraMetadata };
}

/** An adapter folder's files as PEFT writes them (adapter_model.safetensors holds the adapter alone). */
export function peftFolderFiles(ck: Pick<LoraCheckpoint, 'config' | 'settings' | 'baseModel' | 'lora'>): { name: string; bytes: Uint8Array }[] {
  const layout = loraLayout(ck.config, ck.settings);
  const tensors: TensorToWrite[] = [...loraToPeft(layout, ck.lora)].map(([name, t]) => ({ name, dtype: 'F32', shape: [...t.shape], data: t.data }));
  return [
    { name: 'adapter_config.json', bytes: new TextEncoder().encode(JSON.stringify(adapterConfigJson(ck.settings, ck.baseModel), null, 2) + '\n') },
    { name: 'adapter_model.safetensors', bytes: writeSafetensors(tensors, { format: 'pt' }) },
  ];
}

/** A PEFT adapter folder (adapter_config.json + adapter_model.safetensors, ours or PEFT's) for a base model of `config`. */
export function readPeftAdapter(
  config: ModelConfig,
  adapterConfig: unknown,
  safetensors: Uint8Array,
  source = 'adapter',
): { settings: LoraSettings; baseModel: string; layout: LoraLayout; lora: Float32Array } {
  const { settings, baseModel } = settingsFromAdapterConfig(adapterConfig, `${source}/adapter_config.json`);
  const layout = loraLayout(config, settings);
  const file = readSafetensors(safetensors, `${source}/adapter_model.safetensors`);
  const tensors = new Map(file.tensors.filter((t) => !t.name.startsWith('optimizer.')).map((t) => [t.name, { shape: t.shape, data: tensorToF32(t, source) }]));
  return { settings, baseModel, layout, lora: loraFromPeft(layout, tensors, `${source}/adapter_model.safetensors`) };
}
