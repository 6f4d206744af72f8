// Where the Hub is and where its files are kept, from the environment as huggingface_hub reads it
// (constants.py): HF_HOME (default $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface),
// HF_HUB_CACHE (default $HF_HOME/hub), HF_ENDPOINT (default https://huggingface.co),
// HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE: 1, ON, YES, TRUE), HF_TOKEN, else the token file
// (HF_TOKEN_PATH, default $HF_HOME/token), HF_HUB_ETAG_TIMEOUT and HF_HUB_DOWNLOAD_TIMEOUT
// (seconds, default 10). Pure: the caller gives the environment, the home folder
// and how to read a file, so the browser can give its own.
import { HubError } from './errors.ts';

export interface HubSettings {
  /** The hub cache folder (`…/huggingface/hub`). */
  cacheDir: string;
  /** The Hub's base URL, without a trailing slash. */
  endpoint: string;
  offline: boolean;
  /** Sent as `Authorization: Bearer …` to the endpoint only; never printed. */
  token: string | null;
  /** How long the Hub may take to answer a listing or a file's headers (HF_HUB_ETAG_TIMEOUT, seconds; default 10). */
  etagTimeoutMs?: number;
  /** How long a download may wait for its answer or its next bytes (HF_HUB_DOWNLOAD_TIMEOUT, seconds; default 10). */
  downloadTimeoutMs?: number;
}

export type Env = Record<string, string | undefined>;

const TRUE = new Set(['1', 'ON', 'YES', 'TRUE']);

export function envTrue(value: string | undefined): boolean {
  return value !== undefined && TRUE.has(value.toUpperCase());
}

function joinPath(a: string, b: string): string {
  return a.endsWith('/') || a.endsWith('\\') ? a + b : `${a}/${b}`;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/** A timeout in seconds from the environment (a positive number), in milliseconds. */
function seconds(env: Env, name: string, fallback: number): number {
  const v = nonEmpty(env[name]);
  if (v === undefined) return fallback * 1000;
  const n = Number(v);
  if (!(n > 0 && Number.isFinite(n))) throw new HubError(`${name}='${v}' must be a number of seconds above 0`, 'id');
  return n * 1000;
}

export function hubSettings(env: Env, o: { home: string; readText: (path: string) => string | null }): HubSettings {
  const hfHome = nonEmpty(env.HF_HOME) ?? joinPath(nonEmpty(env.XDG_CACHE_HOME) ?? joinPath(o.home, '.cache'), 'huggingface');
  const cacheDir = nonEmpty(env.HF_HUB_CACHE) ?? nonEmpty(env.HUGGINGFACE_HUB_CACHE) ?? joinPath(hfHome, 'hub');
  const raw = (nonEmpty(env.HF_ENDPOINT) ?? 'https://huggingface.co').replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new HubError(`HF_ENDPOINT='${raw}' is not a URL (e.g. https://huggingface.co)`, 'id');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new HubError(`HF_ENDPOINT='${raw}' must be an http or https URL`, 'id');
  let token = env.HF_TOKEN?.trim() || null;
  if (token === null) {
    const file = nonEmpty(env.HF_TOKEN_PATH) ?? joinPath(hfHome, 'token');
    token = o.readText(file)?.trim() || null;
  }
  return {
    cacheDir,
    endpoint: raw,
    offline: envTrue(env.HF_HUB_OFFLINE) || envTrue(env.TRANSFORMERS_OFFLINE),
    token,
    etagTimeoutMs: seconds(env, 'HF_HUB_ETAG_TIMEOUT', 10),
    downloadTimeoutMs: seconds(env, 'HF_HUB_DOWNLOAD_TIMEOUT', 10),
  };
}
