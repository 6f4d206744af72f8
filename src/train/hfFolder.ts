// What the page and the worker say about a Hugging Face model folder the user picked or dropped:
// its files (File objects, posted to the worker as they are: a File is a handle, its bytes are read
// where they are needed), the run settings the memory check is made for, and what the worker found
// in the folder before loading it ('hf-inspect' job: config.json and the safetensors headers only).
// Plain data and pure helpers, so the page imports this without the loader (src/model/hf/*, which
// only the worker runs).

import type { HfFolderRef } from '../core/trainSpec.ts';
import { DEFAULT_FOLDER_CONTEXT, folderSettingsProblem, type FolderRunSettings } from '../core/backendRef.ts';
export { F16_WEIGHTS, formatBytes } from '../model/hf/memory.ts';

/** One file of a folder: its path inside the folder ('/'-separated) and its contents. */
export interface HfFolderFile {
  path: string;
  file: Blob;
}

/** The run a folder is checked and loaded for (src/core/backendRef.ts). */
export type HfRunSettings = FolderRunSettings;

/** Context when none is asked: the model's maximum, but no more than this (the KV cache and the prefill grow with it). */
export const DEFAULT_HF_CONTEXT = DEFAULT_FOLDER_CONTEXT;
export const DEFAULT_HF_SETTINGS: HfRunSettings = { context: null, memoryGiB: 4 };

/** What the worker tells the page about a folder before anything is loaded. */
export interface HfFolderInfo {
  /** The folder's name (the picked folder, or "the picked files"). */
  name: string;
  architecture: string;
  parameters: number;
  layers: number;
  hidden: number;
  heads: number;
  kvHeads: number;
  vocab: number;
  /** config.json's max_position_embeddings. */
  maxContext: number;
  /** The context the estimate is for. */
  context: number;
  /** The weights' stored dtypes (F32, BF16, ...). */
  dtypes: string[];
  /** Bytes of the safetensors files. */
  weightBytes: number;
  files: number;
  tokenizer: boolean;
  chatTemplate: boolean;
  fit: HfFit;
}

/** The memory check against the adapter (src/model/hf/memory.ts's FitReport, as plain data). */
export interface HfFit {
  fits: boolean;
  /** Bytes needed in all, and by what. */
  total: number;
  weights: number;
  kvCache: number;
  activations: number;
  /** Training only: LoRA's A and B, the trainable values' gradients, and AdamW's m and v (LoRA: the adapter's alone). */
  adapters: number;
  gradients: number;
  optimizer: number;
  /** The budget it was checked against, in bytes. */
  budget: number;
  /** One paragraph: what it needs against what is allowed, and what would fit instead. */
  message: string;
  /** Runs that fit when this one does not. */
  alternatives: { change: string; total: number; context: number }[];
}

/** A training run's shape for the estimate: what trains, and the rows of one step. */
export interface HfTrainShape {
  tuning: 'full' | 'lora';
  /** LoRA's rank (tuning 'lora'). */
  rank?: number;
  /** Sequences per step (RL: the group size). */
  batch: number;
  /** RL keeps a KV cache for its rollouts beside the activations. */
  generates?: boolean;
  /** LoRA: the frozen base held in f16 (half its memory). */
  baseWeights?: 'f32' | 'f16';
}

/** The 'hf-inspect' job: reads a folder's config.json and safetensors headers and checks its memory (for inference, or for `train`). */
export interface HfInspectJobSpec {
  kind: 'hf-inspect';
  name?: string;
  files: HfFolderFile[];
  settings: HfRunSettings;
  train?: HfTrainShape;
}

/** A folder a training job starts from (or resumes on, or exports with): its files and the memory it may take. */
export interface HfTrainFolder {
  name?: string;
  files: HfFolderFile[];
  memoryGiB: number;
}

/** The files that make a model (a README or a picture beside them does not change it). */
const MODEL_FILE =
  /^(config\.json|generation_config\.json|tokenizer\.json|tokenizer_config\.json|chat_template\.jinja|special_tokens_map\.json|[^/]*\.safetensors|[^/]*\.safetensors\.index\.json)$/;

