// `lwm train --from FOLDER`: a Hugging Face model folder to fine-tune (full, or LoRA with --lora R),
// or a LoRA run's adapter folder to resume. A LoRA run's checkpoint is a folder in PEFT's layout:
//
//   DIR/adapter_model.safetensors        the adapter, PEFT's names (loads with PeftModel.from_pretrained)
//   DIR/adapter_config.json              peft_type LORA, r, lora_alpha, target_modules, base_model_name_or_path
//   DIR/adapter_model.optim.safetensors  our Adam state, which --from DIR picks up to resume
//   DIR/best/                            the best checkpoint by eval loss, the same three files
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { checkpointFiles, joinCheckpointFiles, optimizerFileName } from '../../core/model/checkpoint.ts';
import { checkOutputPath, FileError, UsageError, writeFileAtomicSync, type CliIO } from '../io.ts';
import type { GpuRuntime } from '../../gpu/runtime.ts';
import type { HfBase } from '../../model/hf/base.ts';
import { LORA_CHECKPOINT_FORMAT } from '../../model/hf/adapter.ts';
import { readSafetensors } from '../../core/model/safetensors.ts';
import { adapterBase } from './exportHf.ts';

/** Errors of a model folder or adapter that are the input's fault (one line, exit 1). */
export const HF_INPUT_ERRORS = [
  'HfFolderError',
  'HfConfigError',
  'HfWeightsError',
  'HfMemoryError',
  'HfTokenizerError',
  'LoraError',
  'TemplateFileError',
  'ChatWrapError',
];

/** --memory-gib G: the device memory the run may take (default 8; WebGPU reports none). */
export function memoryGib(v: string | undefined): number {
  if (v === undefined) return 8;
  const n = Number(v);
  if (!(n > 0 && n < 2 ** 20)) throw new UsageError(`--memory-gib must be a number above 0, got '${v}'`);
  return n;
}

/** A LoRA checkpoint's adapter_config.json (from its metadata); null for any other checkpoint. */
export function loraAdapterConfig(bytes: Uint8Array): string | null {
  const meta = readSafetensors(bytes).metadata;
  return meta.lwm_format === LORA_CHECKPOINT_FORMAT && meta.adapter_config ? JSON.stringify(JSON.parse(meta.adapter_config), null, 2) + '\n' : null;
}

export const ADAPTER_WEIGHTS = 'adapter_model.safetensors';
export const ADAPTER_CONFIG = 'adapter_config.json';

export const LORA_OPTIONS = {
  lora: { type: 'string' },
  'lora-alpha': { type: 'string' },
  'lora-targets': { type: 'string' },
  'memory-gib': { type: 'string' },
  weights: { type: 'string' },
} as const;

/** --lora R [--lora-alpha A] [--lora-targets q,k,v,...] [--weights f32|f16] as the spec's lora field. */
export function loraOption(values: { lora?: string; 'lora-alpha'?: string; 'lora-targets'?: string; weights?: string }): {
  lora?: { rank: number; alpha?: number; targets?: string[]; baseWeights?: 'f32' | 'f16' };
} {
  if (values.lora === undefined) {
    if (values['lora-alpha'] !== undefined || values['lora-targets'] !== undefined) throw new UsageError('--lora-alpha and --lora-targets need --lora R');
    if (values.weights !== undefined)
      throw new UsageError('--weights holds frozen weights in f16: it is for the base under --lora R (full fine-tuning trains every weight in f32)');
    return {};
  }
  const w = values.weights;
  if (w !== undefined && w !== 'f32' && w !== 'f16') throw new UsageError(`--weights must be f32 or f16, got '${w}'`);
  const rank = Number(values.lora);
  if (!/^\d+$/.test(values.lora) || !(rank >= 1 && rank <= 4096)) throw new UsageError(`--lora must be a rank from 1 to 4096, got '${values.lora}'`);
  const alpha = values['lora-alpha'] === undefined ? undefined : Number(values['lora-alpha']);
  if (alpha !== undefined && !(alpha > 0 && Number.isFinite(alpha)))
    throw new UsageError(`--lora-alpha must be a number above 0, got '${values['lora-alpha']}'`);
  const targets = values['lora-targets']
    ?.split(',')
    .map((t) => t.trim().replace(/_proj$/, ''))
    .filter(Boolean);
  return { lora: { rank, ...(alpha !== undefined && { alpha }), ...(targets && { targets }), ...(w !== undefined && { baseWeights: w }) } };
}

