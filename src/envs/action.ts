// Parser for function-call actions used by the GUI, search and swe domains:
//   click(12)   type(5, "hello")   search("red kettle")   str_replace("a.txt", "x", "y")
// Strings use JSON escapes; barewords are accepted as strings for hand typing.

export type ActionArg = string | number;
export interface ParsedAction {
  name: string;
  args: ActionArg[];
}

export function parseCall(text: string): ParsedAction | { error: string } {
  const s = text.trim();
  const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*(\(([\s\S]*)\))?$/.exec(s);
  if (!m) return { error: `cannot parse action: ${JSON.stringify(s.length > 60 ? s.slice(0, 60) + '…' : s)}` };
  const name = m[1];
  if (m[2] === undefined) return { name, args: [] };
  const body = m[3];
  const args: ActionArg[] = [];
  let i = 0;
  const skipWs = () => {
    while (i < body.length && /\s/.test(body[i])) i++;
  };
  skipWs();
  if (i >= body.length) return { name, args };
  for (;;) {
    skipWs();
    // Optional keyword prefix (id=12): the value is what counts.
    const kw = /^[A-Za-z_][A-Za-z0-9_]*\s*=(?!=)/.exec(body.slice(i));
    if (kw) {
      i += kw[0].length;
      skipWs();
    }
    const c = body[i];
    if (c === '"' || c === "'") {
      let j = i + 1;
      let raw = '';
      while (j < body.length && body[j] !== c) {
        if (body[j] === '\\' && j + 1 < body.length) {
          raw += body[j] + body[j + 1];
          j += 2;
        } else {
          raw += body[j];
          j++;
        }
      }
      if (j >= body.length) return { error: `unterminated string in ${name}(...)` };
      try {
        const inner = c === "'" ? raw.replace(/\\'/g, "'").replace(/"/g, '\\"') : raw;
        args.push(JSON.parse(`"${inner.replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`) as string);
      } catch {
        return { error: `bad string escape in ${name}(...)` };
      }
      i = j + 1;
    } else {
      let j = i;
      while (j < body.length && body[j] !== ',') j++;
      const tok = body.slice(i, j).trim();
      if (tok === '') return { error: `missing argument in ${name}(...)` };
      args.push(/^-?\d+(\.\d+)?$/.test(tok) ? Number(tok) : tok);
      i = j;
    }
    skipWs();
    if (i >= body.length) break;
    if (body[i] !== ',') return { error: `expected ',' in ${name}(...) at ${JSON.stringify(body.slice(i, i + 10))}` };
    i++;
  }
  return { name, args };
}

/** Renders a call the way agents write it, so parseCall(formatCall(x)) round-trips. */
export function formatCall(name: string, ...args: ActionArg[]): string {
  return `${name}(${args.map((a) => (typeof a === 'number' ? String(a) : JSON.stringify(a))).join(', ')})`;
}
