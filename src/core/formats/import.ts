// The streaming import driver: lines in, trajectories and located errors out. It never throws
// on bad input: each bad line or record becomes a DataError and the rest import.
import { DOMAINS, type Trajectory } from '../schema/types.ts';
import { validateTrajectory, type DataError } from '../schema/validate.ts';
import { arrayElementLines, lineOfPointer } from '../schema/locate.ts';
import { readLines, textChunks, type ChunkSource } from './lines.ts';
import { nativeImporter } from './native.ts';
import { agentWorldBenchImporter } from './agentworldbench.ts';
import { openAiImporter } from './openai.ts';
import { shareGptImporter } from './sharegpt.ts';
import { agentInstructImporter } from './agentinstruct.ts';
import { FORMAT_NAMES, isObject, type FormatImporter, type FormatName, type ImportSession, type RecordError, type SessionOutput } from './types.ts';

export const IMPORTERS: Record<FormatName, FormatImporter> = {
  native: nativeImporter,
  agentworldbench: agentWorldBenchImporter,
  openai: openAiImporter,
  sharegpt: shareGptImporter,
  agentinstruct: agentInstructImporter,
};

export interface ImportProgress {
  /** Bytes (UTF-16 units for string input) read so far. */
  consumed: number;
  /** Total size when the caller knows it (File.size, fs.stat), for a percentage. */
  total?: number;
  lines: number;
  records: number;
  trajectories: number;
  errors: number;
  done: boolean;
}

export interface ImportOptions {
  /** 'auto' (default) picks the format from the first record that any importer recognises. */
  format?: FormatName | 'auto';
  /** File name for error messages and `source.file`. */
  file?: string;
  /** Overrides the domain every trajectory gets. */
  domain?: string;
  /** Keep source records in `trajectory.source.raw` (default true; AgentWorldBench export uses them). */
  keepRaw?: boolean;
  total?: number;
  onProgress?: (p: ImportProgress) => void;
  /** Lines between progress reports (default 2000). */
  progressEvery?: number;
  /** Stop collecting error details after this many (counting continues). Default 1000. */
  maxErrors?: number;
  /** Largest JSON (non-JSONL) document held in memory, in UTF-16 units. Default 512 MiB. */
  maxDocumentChars?: number;
  /**
   * Ids already taken, with where each was first seen. A trajectory whose id is taken is left out
   * with an error naming both places (ids key the train/eval split, the RL pool and the masks).
   * Pass one map to several imports that build one dataset; the driver adds every id it keeps.
   */
  seenIds?: Map<string, IdSource>;
}

/** Where a trajectory id was first seen. */
export interface IdSource {
  file?: string;
  line?: number;
}

function where(s: IdSource): string {
  return `${s.file ?? '<input>'}${s.line !== undefined ? ':' + s.line : ''}`;
}

export type ImportEvent =
  | { kind: 'format'; format: FormatName; detected: boolean }
  | { kind: 'trajectory'; trajectory: Trajectory }
  | { kind: 'error'; error: DataError };

export interface ImportResult {
  format?: FormatName;
  trajectories: Trajectory[];
  errors: DataError[];
  /** Errors seen, including those past maxErrors that were only counted. */
  errorCount: number;
  records: number;
  lines: number;
}

/** `terminal_test.jsonl` → `terminal`: AgentWorldBench names its files `{domain}_test.jsonl`. */
export function domainFromFileName(file: string | undefined): string | undefined {
  if (!file) return undefined;
  const base = (file.split(/[\\/]/).pop() ?? '').toLowerCase();
  return DOMAINS.find((d) => base === d || base.startsWith(d + '_') || base.startsWith(d + '-') || base.startsWith(d + '.'));
}

/** Picks the importer most sure about `record`; undefined when none recognises it. */
export function detectFormat(record: unknown): FormatName | undefined {
  let best: FormatName | undefined;
  let bestScore = 0;
  for (const name of FORMAT_NAMES) {
    const s = IMPORTERS[name].detect(record);
    if (s > bestScore) {
      bestScore = s;
      best = name;
    }
  }
  return best;
}

interface ParsedRecord {
  value: unknown;
  line: number;
  locate: (pointer: string) => number;
}

