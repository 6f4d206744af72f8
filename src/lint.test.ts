// `npm test` lints and format-checks the code with Biome (biome.jsonc) before the suites. This
// shows the check catching what it is there for, with the project's own configuration on planted
// files in a scratch folder: an unused import, a misformatted line, and the idioms the
// configuration allows staying allowed.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
