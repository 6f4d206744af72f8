// Lists functions longer than a limit (default 80 lines), longest first, so a giant is seen
// before it grows further. Tests, generated code and declaration files are skipped.
// Run: npx tsx scripts/long-functions.ts [--max 80] [dir ...]   (default dir: src)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const args = process.argv.slice(2);
const at = args.indexOf('--max');
const max = at >= 0 ? Number(args.splice(at, 2)[1]) : 80;
const roots = args.length ? args : ['src'];

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== 'node_modules' && name !== 'fixtures') yield* files(p);
    } else if (/\.tsx?$/.test(name) && !/\.(test|spec)\.tsx?$|\.d\.ts$|\.generated\.ts$/.test(name)) yield p;
  }
}

/** A readable name for a function node: its declared name, or the variable / property / method it is assigned to. */
function nameOf(node: ts.Node, sf: ts.SourceFile): string {
  const n = (node as { name?: ts.Node }).name;
  if (n) return n.getText(sf);
  const p = node.parent;
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p))) return p.name.getText(sf);
  if (p && ts.isCallExpression(p)) return `<callback of ${p.expression.getText(sf).slice(0, 40)}>`;
  return '<anonymous>';
}

const found: { lines: number; where: string; name: string }[] = [];
for (const root of roots) {
  for (const file of files(root)) {
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
        const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
        const lines = end - start + 1;
        if (lines > max) found.push({ lines, where: `${relative(process.cwd(), file)}:${start + 1}`, name: nameOf(node, sf) });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
}
found.sort((a, b) => b.lines - a.lines);
for (const f of found) console.log(`${String(f.lines).padStart(5)}  ${f.where}  ${f.name}`);
console.log(`${found.length} function(s) over ${max} lines`);
