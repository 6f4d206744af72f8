// WGSL sources live in shaders/*.wgsl. Each kernel module imports its own file as text
// (`import code from '../../shaders/x.wgsl?raw'`): `?raw` works in Vite and Vitest natively
// and in Node through bin/raw-loader.mjs, so one import serves the app, the tests and the CLI.

export interface ShaderSource {
  /** Path shown in errors, relative to the repository root. */
  file: string;
  code: string;
}

/** Names a WGSL text by its file so compile errors can point at shaders/<name>:line. */
export function wgsl(name: string, code: string): ShaderSource {
  return { file: `shaders/${name}`, code };
}
