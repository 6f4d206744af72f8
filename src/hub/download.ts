// A model's files from the Hugging Face Hub into the cache, as huggingface_hub's snapshot_download
// does it: the revision's commit and file list from `GET {endpoint}/api/models/{repo}/revision/{rev}?blobs=true`,
// then for each file the model needs and the snapshot lacks, `HEAD {endpoint}/{repo}/resolve/{commit}/{path}`
// (relative redirects followed; an LFS file answers with a redirect to its storage, whose
// X-Linked-Etag and X-Linked-Size name and size it) and a GET that follows every redirect, into
// `blobs/{etag}.incomplete`, resumed with a Range request when one is there. Each file's size is
// checked, an LFS file's sha256 and a regular file's git blob id too; a file that fails is deleted,
// never kept as complete. Offline (HF_HUB_OFFLINE) only the cache is read. Runs on fetch alone, so
// the browser can use it with a storage of its own.
import { HubError } from './errors.ts';
import { formatHubId, isCommitSha, type HubId } from './id.ts';
import { fileMetadata, INDEX_FILE, parseRevisionInfo, SIDE_FILES, shardsOfIndex, weightFiles, type HubFile } from './listing.ts';
import type { HubSettings } from './settings.ts';
import type { HashFactory, HubStorage, PartialBlob } from './storage.ts';

export interface HubProgress {
  repo: string;
  path: string;
  /** Bytes of the file there so far (a resumed one starts above zero). */
  done: number;
  /** Its size, when known. */
  total: number | null;
  /** 'start' (with the bytes kept from an earlier try), 'data', 'done'. */
  phase: 'start' | 'data' | 'done';
}

export interface HubClient {
  settings: HubSettings;
  storage: HubStorage;
  hash: HashFactory;
  fetch?: typeof fetch;
  progress?: (p: HubProgress) => void;
  /** A line for the user (the cache used because the Hub could not be reached). */
  log?: (message: string) => void;
  signal?: AbortSignal;
}

export interface Snapshot {
  /** Where the snapshot is (its folder on disk in Node). */
  location: string;
  commit: string;
  /** The files of the model, as fetched or found. */
  files: string[];
  /** Bytes downloaded by this call (0 when everything was in the cache). */
  downloaded: number;
}

const MAX_REDIRECTS = 10;

function urlPath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

function networkError(c: HubClient, label: string, e: unknown): HubError {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (e as Error).message;
  return new HubError(
    `${label}: cannot reach the Hugging Face Hub at ${c.settings.endpoint} (${why}); check the network or HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to use the cache alone`,
    'network',
  );
}

/** The error for a failed answer, as huggingface_hub's hf_raise_for_status tells them apart (X-Error-Code, then the status). */
function statusError(c: HubClient, label: string, res: Response, what: string, id: HubId): HubError {
  const code = res.headers.get('x-error-code');
  const token = c.settings.token !== null;
  if (code === 'GatedRepo' || (res.status === 403 && !token))
    return new HubError(
      `${label}: is a gated model on ${c.settings.endpoint}; ${token ? 'the token in HF_TOKEN (or the token file) has no access to it: accept its terms on its page with that account' : 'accept its terms on its page, then set HF_TOKEN to an access token (or log in with `hf auth login`)'}`,
      'auth',
    );
  if (code === 'RevisionNotFound') return new HubError(`${label}: the model has no revision '${id.revision}' (a branch, tag or commit sha)`, 'missing');
  if (code === 'EntryNotFound') return new HubError(`${label}: the Hub has no file ${what} at this revision`, 'missing');
  if (code === 'RepoNotFound' || res.status === 401 || res.status === 404)
    return new HubError(
      res.status === 401 && token
        ? `${label}: the Hub refused the token in HF_TOKEN (or the token file); it is expired or has no access to this model`
        : `${label}: no such model on ${c.settings.endpoint}${token ? ' (or the token has no access to it)' : ' (if it is private or gated, set HF_TOKEN to an access token)'}`,
      res.status === 401 ? 'auth' : 'missing',
    );
  if (res.status === 403) return new HubError(`${label}: the Hub refused access to ${what} (HTTP 403); check that the token has access to this model`, 'auth');
  return new HubError(`${label}: the Hub answered HTTP ${res.status} for ${what}; try again later`, 'network');
}

