// The streaming import driver: lines in, trajectories and located errors out. It never throws
// on bad input: each bad line or record becomes a DataError and the rest import.
import { DOMAINS, type Trajectory } from '../schema/types.ts';
import { validateTrajectory, type DataError } from '../schema/validate.ts';
import { arrayElementLines, lineOfPointer } from '../schema/locate.ts';
import { LIMITS, sizeText } from '../limits.ts';
import { readLines, textChunks, type ChunkSource, type SourceLine } from './lines.ts';
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
  /** Largest JSON (non-JSONL) document held in memory, in UTF-16 units. Default LIMITS.documentChars. */
  maxDocumentChars?: number;
  /** Longest line, in bytes (UTF-16 units for text input). Default LIMITS.lineBytes. */
  maxLineBytes?: number;
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

/** The state one import carries from record to record: the format, its session, the counts and the ids seen. */
class ImportRun {
  readonly file: string | undefined;
  readonly progress: ImportProgress;
  format: FormatName | undefined;
  private session: ImportSession | undefined;
  private readonly seenIds: Map<string, IdSource>;

  constructor(private readonly options: ImportOptions) {
    this.file = options.file;
    this.format = options.format && options.format !== 'auto' ? options.format : undefined;
    this.progress = { consumed: 0, total: options.total, lines: 0, records: 0, trajectories: 0, errors: 0, done: false };
    this.seenIds = options.seenIds ?? new Map<string, IdSource>();
  }

  error(line: number | undefined, pointer: string, message: string): ImportEvent {
    this.progress.errors++;
    const file = this.file;
    return { kind: 'error', error: { ...(file !== undefined ? { file } : {}), ...(line !== undefined ? { line } : {}), pointer, message } };
  }

  /** One parsed record: the format is detected from the first, then the session converts it. */
  *handle(rec: ParsedRecord): Generator<ImportEvent> {
    this.progress.records++;
    if (!this.format) {
      const f = detectFormat(rec.value);
      if (!f) {
        yield this.error(rec.line, '', `cannot tell the format of this record (expected one of: ${FORMAT_NAMES.join(', ')}); name it with the format option`);
        return;
      }
      this.format = f;
      yield { kind: 'format', format: f, detected: true };
    }
    if (!this.session) {
      const o = this.options;
      this.session = IMPORTERS[this.format].session({
        file: this.file,
        keepRaw: o.keepRaw ?? true,
        fallbackDomain: domainFromFileName(this.file) ?? 'unknown',
        domainOverride: o.domain,
      });
    }
    yield* this.drain(this.session.add(rec.value, { line: rec.line, index: this.progress.records - 1 }), rec);
  }

  /** What the session holds back until the end (records of unfinished trajectories). */
  *finish(): Generator<ImportEvent> {
    if (this.session) yield* this.drain(this.session.finish());
  }

  private *drain(out: SessionOutput, rec?: ParsedRecord): Generator<ImportEvent> {
    for (const e of out.errors) yield this.error(e.line ?? rec?.locate(e.pointer), e.pointer, e.message);
    for (const t of out.trajectories) {
      // A last check on what the importer built, so nothing invalid reaches training.
      const bad = validateTrajectory(t);
      if (bad.length) {
        for (const b of bad) yield this.error(t.source?.line ?? rec?.line, b.pointer, `converted trajectory "${t.id}" is invalid: ${b.message}`);
        continue;
      }
      const duplicate = this.claimId(t, rec);
      if (duplicate) {
        yield duplicate;
        continue;
      }
      this.progress.trajectories++;
      yield { kind: 'trajectory', trajectory: t };
    }
  }

  /**
   * One behaviour for every format: the first trajectory with an id wins, a later copy is
   * rejected with an error naming both places, so no id can reach both splits. Returns that
   * error, or undefined when the id is new (and now taken).
   */
  private claimId(t: Trajectory, rec: ParsedRecord | undefined): ImportEvent | undefined {
    const file = this.file;
    // Importers that merge records (AgentWorldBench) know the trajectory's first line; a native
    // record may carry a source from elsewhere, so its own line is used then.
    const line = t.source?.line !== undefined && (t.source.file === file || !rec) ? t.source.line : (rec?.line ?? t.source?.line);
    const first = this.seenIds.get(t.id);
    if (first)
      return this.error(
        line,
        '/id',
        `duplicate trajectory id "${t.id}": this copy (${where({ file, line })}) is left out, the id was first seen at ${where(first)}`,
      );
    this.seenIds.set(t.id, { ...(file !== undefined ? { file } : {}), ...(line !== undefined ? { line } : {}) });
    return undefined;
  }
}

/** A multi-line JSON document being gathered; abandoned (and reported) when it is not UTF-8 or too large. */
interface PendingDocument {
  lines: string[];
  chars: number;
  start: number;
  abandoned: boolean;
}

/**
 * Imports trajectories from chunks of text or bytes, yielding each trajectory as soon as it is
 * complete, so a caller can process a file far larger than memory. JSONL is read line by line;
 * a JSON document (an array or one pretty-printed object) is gathered and parsed whole.
 */
export async function* importStream(source: ChunkSource, options: ImportOptions = {}): AsyncGenerator<ImportEvent> {
  const every = options.progressEvery ?? 2000;
  // A document is parsed whole, so it must fit in one string (V8 holds at most 2^29 - 24 units).
  const maxDocument = options.maxDocumentChars ?? LIMITS.documentChars;
  const maxLine = options.maxLineBytes ?? LIMITS.lineBytes;
  const run = new ImportRun(options);
  const progress = run.progress;
  if (run.format) yield { kind: 'format', format: run.format, detected: false };
  let document: PendingDocument | null = null;
  for await (const l of readLines(source, maxLine)) {
    progress.lines = l.line;
    progress.consumed = l.consumed;
    if (l.line % every === 0) options.onProgress?.({ ...progress });
    if (document) yield* documentLine(run, document, l, maxDocument, maxLine);
    else document = yield* jsonlLine(run, l, maxLine);
  }
  if (document && !document.abandoned) yield* documentRecords(run, document.lines, document.start);
  yield* run.finish();
  progress.done = true;
  options.onProgress?.({ ...progress });
}

