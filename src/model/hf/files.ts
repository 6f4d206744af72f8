// Reading a Hugging Face model folder, everything but the architecture: its files (a path in
// Node, picked or dropped File objects in the browser, behind one small interface), the
// safetensors weights (one file or shards named by `model.safetensors.index.json`; F32, F16 and
// BF16 read as f32), the tokenizer (`tokenizer.json`, `tokenizer_config.json`,
// `chat_template.jinja`) and the end-of-sequence ids (`generation_config.json`). config.json's
// mapping onto our engine is config.ts's; the tensor names' is weights.ts's.
//
// Weights are planned from the safetensors headers alone (a few KB read from each file), so the
// memory a model needs is known before any tensor is read (memory.ts); each tensor is then read
// by its byte range, so a folder of several GB never sits in memory as one buffer.
import { HfTokenizer } from '../../core/tokenizer/hf.ts';
import { safetensorsHeader, safetensorsHeaderLength, SafetensorsError, tensorToF32, type Dtype } from '../../core/model/safetensors.ts';

export class HfFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HfFolderError';
  }
}

/**
 * A folder's files, read by path relative to the folder ('/'-separated). The Node implementation
 * is node.ts (`nodeFolder`); `filesFolder` wraps the browser's File objects.
 */
export interface ModelFiles {
  /** Names the folder in messages (its path, or the picked folder's name). */
  readonly label: string;
  /** Every file's relative path. */
  list(): string[];
  /** A file's size in bytes. */
  size(path: string): Promise<number>;
  /** A file's bytes [start, end) (default: all of it). */
  read(path: string, start?: number, end?: number): Promise<Uint8Array>;
}

/** What filesFolder takes: a File (its webkitRelativePath or name gives the path) or a blob with a path. */
export type FolderEntry = Blob & { name?: string; webkitRelativePath?: string };

function entryPath(e: FolderEntry | { path: string; file: Blob }): string {
  if ('path' in e && 'file' in e) return e.path;
  const f = e as FolderEntry;
  return (f.webkitRelativePath || f.name || '').replace(/\\/g, '/');
}

/**
 * The folder of a list of files, as a folder picker (`<input webkitdirectory>`) or a drop gives
 * them: paths like `SmolLM2-135M/config.json`. The directories all files share are dropped, so the
 * folder's own files sit at its root whichever folder above it was picked.
 */
export function filesFolder(entries: Iterable<FolderEntry | { path: string; file: Blob }>, label?: string): ModelFiles {
  const byPath = new Map<string, Blob>();
  for (const e of entries) {
    const path = entryPath(e);
    if (!path) throw new HfFolderError('a file without a name was given');
    byPath.set(path, 'file' in e && 'path' in e ? e.file : (e as Blob));
  }
  const paths = [...byPath.keys()];
  let common = paths.length ? paths[0].split('/').slice(0, -1) : [];
  for (const p of paths) {
    const dirs = p.split('/').slice(0, -1);
    let i = 0;
    while (i < common.length && i < dirs.length && common[i] === dirs[i]) i++;
    common = common.slice(0, i);
  }
  const prefix = common.length ? common.join('/') + '/' : '';
  const files = new Map([...byPath].map(([p, b]) => [p.slice(prefix.length), b]));
  const name = label ?? (common.length ? common[common.length - 1] : 'the picked files');
  const blob = (path: string): Blob => {
    const b = files.get(path);
    if (!b) throw new HfFolderError(`${name}: has no file '${path}'`);
    return b;
  };
  return {
    label: name,
    list: () => [...files.keys()].sort(),
    size: async (path) => blob(path).size,
    read: async (path, start = 0, end) =>
      new Uint8Array(
        await blob(path)
          .slice(start, end ?? blob(path).size)
          .arrayBuffer(),
      ),
  };
}

function has(files: ModelFiles, path: string): boolean {
  return files.list().includes(path);
}

/** A JSON file of the folder, parsed; null when `optional` and the file is absent. */
export async function readJsonFile(files: ModelFiles, path: string, optional: true): Promise<unknown | null>;
export async function readJsonFile(files: ModelFiles, path: string, optional?: false): Promise<unknown>;
export async function readJsonFile(files: ModelFiles, path: string, optional = false): Promise<unknown | null> {
  if (!has(files, path)) {
    if (optional) return null;
    throw new HfFolderError(`${files.label}: has no ${path} (found: ${files.list().join(', ') || 'no files'})`);
  }
  const text = new TextDecoder().decode(await files.read(path));
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new HfFolderError(`${files.label}/${path}: is not valid JSON (${(e as Error).message})`);
  }
}

async function readText(files: ModelFiles, path: string): Promise<string | undefined> {
  return has(files, path) ? new TextDecoder().decode(await files.read(path)) : undefined;
}

