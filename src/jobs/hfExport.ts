// The 'hf-export' job: a stored checkpoint of a run that started from a Hugging Face folder, as
// the files people load elsewhere. The page saves them one by one (no archive library is bundled):
//
//   adapter  a LoRA run's adapter in PEFT's layout: adapter_config.json + adapter_model.safetensors
//            (PeftModel.from_pretrained(base, folder) loads it)
//   merged   a whole model folder with the standard names (config.json, model.safetensors, the
//            tokenizer files): a LoRA adapter merged into its base (W + alpha/r · B·A), which needs
//            the base folder picked again and checked to be the same; a full fine-tune alone
//            (its checkpoint holds every weight and the folder's text files)
//
// Both keep the template the run trained with, as written, in lwm_template.json: a Hugging Face
// or ONNX backend that loads the folder wraps it in the model's chat format again and prompts the
// fine-tune exactly as its samples were laid out in training.
import { hfTrainedTemplate } from '../backends/checkpoint.ts';
import { loadCheckpoint } from '../core/model/checkpoint.ts';
import { isLoraCheckpoint, loadLoraCheckpoint, peftFolderFiles } from '../model/hf/adapter.ts';
import { baseFromJson, readHfBase } from '../model/hf/base.ts';
import { hfLlamaExportFiles } from '../model/hf/export.ts';
import { loraLayout, mergeLora } from '../model/lora.ts';
import { TEMPLATE_FILE, templateFileBytes } from '../model/templateFile.ts';
import type { CheckpointTag, RunRecord } from '../core/records.ts';
import { getRun, loadCheckpointBytes } from '../storage/runs.ts';
import { UserFacingError, type JobContext } from '../train/context.ts';
import { folderError } from '../backends/folders.ts';
import { folderOf } from '../train/hf.ts';
import { folderFingerprint, folderMismatch, type HfTrainFolder } from '../train/hfFolder.ts';

export interface HfExportJobSpec {
  kind: 'hf-export';
  runId: string;
  tag: CheckpointTag;
  what: 'adapter' | 'merged';
  /** The run's base folder, picked again: a LoRA adapter's merge needs its weights. */
  hf?: HfTrainFolder;
}

export interface HfExportResult {
  files: { name: string; bytes: Uint8Array }[];
}

/** A merge runs on the CPU: the base is read whatever the device's limits. */
const CPU_LIMITS = { maxBufferSize: 2 ** 52, maxStorageBufferBindingSize: 2 ** 52, memoryBudget: 2 ** 52, shaderF16: false };

/** The base's weights, from the folder picked again (checked to be the run's own). */
async function baseWeights(run: RunRecord & { hf: NonNullable<RunRecord['hf']> }, folder: HfTrainFolder | undefined, name: string) {
  if (!folder?.files.length)
    throw new UserFacingError(
      `Merging the adapter needs the base model's weights: pick the Hugging Face folder ${run.hf.folder.name} again (Start from) and download again.`,
    );
  const files = folderOf(folder.files, folder.name);
  const mismatch = folderMismatch(run.hf.folder, await folderFingerprint(folder.files, files.label));
  if (mismatch) throw new UserFacingError(mismatch);
  try {
    return await readHfBase(files, { limits: CPU_LIMITS }, name);
  } catch (e) {
    throw folderError(e, files.label);
  }
}

async function loraFiles(run: RunRecord & { hf: NonNullable<RunRecord['hf']> }, bytes: Uint8Array, spec: HfExportJobSpec): Promise<HfExportResult['files']> {
  const ck = loadLoraCheckpoint(bytes, `the ${spec.tag} checkpoint of ${run.name}`);
  const template = hfTrainedTemplate(ck.extraMetadata);
  if (spec.what === 'adapter') return [...peftFolderFiles(ck), ...(template ? [{ name: TEMPLATE_FILE, bytes: templateFileBytes(template) }] : [])];
  const { base, params } = await baseWeights(run, spec.hf, ck.baseModel);
  return hfLlamaExportFiles(ck.config, mergeLora(params, loraLayout(ck.config, ck.settings), ck.lora), base, template);
}

export async function runHfExportJob(spec: HfExportJobSpec, ctx: JobContext): Promise<HfExportResult> {
  const run = await getRun(spec.runId);
  if (!run) throw new UserFacingError(`There is no stored run ${spec.runId}; it may have been deleted.`);
  if (!run.hf) throw new UserFacingError(`${run.name} did not start from a Hugging Face folder: download its checkpoint instead.`);
  const ref = run.checkpoints[spec.tag];
  if (!ref) throw new UserFacingError(`${run.name} has no ${spec.tag} checkpoint.`);
  const bytes = await loadCheckpointBytes(ref.key).catch((e: Error) => {
    throw new UserFacingError(`The checkpoint could not be read: ${e.message}`);
  });
  const hfRun = run as RunRecord & { hf: NonNullable<RunRecord['hf']> };
  let files: HfExportResult['files'];
  if (isLoraCheckpoint(bytes)) files = await loraFiles(hfRun, bytes, spec);
  else if (spec.what === 'adapter') throw new UserFacingError(`${run.name} fine-tuned every weight: it has no LoRA adapter; download the merged folder.`);
  else {
    const ck = loadCheckpoint(bytes, { source: `the ${spec.tag} checkpoint of ${run.name}` });
    files = hfLlamaExportFiles(ck.config, ck.params, baseFromJson(ck.extraMetadata!.hf_base), hfTrainedTemplate(ck.extraMetadata));
  }
  ctx.log(`${spec.what === 'adapter' ? 'adapter' : 'merged folder'} of ${run.name} (${spec.tag}, step ${ref.step}): ${files.map((f) => f.name).join(', ')}`);
  return { files };
}
