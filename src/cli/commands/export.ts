// `lwm export CKPT --to hf -o DIR`: one of our checkpoints as a Hugging Face folder that
// transformers' AutoModelForCausalLM and AutoTokenizer load with our logits and our token ids
// (src/model/hf/export.ts says what is written and what is refused).
// `lwm export CKPT --to onnx -o DIR`: a checkpoint of ours or a Hugging Face folder (Llama, Qwen2,
// Qwen3) as an ONNX causal-LM folder with a KV cache (src/model/onnx/export.ts).
import { mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { checkpointTokenizer, exportedTemplate, hfTrainedTemplate } from '../../backends/checkpoint.ts';
import { HfExportError } from '../../core/tokenizer/hfExport.ts';
import { CheckpointError, loadCheckpoint } from '../../core/model/checkpoint.ts';
import { HfExportRefused, hfExportFiles, hfLlamaExportFiles } from '../../model/hf/export.ts';
import { checkpointSideFiles, hfFolderSideFiles, onnxExportFiles } from '../../model/onnx/export.ts';
import { TEMPLATE_FILE, TemplateFileError, templateFileBytes } from '../../model/templateFile.ts';
import { SafetensorsError } from '../../core/model/safetensors.ts';
import { adapterExportFiles, fullFineTuneFiles, hfCheckpointBase, isAdapterFolder } from './exportHf.ts';
import { HF_INPUT_ERRORS } from './trainHf.ts';
import { modelArg } from './common.ts';
import { errnoText, FileError, inputFileProblem, parseCommandArgs, UsageError, writeFileAtomicSync, type CliIO } from '../io.ts';

const USAGE = `lwm export CKPT --to hf|onnx -o DIR [--unmerged]

  CKPT        a checkpoint written by LWM Studio training (.safetensors), or a LoRA run's adapter
              folder (adapter_config.json + adapter_model.safetensors); for --to onnx also a
              Hugging Face model folder (Llama, Qwen2, Qwen3); a LoRA adapter folder is
              merged into its base first (for --to onnx too)
  --to hf     a Hugging Face GPT-2 folder: config.json, model.safetensors, tokenizer.json,
              tokenizer_config.json, generation_config.json, and lwm_template.json (the prompt
              template it was trained with, which transformers ignores); for a fine-tuned Llama / Qwen2 /
              Qwen3 (lwm train --from HF_FOLDER) the same folder in its base's architecture, a LoRA
              adapter merged into the base's weights, with lwm_template.json (the template it
              trained with, which LWM Studio wraps in the model's chat format again to serve it)
  --unmerged  a LoRA adapter as PEFT's folder (adapter_config.json, adapter_model.safetensors)
              with the base's tokenizer files (and lwm_template.json), for PeftModel.from_pretrained
  --to onnx   an ONNX causal-LM folder in Hugging Face's layout: onnx/model.onnx (input_ids,
              attention_mask, position_ids, past_key_values.N.key/value in; logits,
              present.N.key/value out; opset 17, float32) beside config.json,
              generation_config.json and the tokenizer files (and, for a checkpoint or adapter of
              ours, lwm_template.json: the prompt template it was trained with); onnxruntime(-web) and
              transformers.js run it, and so does \`lwm generate --backend onnx\`
  -o DIR      the folder to write (created when absent; its parent must exist; files of the
              same names inside an existing folder are replaced)

For --to hf, checkpoints transformers' GPT-2 cannot run exactly (RMSNorm, RoPE) are refused.`;

const FORMATS = ['hf', 'onnx'];

/** Export reads the weights on the CPU: no adapter limits apply. */
const CPU_LIMITS = {
  maxBufferSize: Number.MAX_SAFE_INTEGER,
  maxStorageBufferBindingSize: Number.MAX_SAFE_INTEGER,
  memoryBudget: Number.MAX_SAFE_INTEGER,
  shaderF16: false,
};

export default async function exportCommand(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    help: { type: 'boolean', short: 'h' },
    to: { type: 'string' },
    output: { type: 'string', short: 'o' },
    unmerged: { type: 'boolean' },
  });
  if (values.help) {
    io.out(`usage: ${USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`${positionals.length ? `unexpected argument '${positionals[1]}'` : 'CKPT is required'}\nusage: ${USAGE}`);
  if (values.to === undefined) throw new UsageError(`--to is required (one of: ${FORMATS.join(', ')})\nusage: ${USAGE}`);
  if (!FORMATS.includes(values.to)) throw new UsageError(`--to ${values.to}: unknown format (known: ${FORMATS.join(', ')})`);
  if (!values.output) throw new UsageError(`-o DIR is required\nusage: ${USAGE}`);
  const ckPath = await modelArg(io, positionals[0]);
  const dir = values.output;
  const adapter = isAdapterFolder(ckPath);
  const isFolder = values.to === 'onnx' && !adapter && isDirectory(ckPath);
  const problem = adapter || isFolder ? null : inputFileProblem(ckPath);
  if (problem) throw new FileError(problem);
  if (values.unmerged && (!adapter || values.to !== 'hf'))
    throw new UsageError(adapter ? '--unmerged is for --to hf (an ONNX model is always merged)' : '--unmerged is for a LoRA adapter folder');
  const target = checkOutputDir(dir);

  let files;
  try {
    const log = (line: string) => io.err(line);
    if (adapter && values.to === 'onnx') files = await adapterAsOnnx(ckPath, log);
    else if (adapter) files = await adapterExportFiles(ckPath, !!values.unmerged, log);
    else if (isFolder) files = await hfFolderAsOnnx(ckPath);
    else if (values.to === 'onnx') files = checkpointAsOnnx(new Uint8Array(readFileSync(ckPath)), ckPath);
    else files = checkpointExportFiles(new Uint8Array(readFileSync(ckPath)), ckPath);
  } catch (e) {
    if (
      e instanceof CheckpointError ||
      e instanceof TemplateFileError ||
      e instanceof SafetensorsError ||
      e instanceof HfExportRefused ||
      e instanceof HfExportError ||
      HF_INPUT_ERRORS.includes((e as Error).name) ||
      ((isFolder || adapter) && e instanceof Error && !(e instanceof TypeError))
    ) {
      io.err(`lwm export: ${(e as Error).message}\n`);
      return 1;
    }
    throw e;
  }
  writeFolder(dir, target, files);
  io.out(`wrote ${dir}: ${files.map((f) => f.name).join(', ')}\n`);
  return 0;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A Hugging Face folder (Llama, Qwen2, Qwen3) as ONNX: its weights in our layout, its config and tokenizer files copied. */
async function hfFolderAsOnnx(path: string) {
  const { nodeFolder } = await import('../../model/hf/node.ts');
  const { loadHfModel } = await import('../../model/hf/load.ts');
  const folder = await nodeFolder(path);
  const m = await loadHfModel(folder, { limits: CPU_LIMITS });
  return onnxExportFiles(m, await hfFolderSideFiles(folder));
}

/**
 * One of our checkpoints as ONNX, with the prompt layout it was trained with: a fine-tune of a
 * Hugging Face model beside its base's config and tokenizer files (the chat template included), as
 * --to hf writes them; a model of ours beside our tokenizer and its training template (lwm_template.json).
 */
function checkpointAsOnnx(bytes: Uint8Array, source: string) {
  const ck = loadCheckpoint(bytes, { source });
  const base = hfCheckpointBase(bytes);
  if (base)
    return onnxExportFiles(
      ck,
      hfLlamaExportFiles(ck.config, ck.params, base, hfTrainedTemplate(ck.extraMetadata)).filter((f) => f.name !== 'model.safetensors'),
    );
  return onnxExportFiles(ck, checkpointSideFiles(ck, checkpointTokenizer(ck, source), source, exportedTemplate(ck) ?? undefined));
}

/**
 * Our checkpoint as a GPT-2 folder with the prompt template it was trained with (lwm_template.json),
 * or (a full fine-tune of a Hugging Face model) as its base's architecture, chat template included.
 */
function checkpointExportFiles(bytes: Uint8Array, source: string): { name: string; bytes: Uint8Array }[] {
  if (hfCheckpointBase(bytes)) return fullFineTuneFiles(bytes, source);
  const ck = loadCheckpoint(bytes, { source });
  const template = exportedTemplate(ck);
  return [...hfExportFiles(ck, checkpointTokenizer(ck, source), source), ...(template ? [{ name: TEMPLATE_FILE, bytes: templateFileBytes(template) }] : [])];
}

/** A LoRA adapter folder merged into its base, as ONNX beside the base's config and tokenizer files (its chat template included). */
async function adapterAsOnnx(dir: string, log: (line: string) => void) {
  const merged = await adapterExportFiles(dir, false, log);
  const { filesFolder } = await import('../../model/hf/files.ts');
  const { loadHfModel } = await import('../../model/hf/load.ts');
  const m = await loadHfModel(
    filesFolder(
      merged.map((f) => ({ path: f.name, file: new Blob([f.bytes as Uint8Array<ArrayBuffer>]) })),
      dir,
    ),
    { limits: CPU_LIMITS },
  );
  return onnxExportFiles(
    m,
    merged.filter((f) => f.name !== 'model.safetensors'),
  );
}

/** 'new' when DIR is absent (its parent a folder), 'existing' when it is a folder; FileError otherwise. */
function checkOutputDir(dir: string): 'new' | 'existing' {
  if (dir === '') throw new FileError('cannot write to an empty folder name');
  try {
    const st = statSync(dir);
    if (st.isDirectory()) return 'existing';
    throw new FileError(`${dir}: cannot write a folder (a file is in the way)`);
  } catch (e) {
    if (e instanceof FileError) throw e;
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new FileError(`${dir}: cannot write (${errnoText(e)})`);
  }
  const parent = dirname(dir);
  try {
    if (!statSync(parent).isDirectory()) throw new FileError(`${dir}: cannot write (not a directory: ${parent})`);
  } catch (e) {
    if (e instanceof FileError) throw e;
    throw new FileError(`${dir}: cannot write (${(e as NodeJS.ErrnoException).code === 'ENOENT' ? `no such directory: ${parent}` : errnoText(e)})`);
  }
  return 'new';
}

/**
 * A new folder is written whole beside its place and renamed into it, so it appears complete or
 * not at all; in an existing folder each file is replaced atomically (writeFileAtomicSync).
 */
function writeFolder(dir: string, target: 'new' | 'existing', files: { name: string; bytes: Uint8Array }[]): void {
  // Files in subfolders (onnx/model.onnx) get their folder first.
  const write = (root: string) => {
    for (const f of files) {
      if (f.name.includes('/')) mkdirSync(join(root, dirname(f.name)), { recursive: true });
      writeFileAtomicSync(join(root, f.name), f.bytes);
    }
  };
  if (target === 'existing') {
    write(dir);
    return;
  }
  const temp = join(dirname(dir), `.${basename(dir)}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`);
  try {
    mkdirSync(temp);
    write(temp);
    renameSync(temp, dir);
  } catch (e) {
    rmSync(temp, { recursive: true, force: true });
    if (e instanceof FileError) throw e;
    throw new FileError(`${dir}: cannot write (${errnoText(e)})`);
  }
}