/** The folder's tokenizer: tokenizer.json, tokenizer_config.json when present, and chat_template.jinja (newer folders keep the template there). */
export async function loadHfTokenizer(files: ModelFiles): Promise<HfTokenizer> {
  const slow = ['vocab.json', 'merges.txt', 'tokenizer.model'].filter((f) => has(files, f));
  if (!has(files, 'tokenizer.json') && slow.length) {
    throw new HfFolderError(
      `${files.label}: has no tokenizer.json, only ${slow.join(', ')} (a slow tokenizer's files); write tokenizer.json with AutoTokenizer.from_pretrained(folder).save_pretrained(folder)`,
    );
  }
  const json = await readJsonFile(files, 'tokenizer.json');
  const config = (await readJsonFile(files, 'tokenizer_config.json', true)) ?? {};
  const chatTemplate = await readText(files, 'chat_template.jinja');
  return HfTokenizer.fromJSON(json, config, {
    ...(chatTemplate !== undefined ? { chatTemplate } : {}),
    sources: { tokenizer: `${files.label}/tokenizer.json`, config: `${files.label}/tokenizer_config.json` },
  });
}

/** generation_config.json's token ids: `eos_token_id` is one id or a list of them. */
export interface GenerationConfig {
  eosTokenIds: number[];
  bosTokenId: number | null;
  padTokenId: number | null;
}

function tokenIds(v: unknown, where: string): number[] {
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  if (!list.every((x) => Number.isInteger(x) && x >= 0))
    throw new HfFolderError(`${where}: must be a token id or a list of token ids, got ${JSON.stringify(v)}`);
  return list as number[];
}

function oneId(v: unknown, where: string): number | null {
  const ids = tokenIds(v, where);
  if (ids.length > 1) throw new HfFolderError(`${where}: must be one token id, got ${JSON.stringify(v)}`);
  return ids[0] ?? null;
}

/** Reads generation_config.json's token ids from its parsed JSON; `source` names it in errors. */
export function parseGenerationConfig(json: unknown, source = 'generation_config.json'): GenerationConfig {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new HfFolderError(`${source}: must be a JSON object`);
  const j = json as Record<string, unknown>;
  return {
    eosTokenIds: tokenIds(j.eos_token_id, `${source}: eos_token_id`),
    bosTokenId: oneId(j.bos_token_id, `${source}: bos_token_id`),
    padTokenId: oneId(j.pad_token_id, `${source}: pad_token_id`),
  };
}

/** The folder's generation_config.json, or null when it has none. */
export async function readGenerationConfig(files: ModelFiles): Promise<GenerationConfig | null> {
  const json = await readJsonFile(files, 'generation_config.json', true);
  return json === null ? null : parseGenerationConfig(json, `${files.label}/generation_config.json`);
}

/**
 * The ids generation stops at, where transformers takes them: generation_config.json's
 * eos_token_id, else config.json's, else the tokenizer's eos_token.
 */
export function stopTokenIds(generation: GenerationConfig | null, configJson: unknown, tokenizer: HfTokenizer | null): number[] {
  if (generation?.eosTokenIds.length) return generation.eosTokenIds;
  const fromConfig =
    typeof configJson === 'object' && configJson !== null ? tokenIds((configJson as Record<string, unknown>).eos_token_id, 'config.json: eos_token_id') : [];
  if (fromConfig.length) return fromConfig;
  return tokenizer?.eosTokenId !== null && tokenizer?.eosTokenId !== undefined ? [tokenizer.eosTokenId] : [];
}

/** One tensor of the folder's weights: which file holds it and where. */
export interface WeightEntry {
  name: string;
  dtype: Dtype;
  shape: number[];
  /** The file holding it, relative to the folder. */
  file: string;
  /** Its bytes in that file: [offset, offset + bytes). */
  offset: number;
  bytes: number;
}

export interface WeightIndex {
  /** The safetensors files, in name order (model-00001-of-0000n first). */
  files: string[];
  /** Every tensor, in file order then data order. */
  tensors: WeightEntry[];
  byName: Map<string, WeightEntry>;
}

const SINGLE = 'model.safetensors';
const INDEX = 'model.safetensors.index.json';
/** F32, F16 and BF16: what pretrained weights come in. */
const WEIGHT_DTYPES: readonly Dtype[] = ['F32', 'F16', 'BF16'];

async function readHeader(files: ModelFiles, file: string): Promise<WeightEntry[]> {
  const source = `${files.label}/${file}`;
  const size = await files.size(file);
  const headerLen = safetensorsHeaderLength(await files.read(file, 0, Math.min(8, size)), size, source);
  const header = safetensorsHeader(await files.read(file, 8, 8 + headerLen), size, source);
  return header.entries.map((e) => ({ name: e.name, dtype: e.dtype, shape: e.shape, file, offset: header.dataStart + e.begin, bytes: e.end - e.begin }));
}

/** The shard of each tensor, from model.safetensors.index.json. */
function parseIndex(json: unknown, source: string): Map<string, string> {
  const map = typeof json === 'object' && json !== null ? (json as Record<string, unknown>).weight_map : undefined;
  if (typeof map !== 'object' || map === null || Array.isArray(map))
    throw new HfFolderError(`${source}: has no "weight_map" object (tensor name -> shard file)`);
  const out = new Map<string, string>();
  for (const [name, file] of Object.entries(map)) {
    if (typeof file !== 'string' || !file) throw new HfFolderError(`${source}: weight_map['${name}'] must be a file name, got ${JSON.stringify(file)}`);
    out.set(name, file);
  }
  if (!out.size) throw new HfFolderError(`${source}: weight_map is empty`);
  return out;
}

