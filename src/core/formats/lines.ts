// Splits a stream of text or byte chunks into lines without holding the whole input, so the
// browser can feed `File.stream()` and Node a file read stream into the same importer.
import { LIMITS } from '../limits.ts';

/** Anything chunked: a ReadableStream reader loop, a Node read stream, an array of strings. */
export type ChunkSource = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

export interface SourceLine {
  /** Line text without the newline (and without a trailing \r); null when it is not valid UTF-8. */
  text: string | null;
  /** 1-based line number. */
  line: number;
  /** Bytes (or UTF-16 units for string input) consumed up to and including this line. */
  consumed: number;
  /** Set on the single line yielded for a byte stream that starts with a UTF-16 byte order mark. */
  utf16?: boolean;
  /** Set (with `text: null`) on a line longer than the limit; its text was not kept. */
  tooLong?: boolean;
}

const NEWLINE = 10;

/** What the splitter carries between chunks: the unfinished line and the decoding state. */
interface SplitState {
  decoder: TextDecoder;
  maxLine: number;
  line: number;
  consumed: number;
  carryBytes: Uint8Array[];
  carryText: string;
  carryLength: number;
  tooLong: boolean;
  first: boolean;
}

/** Decodes one line's bytes (dropping a trailing \r and a leading UTF-8 byte order mark); null when not UTF-8. */
function decodeLine(st: SplitState, bytes: Uint8Array): string | null {
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === 13) end--;
  let start = 0;
  if (st.first && end >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
  st.first = false;
  try {
    return st.decoder.decode(bytes.subarray(start, end));
  } catch {
    return null;
  }
}

/** Finishes one line of text: drops a leading byte order mark on the first line and a trailing \r. */
function finishText(st: SplitState, s: string): string {
  if (st.first && s.charCodeAt(0) === 0xfeff) s = s.slice(1);
  st.first = false;
  return s.endsWith('\r') ? s.slice(0, -1) : s;
}

/** Yields the lines a string chunk completes and carries the rest. */
function* splitText(st: SplitState, chunk: string): Generator<SourceLine> {
  let from = 0;
  for (;;) {
    const nl = chunk.indexOf('\n', from);
    if (nl < 0) break;
    st.consumed += st.carryLength + nl - from + 1;
    if (st.tooLong || st.carryLength + nl - from > st.maxLine) {
      yield { text: null, tooLong: true, line: ++st.line, consumed: st.consumed };
      st.first = false;
    } else yield { text: finishText(st, st.carryText + chunk.slice(from, nl)), line: ++st.line, consumed: st.consumed };
    st.carryText = '';
    st.carryLength = 0;
    st.tooLong = false;
    from = nl + 1;
  }
  st.carryLength += chunk.length - from;
  if (st.carryLength > st.maxLine) {
    st.tooLong = true;
    st.carryText = '';
  } else st.carryText += chunk.slice(from);
}

/** Yields the lines a byte chunk completes and carries the rest. */
function* splitBytes(st: SplitState, chunk: Uint8Array): Generator<SourceLine> {
  let from = 0;
  for (;;) {
    const nl = chunk.indexOf(NEWLINE, from);
    if (nl < 0) break;
    st.consumed += st.carryLength + nl - from + 1;
    if (st.tooLong || st.carryLength + nl - from > st.maxLine) {
      yield { text: null, tooLong: true, line: ++st.line, consumed: st.consumed };
      st.first = false;
    } else {
      let bytes = chunk.subarray(from, nl);
      if (st.carryBytes.length) bytes = concat([...st.carryBytes, bytes]);
      yield { text: decodeLine(st, bytes), line: ++st.line, consumed: st.consumed };
    }
    st.carryBytes = [];
    st.carryLength = 0;
    st.tooLong = false;
    from = nl + 1;
  }
  if (from < chunk.length) {
    st.carryLength += chunk.length - from;
    if (st.carryLength > st.maxLine) {
      st.tooLong = true;
      st.carryBytes = [];
    } else st.carryBytes.push(chunk.slice(from)); // a copy: streams may reuse the chunk's buffer
  }
}

/** Yields the last line, which has no newline; its length is counted now. */
function* finishInput(st: SplitState): Generator<SourceLine> {
  if (st.tooLong) {
    st.consumed += st.carryLength;
    yield { text: null, tooLong: true, line: ++st.line, consumed: st.consumed };
  } else if (st.carryText.length) {
    st.consumed += st.carryText.length;
    yield { text: finishText(st, st.carryText), line: ++st.line, consumed: st.consumed };
  } else if (st.carryBytes.length) {
    const bytes = concat(st.carryBytes);
    st.consumed += bytes.length;
    yield { text: decodeLine(st, bytes), line: ++st.line, consumed: st.consumed };
  }
}

/** True for the first byte chunk of a stream that starts with a UTF-16 byte order mark. */
function startsUtf16(st: SplitState, chunk: Uint8Array): boolean {
  if (!st.first || st.line !== 0 || st.carryBytes.length || chunk.length < 2) return false;
  return (chunk[0] === 0xff && chunk[1] === 0xfe) || (chunk[0] === 0xfe && chunk[1] === 0xff);
}

/**
 * Yields every line of the input. Byte input is decoded per line with a fatal UTF-8 decoder,
 * so one bad line is reported as `text: null` and the rest still decode. A UTF-8 byte order
 * mark at the start is dropped. A line longer than `maxLine` bytes (UTF-16 units for text) is
 * not held: it comes out as `text: null, tooLong: true` once its end is reached.
 */
export async function* readLines(source: ChunkSource, maxLine: number = LIMITS.lineBytes): AsyncGenerator<SourceLine> {
  const st: SplitState = {
    decoder: new TextDecoder('utf-8', { fatal: true }),
    maxLine,
    line: 0,
    consumed: 0,
    carryBytes: [],
    carryText: '',
    carryLength: 0,
    tooLong: false,
    first: true,
  };
  for await (const chunk of source as AsyncIterable<Uint8Array | string>) {
    if (typeof chunk === 'string') {
      yield* splitText(st, chunk);
      continue;
    }
    if (startsUtf16(st, chunk)) {
      // UTF-16 text would otherwise come out as one bad line per newline; say it once.
      yield { text: null, line: 1, consumed: chunk.length, utf16: true };
      return;
    }
    yield* splitBytes(st, chunk);
  }
  yield* finishInput(st);
}

function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Splits a whole string into chunks, for callers that already hold the text. */
export function textChunks(text: string, size = 1 << 16): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