export function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The output of a LoRA run is a folder: made now, and its weights file checked writable before any training. */
export function checkLoraOutput(dir: string): void {
  if (existsSync(dir) && !isFolder(dir)) throw new FileError(`${dir}: a LoRA run writes an adapter folder (PEFT's layout) but this is a file`);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new FileError(`${dir}: cannot create the adapter folder (${(e as Error).message})`);
  }
  checkOutputPath(join(dir, ADAPTER_WEIGHTS));
}

/** A LoRA checkpoint's bytes as the adapter folder. */
export function writeLoraFolder(dir: string, bytes: Uint8Array, adapterConfig: string): void {
  mkdirSync(dir, { recursive: true });
  const weights = join(dir, ADAPTER_WEIGHTS);
  const files = checkpointFiles(bytes, weights);
  if (files.optimizer) writeFileAtomicSync(optimizerFileName(weights), files.optimizer);
  else rmSync(optimizerFileName(weights), { force: true });
  writeFileAtomicSync(join(dir, ADAPTER_CONFIG), new TextEncoder().encode(adapterConfig));
  writeFileAtomicSync(weights, files.weights);
}

export interface HfStart {
  /** A LoRA run's checkpoint (adapter + Adam state) when --from is an adapter folder. */
  from?: Uint8Array;
  hfBase: { base: HfBase; params: Float32Array };
}

/**
 * --from FOLDER: a Hugging Face model folder, or an adapter folder (its base is
 * adapter_config.json's base_model_name_or_path). The base's memory is checked for the run first.
 */
export async function readHfStart(
  io: CliIO,
  folder: string,
  run: { rt: GpuRuntime; lora?: number; T?: number; batch: number; memoryGib: number; baseWeights?: 'f32' | 'f16'; generates?: boolean },
): Promise<HfStart> {
  const { nodeFolder } = await import('../../model/hf/node.ts');
  const { readHfBase } = await import('../../model/hf/base.ts');
  const { limitsFromReport } = await import('../../model/hf/load.ts');
  let baseDir = folder;
  let from: Uint8Array | undefined;
  let rank = run.lora;
  if (existsSync(join(folder, ADAPTER_CONFIG))) {
    const config = JSON.parse(readFileSync(join(folder, ADAPTER_CONFIG), 'utf8')) as { base_model_name_or_path?: string; r?: number };
    try {
      baseDir = await adapterBase(folder, config.base_model_name_or_path ?? '', (line) => io.err(line));
    } catch (e) {
      throw e instanceof Error && e.name === 'BackendError' ? new FileError(e.message) : e;
    }
    rank = config.r;
    const weights = join(folder, ADAPTER_WEIGHTS);
    const opt = optimizerFileName(weights);
    from = joinCheckpointFiles(
      { weights: new Uint8Array(readFileSync(weights)), ...(existsSync(opt) && { optimizer: new Uint8Array(readFileSync(opt)) }) },
      weights,
    );
    io.err(`${folder}: adapter on ${baseDir}\n`);
  }
  const files = await nodeFolder(baseDir);
  const { base, params } = await readHfBase(
    files,
    {
      limits: limitsFromReport(run.rt.report, run.memoryGib * 2 ** 30),
      mode: rank ? { kind: 'lora', rank } : { kind: 'full' },
      batch: run.batch,
      ...(run.generates && { generates: true }),
      ...(run.T && { context: run.T }),
      ...(rank && run.baseWeights && { weights: run.baseWeights }),
    },
    resolve(baseDir),
  );
  return { ...(from && { from }), hfBase: { base, params } };
}
