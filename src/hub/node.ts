// The Hub's cache on disk, as huggingface_hub keeps it ($HF_HUB_CACHE, else $HF_HOME/hub, else
// ~/.cache/huggingface/hub), and the settings from this process's environment. Node-only: the
// app never imports this file.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, type Stats } from 'node:fs';
import { copyFile, mkdir, open, readdir, readFile, rename, rm, stat, symlink, writeFile, type FileHandle } from 'node:fs/promises';
import { homedir, hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { HubError } from './errors.ts';
import { hubSnapshot, type HubProgress, type Snapshot } from './download.ts';
import { parseHubId } from './id.ts';
import { hubSettings, type HubSettings } from './settings.ts';
import { blobLinkTarget, repoFolderName, type HashFactory, type HubStorage, type PartialBlob } from './storage.ts';

export const nodeHash: HashFactory = (algorithm) => {
  const h = createHash(algorithm);
  return {
    update: (bytes) => void h.update(bytes),
    digest: async () => h.digest('hex'),
  };
};

/** The settings from `env` (default: this process's environment) and the token file. */
export function nodeHubSettings(env: Record<string, string | undefined> = process.env): HubSettings {
  return hubSettings(env, {
    home: homedir(),
    readText: (path) => {
      try {
        return readFileSync(path, 'utf8');
      } catch {
        return null;
      }
    },
  });
}

function storageError(path: string, e: unknown): HubError {
  return new HubError(`${path}: cannot write the Hugging Face cache (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, 'storage');
}

async function statOrNull(path: string): Promise<Stats | null> {
  try {
    return await stat(path);
  } catch {
    return null;
  }
}

async function walk(dir: string, prefix: string, out: string[]): Promise<void> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    const p = join(dir, e.name);
    if (e.isDirectory()) await walk(p, rel, out);
    else if ((await statOrNull(p))?.isFile()) out.push(rel);
  }
}

/** The cache directory tag (https://bford.info/cachedir/) huggingface_hub also writes at the cache's top, so backup tools skip it. */
const CACHEDIR_TAG =
  'Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag: the Hugging Face Hub cache.\n# For information about cache directory tags, see:\n#\thttps://bford.info/cachedir/\n';

async function tagCache(cacheDir: string): Promise<void> {
  const tag = join(cacheDir, 'CACHEDIR.TAG');
  if (existsSync(tag)) return;
  try {
    await mkdir(cacheDir, { recursive: true });
    await writeFile(tag, CACHEDIR_TAG, { flag: 'wx' });
  } catch {
    // Best effort, as huggingface_hub's: a cache without the tag works the same.
  }
}

/** Whether the process a lock file names still runs (a lock from another machine counts as held). */
function holderAlive(text: string): boolean {
  const m = /^(\d+)@(.*)$/.exec(text.trim());
  if (!m) return false;
  if (m[2] !== hostname()) return true;
  try {
    process.kill(Number(m[1]), 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const LOCK_POLL_MS = 200;

/**
 * `.locks/models--{org}--{name}/{etag}.lwm.lock`, made with O_EXCL and holding `pid@host`: the
 * blob's one writer. A lock whose process has ended is taken over. (huggingface_hub's own locks
 * beside it are `{etag}.lock`, held with flock; a download by both at once is still told apart
 * by the size and hash checks.)
 */
async function lockBlob(cacheDir: string, repo: string, etag: string, signal?: AbortSignal): Promise<() => Promise<void>> {
  const path = join(cacheDir, '.locks', repoFolderName(repo), `${etag}.lwm.lock`);
  try {
    await mkdir(dirname(path), { recursive: true });
  } catch (e) {
    throw storageError(path, e);
  }
  for (;;) {
    try {
      await writeFile(path, `${process.pid}@${hostname()}\n`, { flag: 'wx' });
      return () => rm(path, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw storageError(path, e);
    }
    let text = '';
    try {
      text = await readFile(path, 'utf8');
    } catch {
      continue; // released meanwhile
    }
    // Our own process's lock is another call of ours under way: wait for it like any live holder.
    if (text && !holderAlive(text)) {
      await rm(path, { force: true });
      continue;
    }
    if (signal?.aborted) throw signal.reason;
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}

/** huggingface_hub's cache layout under `cacheDir`. */
export function nodeHubStorage(cacheDir: string): HubStorage {
  const root = (repo: string) => join(cacheDir, repoFolderName(repo));
  const snap = (repo: string, commit: string, path = '') => join(root(repo), 'snapshots', commit, ...path.split('/').filter(Boolean));
  const blob = (repo: string, etag: string) => join(root(repo), 'blobs', etag);
  return {
    async readRef(repo, revision) {
      try {
        const commit = (await readFile(join(root(repo), 'refs', ...revision.split('/')), 'utf8')).trim();
        return /^[0-9a-f]{40}$/.test(commit) ? commit : null;
      } catch {
        return null;
      }
    },
    async writeRef(repo, revision, commit) {
      const p = join(root(repo), 'refs', ...revision.split('/'));
      try {
        await mkdir(dirname(p), { recursive: true });
        const tmp = `${p}.${process.pid}.tmp`;
        await writeFile(tmp, commit);
        await rename(tmp, p);
      } catch (e) {
        throw storageError(p, e);
      }
    },
    hasSnapshotFile: async (repo, commit, path) => (await statOrNull(snap(repo, commit, path)))?.isFile() ?? false,
    async snapshotFiles(repo, commit) {
      const dir = snap(repo, commit);
      if (!(await statOrNull(dir))?.isDirectory()) return null;
      const out: string[] = [];
      await walk(dir, '', out);
      return out.sort();
    },
    readSnapshotFile: async (repo, commit, path) => new Uint8Array(await readFile(snap(repo, commit, path))),
    blobSize: async (repo, etag) => {
      const s = await statOrNull(blob(repo, etag));
      return s?.isFile() ? s.size : null;
    },
    async partial(repo, etag): Promise<PartialBlob> {
      const done = blob(repo, etag);
      const path = `${done}.incomplete`;
      let fh: FileHandle | null;
      await tagCache(cacheDir);
      try {
        await mkdir(dirname(path), { recursive: true });
        fh = await open(path, 'a');
      } catch (e) {
        throw storageError(path, e);
      }
      const size = (await fh.stat()).size;
      const close = async () => {
        const h = fh;
        fh = null;
        await h?.close();
      };
      const handle = (): FileHandle => {
        if (!fh) throw new Error(`${path}: already closed`);
        return fh;
      };
      return {
        size,
        read: () => createReadStream(path) as AsyncIterable<Uint8Array>,
        truncate: async () => handle().truncate(0),
        async append(chunk) {
          try {
            await handle().write(chunk);
          } catch (e) {
            throw storageError(path, e);
          }
        },
        async complete() {
          await close();
          await rename(path, done);
        },
        async discard() {
          await close();
          await rm(path, { force: true });
        },
        close,
      };
    },
    async link(repo, commit, path, etag) {
      const p = snap(repo, commit, path);
      try {
        await mkdir(dirname(p), { recursive: true });
        await rm(p, { force: true });
        try {
          await symlink(blobLinkTarget(path, etag), p);
        } catch (e) {
          // Where links cannot be made (Windows without developer mode), huggingface_hub copies the blob.
          if ((e as NodeJS.ErrnoException).code !== 'EPERM') throw e;
          await copyFile(blob(repo, etag), p);
        }
      } catch (e) {
        throw storageError(p, e);
      }
    },
    lock: (repo, etag, signal) => lockBlob(cacheDir, repo, etag, signal),
    snapshotLocation: (repo, commit) => snap(repo, commit),
  };
}

/** A progress printer: a line when a file starts, every tenth of it, and when it is done. */
export function progressLines(write: (line: string) => void): (p: HubProgress) => void {
  let shown = -1;
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  return (p) => {
    const name = `${p.repo}: ${p.path}`;
    if (p.phase === 'start') {
      shown = p.total ? Math.floor((10 * p.done) / p.total) : 0;
      write(`downloading ${name}${p.total !== null ? ` (${mb(p.total)})` : ''}${p.done > 0 ? `, resuming at ${mb(p.done)}` : ''}\n`);
    } else if (p.phase === 'data' && p.total) {
      const tenth = Math.floor((10 * p.done) / p.total);
      if (tenth > shown && tenth < 10) {
        shown = tenth;
        write(`  ${name}: ${tenth * 10}% (${mb(p.done)})\n`);
      }
    } else if (p.phase === 'done') write(`  ${name}: done\n`);
  };
}

/**
 * The folder `model` names: itself when it exists on disk or is written as a path; a Hugging Face
 * Hub id (`org/name[@revision]`) downloaded into the cache (or found there) otherwise.
 */
export async function resolveHubPath(
  model: string,
  o: { progress?: (p: HubProgress) => void; log?: (message: string) => void; env?: Record<string, string | undefined>; signal?: AbortSignal } = {},
): Promise<{ path: string; snapshot?: Snapshot }> {
  if (existsSync(model)) return { path: model };
  const id = parseHubId(model);
  if (!id) return { path: model };
  const settings = nodeHubSettings(o.env);
  const snapshot = await hubSnapshot(id, {
    settings,
    storage: nodeHubStorage(settings.cacheDir),
    hash: nodeHash,
    ...(o.progress && { progress: o.progress }),
    ...(o.log && { log: o.log }),
    ...(o.signal && { signal: o.signal }),
  });
  return { path: snapshot.location, snapshot };
}
