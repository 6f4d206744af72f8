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

/**
 * Yields every line of the input. Byte input is decoded per line with a fatal UTF-8 decoder,
 * so one bad line is reported as `text: null` and the rest still decode. A UTF-8 byte order
 * mark at the start is dropped. A line longer than `maxLine` bytes (UTF-16 units for text) is
 * not held: it comes out as `text: null, tooLong: true` once its end is reached.
 */
export async function* readLines(source: ChunkSource, maxLine: number = LIMITS.lineBytes): AsyncGenerator<SourceLine> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let line = 0;
  let consumed = 0;
  let carryBytes: Uint8Array[] = [];
  let carryText = '';
  let carryLength = 0;
  let tooLong = false;
  let first = true;

  const decode = (bytes: Uint8Array): string | null => {
    let end = bytes.length;
    if (end > 0 && bytes[end - 1] === 13) end--;
    let start = 0;
    if (first && end >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
    first = false;
    try {
      return decoder.decode(bytes.subarray(start, end));
    } catch {
      return null;
    }
  };
  const finishText = (s: string): string => {
    if (first && s.charCodeAt(0) === 0xfeff) s = s.slice(1);
    first = false;
    return s.endsWith('\r') ? s.slice(0, -1) : s;
  };

  for await (const chunk of source as AsyncIterable<Uint8Array | string>) {
    if (typeof chunk === 'string') {
      let from = 0;
      for (;;) {
        const nl = chunk.indexOf('\n', from);
        if (nl < 0) break;
        consumed += carryLength + nl - from + 1;
        if (tooLong || carryLength + nl - from > maxLine) {
          yield { text: null, tooLong: true, line: ++line, consumed };
          first = false;
        } else yield { text: finishText(carryText + chunk.slice(from, nl)), line: ++line, consumed };
        carryText = '';
        carryLength = 0;
        tooLong = false;
        from = nl + 1;
      }
      carryLength += chunk.length - from;
      if (carryLength > maxLine) {
        tooLong = true;
        carryText = '';
      } else carryText += chunk.slice(from);
      continue;
    }
    if (first && line === 0 && !carryBytes.length && chunk.length >= 2 && ((chunk[0] === 0xff && chunk[1] === 0xfe) || (chunk[0] === 0xfe && chunk[1] === 0xff))) {
      // UTF-16 text would otherwise come out as one bad line per newline; say it once.
      yield { text: null, line: 1, consumed: chunk.length, utf16: true };
      return;
    }
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, from);
      if (nl < 0) break;
      consumed += carryLength + nl - from + 1;
      if (tooLong || carryLength + nl - from > maxLine) {
        yield { text: null, tooLong: true, line: ++line, consumed };
        first = false;
      } else {
        let bytes = chunk.subarray(from, nl);
        if (carryBytes.length) bytes = concat([...carryBytes, bytes]);
        yield { text: decode(bytes), line: ++line, consumed };
      }
      carryBytes = [];
      carryLength = 0;
      tooLong = false;
      from = nl + 1;
    }
    if (from < chunk.length) {
      carryLength += chunk.length - from;
      if (carryLength > maxLine) {
        tooLong = true;
        carryBytes = [];
      } else carryBytes.push(chunk.slice(from)); // a copy: streams may reuse the chunk's buffer
    }
  }
  // The last line has no newline; count its length now.
  if (tooLong) {
    consumed += carryLength;
    yield { text: null, tooLong: true, line: ++line, consumed };
  } else if (carryText.length) {
    consumed += carryText.length;
    yield { text: finishText(carryText), line: ++line, consumed };
  } else if (carryBytes.length) {
    const bytes = concat(carryBytes);
    consumed += bytes.length;
    yield { text: decode(bytes), line: ++line, consumed };
  }
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