/**
 * One request, following redirects by hand so the token goes to the endpoint's origin only; with
 * `otherHosts` false a redirect to another host is returned as it is: huggingface_hub's HEAD
 * (`_httpx_follow_hub_redirects_with_backoff`) follows redirects on the same host name and stops
 * at one to a CDN, whose response carries the file's X-Linked-Etag and X-Linked-Size. A browser's
 * opaque redirect is followed by the browser.
 */
async function send(
  c: HubClient,
  label: string,
  url: string,
  init: { method: 'GET' | 'HEAD'; headers?: Record<string, string> },
  otherHosts: boolean,
  timeoutMs: number,
): Promise<Response> {
  const f = c.fetch ?? fetch;
  const endpoint = new URL(c.settings.endpoint).origin;
  let current = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const headers = new Headers(init.headers);
    if (c.settings.token !== null && new URL(current).origin === endpoint) headers.set('authorization', `Bearer ${c.settings.token}`);
    // The answer's headers must come within the timeout (its body is timed by the reader); the caller's signal stops it too.
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    c.signal?.addEventListener('abort', onAbort);
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      ctl.abort();
    }, timeoutMs);
    const req: RequestInit = { method: init.method, headers, redirect: 'manual', signal: ctl.signal };
    let res: Response;
    try {
      res = await f(current, req);
      if (res.type === 'opaqueredirect') res = await f(current, { ...req, redirect: 'follow' });
    } catch (e) {
      if (c.signal?.aborted) throw e;
      if (late)
        throw new HubError(
          `${label}: the Hugging Face Hub at ${new URL(current).origin} did not answer within ${timeoutMs / 1000} s; try again (HF_HUB_ETAG_TIMEOUT, HF_HUB_DOWNLOAD_TIMEOUT set longer waits)`,
          'network',
        );
      throw networkError(c, label, e);
    } finally {
      clearTimeout(timer);
      c.signal?.removeEventListener('abort', onAbort);
    }
    const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
    if (location === null) return res;
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw new HubError(`${label}: the Hub redirected to '${location.slice(0, 80)}', which is not a URL`, 'listing');
    }
    if (next.protocol !== 'https:' && next.protocol !== 'http:')
      throw new HubError(`${label}: the Hub redirected to a ${next.protocol} URL; refused`, 'listing');
    if (!otherHosts && next.hostname !== new URL(current).hostname) return res;
    await res.body?.cancel();
    current = next.href;
  }
  throw new HubError(`${label}: the Hub redirected more than ${MAX_REDIRECTS} times`, 'network');
}

/** The most a listing or an index may take: the Hub's largest model listings are a few MB. */
const MAX_JSON_BYTES = 64 << 20;

async function readJson(res: Response, label: string, what: string): Promise<unknown> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      let r: ReadableStreamReadResult<Uint8Array>;
      try {
        r = await reader.read();
      } catch (e) {
        throw new HubError(`${label}: the Hub's answer for ${what} was cut off (${(e as Error).message})`, 'network');
      }
      if (r.done) break;
      total += r.value.length;
      if (total > MAX_JSON_BYTES) {
        await reader.cancel();
        throw new HubError(`${label}: the Hub's answer for ${what} is over ${MAX_JSON_BYTES >> 20} MiB; refused`, 'listing');
      }
      chunks.push(r.value);
    }
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  const text = new TextDecoder().decode(bytes);
  try {
    return JSON.parse(text);
  } catch {
    throw new HubError(`${label}: the Hub's answer for ${what} is not JSON`, 'listing');
  }
}

