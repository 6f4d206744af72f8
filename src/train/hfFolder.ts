// What the page and the worker say about a Hugging Face model folder the user picked or dropped:
// its files (File objects, posted to the worker as they are: a File is a handle, its bytes are read
// where they are needed), the run settings the memory check is made for, and what the worker found
// in the folder before loading it ('hf-inspect' job: config.json and the safetensors headers only).
// Plain data and pure helpers, so the page imports this without the loader (src/model/hf/*, which
// only the worker runs).

/** One file of a folder: its path inside the folder ('/'-separated) and its contents. */
export interface HfFolderFile {
  path: string;
  file: Blob;
}

/** The run a folder is checked and loaded for. */
export interface HfRunSettings {
  /** Tokens a prompt and its generation may take together; null: the model's own, up to DEFAULT_HF_CONTEXT. */
  context: number | null;
  /** GPU memory the model may take, in GiB (WebGPU reports no device memory, so the user says). */
  memoryGiB: number;
}

/** Context when none is asked: the model's maximum, but no more than this (the KV cache and the prefill grow with it). */
export const DEFAULT_HF_CONTEXT = 2048;
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
  /** The budget it was checked against, in bytes. */
  budget: number;
  /** One paragraph: what it needs against what is allowed, and what would fit instead. */
  message: string;
  /** Runs that fit when this one does not. */
  alternatives: { change: string; total: number; context: number }[];
}

/** The 'hf-inspect' job: reads a folder's config.json and safetensors headers and checks its memory. */
export interface HfInspectJobSpec {
  kind: 'hf-inspect';
  name?: string;
  files: HfFolderFile[];
  settings: HfRunSettings;
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

/** Checks the settings a user typed: a context of at least 16 tokens, a budget above 0 GiB. */
export function settingsProblem(s: HfRunSettings): string | null {
  if (s.context !== null && (!Number.isInteger(s.context) || s.context < 16)) return `Context must be a whole number of tokens, at least 16; got ${s.context}.`;
  if (!(Number.isFinite(s.memoryGiB) && s.memoryGiB > 0 && s.memoryGiB <= 1024)) return `GPU memory must be a number of GiB above 0 (at most 1024); got ${s.memoryGiB}.`;
  return null;
}

/** Why the Playground and the Bench cannot run a folder that fits (they send turns as chat messages), or null. */
export function chatProblem(info: Pick<HfFolderInfo, 'name' | 'tokenizer' | 'chatTemplate'>): string | null {
  if (!info.tokenizer) return `${info.name} has no tokenizer.json, so text cannot be turned into its token ids (\`lwm generate\` can still run it on ids).`;
  if (!info.chatTemplate) return `${info.name} has no chat template (tokenizer_config.json's chat_template or chat_template.jinja): a base model; turns are sent as chat messages, so use the instruct / chat version of the model.`;
  return null;
}

/** Told to the user wherever a folder is picked: File handles do not survive a reload. */
export const HF_NOT_KEPT = 'The folder is read from your disk and kept only while this page is open: pick the folder again after a reload.';
