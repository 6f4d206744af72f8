// WGSL sources live in shaders/*.wgsl. Each kernel module imports its own file as text
// (`import code from '../../shaders/x.wgsl?raw'`): `?raw` works in Vite and Vitest natively
// and in Node through bin/raw-loader.mjs, so one import serves the app, the tests and the CLI.
//
// A shader can pull in a shared file with a line of its own, `// #include "name.wgsl"`: the
// launcher imports that file with `?raw` too and passes it to wgsl(), which splices it in place of
// the line. The composed text keeps a line map, so compile errors still name the file and line
// the author wrote (shaders/name.wgsl:12, not a line of the composed text).
//
// Two more forms serve what WGSL cannot say by itself:
//  - a template: a file with a line `// #template T NAME …` is included with a value
//    for each parameter, `// #include "gelu.wgsl" T=vec4f GELU=gelu4`, and spliced with every
//    whole word T (not a member `.T`) replaced by vec4f, and so on: one body serves f32 and vec4
//    (or f32 and packed-f16) variants, which WGSL's functions cannot be generic over. Only that
//    file's own text is rewritten; values pass on to what it includes through its include lines.
//  - a generated include: `consts(from, { TILE: 64 })` makes `const TILE: u32 = 64u;` lines from
//    values TypeScript owns (src/gpu/kernels/tiles.ts), so a size is written once; their errors
//    point at `from`.

export interface ShaderSource {
  /** Path shown in errors, relative to the repository root. */
  file: string;
  code: string;
  /** Where each line of `code` came from, when includes were spliced in (absent: line n of `file`). */
  lines?: SourceLine[];
}

export interface SourceLine {
  file: string;
  line: number;
}

/** What an include line may name: the text of shaders/<name>, or text generated in TypeScript (`file`: where, for errors). */
export type IncludeText = string | { file: string; code: string };

const INCLUDE = /^\s*\/\/\s*#include\s+"([^"]+)"((?:\s+[A-Za-z_]\w*=\S+)*)\s*$/;
const TEMPLATE = /^\s*\/\/\s*#template((?:\s+[A-Za-z_]\w*)+)\s*$/;

/**
 * Names a WGSL text by its file so compile errors can point at shaders/<name>:line. `includes`
 * gives the text of each file an `// #include "file"` line may name (nested includes allowed).
 */
export function wgsl(name: string, code: string, includes: Record<string, IncludeText> = {}): ShaderSource {
  if (!code.split('\n').some((l) => INCLUDE.test(l))) return { file: `shaders/${name}`, code };
  const out: string[] = [];
  const lines: SourceLine[] = [];
  splice(`shaders/${name}`, name, code, includes, [], out, lines);
  return { file: `shaders/${name}`, code: out.join('\n'), lines };
}

/** `const NAME: u32 = Nu;` lines for sizes TypeScript owns, as an include whose errors name `from`. */
export function consts(from: string, values: Record<string, number>): IncludeText {
  const code = Object.entries(values).map(([k, v]) => {
    if (!/^[A-Za-z_]\w*$/.test(k) || !Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`consts: ${k} = ${v} is not a u32 constant`);
    return `const ${k}: u32 = ${v}u;`;
  });
  return { file: from, code: code.join('\n') };
}

function splice(file: string, name: string, code: string, includes: Record<string, IncludeText>, stack: string[], out: string[], lines: SourceLine[]): void {
  code.split('\n').forEach((text, i) => {
    const m = INCLUDE.exec(text);
    if (!m) {
      out.push(text);
      lines.push({ file, line: i + 1 });
      return;
    }
    const inc = m[1];
    const where = `${file}:${i + 1}`;
    if (!(inc in includes)) {
      throw new Error(`${where}: #include "${inc}" is not given to wgsl() (the launcher must import shaders/${inc} with ?raw and pass it)`);
    }
    if (stack.includes(inc) || inc === name) throw new Error(`${where}: #include "${inc}" includes itself (${[...stack, name, inc].join(' → ')})`);
    const given = includes[inc];
    const source = typeof given === 'string' ? { file: `shaders/${inc}`, code: given } : given;
    const args = Object.fromEntries(
      m[2]
        .trim()
        .split(/\s+/)
        .filter((a) => a)
        .map((a) => a.split('=') as [string, string]),
    );
    splice(source.file, inc, instantiate(where, inc, source.code, args), includes, [...stack, name], out, lines);
  });
}

/** The text of template `inc` with its parameters replaced by `args` (line for line, so the line map holds). */
function instantiate(where: string, inc: string, code: string, args: Record<string, string>): string {
  const lines = code.split('\n');
  const at = lines.findIndex((l) => TEMPLATE.test(l));
  const params = at < 0 ? [] : TEMPLATE.exec(lines[at])![1].trim().split(/\s+/);
  const given = Object.keys(args);
  const missing = params.filter((p) => !given.includes(p));
  const unknown = given.filter((a) => !params.includes(a));
  if (missing.length > 0 || unknown.length > 0) {
    const wants = params.length > 0 ? `takes ${params.join(', ')}` : 'is not a template';
    throw new Error(
      `${where}: #include "${inc}" ${wants}${missing.length > 0 ? `; missing ${missing.join(', ')}` : ''}${unknown.length > 0 ? `; given ${unknown.join(', ')}` : ''}`,
    );
  }
  if (params.length === 0) return code;
  const word = new RegExp(`(?<![\\w.])(${params.join('|')})(?!\\w)`, 'g');
  return lines.map((l, i) => (i === at ? l : l.replace(word, (p) => args[p]))).join('\n');
}

/** The file and line that line `line` (1-based) of a shader's composed code came from. */
export function sourceLine(shader: ShaderSource, line: number): SourceLine {
  return shader.lines?.[line - 1] ?? { file: shader.file, line };
}
