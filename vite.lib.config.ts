// The package build (`npm run build:lib`): the library entries as ES modules in dist-lib/, WGSL
// inlined (the `?raw` imports), every dependency left to the consumer's install. Two builds, one
// per mode: `node` (src/node.ts, for Node: Dawn's WebGPU, paths) and `browser` (src/browser.ts).
import { builtinModules } from 'node:module';
import { readFileSync } from 'node:fs';
import { defineConfig } from 'vite';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  dependencies: Record<string, string>;
  optionalDependencies?: Record<string, string>;
};
const deps = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.optionalDependencies ?? {}), 'webgpu'];
const external = (id: string) => id.startsWith('node:') || builtinModules.includes(id) || deps.some((d) => id === d || id.startsWith(`${d}/`));

export default defineConfig(({ mode }) => {
  const node = mode === 'node';
  return {
    publicDir: false,
    build: {
      target: node ? 'node20' : 'es2022',
      outDir: `dist-lib/${node ? 'node' : 'browser'}`,
      emptyOutDir: true,
      sourcemap: true,
      minify: false,
      ...(node ? { ssr: 'src/node.ts' } : { lib: { entry: 'src/browser.ts', formats: ['es' as const], fileName: 'browser' } }),
      rollupOptions: { external, output: { entryFileNames: node ? 'node.js' : 'browser.js' } },
    },
    ssr: { noExternal: [] },
  };
});
