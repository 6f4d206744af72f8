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

/** Character codes the scan compares with charCodeAt. */
const CH = { newline: 10, space: 32, tab: 9, cr: 13, quote: 34, backslash: 92 } as const;
const ESCAPED: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' };
/** How far a number or literal is looked for: longer than any the validator reports on. */
const MAX_SCALAR_CHARS = 64;

/**
 * One pass over a JSON text along a pointer's path: `best` is the line of the deepest value on
 * the path reached so far. Each method starts at `pos` and leaves it after what it read.
 */
class PointerScan {
  pos = 0;
  line = 1;
  best: number | undefined;

  constructor(
    private readonly text: string,
    private readonly target: string[],
  ) {}

  /** Skips white space, counting lines. */
  ws(): void {
    const { text } = this;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === CH.newline) this.line++;
      else if (c !== CH.space && c !== CH.tab && c !== CH.cr) break;
      this.pos++;
    }
  }

  /** A string's value; `pos` is at its opening quote. */
  readString(): string {
    const { text } = this;
    this.pos++;
    let out = '';
    let start = this.pos;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === CH.quote) {
        out += text.slice(start, this.pos);
        this.pos++;
        return out;
      }
      if (c === CH.backslash) {
        out += text.slice(start, this.pos);
        const e = text[this.pos + 1];
        if (e === 'u') {
          out += String.fromCharCode(parseInt(text.slice(this.pos + 2, this.pos + 6), 16));
          this.pos += 6;
        } else {
          out += ESCAPED[e] ?? e;
          this.pos += 2;
        }
        start = this.pos;
        continue;
      }
      if (c === CH.newline) this.line++;
      this.pos++;
    }
    throw new Error('unterminated string');
  }

  /** Walks one value; `depth` is how many target tokens matched so far (-1: off the target path). True once the target is found. */
  value(depth: number): boolean {
    this.ws();
    if (depth === this.target.length) {
      this.best = this.line;
      return true;
    }
    if (depth >= 0) this.best = this.line;
    const c = this.text[this.pos];
    if (c === '{') return this.members(depth, '}', () => this.objectKey());
    if (c === '[') return this.members(depth, ']', (i) => String(i));
    if (c === '"') {
      this.readString();
      return false;
    }
    const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(this.text.slice(this.pos, this.pos + MAX_SCALAR_CHARS));
    if (!m) throw new Error('unexpected token');
    this.pos += m[0].length;
    return false;
  }

  /** An object's key and its colon. */
  private objectKey(): string {
    this.ws();
    if (this.text[this.pos] !== '"') throw new Error('expected key');
    const key = this.readString();
    this.ws();
    if (this.text[this.pos] !== ':') throw new Error('expected colon');
    this.pos++;
    return key;
  }

  /** An object's or array's members up to `close`; `keyOf` reads or counts each member's pointer token. */
  private members(depth: number, close: '}' | ']', keyOf: (i: number) => string): boolean {
    this.pos++;
    this.ws();
    if (this.text[this.pos] === close) {
      this.pos++;
      return false;
    }
    for (let i = 0; ; i++) {
      const key = keyOf(i); // read even off the path: it moves past the key
      const onPath = depth >= 0 && this.target[depth] === key;
      if (this.value(onPath ? depth + 1 : -1)) return true;
      this.ws();
      if (this.text[this.pos] === ',') {
        this.pos++;
        continue;
      }
      if (this.text[this.pos] === close) {
        this.pos++;
        return false;
      }
      throw new Error(`expected , or ${close}`);
    }
  }
}

/**
 * 1-based line (relative to `text`) where the value at `pointer` starts, or, when the pointer
 * names a missing member, the line of the closest existing ancestor. Undefined if `text` is
 * not parseable JSON up to that point.
 */
export function lineOfPointer(text: string, pointer: string): number | undefined {
  const scan = new PointerScan(text, pointer === '' ? [] : pointer.split('/').slice(1).map(unescapeToken));
  try {
    scan.value(0);
  } catch {
    // Malformed text: the best line found so far is still the most useful answer.
  }
  return scan.best;
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
