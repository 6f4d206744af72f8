// What the Hub says about a revision and its files, read defensively: the revision API
// (`/api/models/{repo}/revision/{rev}?blobs=true`: `sha` and `siblings` with `rfilename`, `size`,
// `blobId`, `lfs: {sha256, size}`), the tree API (`/api/models/{repo}/tree/{rev}?recursive=true`:
// entries with `type`, `path`, `size`, `oid`, `lfs: {oid, size}`) and a file's headers
// (X-Repo-Commit, X-Linked-Etag or ETag, X-Linked-Size or Content-Length). A name that could
// leave the snapshot folder (`../x`, `/x`, `a\b`), a size that is not a safe integer, or an etag
// that is not a hash is refused: these become file names and byte counts on disk.
import { HubError } from './errors.ts';

export interface HubFile {
  /** Its path in the repo, `/`-separated, checked safe. */
  path: string;
  /** Its size in bytes (the LFS object's for an LFS file), when the Hub gave it. */
  size: number | null;
  /** The git blob id (the ETag of a regular file). */
  blobId: string | null;
  /** An LFS file's sha256 (its ETag) and size. */
  lfs: { sha256: string; size: number } | null;
}

export interface RevisionInfo {
  commit: string;
  files: HubFile[];
}

const SHA1 = /^[0-9a-f]{40}$/;
const SHA256 = /^[0-9a-f]{64}$/;
const MAX_PATH = 1024;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether `p` is a relative path that stays inside a folder on every system. */
export function safeRepoPath(p: unknown): p is string {
  if (typeof p !== 'string' || p.length === 0 || p.length > MAX_PATH) return false;
  if (/[\u0000-\u001f\u007f\\:*?"<>|]/.test(p)) return false;
  if (p.startsWith('/') || p.startsWith('~')) return false;
  return p.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..' && !/[. ]$/.test(seg));
}

function size(v: unknown, where: string): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw new HubError(`${where}: the Hub gave a size that is not a byte count (${String(v).slice(0, 40)})`, 'listing');
  return v;
}

function fileEntry(e: Record<string, unknown>, path: unknown, blobId: unknown, lfsHash: 'sha256' | 'oid', where: string): HubFile {
  if (!safeRepoPath(path))
    throw new HubError(`${where}: the Hub's listing names an unsafe file '${String(path).slice(0, 80)}' (a path outside the model folder); refused`, 'listing');
  const at = `${where}: ${path}`;
  let lfs: HubFile['lfs'] = null;
  if (e.lfs !== undefined && e.lfs !== null) {
    if (!isRecord(e.lfs)) throw new HubError(`${at}: the Hub's lfs entry is not an object`, 'listing');
    const sha = e.lfs[lfsHash] ?? e.lfs.sha256;
    if (typeof sha !== 'string' || !SHA256.test(sha)) throw new HubError(`${at}: the Hub's lfs sha256 is not a sha256`, 'listing');
    const s = size(e.lfs.size, at);
    if (s === null) throw new HubError(`${at}: the Hub's lfs entry has no size`, 'listing');
    lfs = { sha256: sha, size: s };
  }
  if (blobId !== undefined && blobId !== null && (typeof blobId !== 'string' || !SHA1.test(blobId)))
    throw new HubError(`${at}: the Hub's blob id is not a git sha`, 'listing');
  return { path, size: lfs ? lfs.size : size(e.size, at), blobId: (blobId as string | undefined) ?? null, lfs };
}

function commitOf(v: unknown, where: string): string {
  if (typeof v !== 'string' || !SHA1.test(v)) throw new HubError(`${where}: the Hub gave no commit sha for the revision`, 'listing');
  return v;
}

function unique(files: HubFile[], where: string): HubFile[] {
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path)) throw new HubError(`${where}: the Hub's listing names '${f.path}' twice`, 'listing');
    seen.add(f.path);
  }
  return files;
}

/** The revision API's answer (`?blobs=true`). */
export function parseRevisionInfo(json: unknown, where: string): RevisionInfo {
  if (!isRecord(json)) throw new HubError(`${where}: the Hub's answer is not a JSON object`, 'listing');
  const commit = commitOf(json.sha, where);
  if (!Array.isArray(json.siblings)) throw new HubError(`${where}: the Hub's answer lists no files (siblings)`, 'listing');
  const files = json.siblings.map((s) => {
    if (!isRecord(s)) throw new HubError(`${where}: a file entry of the Hub's listing is not an object`, 'listing');
    return fileEntry(s, s.rfilename, s.blobId, 'sha256', where);
  });
  return { commit, files: unique(files, where) };
}

