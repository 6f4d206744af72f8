#!/usr/bin/env node
// Serves dist/ as a static host would, under a sub-path, to prove the build needs no server
// logic and no root path: `node scripts/serve-dist.mjs [--base /studio/] [--port 4321]`.
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { base: { type: 'string', default: '/studio/' }, port: { type: 'string', default: '4321' }, dir: { type: 'string', default: 'dist' } },
});
const base = values.base.endsWith('/') ? values.base : values.base + '/';
const root = resolve(values.dir);
if (!existsSync(join(root, 'index.html'))) {
  console.error(`serve-dist: ${root}/index.html not found; run \`npm run build\` first.`);
  process.exit(1);
}
// The same Content-Security-Policy as the built page's <meta> tag (both apply; sending the same
// policy keeps them from narrowing each other), plus what only a header can say.
const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]*)"/i.exec(readFileSync(join(root, 'index.html'), 'utf8'));
const CSP = meta
  ? `${meta[1]
      .replace(/&#39;|&apos;/g, "'")
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&')}; frame-ancestors 'self'`
  : null;
if (!CSP) console.warn('serve-dist: dist/index.html has no Content-Security-Policy meta tag; serving without one');
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.jsonl': 'application/x-ndjson',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.map': 'application/json',
  '.ttf': 'font/ttf',
  '.woff2': 'font/woff2',
  '.safetensors': 'application/octet-stream',
};

createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (!url.pathname.startsWith(base)) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end(`Not under ${base}`);
    return;
  }
  const rel = normalize(decodeURIComponent(url.pathname.slice(base.length))).replace(/^(\.\.[/\\])+/, '');
  let file = join(root, rel || 'index.html');
  if (!file.startsWith(root)) {
    res.writeHead(403).end();
    return;
  }
  if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
  if (!existsSync(file)) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
    return;
  }
  res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', ...(CSP && { 'content-security-policy': CSP }) });
  createReadStream(file).pipe(res);
}).listen(Number(values.port), '127.0.0.1', () => {
  console.log(`Serving ${root} at http://127.0.0.1:${values.port}${base}`);
});
