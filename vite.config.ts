import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// base: './' makes every asset URL relative, so dist/ works from any sub-path
// (GitHub Pages, a folder on a static host). Views are addressed by hash routes.
export default defineConfig({
  base: './',
  plugins: [react()],
  worker: { format: 'es' },
  build: {
    target: 'es2022',
    sourcemap: true,
    chunkSizeWarningLimit: 4096,
  },
  server: { port: 5173 },
  preview: { port: 4173 },
});
