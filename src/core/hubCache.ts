// How the app's browser cache of Hugging Face Hub models is named in Cache Storage, shared by the
// downloader's browser storage (src/hub/browser.ts) and the System view's storage report
// (src/storage/usage.ts): one cache per repo, `lwm-hub:models--{org}--{name}` (huggingface_hub's
// repo folder name), its entries keyed by the cache's paths under a URL that is never fetched
// (`https://hub-cache.invalid/refs/main`, `…/blobs/{etag}`, `…/snapshots/{commit}/{path}`).

export const HUB_CACHE_PREFIX = 'lwm-hub:';
/** The URL the entries are keyed under (a reserved name: nothing is ever fetched from it). */
export const HUB_CACHE_KEY_BASE = 'https://hub-cache.invalid/';

export function hubCacheName(repo: string): string {
  return `${HUB_CACHE_PREFIX}${['models', ...repo.split('/')].join('--')}`;
}

/** The repo (`org/name`) a cache of the Hub holds, or null for another cache. */
export function repoOfHubCache(cacheName: string): string | null {
  if (!cacheName.startsWith(HUB_CACHE_PREFIX)) return null;
  const parts = cacheName.slice(HUB_CACHE_PREFIX.length).split('--');
  return parts.length === 3 && parts[0] === 'models' && parts[1] && parts[2] ? `${parts[1]}/${parts[2]}` : null;
}

/** The cache path an entry's key names (`refs/main`). */
export function hubCachePath(url: string): string | null {
  return url.startsWith(HUB_CACHE_KEY_BASE) ? url.slice(HUB_CACHE_KEY_BASE.length).split('/').map(decodeURIComponent).join('/') : null;
}

/** What a cache of the Hub holds: the revisions it names (branch or tag → commit) and its snapshots' commits. */
export async function describeHubCache(cache: Pick<Cache, 'keys' | 'match'>): Promise<{ refs: Record<string, string>; commits: string[] }> {
  const refs: Record<string, string> = {};
  const commits = new Set<string>();
  for (const req of await cache.keys()) {
    const path = hubCachePath(req.url);
    if (path === null) continue;
    if (path.startsWith('refs/')) {
      const res = await cache.match(req);
      if (res) refs[path.slice(5)] = (await res.text()).trim();
    } else if (path.startsWith('snapshots/')) commits.add(path.split('/')[1]);
  }
  return { refs, commits: [...commits].sort() };
}