function checkDtypes(entries: readonly WeightEntry[], label: string): void {
  for (const e of entries) {
    if (!WEIGHT_DTYPES.includes(e.dtype)) {
      throw new HfFolderError(
        `${label}/${e.file}: tensor '${e.name}' is ${e.dtype}; weights are read from ${WEIGHT_DTYPES.join(', ')} (a quantized folder? use its unquantized weights)`,
      );
    }
  }
}

function makeIndex(fileNames: string[], tensors: WeightEntry[]): WeightIndex {
  return { files: fileNames, tensors, byName: new Map(tensors.map((t) => [t.name, t])) };
}

/**
 * The folder's weights, from the safetensors headers alone: `model.safetensors`, or the shards
 * `model.safetensors.index.json` names (each checked to exist and to hold the tensors the index
 * puts in it). Only F32, F16 and BF16 tensors are accepted.
 */
export async function indexWeights(files: ModelFiles): Promise<WeightIndex> {
  if (has(files, SINGLE)) {
    const entries = await readHeader(files, SINGLE);
    checkDtypes(entries, files.label);
    return makeIndex([SINGLE], entries);
  }
  if (!has(files, INDEX)) {
    const found = files.list();
    const bin = found.filter((f) => f.endsWith('.bin') || f.endsWith('.pth') || f.endsWith('.gguf'));
    throw new HfFolderError(
      `${files.label}: has no ${SINGLE} or ${INDEX}` +
        (bin.length
          ? ` (it has ${bin.join(', ')}: only safetensors weights are read; save the model with safe_serialization)`
          : ` (found: ${found.join(', ') || 'no files'})`),
    );
  }
  const source = `${files.label}/${INDEX}`;
  const map = parseIndex(await readJsonFile(files, INDEX), source);
  const shards = [...new Set(map.values())].sort();
  const missing = shards.filter((s) => !has(files, s));
  if (missing.length)
    throw new HfFolderError(
      `${source}: names shard${missing.length > 1 ? 's' : ''} ${missing.map((m) => `'${m}'`).join(', ')}, not in the folder (an incomplete download?)`,
    );
  const tensors: WeightEntry[] = [];
  for (const shard of shards) {
    const entries = new Map((await readHeader(files, shard)).map((e) => [e.name, e]));
    for (const [name, file] of map) {
      if (file !== shard) continue;
      const e = entries.get(name);
      if (!e) throw new HfFolderError(`${source}: tensor '${name}' is listed in shard '${shard}', which does not hold it`);
      tensors.push(e);
    }
  }
  tensors.sort((a, b) => shards.indexOf(a.file) - shards.indexOf(b.file) || a.offset - b.offset);
  checkDtypes(tensors, files.label);
  return makeIndex(shards, tensors);
}

/** One tensor's values as f32 (F16 and BF16 exactly), read by its byte range. */
export async function readWeight(files: ModelFiles, entry: WeightEntry): Promise<Float32Array> {
  const bytes = await files.read(entry.file, entry.offset, entry.offset + entry.bytes);
  if (bytes.length !== entry.bytes)
    throw new SafetensorsError(`${files.label}/${entry.file}: tensor '${entry.name}' is cut short (${bytes.length} of ${entry.bytes} bytes)`);
  return tensorToF32({ name: entry.name, dtype: entry.dtype, shape: entry.shape, bytes }, `${files.label}/${entry.file}`);
}

/** The named tensors (default: all), as f32; a name the folder lacks is an error naming it. */
export async function readWeights(
  files: ModelFiles,
  index: WeightIndex,
  names?: readonly string[],
): Promise<Map<string, { shape: number[]; data: Float32Array }>> {
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const name of names ?? index.tensors.map((t) => t.name)) {
    const e = index.byName.get(name);
    if (!e) throw new HfFolderError(`${files.label}: has no tensor '${name}' in its weights (${index.files.join(', ')})`);
    out.set(name, { shape: e.shape, data: await readWeight(files, e) });
  }
  return out;
}

/** Everything of a folder but its tensors' values: what config.ts and weights.ts map onto our engine, and what generation needs. */
export interface HfFolder {
  files: ModelFiles;
  /** config.json as parsed (config.ts maps it onto our ModelConfig). */
  config: unknown;
  tokenizer: HfTokenizer;
  generation: GenerationConfig | null;
  /** Where generation stops: generation_config.json's eos ids, else config.json's, else the tokenizer's. */
  stopTokenIds: number[];
  weights: WeightIndex;
}

/** Opens a folder: reads its JSON files, its tokenizer and its safetensors headers (no tensor values). */
export async function openHfFolder(files: ModelFiles): Promise<HfFolder> {
  const config = await readJsonFile(files, 'config.json');
  const tokenizer = await loadHfTokenizer(files);
  const generation = await readGenerationConfig(files);
  const weights = await indexWeights(files);
  return { files, config, tokenizer, generation, stopTokenIds: stopTokenIds(generation, config, tokenizer), weights };
}
