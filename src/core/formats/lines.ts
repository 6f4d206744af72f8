// Splits a stream of text or byte chunks into lines without holding the whole input, so the
// browser can feed `File.stream()` and Node a file read stream into the same importer.

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
}

const NEWLINE = 10;

/**
 * Yields every line of the input. Byte input is decoded per line with a fatal UTF-8 decoder,
 * so one bad line is reported as `text: null` and the rest still decode. A UTF-8 byte order
 * mark at the start is dropped.
 */
export async function* readLines(source: ChunkSource): AsyncGenerator<SourceLine> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let line = 0;
  let consumed = 0;
  let carryBytes: Uint8Array[] = [];
  let carryText = '';
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
        const text = carryText + chunk.slice(from, nl);
        consumed += carryText.length + nl - from + 1;
        carryText = '';
        yield { text: finishText(text), line: ++line, consumed };
        from = nl + 1;
      }
      carryText += chunk.slice(from);
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
      let bytes = chunk.subarray(from, nl);
      if (carryBytes.length) {
        bytes = concat([...carryBytes, bytes]);
        carryBytes = [];
      }
      consumed += bytes.length + 1;
      yield { text: decode(bytes), line: ++line, consumed };
      from = nl + 1;
    }
    if (from < chunk.length) {
      // Copy: stream implementations may reuse the chunk's buffer after we return.
      carryBytes.push(chunk.slice(from));
    }
  }
  // The last line has no newline; count its length now.
  if (carryText.length) {
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
