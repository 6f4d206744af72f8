// The package as a user gets it: `npm pack` (which builds dist-lib/ first), the tarball unpacked
// into a fresh project's node_modules beside its dependencies, the README's library example run
// there by the package's name, and a TypeScript file using the API type-checked against the
// packed declarations. No network: the dependencies are this checkout's installed ones, linked.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
  name: string;
  dependencies: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  exports: Record<string, unknown>;
};
let project: string;
let files: string[];

/** The README's library example (the js block of "As a library"). */
function readmeExample(): string {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## As a library'));
  const m = /```js\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error('README.md: no js example under "As a library"');
  return m[1];
}

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'lwm-package-'));
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', project], { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  // The build's log (prepack) comes first on stdout; npm's JSON report is the array at the end.
  const [packed] = JSON.parse(out.slice(out.search(/^\[\s*\{/m))) as { filename: string; files: { path: string }[] }[];
  files = packed.files.map((f) => f.path);
  const target = join(project, 'node_modules', pkg.name);
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['-xzf', join(project, packed.filename), '-C', target, '--strip-components=1']);
  // The package's dependencies, as an install would put them beside it.
  for (const dep of [...Object.keys(pkg.dependencies), ...Object.keys(pkg.optionalDependencies ?? {})]) {
    const link = join(project, 'node_modules', dep);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(join(repo, 'node_modules', dep), link, 'dir');
  }
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'fresh-project', private: true, type: 'module' }));
}, 180_000);
afterAll(() => rmSync(project, { recursive: true, force: true }));

describe('the packed package', () => {
  it('holds the built entries and declarations its exports name, and no sources or tests', () => {
    for (const f of [
      'dist-lib/node/node.js',
      'dist-lib/browser/browser.js',
      'dist-lib/types/node.d.ts',
      'dist-lib/types/browser.d.ts',
      'package.json',
      'README.md',
    ]) {
      expect(files, f).toContain(f);
    }
    expect(files.filter((f) => f.startsWith('src/') || f.includes('.test.'))).toEqual([]);
    expect(JSON.stringify(pkg.exports)).toContain('./dist-lib/node/node.js');
    // The WGSL is inside the bundle (Node has no `?raw` loader in a user's project).
    expect(readdirSync(join(project, 'node_modules', pkg.name, 'dist-lib', 'node')).some((f) => f.endsWith('.js'))).toBe(true);
  });

  it("runs the README's example by the package's name in a fresh project", () => {
    writeFileSync(join(project, 'example.mjs'), readmeExample());
    const r = spawnSync(process.execPath, ['example.mjs'], { cwd: project, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    // copy-last repeats the observation of `pwd`, streamed, then the judge's scores and reward.
    expect(r.stdout).toMatch(/^<predicted_observation>\n\/home\/\w+\n[^\n]*\n<\/predicted_observation>\nscores \{/);
    expect(r.stdout).toMatch(/reward \d+(\.\d+)?\n$/);
  });

  it('is typed: a TypeScript program against the packed declarations type-checks, and a wrong call does not', () => {
    const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, skipLibCheck: true, types: [] },
      }),
    );
    const good = `import { openModel, openEnvironment, judgeTurn, type WorldModel, type TurnJudgement } from 'lwm-studio';
const env = openEnvironment('os', 1);
const model: WorldModel = await openModel('copy-last');
const turn = { domain: 'os', systemPrompt: env.systemPromptFields, action: 'ls' };
const { text } = await model.observe(turn, { maxTokens: 10, temperature: 0 });
const j: TurnJudgement = judgeTurn(turn, env.step('ls').observation, text);
const n: number = j.reward + j.scores.format;
model.close();
export { n };
`;
    writeFileSync(join(project, 'good.mts'), good);
    const ok = spawnSync(process.execPath, [tsc, '-p', '.'], { cwd: project, encoding: 'utf8' });
    expect(ok.stdout + ok.stderr).toBe('');
    writeFileSync(
      join(project, 'bad.mts'),
      `import { openEnvironment } from 'lwm-studio';\nconst n: number = openEnvironment('os').step(42).observation;\nexport { n };\n`,
    );
    const bad = spawnSync(process.execPath, [tsc, '-p', '.'], { cwd: project, encoding: 'utf8' });
    expect(bad.status).not.toBe(0);
    expect(bad.stdout).toContain("bad.mts(2,46): error TS2345: Argument of type 'number' is not assignable to parameter of type 'string'");
    expect(bad.stdout).toContain("bad.mts(2,7): error TS2322: Type 'string' is not assignable to type 'number'");
  });

  it('the build is not left in the tree as a tracked file', () => {
    expect(existsSync(join(repo, 'dist-lib'))).toBe(true);
    expect(readFileSync(join(repo, '.gitignore'), 'utf8')).toContain('dist-lib/');
  });
});
