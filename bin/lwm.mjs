#!/usr/bin/env node
// The `lwm` command: runs src/cli/main.ts through tsx, with a loader hook that makes
// `import x from './file.wgsl?raw'` work in Node the way it does in Vite.
// Commands that use the GPU (Dawn) need the Vulkan environment set before the process starts
// (the dynamic linker reads LD_LIBRARY_PATH only then), so for those we re-run ourselves with it.
// Which commands those are, by their arguments, is decided in src/cli/gpuUse.ts.
import { spawn } from 'node:child_process';
import { register } from 'node:module';
import { fileURLToPath } from 'node:url';
import { register as registerTsx } from 'tsx/esm/api';
import { gpuEnv } from '../scripts/chromium.mjs';

const args = process.argv.slice(2);
registerTsx();
const { needsGpu } = await import('../src/cli/gpuUse.ts');
if (needsGpu(args) && !process.env.LWM_GPU_ENV) {
  const env = { ...gpuEnv(), LWM_GPU_ENV: '1' };
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...args], { stdio: 'inherit', env });
  // A stop is the child's to honour. Ctrl-C reaches the child from the terminal itself (one process
  // group), so here it is only kept from ending this process; SIGTERM (a service manager's, sent to
  // this process alone) is passed on.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  const code = await new Promise((resolve) => child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
  process.exit(code);
}

register('./raw-loader.mjs', import.meta.url);
const { main } = await import('../src/cli/main.ts');
const { escapeControl, redactCredentials } = await import('../src/cli/io.ts');
try {
  process.exitCode = await main(args);
} catch (e) {
  // A crash still prints nothing raw from the data: escaped, credentials masked.
  process.stderr.write(escapeControl(redactCredentials(`lwm: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)));
  process.exitCode = 1;
}
