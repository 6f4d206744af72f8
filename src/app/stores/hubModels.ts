// Models fetched from the Hugging Face Hub by id (`org/name[@revision]`), shared by the folder
// pickers (Playground, Bench, Optimize) and the Train view. src/hub's downloader runs in the page
// on fetch, into huggingface_hub's cache layout kept in Cache Storage (src/hub/browser.ts), with
// each file's size and hash checked (crypto.subtle); a download cut off resumes from the bytes
// kept. A model already in the cache for that id is taken from it with no request (offline too);
// deleting it in the System view's Browser storage card fetches it anew. The files then go where a
// picked folder's go (as Blobs read from the cache). A token for a gated or private model is kept
// as an endpoint's API key is (stores/endpoints.ts): in this page's memory, and in localStorage
// only when "remember on this device" is ticked; it is sent to the Hub's origin only.
import { create } from 'zustand';
import { browserHash, cacheHubStorage } from '../../hub/browser.ts';
import { hubSnapshot, type HubClient, type Snapshot } from '../../hub/download.ts';
import { HubError } from '../../hub/errors.ts';
import { formatHubId, parseHubId, type HubId } from '../../hub/id.ts';
import type { HubSettings } from '../../hub/settings.ts';
import type { HfFolderFile } from '../../train/hfFolder.ts';
import { hubEndpoint } from '../lib/hubEndpoint.ts';
import { apiKey } from './endpoints.ts';

/** The key the Hub's token is kept under, beside the endpoints' keys. */
export const HUB_TOKEN_ID = 'huggingface-hub';

export interface FileProgress {
  path: string;
  done: number;
  total: number | null;
}

export interface HubFetch {
  /** The id as typed, tidied (`org/name` or `org/name@rev`). */
  label: string;
  status: 'fetching' | 'done' | 'error';
  /** Files downloaded (bytes so far and size); empty when everything came from the cache. */
  files: FileProgress[];
  fromCache: boolean;
  error: string | null;
}

export interface HubModelsDeps {
  caches(): CacheStorage | null;
  endpoint(): string;
  token(): string | null;
  fetch?: typeof fetch;
}

export interface HubModelsState {
  /** The latest fetch of each field (by its scope, e.g. 'pg'). */
  fetches: Record<string, HubFetch>;
  /** Fetches the model `text` names (from the cache when it is there); its files, or null after an error shown in `fetches[scope]`. */
  fetchModel(scope: string, text: string): Promise<HfFolderFile[] | null>;
  clear(scope: string): void;
}

/** What went wrong, for a person using the page (the downloader's messages speak of the command line's HF_TOKEN). */
export function hubProblem(e: unknown, label: string, endpoint: string, token: boolean): string {
  if (!(e instanceof HubError)) return `${label}: ${(e as Error).message}`;
  if (/no such model/.test(e.message))
    return `${label}: no such model on ${endpoint}: check the id (org/name, as on the model's page)${token ? ', and that the token has access to it' : '; if it is private or gated, add an access token'}.`;
  switch (e.about) {
    case 'auth':
      return token
        ? `${label}: the Hub refused the access token: it is expired, or its account has no access to this model (accept the model's terms on its page with that account).`
        : `${label}: the model is gated or private: add a Hugging Face access token (huggingface.co/settings/tokens) under "Access token", after accepting the model's terms on its page.`;
    case 'network':
      return /cannot reach/.test(e.message)
        ? `${label}: cannot reach the Hugging Face Hub at ${endpoint} (a network failure), and the model is not in this browser's cache: check the connection and try again.`
        : e.message.replace(/run the command again/, 'fetch it again');
    default:
      return e.message.replace(/\(or log in with `hf auth login`\)|set HF_TOKEN to an access token/g, 'add an access token');
  }
}

export function createHubModelsStore(deps: HubModelsDeps) {
  return create<HubModelsState>()((set, get) => {
    const patch = (scope: string, change: Partial<HubFetch>) =>
      set((s) => (s.fetches[scope] ? { fetches: { ...s.fetches, [scope]: { ...s.fetches[scope], ...change } } } : s));
    const fail = (scope: string, label: string, error: string) => {
      set((s) => ({ fetches: { ...s.fetches, [scope]: { label, status: 'error', files: s.fetches[scope]?.files ?? [], fromCache: false, error } } }));
      return null;
    };
    return {
      fetches: {},
      clear(scope) {
        set((s) => {
          const { [scope]: _, ...rest } = s.fetches;
          return { fetches: rest };
        });
      },
      async fetchModel(scope, text) {
        const typed = text.trim();
        if (get().fetches[scope]?.status === 'fetching') return null;
        if (!typed) return fail(scope, '', 'Type a model id: org/name or org/name@revision (e.g. HuggingFaceTB/SmolLM2-135M-Instruct).');
        let id: HubId | null;
        try {
          id = parseHubId(typed);
        } catch (e) {
          return fail(scope, typed, (e as Error).message);
        }
        if (!id)
          return fail(
            scope,
            typed,
            `'${typed}' is not a Hugging Face model id: write org/name or org/name@revision (a branch, a tag or a commit), as on the model's page.`,
          );
        const label = formatHubId(id);
        const caches = deps.caches();
        if (!caches)
          return fail(
            scope,
            label,
            `${label}: this browser gives the page no Cache Storage (a private window may refuse it), so the model cannot be kept; pick its folder instead.`,
          );
        set((s) => ({ fetches: { ...s.fetches, [scope]: { label, status: 'fetching', files: [], fromCache: false, error: null } } }));
        // Bytes per file; the state is written at most every 100 ms while data flows.
        const progress = new Map<string, FileProgress>();
        let last = 0;
        const show = (force: boolean) => {
          const now = Date.now();
          if (!force && now - last < 100) return;
          last = now;
          patch(scope, { files: [...progress.values()] });
        };
        const storage = cacheHubStorage(caches);
        const token = deps.token();
        const endpoint = deps.endpoint();
        const settings: HubSettings = {
          cacheDir: "this browser's Cache Storage",
          endpoint,
          offline: true,
          token,
          etagTimeoutMs: 30_000,
          downloadTimeoutMs: 30_000,
        };
        const client: HubClient = {
          settings,
          storage,
          hash: browserHash,
          ...(deps.fetch && { fetch: deps.fetch }),
          progress: (p) => {
            progress.set(p.path, { path: p.path, done: p.done, total: p.total });
            show(p.phase !== 'data');
          },
        };
        let snap: Snapshot;
        try {
          try {
            // The cache first: an id found there is used as it is, with no request.
            snap = await hubSnapshot(id, client);
          } catch (e) {
            if (!(e instanceof HubError && e.about === 'offline')) throw e;
            snap = await hubSnapshot(id, { ...client, settings: { ...settings, offline: false } });
          }
          const blobs = await storage.snapshotBlobs(id.repo, snap.commit, snap.files);
          show(true);
          patch(scope, { status: 'done', fromCache: snap.downloaded === 0 && progress.size === 0, error: null });
          return blobs.map((b) => ({ path: `${label}/${b.path}`, file: b.blob }));
        } catch (e) {
          show(true);
          return fail(scope, label, hubProblem(e, label, endpoint, token !== null));
        }
      },
    };
  });
}

export const useHubModelStore = createHubModelsStore({
  caches: () => (typeof caches === 'undefined' ? null : caches),
  endpoint: () => hubEndpoint(),
  token: () => apiKey(HUB_TOKEN_ID) || null,
});