/** The files of a snapshot that make the model, when they are all there (offline, or the Hub out of reach). */
async function cachedModel(c: HubClient, id: HubId, commit: string): Promise<string[] | null> {
  const files = await c.storage.snapshotFiles(id.repo, commit);
  if (!files) return null;
  const weights = weightFiles(files.map((path) => ({ path })));
  if (!weights) return null;
  if (weights[0] === INDEX_FILE) {
    let shards: string[];
    try {
      shards = shardsOfIndex(JSON.parse(new TextDecoder().decode(await c.storage.readSnapshotFile(id.repo, commit, INDEX_FILE))), formatHubId(id));
    } catch {
      return null;
    }
    if (!shards.every((s) => files.includes(s))) return null;
  }
  return files;
}

async function fromCache(c: HubClient, id: HubId): Promise<Snapshot | null> {
  const commit = isCommitSha(id.revision) ? id.revision : await c.storage.readRef(id.repo, id.revision);
  if (commit === null) return null;
  const files = await cachedModel(c, id, commit);
  return files && { location: c.storage.snapshotLocation(id.repo, commit), commit, files, downloaded: 0 };
}

/** The model `id` names, from the cache when it is there for that commit, else downloaded into it. */
export async function hubSnapshot(id: HubId, c: HubClient): Promise<Snapshot> {
  const label = formatHubId(id);
  if (c.settings.offline) {
    const cached = await fromCache(c, id);
    if (cached) return cached;
    throw new HubError(
      `${label}: is not in the Hugging Face cache (${c.settings.cacheDir}) and HF_HUB_OFFLINE is set; download it once without HF_HUB_OFFLINE (or point HF_HUB_CACHE at a cache that has it)`,
      'offline',
    );
  }
  const infoUrl = `${c.settings.endpoint}/api/models/${id.repo}/revision/${encodeURIComponent(id.revision)}?blobs=true`;
  let res: Response;
  try {
    res = await send(c, label, infoUrl, { method: 'GET' }, true, c.settings.etagTimeoutMs ?? 10_000);
  } catch (e) {
    // As huggingface_hub: the Hub out of reach, a complete snapshot in the cache is used.
    if (e instanceof HubError && e.about === 'network') {
      const cached = await fromCache(c, id);
      if (cached) {
        c.log?.(`${label}: the Hub cannot be reached; using the cached snapshot ${cached.commit}`);
        return cached;
      }
    }
    throw e;
  }
  if (!res.ok) {
    const error = statusError(c, label, res, 'the model', id);
    // As huggingface_hub: a Hub that fails (5xx), a complete snapshot in the cache is used.
    const cached = error.about === 'network' ? await fromCache(c, id) : null;
    if (!cached) throw error;
    c.log?.(`${label}: the Hub answered HTTP ${res.status}; using the cached snapshot ${cached.commit}`);
    return cached;
  }
  const info = parseRevisionInfo(await readJson(res, label, 'the model'), label);
  if (isCommitSha(id.revision) && info.commit !== id.revision)
    throw new HubError(`${label}: the Hub answered commit ${info.commit} for commit ${id.revision}`, 'listing');
  const byPath = new Map(info.files.map((f) => [f.path, f]));
  const weights = weightFiles(info.files);
  if (!weights)
    throw new HubError(
      `${label}: the model has no safetensors weights at this revision (files: ${info.files
        .map((f) => f.path)
        .slice(0, 12)
        .join(', ')})`,
      'missing',
    );
  const wanted = [...SIDE_FILES.filter((p) => byPath.has(p)), ...weights];
  let downloaded = 0;
  for (const path of wanted) downloaded += await fetchFile(c, id, info.commit, byPath.get(path)!);
  if (weights[0] === INDEX_FILE) {
    const index = JSON.parse(new TextDecoder().decode(await c.storage.readSnapshotFile(id.repo, info.commit, INDEX_FILE))) as unknown;
    const shards = shardsOfIndex(index, label);
    for (const s of shards) {
      const f = byPath.get(s);
      if (!f) throw new HubError(`${label}: model.safetensors.index.json names ${s}, which the Hub does not list`, 'missing');
      downloaded += await fetchFile(c, id, info.commit, f);
      wanted.push(s);
    }
  }
  if (id.revision !== info.commit) await c.storage.writeRef(id.repo, id.revision, info.commit);
  return { location: c.storage.snapshotLocation(id.repo, info.commit), commit: info.commit, files: wanted, downloaded };
}