/** One page of the tree API's answer: its files (folders are skipped). */
export function parseTreePage(json: unknown, where: string): HubFile[] {
  if (!Array.isArray(json)) throw new HubError(`${where}: the Hub's tree listing is not a JSON array`, 'listing');
  const files: HubFile[] = [];
  for (const e of json) {
    if (!isRecord(e)) throw new HubError(`${where}: an entry of the Hub's tree listing is not an object`, 'listing');
    if (e.type === 'directory') continue;
    if (e.type !== 'file') throw new HubError(`${where}: an entry of the Hub's tree listing is neither a file nor a directory`, 'listing');
    files.push(fileEntry(e, e.path, e.oid, 'oid', where));
  }
  return unique(files, where);
}

/** An ETag as huggingface_hub keeps it (`_normalize_etag`): without `W/` and quotes. */
export function normalizeEtag(v: string | null): string | null {
  if (v === null) return null;
  return v
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1');
}

export interface FileMetadata {
  /** The commit the file was resolved at (X-Repo-Commit). */
  commit: string | null;
  /** The blob's name in the cache: an LFS file's sha256 (X-Linked-Etag) or a regular file's git blob id (ETag). */
  etag: string | null;
  /** X-Linked-Size, else Content-Length. */
  size: number | null;
}

function headerSize(v: string | null, where: string): number | null {
  if (v === null) return null;
  const t = v.trim();
  const n = Number(t);
  if (!/^\d{1,16}$/.test(t) || !Number.isSafeInteger(n))
    throw new HubError(`${where}: the Hub gave a size header that is not a byte count ('${t.slice(0, 40)}')`, 'listing');
  return n;
}

/** A resolve answer's headers (`get_hf_file_metadata`): the etag, when given, must be a sha1 or sha256 (it names a file in the cache). */
export function fileMetadata(h: Headers, where: string): FileMetadata {
  const etag = normalizeEtag(h.get('x-linked-etag') ?? h.get('etag'));
  if (etag !== null && !SHA1.test(etag) && !SHA256.test(etag))
    throw new HubError(`${where}: the Hub gave an ETag that is not a hash ('${etag.slice(0, 80)}'); refused`, 'listing');
  const commit = h.get('x-repo-commit');
  if (commit !== null && !SHA1.test(commit.trim())) throw new HubError(`${where}: the Hub gave an X-Repo-Commit that is not a commit sha`, 'listing');
  return { commit: commit?.trim() ?? null, etag, size: headerSize(h.get('x-linked-size') ?? h.get('content-length'), where) };
}

/** `model.safetensors.index.json`: the shard files its weight_map names, each checked safe. */
export function shardsOfIndex(json: unknown, where: string): string[] {
  if (!isRecord(json) || !isRecord(json.weight_map)) throw new HubError(`${where}: model.safetensors.index.json has no weight_map object`, 'listing');
  const shards = new Set<string>();
  for (const v of Object.values(json.weight_map)) {
    if (!safeRepoPath(v)) throw new HubError(`${where}: model.safetensors.index.json names an unsafe shard '${String(v).slice(0, 80)}'; refused`, 'listing');
    shards.add(v);
  }
  if (!shards.size) throw new HubError(`${where}: model.safetensors.index.json names no shard`, 'listing');
  return [...shards].sort();
}

/** The files a model folder needs besides its weights: config, generation settings, tokenizer files, chat template, our template. */
export const SIDE_FILES = [
  'config.json',
  'generation_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'added_tokens.json',
  'vocab.json',
  'merges.txt',
  'vocab.txt',
  'tokenizer.model',
  'chat_template.jinja',
  'chat_template.json',
  'lwm_template.json',
  'adapter_config.json',
];

export const INDEX_FILE = 'model.safetensors.index.json';

/**
 * The weights to fetch: the index (its shards come once it is read), else model.safetensors, else a
 * PEFT adapter's, else every top-level *.safetensors; a repo without safetensors but with an ONNX
 * export, its default model `onnx/model.onnx` and the external data beside it. Null when the
 * revision has none of these.
 */
export function weightFiles(files: { path: string }[]): string[] | null {
  const names = new Set(files.map((f) => f.path));
  if (names.has(INDEX_FILE)) return [INDEX_FILE];
  for (const one of ['model.safetensors', 'adapter_model.safetensors']) if (names.has(one)) return [one];
  const top = [...names].filter((n) => !n.includes('/') && n.endsWith('.safetensors')).sort();
  if (top.length) return top;
  for (const onnx of ['onnx/model.onnx', 'model.onnx'])
    if (names.has(onnx)) return [onnx, ...[...names].filter((n) => n.startsWith(`${onnx}_data`) || n.startsWith(`${onnx}.data`)).sort()];
  return null;
}
