// Where a JSON text is broken, as an offset, for editor markers. JSON.parse says where in most
// cases ("... at position 42"); for the rest (e.g. a misspelt literal) a small scanner finds the
// first character that cannot continue a JSON value.

export interface JsonSyntaxError {
  offset: number;
  message: string;
}

export function jsonSyntaxError(text: string): JsonSyntaxError | null {
  try {
    JSON.parse(text);
    return null;
  } catch (e) {
    const message = (e as Error).message;
    const m = /position (\d+)/.exec(message);
    if (m) return { offset: Number(m[1]), message };
    if (/end of JSON input/i.test(message)) return { offset: text.length, message };
    return { offset: scanError(text) ?? 0, message };
  }
}

/** Offset of the first syntax error found by a minimal recursive-descent scan, or null. */
function scanError(s: string): number | null {
  let i = 0;
  const ws = () => {
    while (i < s.length && ' \t\r\n'.includes(s[i])) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const value = (): void => {
    ws();
    const c = s[i];
    if (c === '{') {
      i++;
      ws();
      if (s[i] === '}') return void i++;
      for (;;) {
        ws();
        if (s[i] !== '"') fail();
        str();
        ws();
        if (s[i] !== ':') fail();
        i++;
        value();
        ws();
        if (s[i] === ',') {
          i++;
          continue;
        }
        if (s[i] === '}') return void i++;
        fail();
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (s[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (s[i] === ',') {
          i++;
          continue;
        }
        if (s[i] === ']') return void i++;
        fail();
      }
    }
    if (c === '"') return str();
    for (const lit of ['true', 'false', 'null']) {
      if (s.startsWith(lit, i)) {
        i += lit.length;
        return;
      }
    }
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(s.slice(i, i + 64));
    if (m) {
      i += m[0].length;
      return;
    }
    // Point at the first character of the bad token, past the letters it shares with a literal.
    for (const lit of ['true', 'false', 'null']) {
      let k = 0;
      while (k < lit.length && s[i + k] === lit[k]) k++;
      if (k > 0) {
        i += k;
        break;
      }
    }
    fail();
  };
  const str = () => {
    i++;
    while (i < s.length && s[i] !== '"') {
      if (s[i] === '\\') i++;
      else if (s.charCodeAt(i) < 0x20) fail();
      i++;
    }
    if (i >= s.length) fail();
    i++;
  };
  try {
    value();
    ws();
    return i < s.length ? i : null;
  } catch (at) {
    return typeof at === 'number' ? at : null;
  }
}

/** 1-based line and column of an offset. */
export function positionAt(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let last = -1;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      last = i;
    }
  }
  return { line, column: offset - last };
}
