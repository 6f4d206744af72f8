// OpenAI-compatible endpoints the user has set up (vLLM, SGLang, Ollama, hosted APIs), shared by
// the Playground and the Bench. Settings (base URL, model, context) persist in localStorage; an
// API key stays in this page's memory unless the user ticks "remember on this device", and only
// then goes to localStorage, under its own key. Keys never enter the persisted settings, an
// exported file or a log: `endpointConfig` is the one place a key meets a request.
import { create } from 'zustand';
import { persist } from 'zustand/middleware';
import type { EndpointConfig } from '../../backends/endpoint.ts';

export interface EndpointSettings {
  id: string;
  baseUrl: string;
  model: string;
  /** The model's context in tokens, when the user states it (the context bar's limit). */
  contextLength: number | null;
  /** Stream the reply (server-sent events) or ask for it whole. */
  stream: boolean;
}

/** Where remembered keys live: one localStorage entry per endpoint, never inside the settings. */
export const KEY_PREFIX = 'lwm.endpointKey.';

/** The storage remembered keys go to (localStorage in the page; a Map-backed one in tests). */
export interface KeyStorage {
  getItem(k: string): string | null;
  setItem(k: string, v: string): void;
  removeItem(k: string): void;
}

function pageStorage(): KeyStorage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null; // storage disabled by the browser
  }
}

/** Keys held in memory for this page only. */
const memoryKeys = new Map<string, string>();

/**
 * Sets the API key of an endpoint: in memory always; in `storage` only when `remember`, and
 * removed from it otherwise (unticking forgets a remembered key).
 */
export function setApiKey(id: string, key: string, remember: boolean, storage: KeyStorage | null = pageStorage()): void {
  if (key) memoryKeys.set(id, key);
  else memoryKeys.delete(id);
  if (!storage) return;
  if (remember && key) storage.setItem(KEY_PREFIX + id, key);
  else storage.removeItem(KEY_PREFIX + id);
}

/** The key of an endpoint: this page's memory, else a remembered one. */
export function apiKey(id: string, storage: KeyStorage | null = pageStorage()): string {
  return memoryKeys.get(id) ?? storage?.getItem(KEY_PREFIX + id) ?? '';
}

export function isKeyRemembered(id: string, storage: KeyStorage | null = pageStorage()): boolean {
  return !!storage?.getItem(KEY_PREFIX + id);
}

/** Forgets a key everywhere (an endpoint removed). */
export function forgetApiKey(id: string, storage: KeyStorage | null = pageStorage()): void {
  memoryKeys.delete(id);
  storage?.removeItem(KEY_PREFIX + id);
}

/** Problems with settings before a request is made, each a sentence; empty when usable. */
export function endpointProblems(s: Pick<EndpointSettings, 'baseUrl' | 'model'>): string[] {
  const out: string[] = [];
  if (!/^https?:\/\/[^/\s]+/i.test(s.baseUrl.trim()))
    out.push('The base URL must start with http:// or https:// (e.g. http://127.0.0.1:8000/v1 for vLLM, http://localhost:11434/v1 for Ollama).');
  else if (/^https?:\/\/[^/]*@/i.test(s.baseUrl.trim())) out.push('Put credentials in the API key field, not in the base URL.');
  if (!s.model.trim()) out.push('The model: the name the endpoint serves (vLLM: the --served-model-name or the model path; Ollama: e.g. qwen2.5:7b).');
  return out;
}

/** The client configuration of an endpoint, with its key. */
export function endpointConfig(s: EndpointSettings, storage: KeyStorage | null = pageStorage()): EndpointConfig {
  const key = apiKey(s.id, storage);
  return { baseUrl: s.baseUrl.trim(), model: s.model.trim(), stream: s.stream, ...(key ? { apiKey: key } : {}), retries: 1, timeoutMs: 120_000 };
}

/** A base URL as compared: trimmed, without trailing slashes. */
export function normalBaseUrl(u: string): string {
  return u.trim().replace(/\/+$/, '');
}

/**
 * The endpoint set up here for a base URL and model (a stored benchmark names its endpoints so):
 * of several, the first whose key is at hand.
 */
export function findEndpoint(
  list: readonly EndpointSettings[],
  e: { baseUrl: string; model: string },
  storage: KeyStorage | null = pageStorage(),
): EndpointSettings | undefined {
  const same = list.filter((x) => normalBaseUrl(x.baseUrl) === normalBaseUrl(e.baseUrl) && x.model.trim() === e.model.trim());
  return same.find((x) => apiKey(x.id, storage)) ?? same[0];
}

/** The key this device has for the endpoint a stored record names (findEndpoint's), or '' for none. */
export function keyFor(
  e: { baseUrl: string; model: string },
  endpoints: readonly EndpointSettings[] = useEndpointStore.getState().endpoints,
  storage: KeyStorage | null = pageStorage(),
): string {
  const known = findEndpoint(endpoints, e, storage);
  return known ? apiKey(known.id, storage) : '';
}

export function newEndpointId(): string {
  return `ep-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
}

interface EndpointState {
  endpoints: EndpointSettings[];
  /** Adds or replaces one endpoint's settings. */
  save(s: EndpointSettings): void;
  remove(id: string): void;
}

export const useEndpointStore = create<EndpointState>()(
  persist(
    (set, get) => ({
      endpoints: [],
      save(s) {
        const rest = get().endpoints.filter((e) => e.id !== s.id);
        set({ endpoints: [...rest, s] });
      },
      remove(id) {
        forgetApiKey(id);
        set({ endpoints: get().endpoints.filter((e) => e.id !== id) });
      },
    }),
    {
      name: 'lwm.endpoints',
      version: 1,
      // Settings only: a key is never part of this record.
      partialize: (s) => ({ endpoints: s.endpoints.map(({ id, baseUrl, model, contextLength, stream }) => ({ id, baseUrl, model, contextLength, stream })) }),
    },
  ),
);

/** A key the user typed for an endpoint on resume, and whether to remember it on this device. */
export interface TypedKey {
  key: string;
  remember: boolean;
}

/**
 * Gives this device a key for an endpoint a stored record names (a bench's, a Sim RL world's),
 * setting the endpoint up here when it is not yet; remembered when asked.
 */
export function provideEndpointKey(endpoint: { baseUrl: string; model: string }, key: string, remember: boolean): void {
  const store = useEndpointStore.getState();
  let e = findEndpoint(store.endpoints, endpoint);
  if (!e) {
    e = { id: newEndpointId(), baseUrl: endpoint.baseUrl, model: endpoint.model, contextLength: null, stream: true };
    store.save(e);
  }
  setApiKey(e.id, key, remember);
}
