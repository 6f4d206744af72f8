// Node module hook: `import text from './x.wgsl?raw'` (or any file with ?raw) gives the
// file's text as the default export, as Vite does. Lets shaders load the same way in
// Vite, Vitest and Node.
import { readFile } from 'node:fs/promises';

export async function resolve(specifier, context, next) {
  if (specifier.endsWith('?raw')) {
    const bare = specifier.slice(0, -4);
    const resolved = new URL(bare, context.parentURL);
    return { url: `${resolved.href}?raw`, shortCircuit: true, format: 'module' };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (url.endsWith('?raw')) {
    const text = await readFile(new URL(url.slice(0, -4)), 'utf8');
    return { format: 'module', source: `export default ${JSON.stringify(text)};`, shortCircuit: true };
  }
  return next(url, context);
}
