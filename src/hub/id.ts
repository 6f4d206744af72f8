// A model id on the Hugging Face Hub as the command line and the library take it: `org/name` or
// `org/name@revision` (a branch, a tag or a commit sha). A path on disk always wins over an id,
// and `./x`, `/x`, `x/`, `~/x` and Windows paths are paths, never ids.
import { HubError } from './errors.ts';

export interface HubId {
  /** `org/name`. */
  repo: string;
  /** A branch, a tag or a 40-hex commit sha (default `main`). */
  revision: string;
}

export const DEFAULT_REVISION = 'main';

/** The Hub's repo name rule (huggingface_hub's validate_repo_id): letters, digits, `-`, `_`, `.`, no `--` or `..`, at most 96 characters. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9\-_.]*$/;
const COMMIT = /^[0-9a-f]{40}$/;

export function isCommitSha(revision: string): boolean {
  return COMMIT.test(revision);
}

/** A model file's extension: a name ending in one is a file on disk, never a Hub repository. */
const MODEL_FILE = /\.(safetensors|onnx|gguf|bin|pt|pth|ckpt)$/i;

/**
 * Whether `s` is written as a path (never an id): starts with `.`, `/`, `~` or a drive letter,
 * ends with `/`, holds a backslash, or names a model file (`runs/w.safetensors`: a mistyped
 * path, not a repository to look up on the Hub).
 */
export function writtenAsPath(s: string): boolean {
  return /^[./~]/.test(s) || s.endsWith('/') || s.includes('\\') || /^[A-Za-z]:/.test(s) || MODEL_FILE.test(s.split('@')[0]);
}

function checkName(part: string): boolean {
  return part.length > 0 && NAME.test(part) && !part.includes('--') && !part.includes('..') && !part.endsWith('.git');
}

/** Checks a revision: no control characters, no `..` segment, no leading or trailing `/`. */
function checkRevision(rev: string): boolean {
  return (
    rev.length > 0 &&
    rev.length <= 256 &&
    !/[\u0000-\u001f\u007f\s\\]/.test(rev) &&
    !rev.startsWith('/') &&
    !rev.endsWith('/') &&
    !rev.split('/').some((p) => p === '' || p === '.' || p === '..')
  );
}

/** The id `s` names, or null when it is not written as one (then it is a path). */
export function parseHubId(s: string): HubId | null {
  if (writtenAsPath(s)) return null;
  const at = s.indexOf('@');
  const repo = at < 0 ? s : s.slice(0, at);
  const parts = repo.split('/');
  if (parts.length !== 2 || !parts.every(checkName) || repo.length > 96) return null;
  if (at < 0) return { repo, revision: DEFAULT_REVISION };
  const revision = s.slice(at + 1);
  if (!checkRevision(revision)) throw new HubError(`${s}: '${revision}' is not a revision (a branch, a tag or a commit sha after '@')`, 'id');
  return { repo, revision };
}

export function formatHubId(id: HubId): string {
  return id.revision === DEFAULT_REVISION ? id.repo : `${id.repo}@${id.revision}`;
}