/** The paths inside the folder (the picked folder's own name and the directories above it dropped). */
function relativeFiles(files: readonly HfFolderFile[]): { path: string; file: Blob }[] {
  const dirs = files.map((f) => f.path.split('/').slice(0, -1));
  let common = dirs[0] ?? [];
  for (const d of dirs) {
    let i = 0;
    while (i < common.length && i < d.length && common[i] === d[i]) i++;
    common = common.slice(0, i);
  }
  const prefix = common.length ? common.join('/') + '/' : '';
  return files.map((f) => ({ path: f.path.slice(prefix.length), file: f.file }));
}

async function sha256(parts: Uint8Array[]): Promise<string> {
  let n = 0;
  for (const p of parts) n += p.length;
  const all = new Uint8Array(n);
  let at = 0;
  for (const p of parts) all.set(p, at), (at += p.length);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', all));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A safetensors file's header (8-byte length + JSON): its tensor names, dtypes, shapes and offsets. */
async function safetensorsHeaderBytes(file: Blob): Promise<Uint8Array> {
  const head = new Uint8Array(await file.slice(0, 8).arrayBuffer());
  if (head.length < 8) return head;
  const length = Number(new DataView(head.buffer).getBigUint64(0, true));
  return new Uint8Array(await file.slice(0, 8 + Math.min(length, 100_000_000)).arrayBuffer());
}

/**
 * What tells this folder from another without reading its weights: each model file's size, and
 * hashes of config.json and of the safetensors headers. The page and the worker compute the same.
 */
export async function folderFingerprint(files: readonly HfFolderFile[], name = folderName(files) ?? 'the picked files'): Promise<HfFolderRef> {
  const model = relativeFiles(files)
    .filter((f) => MODEL_FILE.test(f.path))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  const config = model.find((f) => f.path === 'config.json');
  const headers = await Promise.all(model.filter((f) => f.path.endsWith('.safetensors')).map((f) => safetensorsHeaderBytes(f.file)));
  return {
    name,
    files: model.map((f) => ({ path: f.path, size: f.file.size })),
    config: await sha256(config ? [new Uint8Array(await config.file.arrayBuffer())] : []),
    weights: await sha256(headers),
  };
}

/**
 * Whether a run of a folder needs the folder's files to go on: a LoRA run always (the frozen base
 * weights are not in its checkpoints), a full fine-tune only before its first checkpoint (which
 * holds every weight and the folder's text files).
 */
export function folderNeeded(run: { hf?: { tuning: 'full' | 'lora' }; checkpoints: { last?: unknown }; from?: unknown }): boolean {
  if (!run.hf) return false;
  return run.hf.tuning === 'lora' || (!run.checkpoints.last && !run.from);
}

/** Why `picked` is not the folder `run` trained on (what differs, file by file), or null when it is. */
export function folderMismatch(run: HfFolderRef, picked: HfFolderRef): string | null {
  const was = new Map(run.files.map((f) => [f.path, f.size]));
  const now = new Map(picked.files.map((f) => [f.path, f.size]));
  const why: string[] = [];
  for (const [path, size] of was) {
    const n = now.get(path);
    if (n === undefined) why.push(`${path} is missing`);
    else if (n !== size) why.push(`${path} is ${n} bytes, was ${size}`);
  }
  for (const path of now.keys()) if (!was.has(path)) why.push(`${path} was not in it`);
  if (!why.length && run.config !== picked.config) why.push('config.json differs');
  if (!why.length && run.weights !== picked.weights) why.push('the safetensors headers differ (other tensors)');
  return why.length ? `${picked.name} is not the folder this run trained on (${run.name}): ${why.join('; ')}.` : null;
}

/** A file's path inside the picked folder: what a folder picker sets (webkitRelativePath), else its name (a dropped file). */
export function folderFiles(files: Iterable<File | { path: string; file: File }>): HfFolderFile[] {
  const out: HfFolderFile[] = [];
  for (const f of files) {
    if ('path' in f && 'file' in f) out.push({ path: f.path.replace(/^\/+/, ''), file: f.file });
    else out.push({ path: ((f as File).webkitRelativePath || (f as File).name).replace(/\\/g, '/'), file: f as File });
  }
  return out;
}

/** The folder's name: the directory all the files share (the picked folder), else null. */
export function folderName(files: readonly HfFolderFile[]): string | null {
  const dirs = files.map((f) => f.path.split('/').slice(0, -1));
  if (!dirs.length || dirs.some((d) => !d.length)) return null;
  let common = dirs[0];
  for (const d of dirs) {
    let i = 0;
    while (i < common.length && i < d.length && common[i] === d[i]) i++;
    common = common.slice(0, i);
  }
  return common.length ? common[common.length - 1] : null;
}

/** An id that tells one picked folder from another within a session (names, sizes and dates of its files). */
export function folderId(files: readonly HfFolderFile[]): string {
  let h = 2166136261;
  const text = files
    .map((f) => `${f.path}:${f.file.size}:${(f.file as File).lastModified ?? 0}`)
    .sort()
    .join('|');
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return `${folderName(files) ?? 'files'}#${h.toString(36)}`;
}

/** Parameters in words: 135M, 1.5B, 36.2K. */
export function formatCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(n >= 1e10 ? 0 : 1)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e8 ? 0 : 1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}K`;
  return String(n);
}

export function formatGiB(bytes: number): string {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(2)} GiB`;
  if (bytes >= 2 ** 20) return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  return `${(bytes / 2 ** 10).toFixed(1)} KiB`;
}

