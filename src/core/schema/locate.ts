// Maps a JSON pointer to the line where its value starts in a JSON text, so an error found by
// the validator on a parsed value can still say "file:line". Only runs when there is an error,
// so it re-scans the text instead of keeping positions for every value during parsing.

/** Escapes one reference token of a JSON pointer (RFC 6901). */
export function escapePointerToken(token: string | number): string {
  return String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}

export function joinPointer(base: string, ...tokens: (string | number)[]): string {
  return base + tokens.map((t) => '/' + escapePointerToken(t)).join('');
}

function unescapeToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

/**
 * 1-based line (relative to `text`) where the value at `pointer` starts, or, when the pointer
 * names a missing member, the line of the closest existing ancestor. Undefined if `text` is
 * not parseable JSON up to that point.
 */
export function lineOfPointer(text: string, pointer: string): number | undefined {
  const target = pointer === '' ? [] : pointer.split('/').slice(1).map(unescapeToken);
  let pos = 0;
  let line = 1;
  let best: number | undefined;

  const ws = () => {
    while (pos < text.length) {
      const c = text.charCodeAt(pos);
      if (c === 10) line++;
      else if (c !== 32 && c !== 9 && c !== 13) break;
      pos++;
    }
  };
  const readString = (): string => {
    // pos is at the opening quote
    pos++;
    let out = '';
    let start = pos;
    while (pos < text.length) {
      const c = text.charCodeAt(pos);
      if (c === 34) {
        out += text.slice(start, pos);
        pos++;
        return out;
      }
      if (c === 92) {
        out += text.slice(start, pos);
        const e = text[pos + 1];
        if (e === 'u') {
          out += String.fromCharCode(parseInt(text.slice(pos + 2, pos + 6), 16));
          pos += 6;
        } else {
          out += ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' } as Record<string, string>)[e] ?? e;
          pos += 2;
        }
        start = pos;
        continue;
      }
      if (c === 10) line++;
      pos++;
    }
    throw new Error('unterminated string');
  };
  // Walks one value; `depth` is how many target tokens matched so far (-1: off the target path).
  const value = (depth: number): boolean => {
    ws();
    if (depth === target.length) {
      best = line;
      return true;
    }
    if (depth >= 0) best = line;
    const c = text[pos];
    if (c === '{') {
      pos++;
      ws();
      if (text[pos] === '}') { pos++; return false; }
      for (;;) {
        ws();
        if (text[pos] !== '"') throw new Error('expected key');
        const key = readString();
        ws();
        if (text[pos] !== ':') throw new Error('expected colon');
        pos++;
        const onPath = depth >= 0 && target[depth] === key;
        if (value(onPath ? depth + 1 : -1)) return true;
        ws();
        if (text[pos] === ',') { pos++; continue; }
        if (text[pos] === '}') { pos++; return false; }
        throw new Error('expected , or }');
      }
    }
    if (c === '[') {
      pos++;
      ws();
      if (text[pos] === ']') { pos++; return false; }
      for (let i = 0; ; i++) {
        const onPath = depth >= 0 && target[depth] === String(i);
        if (value(onPath ? depth + 1 : -1)) return true;
        ws();
        if (text[pos] === ',') { pos++; continue; }
        if (text[pos] === ']') { pos++; return false; }
        throw new Error('expected , or ]');
      }
    }
    if (c === '"') {
      readString();
      return false;
    }
    const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(pos, pos + 64));
    if (!m) throw new Error('unexpected token');
    pos += m[0].length;
    return false;
  };
  try {
    value(0);
  } catch {
    // Malformed text: the best line found so far is still the most useful answer.
  }
  return best;
}

/**
 * Start line (1-based) of each top-level array element of a JSON document, so records of a
 * JSON array file can be reported by line like JSONL records are.
 */
export function arrayElementLines(text: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let expectValue = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 10) line++;
    if (inString) {
      if (ch === 92) i++;
      else if (ch === 34) inString = false;
      continue;
    }
    if (ch === 32 || ch === 9 || ch === 13 || ch === 10) continue;
    if (depth === 1 && expectValue && ch !== 93) {
      lines.push(line);
      expectValue = false;
    }
    if (ch === 34) inString = true;
    else if (ch === 91 || ch === 123) {
      depth++;
      if (depth === 1 && ch === 91) expectValue = true;
    } else if (ch === 93 || ch === 125) depth--;
    else if (ch === 44 && depth === 1) expectValue = true;
  }
  return lines;
}
