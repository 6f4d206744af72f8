// Checks the relative links of README.md and docs/*.md: every linked file exists, and every
// #anchor names a heading of its target (GitHub's slugs). Prints each broken link as
// `file:line: link: why` and exits 1 when there is one. Usage: node scripts/doc-links.mjs
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** Text outside fenced code blocks, line by line (code lines blanked so line numbers hold). */
function prose(text) {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/** GitHub's anchors of a Markdown file's headings. */
function anchors(path) {
  const seen = new Map();
  const out = new Set();
  for (const line of prose(readFileSync(path, 'utf8'))) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const text = m[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

const broken = [];
for (const file of files) {
  const lines = prose(readFileSync(join(root, file), 'utf8'));
  lines.forEach((line, i) => {
    for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const link = m[1];
      if (/^[a-z]+:/i.test(link)) continue;
      const [path, anchor] = link.split('#');
      const target = path ? join(root, dirname(file), path) : join(root, file);
      const where = `${file}:${i + 1}: ${link}`;
      if (!existsSync(target)) broken.push(`${where}: no such file ${relative(root, target)}`);
      else if (anchor !== undefined && statSync(target).isFile() && target.endsWith('.md') && !anchors(target).has(decodeURIComponent(anchor)))
        broken.push(`${where}: no heading with this anchor`);
    }
  });
}
for (const b of broken) console.log(b);
console.log(`${files.length} files checked, ${broken.length} broken link(s)`);
process.exit(broken.length ? 1 : 0);