/** One line for the page: name, architecture, size, context, and the estimate against the budget. */
export function describeFolder(info: HfFolderInfo): string {
  const f = info.fit;
  return (
    `${info.name}: ${info.architecture}, ${formatCount(info.parameters)} parameters (${info.layers} layers × ${info.hidden}, ${info.heads} heads / ${info.kvHeads} KV heads, vocabulary ${info.vocab}), ` +
    `context ${info.context} of ${info.maxContext}; needs ${formatGiB(f.total)} of the ${formatGiB(f.budget)} budget (weights ${formatGiB(f.weights)}, KV cache ${formatGiB(f.kvCache)}, activations ${formatGiB(f.activations)})`
  );
}

/** The training estimate in one line: what it needs against the budget, and by what. */
export function describeTrainFit(info: HfFolderInfo, train: HfTrainShape): string {
  const f = info.fit;
  const parts: [string, number][] = [
    ['weights', f.weights],
    [train.tuning === 'lora' ? 'LoRA adapter' : '', f.adapters],
    ['gradients', f.gradients],
    [train.tuning === 'lora' ? 'AdamW state (adapter only)' : 'AdamW state', f.optimizer],
    ['KV cache', f.kvCache],
    ['activations', f.activations],
  ];
  const mode = train.tuning === 'lora' ? `LoRA rank ${train.rank}` : 'full fine-tuning';
  return (
    `${mode}, ${train.batch} × ${info.context} tokens per step: needs ${formatGiB(f.total)} of the ${formatGiB(f.budget)} budget (` +
    parts
      .filter(([k, n]) => k && n > 0)
      .map(([k, n]) => `${k} ${formatGiB(n)}`)
      .join(', ') +
    ')'
  );
}

/** Checks the settings a user typed: a context of at least 16 tokens, a budget above 0 GiB. */
export const settingsProblem = folderSettingsProblem;

/** Why the Playground and the Bench cannot run a folder that fits (they send turns as chat messages), or null. */
export function chatProblem(info: Pick<HfFolderInfo, 'name' | 'tokenizer' | 'chatTemplate'>): string | null {
  if (!info.tokenizer) return `${info.name} has no tokenizer.json, so text cannot be turned into its token ids (\`lwm generate\` can still run it on ids).`;
  if (!info.chatTemplate)
    return `${info.name} has no chat template (tokenizer_config.json's chat_template or chat_template.jinja): a base model; turns are sent as chat messages, so use the instruct / chat version of the model.`;
  return null;
}

/** Told to the user wherever a folder is picked: File handles do not survive a reload. */
export const HF_NOT_KEPT = 'The folder is read from your disk and kept only while this page is open: pick the folder again after a reload.';
