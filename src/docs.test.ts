// The documentation holds together: every relative link and #anchor of README.md and docs/*.md
// resolves (scripts/doc-links.mjs, which a planted broken link makes fail), and the source cites
// the method by docs/method.md's sections, never a document outside the repository.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..');
const check = (root: string) => spawnSync(process.execPath, [join(root, 'scripts/doc-links.mjs')], { encoding: 'utf8' });

/** Files under `dir` (recursively) whose name passes `keep`. */
function walk(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name), keep) : keep(e.name) ? [join(dir, e.name)] : []));
}

describe('documentation', () => {
  it('has no broken relative link or anchor in README.md and docs/', () => {
    const r = check(repo);
    expect(r.stdout).toMatch(/ 0 broken link\(s\)/);
    expect(r.status).toBe(0);
  });

  it('reports a planted broken link and a planted broken anchor, with file and line', () => {
    const root = mkdtempSync(join(tmpdir(), 'lwm-docs-'));
    try {
      for (const d of ['scripts', 'docs']) cpSync(join(repo, d), join(root, d), { recursive: true, filter: (src) => !src.includes('screenshots') });
      writeFileSync(join(root, 'README.md'), '# Title\n\nSee [nothing](docs/nothing.md) and\n[a section](docs/method.md#no-such-section).\n');
      const r = check(root);
      expect(r.status).toBe(1);
      expect(r.stdout).toContain('README.md:3: docs/nothing.md: no such file docs/nothing.md');
      expect(r.stdout).toContain('README.md:4: docs/method.md#no-such-section: no heading with this anchor');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('cites the method as docs/method.md, whose sections §1–§11 exist', () => {
    const method = readFileSync(join(repo, 'docs/method.md'), 'utf8');
    for (let n = 1; n <= 11; n++) expect(method).toMatch(new RegExp(`^## §${n} `, 'm'));
    const files = [
      ...walk(join(repo, 'src'), (f) => /\.(ts|tsx)$/.test(f)),
      ...walk(join(repo, 'shaders'), (f) => f.endsWith('.wgsl')),
      ...walk(join(repo, 'docs'), (f) => f.endsWith('.md')),
      join(repo, 'README.md'),
    ];
    const outside = files.filter((f) => f !== join(repo, 'src/docs.test.ts') && /\bSPEC §/.test(readFileSync(f, 'utf8')));
    expect(outside).toEqual([]);
  });
});