/** One file into the snapshot; the bytes downloaded. */
async function fetchFile(c: HubClient, id: HubId, commit: string, f: HubFile): Promise<number> {
  const label = formatHubId(id);
  if (await c.storage.hasSnapshotFile(id.repo, commit, f.path)) return 0;
  const url = `${c.settings.endpoint}/${id.repo}/resolve/${commit}/${urlPath(f.path)}`;
  const head = await send(c, label, url, { method: 'HEAD' }, false, c.settings.etagTimeoutMs ?? 10_000);
  if (!(head.ok || (head.status >= 300 && head.status < 400))) throw statusError(c, label, head, f.path, id);
  // A browser follows a redirect itself (an opaque one cannot be read): the headers are then the
  // storage's, not the Hub's, and the listing alone names and sizes the file.
  const meta = head.redirected ? { commit: null, etag: null, size: null } : fileMetadata(head.headers, `${label}: ${f.path}`);
  if (meta.commit !== null && meta.commit !== commit)
    throw new HubError(`${label}: ${f.path}: the Hub resolved it at commit ${meta.commit}, not ${commit}`, 'listing');
  const etag = meta.etag ?? f.lfs?.sha256 ?? f.blobId;
  if (etag === null) throw new HubError(`${label}: ${f.path}: the Hub gave no ETag (the file's hash), so it cannot be kept in the cache`, 'listing');
  if (f.lfs && etag !== f.lfs.sha256) throw new HubError(`${label}: ${f.path}: the Hub's listing and its headers give two different hashes`, 'integrity');
  if (f.size !== null && meta.size !== null && f.size !== meta.size)
    throw new HubError(`${label}: ${f.path}: the Hub's listing says ${f.size} bytes and its headers ${meta.size}`, 'integrity');
  const size = f.size ?? meta.size;
  let downloaded = 0;
  const complete = async () => {
    const kept = await c.storage.blobSize(id.repo, etag);
    return kept !== null && (size === null || kept === size);
  };
  if (!(await complete())) {
    // One writer a blob: a second download of it (another process, or this one's other call) waits, then finds it done.
    const release = await c.storage.lock(id.repo, etag, c.signal);
    try {
      if (!(await complete())) downloaded = await download(c, id, url, f.path, etag, size, f.lfs !== null);
    } finally {
      await release();
    }
  }
  await c.storage.link(id.repo, commit, f.path, etag);
  return downloaded;
}

/** Which hash names the blob: an LFS file's sha256, a regular file's git blob id (sha1 of `blob {size}\0` and the bytes). */
function expectedHash(etag: string, lfs: boolean): 'sha256' | 'sha1' | null {
  if (/^[0-9a-f]{64}$/.test(etag)) return 'sha256';
  if (!lfs && /^[0-9a-f]{40}$/.test(etag)) return 'sha1';
  return null;
}

/** The total a GET answer announces (Content-Range's total, else Content-Length plus the bytes skipped). */
function announced(res: Response, from: number): number | null {
  const range = res.headers.get('content-range');
  const m = range && /\/(\d{1,16})\s*$/.exec(range);
  if (m) return Number(m[1]);
  const len = res.headers.get('content-length');
  return len !== null && /^\d{1,16}$/.test(len.trim()) ? from + Number(len) : null;
}

