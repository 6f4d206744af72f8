import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { contentSecurityPolicy } from './scripts/csp.mjs';

// The built index.html carries the Content-Security-Policy (scripts/csp.mjs) as a <meta> tag; the
// dev server does not (its React refresh preamble is an inline script).
const csp: Plugin = {
  name: 'lwm-csp',
  apply: 'build',
  transformIndexHtml: () => [{ tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: contentSecurityPolicy() }, injectTo: 'head-prepend' }],
};

// base: './' makes every asset URL relative, so dist/ works from any sub-path
// (GitHub Pages, a folder on a static host). Views are addressed by hash routes.
export default defineConfig({
  base: './',
  plugins: [react(), csp],
  worker: { format: 'es' },
  // onnxruntime-web's .wasm is imported as an asset URL (src/jobs/ortAssets.ts); its package
  // exports do not list dist/ files, so the path is resolved here.
  resolve: { alias: [{ find: /^onnxruntime-web\/dist\//, replacement: fileURLToPath(new URL('./node_modules/onnxruntime-web/dist/', import.meta.url)) }] },
  build: {
    target: 'es2022',
    sourcemap: true,
    chunkSizeWarningLimit: 4096,
  },
  server: { port: 5173 },
  preview: { port: 4173 },
});
