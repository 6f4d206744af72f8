// Where downloaded files are kept: the layout of huggingface_hub's cache, per repo folder
// `models--{org}--{name}`: `blobs/{etag}` (the bytes, named by their hash), `refs/{revision}` (the
// commit a branch or tag pointed at), `snapshots/{commit}/{path}` (a relative link to
// `../../blobs/{etag}`), and `blobs/{etag}.incomplete` for a download under way. The downloader
// (download.ts) speaks only this interface; src/hub/node.ts keeps it on disk, and a browser can
// keep it in its own storage.

/** The cache folder of a repo (huggingface_hub's repo_folder_name). */
export function repoFolderName(repo: string): string {
  return ['models', ...repo.split('/')].join('--');
}

/** A snapshot file's link target, relative to the link (`../../blobs/{etag}`, one more `../` per folder of `path`). */
export function blobLinkTarget(path: string, etag: string): string {
  const depth = path.split('/').length - 1;
  return `${'../'.repeat(depth + 2)}blobs/${etag}`;
}

/** A blob being downloaded (`blobs/{etag}.incomplete`). */
export interface PartialBlob {
  /** Bytes already there (a resumed download starts after them). */
  readonly size: number;
  /** The bytes already there, in order (to hash them before resuming). */
  read(): AsyncIterable<Uint8Array>;
  /** Starts over from zero bytes (the server ignored a range). */
  truncate(): Promise<void>;
  append(chunk: Uint8Array): Promise<void>;
  /** Makes it `blobs/{etag}`. */
  complete(): Promise<void>;
  /** Deletes it (its bytes were wrong). */
  discard(): Promise<void>;
  /** Closes it, keeping its bytes for a later resume. */
  close(): Promise<void>;
}

export interface HubStorage {
  /** The commit `refs/{revision}` holds, or null. */
  readRef(repo: string, revision: string): Promise<string | null>;
  writeRef(repo: string, revision: string, commit: string): Promise<void>;
  /** Whether `snapshots/{commit}/{path}` is there and reaches its blob. */
  hasSnapshotFile(repo: string, commit: string, path: string): Promise<boolean>;
  /** The files of `snapshots/{commit}`, or null when there is no such snapshot. */
  snapshotFiles(repo: string, commit: string): Promise<string[] | null>;
  /** The bytes of `snapshots/{commit}/{path}` (a small file: the shard index). */
  readSnapshotFile(repo: string, commit: string, path: string): Promise<Uint8Array>;
  /** A complete blob's size, or null when it is not there. */
  blobSize(repo: string, etag: string): Promise<number | null>;
  /** The blob's download under way, opened for appending (created empty if none). */
  partial(repo: string, etag: string): Promise<PartialBlob>;
  /**
   * Holds the blob for this download alone (another process or call downloading it waits), until
   * the returned release is called.
   */
  lock(repo: string, etag: string, signal?: AbortSignal): Promise<() => Promise<void>>;
  /** Links `snapshots/{commit}/{path}` to `blobs/{etag}`. */
  link(repo: string, commit: string, path: string, etag: string): Promise<void>;
  /** How the snapshot is named for a caller (its folder on disk). */
  snapshotLocation(repo: string, commit: string): string;
}

/** An incremental hash (sha256 of an LFS file, sha1 of a git blob). */
export interface Hasher {
  update(bytes: Uint8Array): void;
  /** Lower-case hex. */
  digest(): Promise<string>;
}

export type HashFactory = (algorithm: 'sha256' | 'sha1') => Hasher;
