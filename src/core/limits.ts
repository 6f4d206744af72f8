// The size and depth limits every record is held to where it enters: each importer (through the
// schema validator it runs first), `lwm validate`, the judge's record files and the app's
// editors. A record past a limit is an error at its `file:line: /pointer`, so nothing accepted
// can overflow the stack or a string later (JSON.stringify on export, structured clone, the
// judge's output). docs/security.md lists these numbers.
import { joinPointer } from './schema/locate.ts';

const MiB = 1024 * 1024;

export const LIMITS = {
  /** Arrays and objects inside each other in one record; the record itself is level 1. */
  depth: 100,
  /** Characters of text (string values and keys) in one record. */
  recordChars: 64 * MiB,
  /** Bytes in one line of an input file (UTF-16 units for text input). */
  lineBytes: 256 * MiB,
  /** Characters of a JSON (not JSONL) document, which is parsed whole. */
  documentChars: 256 * MiB,
  /** Turns in one trajectory. */
  turns: 10_000,
  /** An export estimated past this many characters is written with a warning saying how big. */
  exportWarnChars: 1_000_000_000,
} as const;

/** A number of bytes or characters in words: `64 MiB`, `1.5 GB`. */
export function sizeText(n: number, binary = true): string {
  const units = binary ? ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'] : ['bytes', 'kB', 'MB', 'GB', 'TB'];
  const base = binary ? 1024 : 1000;
  let i = 0;
  while (n >= base && i < units.length - 1) {
    n /= base;
    i++;
  }
  return `${i ? (Math.round(n * 10) / 10).toString() : n} ${units[i]}`;
}

export interface LimitProblem {
  pointer: string;
  message: string;
}

export const DEPTH_MESSAGE = `nested more than ${LIMITS.depth} levels deep (arrays and objects inside each other); at most ${LIMITS.depth} levels are accepted`;
export const RECORD_SIZE_MESSAGE = `record holds more than ${sizeText(LIMITS.recordChars)} of text (${LIMITS.recordChars} characters); split it`;

export interface RecordScan {
  /** The first limit the record breaks, at the value where it breaks it. */
  limit?: LimitProblem;
  /** Pointers of numbers JSON cannot hold (1e400 parses to Infinity), in document order. */
  nonFinite: string[];
}

export interface ScanOptions {
  /**
   * The value is a trajectory: its `source.raw` holds the source record (or, for AgentWorldBench,
   * the list of them), each counted from itself, as it was when it was imported.
   */
  trajectory?: boolean;
  /** Stop collecting non-finite pointers after this many. Default 20. */
  nonFiniteLimit?: number;
}

interface Frame {
  value: unknown;
  key: string;
  parent: Frame | null;
  depth: number;
  /** Index of the record this value counts towards (sizes). */
  root: number;
}

function pointerOf(f: Frame): string {
  const keys: string[] = [];
  for (let x: Frame | null = f; x?.parent; x = x.parent) keys.push(x.key);
  return joinPointer('', ...keys.reverse());
}

/**
 * Walks a parsed record once, without recursion (so any depth is safe to scan): depth and size
 * against LIMITS, and numbers that JSON cannot hold. Stops at the first broken limit.
 */
export function scanRecord(root: unknown, options: ScanOptions = {}): RecordScan {
  const nonFiniteLimit = options.nonFiniteLimit ?? 20;
  const nonFinite: string[] = [];
  const sizes = [0];
  const stack: Frame[] = [{ value: root, key: '', parent: null, depth: 1, root: 0 }];
  while (stack.length) {
    const f = stack.pop()!;
    const v = f.value;
    if (typeof v === 'string') {
      if ((sizes[f.root] += v.length) > LIMITS.recordChars) return { limit: { pointer: pointerOf(f), message: RECORD_SIZE_MESSAGE }, nonFinite };
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v) && nonFinite.length < nonFiniteLimit) nonFinite.push(pointerOf(f));
    } else if (v !== null && typeof v === 'object') {
      if (f.depth > LIMITS.depth) return { limit: { pointer: pointerOf(f), message: DEPTH_MESSAGE }, nonFinite };
      // The source records a trajectory keeps are counted from themselves.
      const raw = options.trajectory && f.key === 'raw' && f.parent?.key === 'source' && f.parent.parent?.parent === null;
      const list = raw && Array.isArray(v);
      let shared = f.root;
      if (raw && !list) {
        shared = sizes.length;
        sizes.push(0);
      }
      const child = (value: unknown, key: string): Frame => {
        if (!list) return { value, key, parent: f, depth: raw ? 2 : f.depth + 1, root: shared };
        sizes.push(0);
        return { value, key, parent: f, depth: 1, root: sizes.length - 1 };
      };
      if (Array.isArray(v)) {
        sizes[shared] += v.length;
        for (let i = v.length - 1; i >= 0; i--) stack.push(child(v[i], String(i)));
      } else {
        const keys = Object.keys(v);
        for (let i = keys.length - 1; i >= 0; i--) {
          sizes[shared] += keys[i].length + 1;
          stack.push(child((v as Record<string, unknown>)[keys[i]], keys[i]));
        }
      }
      if (sizes[shared] > LIMITS.recordChars) return { limit: { pointer: pointerOf(f), message: RECORD_SIZE_MESSAGE }, nonFinite };
    }
  }
  return { nonFinite };
}
