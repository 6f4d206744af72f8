// `npm test` lints and format-checks the code with Biome (biome.jsonc) before the suites. This
// shows the check catching what it is there for, with the project's own configuration on planted
// files in a scratch folder: an unused import, a misformatted line, and the idioms the
// configuration allows staying allowed. And one spelling: "optimize", "optimizer", "optimization"
// everywhere in the project's own text, the British spelling only on lines that read names stored
// with it (marked so).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'lwm-lint-'));
copyFileSync(join(root, 'biome.jsonc'), join(scratch, 'biome.jsonc'));
mkdirSync(join(scratch, 'src'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs the project's Biome on one planted file of src/ (the scratch folder is no git checkout: no ignore file to read). */
function biome(command: 'lint' | 'format', name: string, text: string): { code: number; out: string } {
  writeFileSync(join(scratch, 'src', name), text);
  const bin = join(root, 'node_modules', '.bin', 'biome');
  const r = spawnSync(bin, [command, '--vcs-enabled=false', '--error-on-warnings', `src/${name}`], { cwd: scratch, encoding: 'utf8' });
  return { code: r.status ?? 1, out: `${r.stdout}${r.stderr}` };
}

describe('the lint and format check', () => {
  it('fails on an unused import, naming the rule and the file', () => {
    const r = biome('lint', 'unused.ts', "import { join } from 'node:path';\n\nexport const a = 1;\n");
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/src\/unused\.ts:1:\d+ lint\/correctness\/noUnusedImports/);
  });

  it('passes clean code with the idioms the configuration allows (a non-null assertion, an assignment in a loop test)', () => {
    const r = biome(
      'lint',
      'clean.ts',
      'export function last(xs: number[], re: RegExp, s: string): number {\n  let m: RegExpExecArray | null;\n  let n = 0;\n  while ((m = re.exec(s))) n += m.length;\n  return xs.at(-1)! + n;\n}\n',
    );
    expect(r.out).not.toMatch(/lint\//);
    expect(r.code).toBe(0);
  });

  it('fails a file not in the house style (single quotes, semicolons, spaces inside braces)', () => {
    const r = biome('format', 'style.ts', 'export const a = {b: "c"}\n');
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/src\/style\.ts format/);
    expect(biome('format', 'styled.ts', "export const a = { b: 'c' };\n").code).toBe(0);
  });
  it('fails on a module of src/ whose file name is not camelCase or PascalCase', () => {
    const r = biome('lint', 'gpu-use.ts', 'export const a = 1;\n');
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/src\/gpu-use\.ts lint\/style\/useFilenamingConvention/);
    expect(biome('lint', 'gpuUse.test.ts', 'export const a = 1;\n').code).toBe(0);
    expect(biome('lint', 'TrainView.tsx', 'export const a = 1;\n').code).toBe(0);
  });
});

/** The spelling the project no longer uses (written so that this line is no instance of it). */
const OLD_SPELLING = /optimi[s]/iu;
/** What a line that reads a name stored with the old spelling says about itself. */
const COMPAT_MARK = 'old spelling, read for stored data';
/** Folders and files the check reads under the root: the project's own text (not dependencies or build output). */
const ROOTS = ['src', 'e2e', 'docs', 'scripts', 'bench', 'shaders', 'bin', 'public', '.ci'];
const SKIP = new Set(['node_modules', 'dist', 'dist-lib', 'test-results', 'artifacts', '.git']);

/** Every file under `dir` (recursively), skipping SKIP folders. */
function filesUnder(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => (SKIP.has(e.name) ? [] : e.isDirectory() ? filesUnder(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []));
}

/** `path:line: text` of each use of the old spelling under `root` (file names included) not on a marked line. */
function oldSpellings(root: string): string[] {
  const top = readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(root, e.name));
  const found: string[] = [];
  for (const file of [...top, ...ROOTS.flatMap((d) => filesUnder(join(root, d)))]) {
    const name = file.slice(root.length + 1);
    if (OLD_SPELLING.test(name)) found.push(`${name}: the file name`);
    const bytes = readFileSync(file);
    if (bytes.includes(0)) continue; // binary (pictures, model weights)
    bytes
      .toString('utf8')
      .split('\n')
      .forEach((line, i) => {
        if (OLD_SPELLING.test(line) && !line.includes(COMPAT_MARK)) found.push(`${name}:${i + 1}: ${line.trim().slice(0, 160)}`);
      });
  }
  return found;
}

describe('one spelling', () => {
  it('the project writes optimize, optimizer, optimization; the old spelling only on lines marked as reading stored names', () => {
    expect(oldSpellings(root)).toEqual([]);
  });

  it('the check names each unmarked use, in a file or a file name, and lets a marked line be', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lwm-spelling-'));
    try {
      const old = ['optimi', 's'].join('');
      mkdirSync(join(dir, 'src', 'core'), { recursive: true });
      mkdirSync(join(dir, 'docs'));
      mkdirSync(join(dir, 'node_modules'));
      writeFileSync(join(dir, 'README.md'), `# Prompt ${old}ation\n`);
      writeFileSync(
        join(dir, 'src', 'core', 'store.ts'),
        `export const A = 'x';\nexport const OLD = '${old}ations'; // ${COMPAT_MARK}\nexport const B = '${old}er';\n`,
      );
      writeFileSync(join(dir, 'src', `${old}er.ts`), 'export {};\n');
      writeFileSync(join(dir, 'docs', 'shot.png'), Buffer.from([0x89, 0x50, 0, 0x4f, ...Buffer.from(old)]));
      writeFileSync(join(dir, 'node_modules', 'dep.js'), `${old}\n`);
      expect(oldSpellings(dir).sort()).toEqual([
        `README.md:1: # Prompt ${old}ation`,
        `src/core/store.ts:3: export const B = '${old}er';`,
        `src/${old}er.ts: the file name`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