/**
 * One line of a JSONL file: a record, a one-line JSON array of records, or the first line of a
 * multi-line JSON document, which is returned for the caller to gather.
 */
function* jsonlLine(run: ImportRun, l: SourceLine, maxLine: number): Generator<ImportEvent, PendingDocument | null> {
  if (l.text === null) {
    yield run.error(l.line, '', unreadableLine(l, maxLine));
    return null;
  }
  const trimmed = l.text.trim();
  if (!trimmed) return null;
  let value: unknown;
  try {
    value = JSON.parse(l.text);
  } catch (e) {
    // Only the first record of a file may open a multi-line JSON document.
    if (run.progress.records === 0 && run.progress.errors === 0 && (trimmed.startsWith('[') || trimmed.startsWith('{'))) {
      return { lines: [l.text], chars: l.text.length + 1, start: l.line, abandoned: false };
    }
    yield run.error(l.line, '', `not valid JSON: ${(e as Error).message}`);
    return null;
  }
  const line = l.line;
  if (Array.isArray(value) && run.progress.records === 0) {
    // A one-line JSON array of records.
    for (let i = 0; i < value.length; i++) yield* run.handle({ value: value[i], line, locate: () => line });
    return null;
  }
  if (!isObject(value)) {
    yield run.error(l.line, '', `expected a JSON object per line, got ${Array.isArray(value) ? 'an array' : typeof value}`);
    run.progress.records++;
    return null;
  }
  yield* run.handle({ value, line, locate: () => line });
  return null;
}

/** Why a line has no text: UTF-16, not UTF-8, or longer than the limit. */
function unreadableLine(l: SourceLine, maxLine: number): string {
  if (l.tooLong) return `line longer than ${sizeText(maxLine)}, the most one line may hold; it is left out`;
  return l.utf16 ? 'the file is UTF-16 text; save it as UTF-8' : 'not valid UTF-8 text (save the file as UTF-8)';
}

/** Adds a line to the document being gathered, or abandons it (not UTF-8, or over maxDocument). */
function* documentLine(run: ImportRun, doc: PendingDocument, l: SourceLine, maxDocument: number, maxLine: number): Generator<ImportEvent> {
  if (doc.abandoned) return;
  if (l.text === null) {
    yield run.error(l.line, '', unreadableLine(l, maxLine));
    doc.abandoned = true;
    return;
  }
  doc.chars += l.text.length + 1;
  if (doc.chars > maxDocument) {
    yield run.error(doc.start, '', `JSON document larger than ${maxDocument} characters; write it as JSONL (one record per line) to stream it`);
    doc.abandoned = true;
    return;
  }
  doc.lines.push(l.text);
}

/**
 * The records of a gathered JSON document: an array's elements or the one object, each located
 * by its line. A document that does not parse but whose later lines stand alone as records was
 * a JSONL file with a broken first line: it is read as JSONL so those still import. Only lines
 * shaped like an object (`{` … `}`) are tried, so a document that is no JSONL either (an object
 * never closed, millions of `"k": 1,` lines) is told in one pass.
 */
function* documentRecords(run: ImportRun, lines: string[], documentStart: number): Generator<ImportEvent> {
  const text = lines.join('\n');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    if (lines.some((x, i) => i > 0 && objectShaped(x) && isObject(tryParse(x)))) {
      yield* fallbackJsonl(run, lines, documentStart);
    } else {
      const m = /position (\d+)/.exec((e as Error).message);
      const line = m ? documentStart + countNewlines(text, Number(m[1])) : documentStart;
      yield run.error(line, '', `not valid JSON: ${(e as Error).message}`);
    }
    return;
  }
  const offset = documentStart - 1;
  if (Array.isArray(value)) {
    const starts = arrayElementLines(text);
    for (let i = 0; i < value.length; i++) {
      const base = `/${i}`;
      yield* run.handle({
        value: value[i],
        line: offset + (starts[i] ?? 1),
        locate: (p) => offset + (lineOfPointer(text, base + p) ?? starts[i] ?? 1),
      });
    }
  } else {
    yield* run.handle({ value, line: documentStart, locate: (p) => offset + (lineOfPointer(text, p) ?? 1) });
  }
}

/** Whether a line starts with `{` and ends with `}` (spaces aside): the only lines that can be a record alone. */
function objectShaped(line: string): boolean {
  let a = 0;
  let b = line.length - 1;
  while (a <= b && /\s/.test(line[a])) a++;
  while (b >= a && /\s/.test(line[b])) b--;
  return a < b && line[a] === '{' && line[b] === '}';
}

/** The lines of what looked like a document, read one record a line after all. */
function* fallbackJsonl(run: ImportRun, lines: string[], documentStart: number): Generator<ImportEvent> {
  for (let i = 0; i < lines.length; i++) {
    const x = lines[i];
    const line = documentStart + i;
    if (!x.trim()) continue;
    const v = tryParse(x);
    if (v === undefined) yield run.error(line, '', 'not valid JSON');
    else if (!isObject(v)) yield run.error(line, '', `expected a JSON object per line, got ${Array.isArray(v) ? 'an array' : typeof v}`);
    else yield* run.handle({ value: v, line, locate: () => line });
  }
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