/**
 * Imports trajectories from chunks of text or bytes, yielding each trajectory as soon as it is
 * complete, so a caller can process a file far larger than memory. JSONL is read line by line;
 * a JSON document (an array or one pretty-printed object) is gathered and parsed whole.
 */
export async function* importStream(source: ChunkSource, options: ImportOptions = {}): AsyncGenerator<ImportEvent> {
  const file = options.file;
  const keepRaw = options.keepRaw ?? true;
  const every = options.progressEvery ?? 2000;
  const maxDocument = options.maxDocumentChars ?? 512 * 1024 * 1024;
  const fallbackDomain = domainFromFileName(file) ?? 'unknown';
  let format: FormatName | undefined = options.format && options.format !== 'auto' ? options.format : undefined;
  let session: ImportSession | undefined;
  const progress: ImportProgress = { consumed: 0, total: options.total, lines: 0, records: 0, trajectories: 0, errors: 0, done: false };
  const seenIds = options.seenIds ?? new Map<string, IdSource>();

  const openSession = (f: FormatName) => {
    session = IMPORTERS[f].session({ file, keepRaw, fallbackDomain, domainOverride: options.domain });
  };
  const error = (line: number | undefined, pointer: string, message: string): ImportEvent => {
    progress.errors++;
    return { kind: 'error', error: { ...(file !== undefined ? { file } : {}), ...(line !== undefined ? { line } : {}), pointer, message } };
  };
  function* drain(out: SessionOutput, rec?: ParsedRecord): Generator<ImportEvent> {
    for (const e of out.errors) yield error(e.line ?? rec?.locate(e.pointer), e.pointer, e.message);
    for (const t of out.trajectories) {
      // A last check on what the importer built, so nothing invalid reaches training.
      const bad = validateTrajectory(t);
      if (bad.length) {
        for (const b of bad) yield error(t.source?.line ?? rec?.line, b.pointer, `converted trajectory "${t.id}" is invalid: ${b.message}`);
        continue;
      }
      // One behaviour for every format: the first trajectory with an id wins, a later copy is
      // rejected with an error naming both places, so no id can reach both splits.
      // Importers that merge records (AgentWorldBench) know the trajectory's first line; a native
      // record may carry a source from elsewhere, so its own line is used then.
      const line = t.source?.line !== undefined && (t.source.file === file || !rec) ? t.source.line : rec?.line ?? t.source?.line;
      const first = seenIds.get(t.id);
      if (first) {
        yield error(line, '/id', `duplicate trajectory id "${t.id}": this copy (${where({ file, line })}) is left out, the id was first seen at ${where(first)}`);
        continue;
      }
      seenIds.set(t.id, { ...(file !== undefined ? { file } : {}), ...(line !== undefined ? { line } : {}) });
      progress.trajectories++;
      yield { kind: 'trajectory', trajectory: t };
    }
  }
  function* handle(rec: ParsedRecord): Generator<ImportEvent> {
    progress.records++;
    if (!format) {
      const f = detectFormat(rec.value);
      if (!f) {
        yield error(rec.line, '', `cannot tell the format of this record (expected one of: ${FORMAT_NAMES.join(', ')}); name it with the format option`);
        return;
      }
      format = f;
      yield { kind: 'format', format: f, detected: true };
    }
    if (!session) openSession(format);
    yield* drain(session!.add(rec.value, { line: rec.line, index: progress.records - 1 }), rec);
  }

  if (format) yield { kind: 'format', format, detected: false };
  let document: string[] | null = null;
  let documentChars = 0;
  let documentStart = 0;
  let tooLarge = false;
  for await (const l of readLines(source)) {
    progress.lines = l.line;
    progress.consumed = l.consumed;
    if (l.line % every === 0) options.onProgress?.({ ...progress });
    if (document) {
      if (tooLarge) continue;
      if (l.text === null) {
        yield error(l.line, '', 'not valid UTF-8 text (save the file as UTF-8)');
        tooLarge = true;
        continue;
      }
      documentChars += l.text.length + 1;
      if (documentChars > maxDocument) {
        yield error(documentStart, '', `JSON document larger than ${maxDocument} characters; write it as JSONL (one record per line) to stream it`);
        tooLarge = true;
        continue;
      }
      document.push(l.text);
      continue;
    }
    if (l.text === null) {
      yield error(l.line, '', l.utf16 ? 'the file is UTF-16 text; save it as UTF-8' : 'not valid UTF-8 text (save the file as UTF-8)');
      continue;
    }
    const trimmed = l.text.trim();
    if (!trimmed) continue;
    let value: unknown;
    try {
      value = JSON.parse(l.text);
    } catch (e) {
      // Only the first record of a file may open a multi-line JSON document.
      if (progress.records === 0 && progress.errors === 0 && (trimmed.startsWith('[') || trimmed.startsWith('{'))) {
        document = [l.text];
        documentChars = l.text.length + 1;
        documentStart = l.line;
        continue;
      }
      yield error(l.line, '', `not valid JSON: ${(e as Error).message}`);
      continue;
    }
    if (Array.isArray(value) && progress.records === 0) {
      // A one-line JSON array of records.
      const line = l.line;
      for (let i = 0; i < value.length; i++) yield* handle({ value: value[i], line, locate: () => line });
      continue;
    }
    if (!isObject(value)) {
      yield error(l.line, '', `expected a JSON object per line, got ${Array.isArray(value) ? 'an array' : typeof value}`);
      progress.records++;
      continue;
    }
    const line = l.line;
    yield* handle({ value, line, locate: () => line });
  }
  if (document && !tooLarge) {
    const text = document.join('\n');
    document = null;
    const jsonlFallback: string[] = [];
    let value: unknown;
    let parsed = true;
    try {
      value = JSON.parse(text);
    } catch (e) {
      parsed = false;
      const lines = text.split('\n');
      // A JSONL file whose first line is broken looks like the start of a document; if other
      // lines stand alone as records, read it as JSONL so they still import.
      if (lines.slice(1).some((x) => isObject(tryParse(x)))) {
        lines.forEach((x, i) => (jsonlFallback[i] = x));
      } else {
        const m = /position (\d+)/.exec((e as Error).message);
        const line = m ? documentStart + countNewlines(text, Number(m[1])) : documentStart;
        yield error(line, '', `not valid JSON: ${(e as Error).message}`);
      }
    }
    for (let i = 0; i < jsonlFallback.length; i++) {
      const x = jsonlFallback[i];
      const line = documentStart + i;
      if (!x.trim()) continue;
      const v = tryParse(x);
      if (v === undefined) yield error(line, '', 'not valid JSON');
      else if (!isObject(v)) yield error(line, '', `expected a JSON object per line, got ${Array.isArray(v) ? 'an array' : typeof v}`);
      else yield* handle({ value: v, line, locate: () => line });
    }
    if (parsed) {
      const offset = documentStart - 1;
      if (Array.isArray(value)) {
        const starts = arrayElementLines(text);
        for (let i = 0; i < value.length; i++) {
          const base = `/${i}`;
          yield* handle({
            value: value[i],
            line: offset + (starts[i] ?? 1),
            locate: (p) => offset + (lineOfPointer(text, base + p) ?? starts[i] ?? 1),
          });
        }
      } else {
        yield* handle({ value, line: documentStart, locate: (p) => offset + (lineOfPointer(text, p) ?? 1) });
      }
    }
  }
  if (session) yield* drain(session.finish());
  progress.done = true;
  options.onProgress?.({ ...progress });
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function countNewlines(text: string, end: number): number {
  let n = 0;
  for (let i = 0; i < end && i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** Imports everything into memory; errors past maxErrors are counted, not kept. */
export async function importAll(source: ChunkSource, options: ImportOptions = {}): Promise<ImportResult> {
  const maxErrors = options.maxErrors ?? 1000;
  const result: ImportResult = { trajectories: [], errors: [], errorCount: 0, records: 0, lines: 0 };
  const onProgress = options.onProgress;
  for await (const ev of importStream(source, {
    ...options,
    onProgress: (p) => {
      result.records = p.records;
      result.lines = p.lines;
      onProgress?.(p);
    },
  })) {
    if (ev.kind === 'format') result.format = ev.format;
    else if (ev.kind === 'trajectory') result.trajectories.push(ev.trajectory);
    else {
      result.errorCount++;
      if (result.errors.length < maxErrors) result.errors.push(ev.error);
    }
  }
  return result;
}

/** Convenience for text already in memory (tests, pasted text in the UI). */
export function importText(text: string, options: ImportOptions = {}): Promise<ImportResult> {
  return importAll(textChunks(text), options);
}

export type { RecordError };