async function download(c: HubClient, id: HubId, url: string, path: string, etag: string, size: number | null, lfs: boolean): Promise<number> {
  const label = formatHubId(id);
  const where = `${label}: ${path}`;
  const part: PartialBlob = await c.storage.partial(id.repo, etag);
  const algorithm = expectedHash(etag, lfs);
  // The git blob id hashes a header with the size first; without a size only an LFS hash is checked.
  const check = algorithm === 'sha1' && size === null ? null : algorithm;
  let have = part.size;
  let fetched = 0;
  try {
    if (size !== null && have > size) {
      await part.truncate();
      have = 0;
    }
    const startHash = () => {
      const h = check ? c.hash(check) : null;
      if (h && check === 'sha1') h.update(new TextEncoder().encode(`blob ${size}\0`));
      return h;
    };
    let hasher = startHash();
    if (have > 0 && hasher) for await (const chunk of part.read()) hasher.update(chunk);
    c.progress?.({ repo: id.repo, path, done: have, total: size, phase: 'start' });
    if (size === null || have < size) {
      const wait = c.settings.downloadTimeoutMs ?? 10_000;
      const res = await send(c, label, url, { method: 'GET', ...(have > 0 && { headers: { range: `bytes=${have}-` } }) }, true, wait);
      if (have > 0 && res.status === 200) {
        // The server ignored the range: start over.
        await part.truncate();
        have = 0;
        hasher = startHash();
      } else if (!res.ok) throw statusError(c, label, res, path, id);
      else if (have > 0 && res.status !== 206) throw new HubError(`${where}: the Hub answered HTTP ${res.status} to a resumed download`, 'network');
      const total = announced(res, have);
      if (size !== null && total !== null && total !== size) {
        await res.body?.cancel();
        await part.discard();
        throw new HubError(`${where}: the Hub said ${size} bytes but sends ${total}; the file was not kept`, 'integrity');
      }
      if (!res.body) throw new HubError(`${where}: the Hub sent no body`, 'network');
      const reader = res.body.getReader();
      try {
        for (;;) {
          let r: ReadableStreamReadResult<Uint8Array>;
          let timer: ReturnType<typeof setTimeout> | undefined;
          try {
            // A stalled connection: no bytes for the timeout ends the read, the bytes so far kept for a resume.
            const stalled = new Promise<never>((_, reject) => {
              timer = setTimeout(() => reject(new Error(`no data for ${wait / 1000} s`)), wait);
            });
            r = await Promise.race([reader.read(), stalled]);
          } catch (e) {
            await reader.cancel().catch(() => undefined);
            if (c.signal?.aborted) throw e;
            throw new HubError(
              `${where}: the download stopped at ${have} of ${size ?? '?'} bytes (${(e as Error).message}); run the command again to resume it`,
              'network',
            );
          } finally {
            clearTimeout(timer);
          }
          if (r.done) break;
          if (size !== null && have + r.value.length > size) {
            await part.discard();
            throw new HubError(`${where}: the Hub sent more than the ${size} bytes it said; the file was not kept`, 'integrity');
          }
          await part.append(r.value);
          hasher?.update(r.value);
          have += r.value.length;
          fetched += r.value.length;
          c.progress?.({ repo: id.repo, path, done: have, total: size, phase: 'data' });
        }
      } finally {
        reader.releaseLock();
      }
      if (size !== null && have < size)
        throw new HubError(`${where}: the download stopped at ${have} of ${size} bytes; run the command again to resume it`, 'network');
    }
    if (hasher) {
      const got = await hasher.digest();
      if (got !== etag) {
        await part.discard();
        throw new HubError(`${where}: its ${check} is ${got}, not ${etag} as the Hub said; the file was not kept`, 'integrity');
      }
    }
    await part.complete();
    c.progress?.({ repo: id.repo, path, done: have, total: size ?? have, phase: 'done' });
    return fetched;
  } finally {
    await part.close();
  }
}
