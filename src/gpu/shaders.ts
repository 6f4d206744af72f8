// WGSL sources live in shaders/*.wgsl. Each kernel module imports its own file as text
// (`import code from '../../shaders/x.wgsl?raw'`): `?raw` works in Vite and Vitest natively
// and in Node through bin/raw-loader.mjs, so one import serves the app, the tests and the CLI.
//
// A shader can pull in a shared file with a line of its own, `// #include "name.wgsl"`: the
// launcher imports that file with `?raw` too and passes it to wgsl(), which splices it in place of
// the line. The composed text keeps a line map, so compile errors still name the file and line
// the author wrote (shaders/name.wgsl:12, not a line of the composed text).

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

const INCLUDE = /^\s*\/\/\s*#include\s+"([^"]+)"\s*$/;

/**
 * Names a WGSL text by its file so compile errors can point at shaders/<name>:line. `includes`
 * gives the text of each file an `// #include "file"` line may name (nested includes allowed).
 */
export function wgsl(name: string, code: string, includes: Record<string, string> = {}): ShaderSource {
  if (!code.split('\n').some((l) => INCLUDE.test(l))) return { file: `shaders/${name}`, code };
  const out: string[] = [];
  const lines: SourceLine[] = [];
  splice(name, code, includes, [], out, lines);
  return { file: `shaders/${name}`, code: out.join('\n'), lines };
}

function splice(name: string, code: string, includes: Record<string, string>, stack: string[], out: string[], lines: SourceLine[]): void {
  const file = `shaders/${name}`;
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
    splice(inc, includes[inc], includes, [...stack, name], out, lines);
  });
}

/** The file and line that line `line` (1-based) of a shader's composed code came from. */
export function sourceLine(shader: ShaderSource, line: number): SourceLine {
  return shader.lines?.[line - 1] ?? { file: shader.file, line };
}
